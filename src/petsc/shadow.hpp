// The backend table: a "shadow" is the SpMV layout (RgCSR or PackSELL, host or CUDA) that a
// matrix keeps beside its AIJ arrays. The Mat glue only talks to this interface.
#pragma once
#include <petscmat.h>

#include "core/csr.hpp"
#include "core/format_stats.hpp"
#include "format_options.hpp"

#include <memory>

namespace pspmv {
namespace glue {

class Shadow {
public:
  virtual ~Shadow() = default;
  // Builds the layout of A (called once, on a fresh object). On error nothing is kept.
  virtual PetscErrorCode Build(const CsrView &A, const FormatOptions &opts) = 0;
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
};

// Host kernels of the core (reference backend).
std::unique_ptr<Shadow> CreateHostShadow(Format f);
#if defined(PETSCSPMV_HAVE_CUDA)
// CUDA kernels (src/cuda); host copy of the layout kept for value updates.
std::unique_ptr<Shadow> CreateCudaShadow(Format f);
#endif

} // namespace glue
} // namespace pspmv
