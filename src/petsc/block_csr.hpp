// The host CSR arrays of a SeqAIJ-based matrix (AIJ, AIJCUSPARSE or ours) as the core reads them:
// for both backends of PCMIXEDKRYLOV and for MatConvert from aijcusparse (convert.cpp).
#pragma once
#include <petscmat.h>

#include "core/csr.hpp"

#include <functional>

namespace pspmv {
namespace glue {

/* Calls f with the host CSR of Ad (values copied from the GPU first where they are newer there);
   returns f's error after restoring the arrays. */
PetscErrorCode WithCsr(Mat Ad, const std::function<PetscErrorCode(const CsrView &)> &f);

} // namespace glue
} // namespace pspmv
