// The type table: one row per family (a format of the registry with the host or the CUDA
// backend), and the PETSc-style named constructors and converters (MatCreate_SeqAIJRgCSR,
// MatConvert_SeqAIJ_SeqAIJRgCSR, ...) that MatRegister() and MatConvert() see.
#include "spmvimpl.hpp"

using namespace pspmv::glue;

/* Declares the five named functions of one family. */
#define PSPMV_DECLARE_FAMILY(Name) \
  PETSC_EXTERN PetscErrorCode MatCreate_##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ##Name(Mat); \
  PETSC_EXTERN PetscErrorCode MatConvert_SeqAIJ_SeqAIJ##Name(Mat, MatType, MatReuse, Mat *); \
  PETSC_EXTERN PetscErrorCode MatConvert_MPIAIJ_MPIAIJ##Name(Mat, MatType, MatReuse, Mat *);

/* Defines them on top of the shared seq/mpi implementation, for the table row `info`. */
#define PSPMV_DEFINE_FAMILY(Name, info) \
  PetscErrorCode MatCreate_##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(RootCreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatCreate_SeqAIJ##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(SeqCreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatCreate_MPIAIJ##Name(Mat A) \
  { \
    PetscFunctionBegin; \
    PetscCall(MPICreate(A, &(info))); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatConvert_SeqAIJ_SeqAIJ##Name(Mat A, MatType, MatReuse reuse, Mat *B) \
  { \
    PetscFunctionBegin; \
    PetscCall(SeqConvertFromBase(A, &(info), nullptr, reuse, B)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  } \
  PetscErrorCode MatConvert_MPIAIJ_MPIAIJ##Name(Mat A, MatType, MatReuse reuse, Mat *B) \
  { \
    PetscFunctionBegin; \
    PetscCall(MPIConvertFromBase(A, &(info), nullptr, reuse, B)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

#define PSPMV_ROW(Name, Module, cuda, root, seq, mpi, Base, backend) \
  {FormatOf<pspmv::Module>(), cuda, root, seq, mpi, MATSEQ##Base, MATMPI##Base, MatCreate_Seq##Base, MatCreate_MPI##Base, backend, MatCreate_##Name, MatCreate_SeqAIJ##Name, MatCreate_MPIAIJ##Name, MatConvert_SeqAIJ_SeqAIJ##Name, MatConvert_MPIAIJ_MPIAIJ##Name}

PSPMV_DECLARE_FAMILY(RgCSR)
PSPMV_DECLARE_FAMILY(PackSELL)
#if defined(PETSCSPMV_HAVE_CUDA)
PSPMV_DECLARE_FAMILY(RgCSRCUDA)
PSPMV_DECLARE_FAMILY(PackSELLCUDA)
#endif

namespace {
/* the host families are AIJ underneath, the CUDA ones AIJCUSPARSE */
const TypeInfo kRgCSR    = PSPMV_ROW(RgCSR, RgCsrModule, PETSC_FALSE, MATRGCSR, MATSEQRGCSR, MATMPIRGCSR, AIJ, CreateHostShadow);
const TypeInfo kPackSELL = PSPMV_ROW(PackSELL, PackSellModule, PETSC_FALSE, MATPACKSELL, MATSEQPACKSELL, MATMPIPACKSELL, AIJ, CreateHostShadow);
#if defined(PETSCSPMV_HAVE_CUDA)
const TypeInfo kRgCSRCUDA    = PSPMV_ROW(RgCSRCUDA, RgCsrModule, PETSC_TRUE, MATRGCSRCUDA, MATSEQRGCSRCUDA, MATMPIRGCSRCUDA, AIJCUSPARSE, CreateCudaShadow);
const TypeInfo kPackSELLCUDA = PSPMV_ROW(PackSELLCUDA, PackSellModule, PETSC_TRUE, MATPACKSELLCUDA, MATSEQPACKSELLCUDA, MATMPIPACKSELLCUDA, AIJCUSPARSE, CreateCudaShadow);
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
