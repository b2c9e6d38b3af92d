// cuSPARSE called directly (formats cusparse_csr:fp64|fp16, cusparse_sell:fp64|fp16): upload,
// the first combination of types cuSPARSE accepts, timing, check.
#pragma once
#include "bench_context.hpp"
#include "results.hpp"
#include "format_spec.hpp"
#include "matrix_source.hpp"

namespace bench
{

PetscErrorCode RunCusparse(Bench &b, const HostCsr &H, const FormatSpec &f, const Reference &ref, Result &r);

} // namespace bench
