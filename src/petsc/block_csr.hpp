// The CSR arrays of a SeqAIJ-based matrix (AIJ, AIJCUSPARSE or ours) as the core reads them: the
// host arrays for both backends of PCMIXEDKRYLOV and for MatConvert from aijcusparse (convert.cpp),
// and whether AIJCUSPARSE's device arrays can be read instead (cuda/aijcusparse_csr.hpp reads them).
#pragma once
#include <petscmat.h>

#include "core/csr.hpp"

#include <functional>

namespace pspmv
{
namespace glue
{

/* The host arrays of a SeqAIJ-based matrix as PETSc holds them (PetscInt indices): n rows, row
   offsets ia (n + 1; never NULL), columns ja and values aa (ia[n] each). */
struct AIJArrays {
  PetscInt           n  = 0;
  const PetscInt    *ia = nullptr, *ja = nullptr;
  const PetscScalar *aa = nullptr;
};

/* Calls f with Ad's host arrays (values copied from the GPU first where they are newer there);
   returns f's error after restoring them. */
PetscErrorCode WithAIJArrays(Mat Ad, const std::function<PetscErrorCode(const AIJArrays &)> &f);

/* Calls f with the host CSR of Ad (values copied from the GPU first where they are newer there);
   returns f's error after restoring the arrays. With 64-bit PetscInt the row offsets and columns
   are 32-bit copies (an O(nnz) copy per call); a block too large for 32-bit indices is refused
   (PETSC_ERR_ARG_OUTOFRANGE, check_fits_int32()) before f runs. */
PetscErrorCode WithCsr(Mat Ad, const std::function<PetscErrorCode(const CsrView &)> &f);

/* Whether A's CSR can be read from AIJCUSPARSE's device arrays: a MATSEQAIJCUSPARSE matrix or
   one of our seq CUDA types (AIJCUSPARSE underneath), not bound to the CPU
   (MatSeqAIJCUSPARSEGetIJ() refuses a bound one). */
PetscErrorCode AIJCusparseOnDevice(Mat A, PetscBool *dev);

} // namespace glue
} // namespace pspmv
