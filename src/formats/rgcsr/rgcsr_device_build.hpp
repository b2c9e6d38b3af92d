// RgCSR built on the device from a device CSR (PETSc-free; implemented in
// rgcsr_device_build.cu). The result is bit for bit the layout build_rgcsr() makes on the host
// and upload() copies (the host builder stays the reference and the builder of the host types).
#pragma once
#include "core/build_error.hpp"
#include "cuda/device_csr.hpp"
#include "formats/rgcsr/rgcsr_device.hpp"

namespace pspmv
{
namespace cuda
{

/* build_on_device - builds the RgCSR layout of A into *d on the device.

   Input: A, a CSR in device memory (rows x cols, nnz entries; rowptr rows + 1 int32,
   colidx / values nnz int32 / FP64); opt, the options of build_rgcsr(); stream, where every
   kernel, CUB call and copy runs (the call synchronizes it before returning).
   Output: *d (what it held is released first): group_pointers, row_length, columns, values,
   the COO tail with its CSR positions (tail.source, for value updates), the diagonal and the
   threads per row, exactly as upload(build_rgcsr(A_host, opt)) gives them; *info: the
   statistics RgCsrMatrix::stats() gives, scale exponent 0.
   Algorithm: row lengths and group maxima on the device (DeviceSegmentedReduce); the build
   driver of rgcsr_plan.hpp decides K (for hybrid auto from their histograms, radix sort +
   run-length encoding, copied back; the same code as the host build); group pointers by
   DeviceScan, one thread per row writes its K slots, one warp per row its tail.
   Errors come back as the BuildError (nothing is thrown but std::bad_alloc): Format for the options build_rgcsr()
   refuses, with its message, and for an invalid CSR (check_csr's message, found on the
   device); Device for a failed CUDA call. On any error *d is left empty. */
BuildError build_on_device(const DeviceCsr &A, const RgCsrOptions &opt, cudaStream_t stream, DeviceRgCsr *d, DeviceBuildInfo *info);

/* update_values_on_device - value-only re-assembly of a layout made by build_on_device().

   A has the pattern the layout was built from and new values (device arrays as above).
   Rewrites the regular values (slot of nonzero k of row r from the layout header), the tail
   values (gathered through tail.source) and the diagonal; the same as
   upload_values(update_rgcsr_values(...)). *pattern_changed is set, and nothing written, when
   A's shape or nonzero count differs (a changed pattern with the same counts is the caller's
   to detect: the PETSc glue compares nonzero states) or d was not built on the device.
   *scale_exponent is set to 0 (the signature is PackSELL's). Errors: Device only. Runs on
   stream and synchronizes it. */
BuildError update_values_on_device(const DeviceCsr &A, cudaStream_t stream, DeviceRgCsr *d, bool *pattern_changed, int32_t *scale_exponent);

} // namespace cuda
} // namespace pspmv
