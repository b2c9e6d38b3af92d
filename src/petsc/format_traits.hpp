// What differs between the two formats on the host: one traits struct each, shared by the
// host and the CUDA shadows (so neither backend repeats format code).
#pragma once
#include "formats/packsell/packsell.hpp"
#include "formats/rgcsr/rgcsr.hpp"
#include "format_options.hpp"

namespace pspmv {
namespace glue {

template <Format F>
struct FormatTraits;

template <>
struct FormatTraits<Format::RgCSR> {
  using Host = RgCsrMatrix;
  static Host Build(const CsrView &A, const FormatOptions &o) { return build_rgcsr(A, o.rgcsr); }
  static void Update(const CsrView &A, Host &M) { update_rgcsr_values(A, M); }
  static void Spmv(const Host &M, const double *x, double *y, bool add) { rgcsr_spmv(M, x, y, add); }
  static void Diagonal(const Host &M, double *d) { rgcsr_diagonal(M, d); }
  static int  ScaleExponent(const Host &) { return 0; }
};

template <>
struct FormatTraits<Format::PackSELL> {
  using Host = PackSellMatrix;
  static Host Build(const CsrView &A, const FormatOptions &o) { return build_packsell(A, o.packsell); }
  static void Update(const CsrView &A, Host &M) { update_packsell_values(A, M); }
  static void Spmv(const Host &M, const double *x, double *y, bool add) { packsell_spmv(M, x, y, add); }
  static void Diagonal(const Host &M, double *d) { packsell_diagonal(M, d); }
  static int  ScaleExponent(const Host &M) { return M.scale_exponent; }
};

} // namespace glue
} // namespace pspmv
