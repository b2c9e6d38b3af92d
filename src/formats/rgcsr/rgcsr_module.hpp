// The RgCSR module: its options and hooks for the PETSc glue (src/formats/format_module.hpp).
#pragma once
#include "formats/format_module.hpp"
#include "rgcsr.hpp"

namespace pspmv
{

struct RgCsrModule {
  using Options                                             = RgCsrOptions;
  using Host                                                = RgCsrMatrix;
  static constexpr const char         *name                 = "rgcsr";
  static constexpr const char         *title                = "RgCSR";
  static constexpr bool                scaled               = false;
  static constexpr size_t              num_options          = 3;
  static constexpr OptionSpec<Options> options[num_options] = {
    {"group_size", "group size", "Rows per RgCSR group, stored column-major (a multiple of 32 in [32, 1024])", "MatRgCSRSetGroupSize", true, [](Options &o, long long v, const std::string &) { o.group_size = detail::option_int32("group size", v); },
     [](const Options &o) { return static_cast<long long>(o.group_size); }, [](const Options &o) { return std::to_string(o.group_size); }},
    hybrid_option_spec<Options>("MatRgCSRSetHybrid"),
    ordering_option_spec<Options>("MatRgCSRSetOrdering"),
  };

  static void        name_options(Options &, const std::string &) { } // no message names an option
  static Host        build(const CsrView &A, const Options &o) { return build_rgcsr(A, o); }
  static void        update(const CsrView &A, Host &M) { update_rgcsr_values(A, M); }
  static void        spmv(const Host &M, const double *x, double *y, bool add) { rgcsr_spmv(M, x, y, add); }
  static void        diagonal(const Host &M, double *d) { rgcsr_diagonal(M, d); }
  static int         scale_exponent(const Host &) { return 0; }
  static std::string describe(const Options &o) { return "group size " + std::to_string(o.group_size) + ", hybrid " + o.hybrid.name() + ordering_note(o.ordering); }
  static std::string values_note(const Options &) { return ""; }
  static bool        lossy(const Options &) { return false; }
};

} // namespace pspmv
