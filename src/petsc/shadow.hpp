// The backend table: a "shadow" is the SpMV layout (RgCSR or PackSELL, host or CUDA) that a
// matrix keeps beside its AIJ arrays. The Mat glue only talks to this interface.
#pragma once
#include <petscmat.h>

#include "core/csr.hpp"
#include "core/format_stats.hpp"
#include "core_error.hpp"
#include "format_options.hpp"

#include <memory>
#include <string>

namespace pspmv
{
namespace glue
{

/* The flops one product logs (-log_view), AIJ's convention (MatMult_SeqAIJ, MatMultAdd_SeqAIJ;
   AIJCUSPARSE logs the same as GPU flops): y = A x is 2 nnz - (rows with a stored entry),
   y = y + A x is 2 nnz, nnz counting AIJ's stored entries (explicit zeros included). */
struct ProductFlops {
  PetscLogDouble mult = 0, multadd = 0;
};
/* From A's (host) row offsets. */
PetscErrorCode CountProductFlops(Mat A, ProductFlops *f);

/* What a backend builds or updates a layout from: the matrix (SeqAIJ-based for the host backend,
   SeqAIJCUSPARSE-based for the CUDA one), how its rows and columns are numbered globally (range
   errors name entries by it) and, for the CUDA backend, whether AIJCUSPARSE's device CSR is to
   be left unallocated (the host CSR is then uploaded into a temporary buffer when the device
   copy is not current). */
struct BuildSource {
  Mat           A;
  GlobalIndices global;
  PetscBool     free_device_csr = PETSC_FALSE;
  /* A host CSR of A's shape and nonzero count to build from instead of A's arrays (A then gives
     the flops a product logs): the permuted matrix of an ordered layout (CreateOrderedShadow) */
  const CsrView *csr = nullptr;
};

class Shadow {
public:
  virtual ~Shadow() = default;
  // Builds the layout of src.A (called once, on a fresh object). On error nothing is kept.
  virtual PetscErrorCode Build(const BuildSource &src, const FormatOptions &opts) = 0;
  // Same pattern, new values. *pattern_changed is set (and nothing changed) when A's pattern is
  // not the one the layout was built from: the caller then builds a new layout.
  virtual PetscErrorCode UpdateValues(const BuildSource &src, PetscBool *pattern_changed) = 0;
  // y = A x (add false) or y = y + A x (add true); x, y of any memory type.
  virtual PetscErrorCode Mult(Vec x, Vec y, PetscBool add) = 0;
  // d[r] = A(r,r) as stored in the layout (decoded), 0 beyond min(rows, cols).
  virtual PetscErrorCode GetDiagonal(Vec d) = 0;
  // Frees device memory (host memory goes with the object).
  virtual PetscErrorCode Release()     = 0;
  virtual FormatStats    Stats() const = 0;
  // Bytes of device memory the layout holds (its arrays, diagonal, value-update maps and staging
  // buffers; 0 for the host backend).
  virtual PetscInt64 DeviceBytes() const = 0;
  // PackSELL: the values are stored times 2^ScaleExponent() (0 for RgCSR).
  virtual PetscInt ScaleExponent() const = 0;
  // The backend's choices for the built layout, for -info: "host kernels", "CUDA kernels,
  // 2 threads per row".
  virtual std::string Backend() const = 0;
};

/* An ordering of the layout's rows and columns (format option "ordering"): inner's layout is
   built from P A P^T (P from PETSc's MatGetOrdering(), which the user's square matrix or MPI
   diagonal block must support); a product gathers x into that order and scatters y back
   (permuter.hpp; cuda: the CUDA backend's kernels and work vectors), so A keeps its numbering
   everywhere else. */
std::unique_ptr<Shadow> CreateOrderedShadow(std::unique_ptr<Shadow> inner, LayoutOrdering ordering, bool cuda);

// Host kernels of the core (reference backend).
std::unique_ptr<Shadow> CreateHostShadow(Format f);
#if defined(PETSCSPMV_HAVE_CUDA)
// CUDA kernels (src/cuda); the layout is built and updated on the device from AIJCUSPARSE's
// device CSR.
std::unique_ptr<Shadow> CreateCudaShadow(Format f);
#endif

} // namespace glue
} // namespace pspmv
