// MatConvert between our families, AIJ and AIJCUSPARSE. PETSc's MatConvert() looks for
// "MatConvert_<from>_<to>_C" on the input matrix, then on a new matrix of the target type; so
// every matrix of ours carries the functions for both directions.
#include "spmvimpl.hpp"

namespace pspmv {
namespace glue {

namespace {

/* Any other type -> any other type, through AIJ (used between our families and with
   AIJCUSPARSE): MatConvert(A, MATAIJ) then MatConvert(AIJ, newtype) in place. */
PetscErrorCode MatConvert_SpMV_ViaAIJ(Mat A, MatType newtype, MatReuse reuse, Mat *newmat)
{
  Mat T;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    /* *newmat came from A's pattern: copy the values (MatCopy picks its fastest path) */
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &T));
  PetscCall(MatConvert(T, newtype, MAT_INPLACE_MATRIX, &T));
  if (reuse == MAT_INPLACE_MATRIX) PetscCall(MatHeaderReplace(A, &T));
  else *newmat = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Compose(Mat A, const char *from, const char *to, PetscErrorCode (*f)(Mat, MatType, MatReuse, Mat *))
{
  char name[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", from, to));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode ComposeConverters(Mat A, const TypeInfo *t, PetscBool mpi, PetscBool on)
{
  const char *self = mpi ? t->mpi : t->seq;
  const char *aij  = mpi ? MATMPIAIJ : MATSEQAIJ;
  PetscInt    n;
  const TypeInfo *const *types = Types(&n);

  PetscFunctionBegin;
  PetscCall(Compose(A, aij, self, on ? (mpi ? t->convert_mpi : t->convert_seq) : nullptr));
  PetscCall(Compose(A, self, aij, on ? (mpi ? MPIConvertToAIJ : SeqConvertToAIJ) : nullptr));
#if defined(PETSC_HAVE_CUDA)
  {
    const char *cusparse = mpi ? MATMPIAIJCUSPARSE : MATSEQAIJCUSPARSE;
    PetscCall(Compose(A, cusparse, self, on ? MatConvert_SpMV_ViaAIJ : nullptr));
    PetscCall(Compose(A, self, cusparse, on ? MatConvert_SpMV_ViaAIJ : nullptr));
  }
#endif
  for (PetscInt i = 0; i < n; i++) {
    const char *other = mpi ? types[i]->mpi : types[i]->seq;
    if (types[i] == t) continue;
    PetscCall(Compose(A, other, self, on ? MatConvert_SpMV_ViaAIJ : nullptr));
    PetscCall(Compose(A, self, other, on ? MatConvert_SpMV_ViaAIJ : nullptr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
