// PackSELL built on the device from a device CSR (PETSc-free; implemented in
// packsell_device_build.cu). The result is bit for bit the layout build_packsell() makes on the
// host and upload() copies (the host builder stays the reference and the builder of the host
// types).
#pragma once
#include "cuda/device_csr.hpp"
#include "formats/packsell/packsell_device.hpp"

namespace pspmv {
namespace cuda {

/* build_on_device - builds the PackSELL layout of A into *d on the device.

   Input: A, a CSR in device memory (rows x cols, nnz entries; rowptr rows + 1 int32,
   colidx / values nnz int32 / FP64); opt, the options of build_packsell(); stream, where every
   kernel, CUB call and copy runs (synchronized before returning).
   Output: *d (released first): slice_pointers (int64 word offsets), perm, words, exact_values,
   the COO tail (values rounded as on the host) with its CSR positions, the diagonal, the
   threads per row and word_source (CSR position of each nonzero word, -1 otherwise: the index
   map of value updates), exactly as upload(build_packsell(A_host, opt)) gives them; *info: the
   statistics PackSellMatrix::stats() gives and the scale exponent.
   Algorithm (the host builder's steps, each on the device): the scale exponent from the
   largest finite magnitude (DeviceReduce) by the host's auto_scale; the range check of every
   value (first offending CSR position by atomicMin); words per row; sigma sort as one stable
   DeviceRadixSort of (window, ~words) keys; for hybrid auto the per-slice widest-row table
   and its per-K sums (DeviceSegmentedReduce) and the length histogram come back and the host
   rule choose_hybrid_width_from_counts() picks K; the automatic sigma costs every candidate
   window the same way and picks with packsell_pick_sigma(); slice pointers by DeviceScan;
   one thread per sorted row writes its words (value codec: core/value_codec_hd.hpp, the
   host's code); one warp per row its tail.
   Errors (thrown, the host builder's exceptions and messages): FormatError for bad options
   and an invalid CSR; ValueRangeError with the row and column of the first offending entry
   in CSR order. The first CUDA error otherwise. On any error *d is left empty. */
cudaError_t build_on_device(const DeviceCsr &A, const PackSellOptions &opt, cudaStream_t stream, DevicePackSell *d,
                            DeviceBuildInfo *info);

/* update_values_on_device - value-only re-assembly of a layout made by build_on_device().

   A has the pattern the layout was built from and new values. The scale exponent is chosen
   afresh (scaling auto) and every value checked as at the build; then the value fields of the
   words (or exact_values) are re-encoded through word_source, the tail values through
   tail.source, and the diagonal recomputed: the same as upload_values(update_packsell_values(...)).
   *pattern_changed is set, and nothing written, when A's shape or nonzero count differs or d
   was not built on the device. Throws ValueRangeError as the build (then *d is unchanged);
   *scale_exponent gets the new exponent. Runs on stream and synchronizes it. */
cudaError_t update_values_on_device(const DeviceCsr &A, cudaStream_t stream, DevicePackSell *d, bool *pattern_changed,
                                    int32_t *scale_exponent);

} // namespace cuda
} // namespace pspmv
