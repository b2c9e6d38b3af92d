/* Generated test matrices shared by the tutorials and the benchmark programs (PETSc, C). */
#pragma once
#include <petscmat.h>

/* k(x, y, z) on the unit cube: smooth, in [0.5, 1.5], not a dyadic rational anywhere. */
static inline PetscReal Coefficient(PetscReal x, PetscReal y, PetscReal z)
{
  return 1.0 + 0.5 * PetscSinReal(7.0 * x + 0.3) * PetscCosReal(5.0 * y + 0.1) * PetscSinReal(3.0 * z + 1.0);
}

/* The 3-D Laplacian on an n^3 grid, natural ordering, rows split by PETSc: each coupling with
   a neighbour of the stencil (6 or 26) is -k(midpoint) (k = 1 without var_coeff), the diagonal
   the sum of the couplings, neighbours outside the grid included (Dirichlet): SPD. */
static inline PetscErrorCode Laplacian(PetscInt n, PetscBool box, PetscBool var, Mat A)
{
  PetscInt    lo, hi, cols[27];
  PetscScalar vals[27];
  PetscReal   h = 1.0 / (PetscReal)(n + 1);

  PetscFunctionBeginUser;
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n * n * n, n * n * n));
  PetscCall(MatSeqAIJSetPreallocation(A, box ? 27 : 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, box ? 27 : 7, NULL, box ? 18 : 6, NULL));
  /* SELL types (sell, sellcuda) ignore the AIJ preallocation: without their own every entry
     would grow the matrix */
  PetscCall(MatSeqSELLSetPreallocation(A, box ? 27 : 7, NULL));
  PetscCall(MatMPISELLSetPreallocation(A, box ? 27 : 7, NULL, box ? 18 : 6, NULL));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt row = lo; row < hi; row++) {
    const PetscInt i = row % n, j = (row / n) % n, k = row / (n * n);
    PetscInt       nc = 0, diag = 0;
    PetscScalar    sum = 0;
    for (PetscInt dk = -1; dk <= 1; dk++)
      for (PetscInt dj = -1; dj <= 1; dj++)
        for (PetscInt di = -1; di <= 1; di++) {
          const PetscInt dist = PetscAbsInt(di) + PetscAbsInt(dj) + PetscAbsInt(dk);
          if (dist == 0) {
            diag       = nc;
            cols[nc++] = row;
            continue;
          }
          if (!box && dist > 1) continue;
          const PetscReal c = var ? Coefficient((i + 1 + 0.5 * di) * h, (j + 1 + 0.5 * dj) * h, (k + 1 + 0.5 * dk) * h) : 1.0;
          sum += c;
          if (i + di < 0 || i + di >= n || j + dj < 0 || j + dj >= n || k + dk < 0 || k + dk >= n) continue;
          vals[nc]   = -c;
          cols[nc++] = row + di + dj * n + dk * n * n;
        }
    vals[diag] = sum;
    PetscCall(MatSetValues(A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}
