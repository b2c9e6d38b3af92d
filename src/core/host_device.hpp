// PSPMV_HD marks the layout functions that host builders, host kernels and CUDA kernels share
// (src/formats/*/*_layout.hpp): __host__ __device__ under nvcc, plain inline elsewhere, so the
// PETSc-free host code compiles without CUDA.
#pragma once
#if defined(__CUDACC__)
  #define PSPMV_HD __host__ __device__ __forceinline__
#else
  #define PSPMV_HD inline
#endif
