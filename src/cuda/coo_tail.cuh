// COO tail of the hybrid split on the device: upload helpers and the load-balanced
// y += T x kernel launch (PETSc-free).
#pragma once
#include "../core/hybrid.hpp"
#include "device_formats.hpp"
#include <cuda_runtime.h>

namespace pspmv {
namespace cuda {
namespace detail {

cudaError_t upload_tail(const CooTail &h, DeviceCooTail *d);        // allocates exactly
cudaError_t upload_tail_values(const CooTail &h, DeviceCooTail *d); // same nnz, new values
void release_tail(DeviceCooTail *d, cudaError_t *first);
int64_t tail_bytes(const DeviceCooTail &t);

// y += T x on stream; launches nothing when the tail is empty. Must run after the regular
// kernel on the same stream (that kernel writes every row when add == false).
cudaError_t coo_tail_spmv_add(const DeviceCooTail &t, const double *x, double *y, cudaStream_t stream);

} // namespace detail
} // namespace cuda
} // namespace pspmv
