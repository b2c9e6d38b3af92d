// The options of matrices that PETSc creates from ours: product results take an operand's, MatAXPY
// results the target's (the results of duplicates, transposes and submatrices are adopted with
// the source's options by ops.cpp).
#include "spmvimpl.hpp"

namespace pspmv
{
namespace glue
{

namespace
{
/* The options of X when it is a matrix of ours of format f. */
const FormatOptions *OptionsOf(Mat X, Format f)
{
  if (!X) return nullptr;
  if (SeqState *sp = SeqGetState(X)) return sp->type->format == f ? &sp->opts : nullptr;
  if (MPIState *mp = MPIGetState(X)) return mp->type->format == f ? &mp->opts : nullptr;
  return nullptr;
}
} // namespace

PetscErrorCode InitialOptions(Mat B, const TypeInfo *t, FormatOptions *o)
{
  PetscFunctionBegin;
  if (B->product) {
    const Mat operands[] = {B->product->A, B->product->B, B->product->C};
    for (Mat X : operands) {
      const FormatOptions *src = OptionsOf(X, t->format);
      if (!src) continue;
      *o = *src;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  *o             = FormatOptions(t->format);
  PetscBool help = PETSC_FALSE;
  PetscCall(PetscOptionsHasHelp(((PetscObject)B)->options, &help));
  if (help) {
    /* listed by -help as MatSetFromOptions() lists them: a matrix PETSc creates by type name
       (DMCreateMatrix() with -dm_mat_type) may never see MatSetFromOptions() */
    /* a title of its own: -help prints a (prefix, title) once, and the base type's constructor
       printed "Matrix (Mat) options" already */
    PetscOptionsBegin(PetscObjectComm((PetscObject)B), ((PetscObject)B)->prefix, "Matrix (Mat) options of the petscspmv types", "Mat");
    PetscCall(ReadOptions(B, PetscOptionsObject, o));
    PetscOptionsEnd();
  } else PetscCall(ReadOptions(B, nullptr, o));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "MatAXPYGetPreallocation_C" of our matrices: MatAXPY() with a different nonzero pattern (and
   MatCopy() and MatAYPX() through it) asks Y for the empty result B, filled by PETSc and then
   merged into Y. The union pattern comes from MATPREALLOCATOR as in PETSc's default; B is a matrix
   of Y's base type adopted into Y's family with Y's options, so Y keeps them. */
PetscErrorCode MatAXPYGetPreallocation_SpMV(Mat Y, Mat X, Mat *B)
{
  SeqState *sp = SeqGetState(Y);
  MPIState *mp = MPIGetState(Y);
  Mat       pre;
  PetscInt  rstart, rend;

  PetscFunctionBegin;
  PetscCheck(sp || mp, PetscObjectComm((PetscObject)Y), PETSC_ERR_PLIB, "not a petscspmv matrix");
  const TypeInfo     *t    = sp ? sp->type : mp->type;
  const FormatOptions opts = sp ? sp->opts : mp->opts;
  PetscCall(MatCreate(PetscObjectComm((PetscObject)Y), &pre));
  PetscCall(MatSetType(pre, MATPREALLOCATOR));
  PetscCall(MatSetLayouts(pre, Y->rmap, Y->cmap));
  PetscCall(MatSetUp(pre));
  PetscCall(MatGetRowUpperTriangular(Y));
  PetscCall(MatGetRowUpperTriangular(X));
  PetscCall(MatGetOwnershipRange(pre, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; ++r) {
    const Mat          from[] = {Y, X};
    PetscInt           ncols;
    const PetscInt    *cols;
    const PetscScalar *vals;
    for (Mat M : from) {
      PetscCall(MatGetRow(M, r, &ncols, &cols, &vals));
      PetscCall(MatSetValues(pre, 1, &r, ncols, cols, vals, INSERT_VALUES));
      PetscCall(MatRestoreRow(M, r, &ncols, &cols, &vals));
    }
  }
  PetscCall(MatRestoreRowUpperTriangular(Y));
  PetscCall(MatRestoreRowUpperTriangular(X));
  PetscCall(MatSetOption(pre, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  PetscCall(MatAssemblyBegin(pre, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(pre, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)Y), B));
  PetscCall(MatSetType(*B, sp ? t->base_seq : t->base_mpi));
  PetscCall(MatSetLayouts(*B, Y->rmap, Y->cmap));
  PetscCall(MatPreallocatorPreallocate(pre, PETSC_FALSE, *B));
  PetscCall(MatDestroy(&pre));
  PetscCall(AdoptAs(*B, t, opts));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
