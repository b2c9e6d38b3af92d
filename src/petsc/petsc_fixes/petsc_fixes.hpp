// Corrections of PETSc's own defects, one function per defect, one file per PETSc area:
//   seqaij.cpp          SeqAIJ code that writes an AIJCUSPARSE matrix's host arrays, MatRetrieveValues
//   mat_header.cpp      MatHeaderMerge() and the hash assembly (MatSetUp() without preallocation)
//   cuda/aijcusparse.cpp AIJCUSPARSE's transpose products and its sparse-product phases
//   cuda/mpiaijcusparse.cpp MPIAIJCUSPARSE's and MPIAIJ's products with our CUDA operands
// Each comment says what PETSc does wrong, in which versions (3.22.5 to 3.25.4 are the ones this
// library builds against; a PETSC_VERSION_* guard where the defect is version-specific), the test
// of our suite that runs the corrected path ("Test:"; "checked" where it was seen to fail with the
// correction taken out), and a reproducer for PETSc's developers. The glue calls these
// and nothing else works around PETSc; the private fields they write go through
// private_fields.hpp.
#pragma once
#include "spmvimpl.hpp"

namespace pspmv
{
namespace glue
{
namespace petsc_fixes
{

/* ---------------------------------------------------------------- seqaij.cpp */

/* SeqAIJ code that writes an AIJCUSPARSE matrix's host array directly (MatTranspose() and
   MatCreateSubMatrices() with MAT_REUSE_MATRIX, MatCopy() before 3.24, MatRetrieveValues()) leaves
   its device copy marked current: B's host values are marked the newer ones (nothing for other
   types or bound to the CPU). */
PetscErrorCode MarkHostNewer(Mat B);
/* MatEliminateZeros() of an AIJCUSPARSE(-based) matrix: SeqAIJ's compacts the host arrays and
   assembles; the device copy keeps the old pattern marked current, and the next device use reads
   row offsets of the new pattern with columns of the old one. Before the compaction: the host
   values made current and marked newer, and the nonzero state increased (the device copy is
   rebuilt whole). A of ours only (nothing for bound matrices). */
PetscErrorCode BeforeHostCompaction(Mat A);
/* MatRetrieveValues() of SeqAIJ copies the saved values back without increasing the object state
   (a layout kept by state would go on with the scaled values) and, for AIJCUSPARSE, without
   marking the host values newer. After the base type's retrieve: both. */
PetscErrorCode AfterRetrieveValues(Mat A);
/* MatCopy(A, B, SAME_NONZERO_PATTERN) with A and B of one copy operation: PETSc before 3.24 copies
   into B's host array (MatCopy_SeqAIJ) and leaves an AIJCUSPARSE-based B's device copy marked
   current. After the copy: B's host values marked newer (fast: the two copy operations were the
   same; nothing from 3.24 on). */
PetscErrorCode AfterCopy(Mat B, PetscBool fast);

/* ---------------------------------------------------------------- mat_header.cpp */

/* MatHeaderMerge() calls A's destroy with A's composed lists detached (our state, composed on A,
   cannot be found there) and gives the lists back afterwards. The destroy of the base type `base`
   for that call, taken from a new matrix of that type (no sizes, no data). */
PetscErrorCode BaseDestroyInHeaderMerge(MatType base, PetscErrorCode (**destroy)(Mat));
/* PETSc's hash assembly (MatSetUp() without preallocation) puts back, at the matrix's
   MatAssemblyEnd(), the operations the matrix had when the hash began: a block adopted in between
   (PETSc 3.25 at 2 ranks: an MPI matrix filled by MatSetValues()) comes out of its assembly with
   the base type's operations under our name. *dropped: B (of ours, hash done) no longer has our
   assemblyend (`ours`) nor our mult (`mult`); the caller takes its operations as the base type's
   and installs ours over them again. */
PetscErrorCode HashAssemblyDroppedOurOps(Mat B, PetscErrorCode (*ours)(Mat, MatAssemblyType), PetscErrorCode (*mult)(Mat, Vec, Vec), PetscBool *dropped);

#if defined(PETSCSPMV_HAVE_CUDA)
/* ---------------------------------------------------------------- cuda/aijcusparse.cpp */

/* AIJCUSPARSE's MatMultTransposeAdd(A, x, y, z) with z != y adds A^T x to z's old values and then
   y. z = y first, then base(A, x, z, z). */
PetscErrorCode MultTransposeAdd(PetscErrorCode (*base)(Mat, Vec, Vec, Vec), Mat A, Vec x, Vec y, Vec z);
/* Before a numeric phase of p (operands presented as the base type): the explicit transpose that
   AIJCUSPARSE's sparse x sparse numeric phase reads is brought up to date with the operand's
   values (it reads it as the symbolic phase formed it). */
PetscErrorCode RefreshTransposeForNumeric(const Mat_Product *p);
/* With a host operand (AIJ, dense, or bound to the CPU) AIJCUSPARSE hands a product to SeqAIJ's or
   MPIAIJ's host code, some of which reads the operands' host values directly while their device
   values are newer: the host values of our operands are made current before a phase. */
PetscErrorCode HostValuesForHostProducts(const Mat_Product *p);
/* Whether an operand of p is a host matrix (AIJ, dense, or bound to the CPU). */
PetscErrorCode HasHostOperand(const Mat_Product *p, PetscBool *host);
/* After a numeric phase that ran on the host (host: HasHostOperand() before the phase): an
   AIJCUSPARSE result C got its values in its host arrays with its device copy from an earlier
   phase still marked current; C's host values (for MPI, its blocks') are marked newer. */
PetscErrorCode HostResultNewer(Mat C, PetscBool host);

/* ---------------------------------------------------------------- cuda/mpiaijcusparse.cpp */

/* Which matrix an operand is and how far its values are: ids and object states of the matrix and
   of its blocks (MPI). */
struct OperandStamp {
  PetscObjectId    id[3]    = {};
  PetscObjectState state[3] = {};
  bool             operator==(const OperandStamp &o) const
  {
    for (int i = 0; i < 3; i++)
      if (id[i] != o.id[i] || state[i] != o.state[i]) return false;
    return true;
  }
};
/* What the product fixes remember of one product between its phases (kept on the product). */
struct ProductStamps {
  OperandStamp merged;    /* MergedOperand's P after the last phase */
  OperandStamp host_copy; /* P when its host copy (HostCopyOfP()) was last made or refreshed */
};
/* A MAT_REUSE_MATRIX MPI PtAP or P^T P of sparse CUDA operands after a value change of P:
   MPIAIJCUSPARSE's numeric phase (MatProductNumeric_MPIAIJBACKEND()) rewrites its merged copy of
   P's local rows but multiplies that copy's explicit transpose as the symbolic phase formed it,
   the product of the old P. *redo: P changed on some rank since the last phase (the same on
   every rank): the caller frees the intermediate data and runs the symbolic phase again. */
PetscErrorCode SymbolicRedoNeeded(Mat C, ProductStamps *s, PetscBool *redo);
/* After a phase of C's product: P's stamp for SymbolicRedoNeeded(). */
PetscErrorCode RecordMergedOperand(Mat C, ProductStamps *s);
/* MPIAIJ's host PtAP of a host MPIAIJ A with P of ours (PETSc has no MPIAIJ x MPIAIJCUSPARSE
   product) transposes P's blocks with their own MatTranspose(), AIJCUSPARSE's, whose results keep
   their values on the device, and then reads host arrays of products of them: non-finite results
   at 2 ranks. Such a product runs on a host MPIAIJ copy of P, composed on C, refreshed when P
   changed on any rank. *Ph: the copy to put in P's place for the phase, NULL for other products. */
PetscErrorCode HostCopyOfP(Mat C, ProductStamps *s, Mat *Ph);
#endif

} // namespace petsc_fixes
} // namespace glue
} // namespace pspmv
