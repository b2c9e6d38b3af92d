// PackSELL built on the device from a device CSR (PETSc-free; implemented in
// packsell_device_build.cu). The result is bit for bit the layout build_packsell() makes on the
// host and upload() copies (the host builder stays the reference and the builder of the host
// types).
#pragma once
#include "core/build_error.hpp"
#include "cuda/device_csr.hpp"
#include "formats/packsell/packsell_device.hpp"

namespace pspmv
{
namespace cuda
{

/* build_on_device - builds the PackSELL layout of A into *d on the device.

   Input: A, a CSR in device memory (rows x cols, nnz entries; rowptr rows + 1 int32,
   colidx / values nnz int32 / FP64); opt, the options of build_packsell(); stream, where every
   kernel, CUB call and copy runs (synchronized before returning).
   Output: *d (released first): slice_pointers (int64 word offsets), perm, words, exact_values,
   the COO tail (values rounded as on the host) with its CSR positions, the diagonal, the
   threads per row and word_source (CSR position of each nonzero word, -1 otherwise: the index
   map of value updates), exactly as upload(build_packsell(A_host, opt)) gives them; *info: the
   statistics PackSellMatrix::stats() gives and the scale exponent.
   Algorithm: the build driver of packsell_plan.hpp (every decision: scale exponent and range
   check, sigma, K, row order; the same code as the host build) over a device executor (CUB
   reductions, radix sorts, scans; only scalars, counts per row length and per-K sums come back
   to the host), then the fill from the plan: slice pointers by DeviceScan, one thread per sorted
   row writes its words (value codec: core/value_codec_hd.hpp, the host's code), one warp per
   row its tail.
   Errors come back as the BuildError (nothing is thrown but std::bad_alloc): Format for bad options (the host
   builder's message) and an invalid CSR (check_csr's message, found on the device);
   ValueRange with the row and column of the first offending entry in CSR order and the host's
   message; Device for a failed CUDA call. On any error *d is left empty. */
BuildError build_on_device(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t stream, DevicePackSell *d, DeviceBuildInfo *info);

/* update_values_on_device - value-only re-assembly of a layout made by build_on_device().

   A has the pattern the layout was built from and new values. The scale exponent is chosen
   afresh (scaling auto) and every value checked as at the build; then the value fields of the
   words (or exact_values) are re-encoded through word_source, the tail values through
   tail.source, and the diagonal recomputed: the same as upload_values(update_packsell_values(...)).
   *pattern_changed is set, and nothing written, when A's shape or nonzero count differs or d
   was not built on the device. Returns the build's ValueRange error (then *d is unchanged) or a
   Device error; *scale_exponent gets the new exponent. Runs on stream and synchronizes it. */
BuildError update_values_on_device(const DeviceCsr &A, cudaStream_t stream, DevicePackSell *d, bool *pattern_changed, int32_t *scale_exponent);

} // namespace cuda
} // namespace pspmv
