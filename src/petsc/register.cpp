// Package registration: type names, root names, log events; also the entry point PETSc calls
// when the library is loaded with -dll_append. The man pages of the three public functions stand
// before their definitions (scripts/manpages.py).
#include "spmvimpl.hpp"

namespace pspmv
{
namespace glue
{
PetscLogEvent EventBuild = 0, EventValues = 0;
} // namespace glue
} // namespace pspmv

using namespace pspmv::glue;

static PetscBool PetscSpMVPackageInitialized = PETSC_FALSE;

/*@C
  PetscSpMVFinalizePackage - Marks the package as not initialized (registered by
  `PetscSpMVInitializePackage()` with `PetscRegisterFinalize()`, so `PetscFinalize()` calls it).

  Not Collective

  Level: developer

.seealso: `PetscSpMVInitializePackage()`
@*/
PetscErrorCode PetscSpMVFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscSpMVPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscSpMVInitializePackage - Registers the petscspmv Mat types (the 12 names of petscspmv.h:
  `MATRGCSR`, `MATSEQRGCSR`, `MATMPIRGCSR`, `MATPACKSELL`, ... and their CUDA versions, the CUDA
  ones only in a build with CUDA), their `MatConvert()` functions, options and log events
  (SpMVBuild, SpMVValues, PCMixedKSetUp), and the preconditioner `PCMIXEDKRYLOV`.

  Not Collective

  Level: beginner

  Notes:
  Idempotent: later calls return at once. Call it after `PetscInitialize()` in programs linked
  with the library; programs that load it with -dll_append get it called by
  `PetscDLLibraryRegister_petscspmv()`. `PetscFinalize()` undoes it (`PetscSpMVFinalizePackage()`).

  Errors:
  `PETSC_ERR_LIB` when the program runs a PETSc of another major.minor version than the one the
  library was built against (the message names both); whatever `MatRegister()`, `PCRegister()`
  or `PetscLogEventRegister()` raise (out of memory).

  References:
  Formats: Oberhuber, Suzuki, Vacata, "New Row-grouped CSR format for storing the sparse
  matrices on GPU with implementation in CUDA" (RgCSR); the PackSELL paper (SELL-C-sigma with
  packed delta/value words); Anzt, Cojean, Flegar et al., Ginkgo's load-balancing SpMV (hybrid
  split). See docs/design.md.

.seealso: `PetscSpMVFinalizePackage()`, `PetscDLLibraryRegister_petscspmv()`
@*/
PetscErrorCode PetscSpMVInitializePackage(void)
{
  PetscInt               n;
  const TypeInfo *const *types = Types(&n);

  PetscFunctionBegin;
  if (PetscSpMVPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  {
    /* the library is tied to the PETSc it was compiled against (Mat internals, PetscBool's
       size): a program running another PETSc minor version would fail in obscure ways */
    PetscInt major, minor, subminor;
    PetscCall(PetscGetVersionNumber(&major, &minor, &subminor, NULL));
    PetscCheck(major == PETSC_VERSION_MAJOR && minor == PETSC_VERSION_MINOR, PETSC_COMM_SELF, PETSC_ERR_LIB, "libpetscspmv was built against PETSc %d.%d.%d but this program runs PETSc %" PetscInt_FMT ".%" PetscInt_FMT ".%" PetscInt_FMT ": use a petscspmv built with this PETSc", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, major, minor, subminor);
  }
  PetscSpMVPackageInitialized = PETSC_TRUE;
  PetscCall(MatInitializePackage());
  PetscCall(PetscLogEventRegister("SpMVBuild", MAT_CLASSID, &EventBuild));
  PetscCall(PetscLogEventRegister("SpMVValues", MAT_CLASSID, &EventValues));
  PetscCall(PCInitializePackage());
  PetscCall(PetscLogEventRegister("PCMixedKSetUp", PC_CLASSID, &EventMixedSetUp));
  PetscCall(PCRegister(PCMIXEDKRYLOV, PCCreate_MixedKrylov));
  PetscCall(KSPInitializePackage());
  PetscCall(PetscLogEventRegister("KSPMixedCGCopy", KSP_CLASSID, &EventMixedCGCopy));
  PetscCall(PetscLogEventRegister("KSPMixedCGFP32", KSP_CLASSID, &EventMixedCGFP32));
  PetscCall(KSPRegister(KSPMIXEDCG, KSPCreate_MixedCG));
  for (PetscInt i = 0; i < n; i++) {
    const TypeInfo *t = types[i];
    PetscCall(MatRegisterRootName(t->root, t->seq, t->mpi));
    PetscCall(MatRegister(t->root, t->create_root));
    PetscCall(MatRegister(t->seq, t->create_seq));
    PetscCall(MatRegister(t->mpi, t->create_mpi));
#if defined(PETSCSPMV_HAVE_CUDA)
    if (t->cuda) PetscCall(RegisterCusparseFactors(t));
#endif
  }
  PetscCall(PetscRegisterFinalize(PetscSpMVFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscSpMVGetVersion - Gets the version of the petscspmv library the program runs (which, loaded
  with -dll_append, need not be the one its headers came from), with the PETSc it was built
  against and whether it has the CUDA types, e.g. "petscspmv 0.1.0 (PETSc 3.22.5, CUDA)".

  Not Collective

  Input Parameter:
. len - the length of version, in characters

  Output Parameter:
. version - the version string, truncated to len - 1 characters

  Level: beginner

  Notes:
  The compile-time version is in petscspmvversion.h (`PETSCSPMV_VERSION_MAJOR` ...). The views
  of the library's objects (`-ksp_view` of `KSPMIXEDCG` and `PCMIXEDKRYLOV`, `-mat_view
  ::ascii_info` of its Mat types) name it.

  Errors:
  None (`PETSC_ERR_ARG_NULL` for a NULL version).

.seealso: `PetscSpMVInitializePackage()`
@*/
PetscErrorCode PetscSpMVGetVersion(char version[], size_t len)
{
  PetscFunctionBegin;
  PetscAssertPointer(version, 1);
  PetscCall(PetscSNPrintf(version, len, "petscspmv %s (PETSc %d.%d.%d, %s)", PETSCSPMV_VERSION_STRING, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR,
#if defined(PETSCSPMV_HAVE_CUDA)
                          "CUDA"
#else
                          "host only"
#endif
                          ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscDLLibraryRegister_petscspmv - Entry point PETSc calls when the library is loaded with
  -dll_append <path>/libpetscspmv.so (or -dll_prepend): calls `PetscSpMVInitializePackage()`, so
  unmodified PETSc programs accept -mat_type rgcsr, packsell, rgcsrcuda and packsellcuda.

  Not Collective

  Level: developer

  Errors:
  Those of `PetscSpMVInitializePackage()`.

.seealso: `PetscSpMVInitializePackage()`
@*/
PetscErrorCode PetscDLLibraryRegister_petscspmv(void)
{
  PetscFunctionBegin;
  PetscCall(PetscSpMVInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}
