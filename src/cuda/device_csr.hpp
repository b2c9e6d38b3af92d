// A CSR matrix in device memory: the input of the device builders (PETSc-free). The PETSc glue
// uploads the AIJ arrays once (rowptr, colidx, values) and passes them as this view.
#pragma once
#include "core/format_stats.hpp"
#include <cstdint>

namespace pspmv
{
namespace cuda
{

// Non-owning view of device arrays: rowptr (rows + 1 entries, rowptr[0] = 0,
// rowptr[rows] = nnz), colidx and values (nnz entries each), columns strictly increasing
// inside each row, as pspmv::CsrView on the host. Null pointers are allowed for empty arrays.
struct DeviceCsr {
  int32_t        rows = 0, cols = 0;
  int64_t        nnz    = 0;
  const int32_t *rowptr = nullptr;
  const int32_t *colidx = nullptr;
  const double  *values = nullptr;
};

// What a device build reports besides the device layout: the statistics the host layout's
// stats() would give (MatView, MatSpMVGetStats) and the exponent the values are stored with.
struct DeviceBuildInfo {
  FormatStats stats;
  int32_t     scale_exponent = 0;
};

} // namespace cuda
} // namespace pspmv
