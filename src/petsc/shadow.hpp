// The backend table: a "shadow" is the SpMV layout (RgCSR or PackSELL, host or CUDA) that a
// matrix keeps beside its AIJ arrays. The Mat glue only talks to this interface.
#pragma once
#include <petscmat.h>

#include "core/csr.hpp"
#include "core/format_stats.hpp"
#include "format_options.hpp"

#include <memory>
#include <string>

namespace pspmv {
namespace glue {

/* The flops one product logs (-log_view), AIJ's convention (MatMult_SeqAIJ, MatMultAdd_SeqAIJ;
   AIJCUSPARSE logs the same as GPU flops): y = A x is 2 nnz - (rows with a stored entry),
   y = y + A x is 2 nnz, nnz counting AIJ's stored entries (explicit zeros included). */
struct ProductFlops {
  PetscLogDouble mult = 0, multadd = 0;
};
inline ProductFlops CountProductFlops(const CsrView &A)
{
  PetscInt64 nonzero_rows = 0;
  for (int32_t r = 0; r < A.rows; ++r) nonzero_rows += A.row_length(r) > 0;
  ProductFlops f;
  f.multadd = 2.0 * (PetscLogDouble)A.nnz();
  f.mult    = f.multadd - (PetscLogDouble)nonzero_rows;
  return f;
}

class Shadow {
public:
  virtual ~Shadow() = default;
  // Builds the layout of A (called once, on a fresh object). On error nothing is kept.
  // device_twin: NULL, or a MATSEQAIJCUSPARSE matrix (not bound to the CPU) whose CSR is A's
  // (the source of a MatConvert()): a device backend reads the CSR from its device arrays instead
  // of uploading A's (the host backend ignores it).
  virtual PetscErrorCode Build(const CsrView &A, const FormatOptions &opts, Mat device_twin) = 0;
  // Same pattern, new values. *pattern_changed is set (and nothing changed) when A's pattern is
  // not the one the layout was built from: the caller then builds a new layout.
  virtual PetscErrorCode UpdateValues(const CsrView &A, PetscBool *pattern_changed) = 0;
  // y = A x (add false) or y = y + A x (add true); x, y of any memory type.
  virtual PetscErrorCode Mult(Vec x, Vec y, PetscBool add) = 0;
  // d[r] = A(r,r) as stored in the layout (decoded), 0 beyond min(rows, cols).
  virtual PetscErrorCode GetDiagonal(Vec d) = 0;
  // Frees device memory (host memory goes with the object).
  virtual PetscErrorCode Release() = 0;
  virtual FormatStats Stats() const = 0;
  // PackSELL: the values are stored times 2^ScaleExponent() (0 for RgCSR).
  virtual PetscInt ScaleExponent() const = 0;
  // The backend's choices for the built layout, for -info: "host kernels", "CUDA kernels,
  // 2 threads per row".
  virtual std::string Backend() const = 0;
};

// Host kernels of the core (reference backend).
std::unique_ptr<Shadow> CreateHostShadow(Format f);
#if defined(PETSCSPMV_HAVE_CUDA)
// CUDA kernels (src/cuda); the layout is built and updated on the device from an uploaded CSR
// (or from a device twin's CSR).
std::unique_ptr<Shadow> CreateCudaShadow(Format f);
#endif

} // namespace glue
} // namespace pspmv
