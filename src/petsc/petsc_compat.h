/* PETSc version compatibility: the PETSc API differences between the versions petscspmv builds
   against (3.22 to 3.25), in one place; C and C++, used by the library and the tests.
   docs/petsc-versions.md lists them and how each is handled. */
#pragma once
#include <petscsys.h>

/* 3.23: PetscOptionItems became a pointer type (typedef struct _n_PetscOptionItems *); before, it
   was the struct and MatOps.setfromoptions took a PetscOptionItems *. PetscSpMVOptionItems is the
   pointer in both: the type of the PetscOptionsObject argument of a setfromoptions function. */
#if PETSC_VERSION_LT(3, 23, 0)
typedef PetscOptionItems *PetscSpMVOptionItems;
#else
typedef PetscOptionItems PetscSpMVOptionItems;
#endif

/* 3.24: PetscBool became C's bool and MPIU_BOOL (a PETSc datatype before) a deprecated alias of
   MPI_C_BOOL. PETSCSPMV_MPI_BOOL is the MPI datatype of a PetscBool without the deprecation. */
#if PETSC_VERSION_LT(3, 24, 0)
  #define PETSCSPMV_MPI_BOOL MPIU_BOOL
#else
  #define PETSCSPMV_MPI_BOOL MPI_C_BOOL
#endif

/* 3.25: PetscErrorMessage(errnum, const char *text[], char **specific) became
   PetscErrorMessage(errnum, const char *text[], const char **specific).
   PetscSpMVErrorText is the type of the specific message: declare it as
   PetscSpMVErrorText msg; and pass &msg (read it as a const char *). */
#if PETSC_VERSION_LT(3, 25, 0)
typedef char *PetscSpMVErrorText;
#else
typedef const char      *PetscSpMVErrorText;
#endif
