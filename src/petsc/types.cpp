// The type table: one row per family, and the PETSc-style named constructors and converters
// (MatCreate_SeqRgCSR, MatConvert_SeqAIJ_SeqRgCSR, ...) that MatRegister() and MatConvert() see.
#include "spmvimpl.hpp"

using namespace pspmv::glue;

/* Declares the five named functions of one family. */
#define PSPMV_DECLARE_FAMILY(Name) \
  PETSC_EXTERN PetscErrorCode MatCreate_##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatCreate_Seq##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatCreate_MPI##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatConvert_SeqAIJ_Seq##Name(Mat, MatType, MatReuse, Mat *); \
  PETSC_EXTERN PetscErrorCode MatConvert_MPIAIJ_MPI##Name(Mat, MatType, MatReuse, Mat *);

/* Defines them on top of the shared seq/mpi implementation, for the table row `info`. */
#define PSPMV_DEFINE_FAMILY(Name, info) \
  PetscErrorCode MatCreate_##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(RootCreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatCreate_Seq##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(SeqCreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatCreate_MPI##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(MPICreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatConvert_SeqAIJ_Seq##Name(Mat A, MatType, MatReuse reuse, Mat *B) \
  { \
    PetscFunctionBegin; \
    PetscCall(SeqConvertFromAIJ(A, &(info), nullptr, reuse, B)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatConvert_MPIAIJ_MPI##Name(Mat A, MatType, MatReuse reuse, Mat *B) \
  { \
    PetscFunctionBegin; \
    PetscCall(MPIConvertFromAIJ(A, &(info), reuse, B)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

#define PSPMV_ROW(Name, fmt, cuda, root, seq, mpi, backend) \
  {Format::fmt, cuda, root, seq, mpi, backend, MatCreate_##Name, MatCreate_Seq##Name, MatCreate_MPI##Name, MatConvert_SeqAIJ_Seq##Name, MatConvert_MPIAIJ_MPI##Name}

PSPMV_DECLARE_FAMILY(RgCSR)
PSPMV_DECLARE_FAMILY(PackSELL)
#if defined(PETSCSPMV_HAVE_CUDA)
PSPMV_DECLARE_FAMILY(RgCSRCUDA)
PSPMV_DECLARE_FAMILY(PackSELLCUDA)
#endif

namespace {
const TypeInfo kRgCSR    = PSPMV_ROW(RgCSR, RgCSR, PETSC_FALSE, MATRGCSR, MATSEQRGCSR, MATMPIRGCSR, CreateHostShadow);
const TypeInfo kPackSELL = PSPMV_ROW(PackSELL, PackSELL, PETSC_FALSE, MATPACKSELL, MATSEQPACKSELL, MATMPIPACKSELL, CreateHostShadow);
#if defined(PETSCSPMV_HAVE_CUDA)
const TypeInfo kRgCSRCUDA    = PSPMV_ROW(RgCSRCUDA, RgCSR, PETSC_TRUE, MATRGCSRCUDA, MATSEQRGCSRCUDA, MATMPIRGCSRCUDA, CreateCudaShadow);
const TypeInfo kPackSELLCUDA = PSPMV_ROW(PackSELLCUDA, PackSELL, PETSC_TRUE, MATPACKSELLCUDA, MATSEQPACKSELLCUDA, MATMPIPACKSELLCUDA, CreateCudaShadow);
#endif

const TypeInfo *const kTypes[] = {
  &kRgCSR, &kPackSELL,
#if defined(PETSCSPMV_HAVE_CUDA)
  &kRgCSRCUDA, &kPackSELLCUDA,
#endif
};
} // namespace

PSPMV_DEFINE_FAMILY(RgCSR, kRgCSR)
PSPMV_DEFINE_FAMILY(PackSELL, kPackSELL)
#if defined(PETSCSPMV_HAVE_CUDA)
PSPMV_DEFINE_FAMILY(RgCSRCUDA, kRgCSRCUDA)
PSPMV_DEFINE_FAMILY(PackSELLCUDA, kPackSELLCUDA)
#endif

const TypeInfo *const *pspmv::glue::Types(PetscInt *n)
{
  *n = (PetscInt)(sizeof(kTypes) / sizeof(kTypes[0]));
  return kTypes;
}
