/* petscspmv: GPU sparse-matrix formats for fast SpMV as PETSc Mat types.
   Public C API: type names, registration, format options. */
#pragma once
#include <petscmat.h>

/* Row-grouped CSR (host reference backend and CUDA backend). The umbrella names resolve to
   the seq or mpi variant by communicator size, like MATAIJ. */
#define MATRGCSR            "rgcsr"
#define MATSEQRGCSR         "seqrgcsr"
#define MATMPIRGCSR         "mpirgcsr"
#define MATRGCSRCUDA        "rgcsrcuda"
#define MATSEQRGCSRCUDA     "seqrgcsrcuda"
#define MATMPIRGCSRCUDA     "mpirgcsrcuda"

/* PackSELL: SELL-C-sigma with column deltas and reduced-precision values in 32-bit words. */
#define MATPACKSELL         "packsell"
#define MATSEQPACKSELL      "seqpacksell"
#define MATMPIPACKSELL      "mpipacksell"
#define MATPACKSELLCUDA     "packsellcuda"
#define MATSEQPACKSELLCUDA  "seqpacksellcuda"
#define MATMPIPACKSELLCUDA  "mpipacksellcuda"

PETSC_EXTERN PetscErrorCode PetscSpMVInitializePackage(void);
PETSC_EXTERN PetscErrorCode PetscSpMVFinalizePackage(void);
/* Called by PETSc when the library is loaded with -dll_append / -dll_prepend. */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscspmv(void);
