// Package registration: type names, root names, factorizations, log events; also the entry
// point PETSc calls when the library is loaded with -dll_append.
#include "spmvimpl.hpp"

namespace pspmv {
namespace glue {
PetscLogEvent EventBuild = 0, EventValues = 0;
PetscInt      DeferBlockBuild = 0;
} // namespace glue
} // namespace pspmv

using namespace pspmv::glue;

static PetscBool PetscSpMVPackageInitialized = PETSC_FALSE;

/* Our seq types keep SeqAIJ's arrays, so PETSc's own factorizations apply; MatGetFactor() finds
   them by type name, and "seqrgcsr" does not start with "seqaij": register them by name. */
static PetscErrorCode RegisterFactorizations(const TypeInfo *t)
{
  const MatFactorType ftypes[] = {MAT_FACTOR_LU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ILU, MAT_FACTOR_ICC};

  PetscFunctionBegin;
  for (MatFactorType ft : ftypes) {
    MatSolverFn *create = nullptr;
    PetscCall(MatSolverTypeGet(MATSOLVERPETSC, MATSEQAIJ, ft, nullptr, nullptr, &create));
    if (create) PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, t->seq, ft, create));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscSpMVFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscSpMVPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscSpMVInitializePackage(void)
{
  PetscInt               n;
  const TypeInfo *const *types = Types(&n);

  PetscFunctionBegin;
  if (PetscSpMVPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  PetscSpMVPackageInitialized = PETSC_TRUE;
  PetscCall(MatInitializePackage());
  PetscCall(PetscLogEventRegister("SpMVBuild", MAT_CLASSID, &EventBuild));
  PetscCall(PetscLogEventRegister("SpMVValues", MAT_CLASSID, &EventValues));
  for (PetscInt i = 0; i < n; i++) {
    const TypeInfo *t = types[i];
    PetscCall(MatRegisterRootName(t->root, t->seq, t->mpi));
    PetscCall(MatRegister(t->root, t->create_root));
    PetscCall(MatRegister(t->seq, t->create_seq));
    PetscCall(MatRegister(t->mpi, t->create_mpi));
    PetscCall(RegisterFactorizations(t));
  }
  PetscCall(PetscRegisterFinalize(PetscSpMVFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscDLLibraryRegister_petscspmv(void)
{
  PetscFunctionBegin;
  PetscCall(PetscSpMVInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}
