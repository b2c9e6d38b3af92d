// The PackSELL module: its options and hooks for the PETSc glue (src/formats/format_module.hpp).
#pragma once
#include "formats/format_module.hpp"
#include "packsell.hpp"

#include <cstdio>

namespace pspmv
{

struct PackSellModule {
  using Options                       = PackSellOptions;
  using Host                          = PackSellMatrix;
  static constexpr const char *name   = "packsell";
  static constexpr const char *title  = "PackSELL";
  static constexpr bool        scaled = true;
  // The sigma option's value asking for the automatic window (core kPackSellSigmaAuto).
  static constexpr long long           kSigmaDecide         = kOptionDecide;
  static constexpr size_t              num_options          = 7;
  static constexpr OptionSpec<Options> options[num_options] = {
    {"slice_height", "slice height", "Rows per PackSELL slice (a multiple of 32 in [32, 1024])", "MatPackSELLSetSliceHeight", true, [](Options &o, long long v, const std::string &) { o.slice_height = detail::option_int32("slice height", v); },
     [](const Options &o) { return static_cast<long long>(o.slice_height); }, [](const Options &o) { return std::to_string(o.slice_height); }},
    {"sigma", "sigma", "Window of rows sorted by length before slicing: 1 (no sorting, the default), PETSC_DECIDE (-1: chosen from the row lengths at assembly) or a multiple of the slice height", "MatPackSELLSetSigma", true,
     [](Options &o, long long v, const std::string &) {
       // 0 is the core's auto, not a window: through PETSc only PETSC_DECIDE asks for the choice
       if (v != kSigmaDecide && v < 1) throw FormatError("PackSELL sigma " + std::to_string(v) + " is not valid: use PETSC_DECIDE (chosen from the row lengths), 1 (no sorting) or a positive multiple of the slice height");
       o.sigma = v == kSigmaDecide ? kPackSellSigmaAuto : detail::option_int32("sigma", v);
     },
     [](const Options &o) { return o.sigma == kPackSellSigmaAuto ? kSigmaDecide : static_cast<long long>(o.sigma); }, [](const Options &o) { return o.sigma == kPackSellSigmaAuto ? std::to_string(kSigmaDecide) : std::to_string(o.sigma); },
     [](const FormatStats &s) { return static_cast<long long>(s.sigma); }},
    {"value_format", "value format", "Value format of the values: exact (FP64, lossless), or lossy fp16, bf16, e8m<m> (7 <= m <= 22) packed in each word", "MatPackSELLSetValueFormat", false,
     [](Options &o, long long, const std::string &s) { o.value_format = ValueFormat::parse(s); }, nullptr, [](const Options &o) { return o.value_format.name(); }},
    {"scaling", "scaling", "Scale the values by a power of two so they fit the value format: none or auto", "MatPackSELLSetScaling", false,
     [](Options &o, long long, const std::string &s) {
       if (s == "none") o.scaling = PackSellScaling::None;
       else if (s == "auto") o.scaling = PackSellScaling::Auto;
       else throw FormatError("PackSELL scaling '" + s + "' is not valid: use none or auto");
     },
     nullptr, [](const Options &o) { return std::string(o.scaling == PackSellScaling::Auto ? "auto" : "none"); }},
    hybrid_option_spec<Options>("MatPackSELLSetHybrid"),
    {"column_gaps", "column gaps", "Column gaps (a per-slice table of the column steps the slice's rows share, so wide stencils need no dummy words): auto (where they make the layout smaller) or off", "MatPackSELLSetColumnGaps", false,
     [](Options &o, long long, const std::string &s) {
       if (s == "auto") o.column_gaps = true;
       else if (s == "off") o.column_gaps = false;
       else throw FormatError("PackSELL column gaps '" + s + "' is not valid: use auto or off");
     },
     nullptr, [](const Options &o) { return std::string(o.column_gaps ? "auto" : "off"); }},
    ordering_option_spec<Options>("MatPackSELLSetOrdering"),
  };

  // The options spelled as the user sets them (prefix: "-sub_mat_packsell_"), for messages.
  static void        name_options(Options &o, const std::string &prefix) { o.scaling_option = prefix + "scaling"; }
  static Host        build(const CsrView &A, const Options &o) { return build_packsell(A, o); }
  static void        update(const CsrView &A, Host &M) { update_packsell_values(A, M); }
  static void        spmv(const Host &M, const double *x, double *y, bool add) { packsell_spmv(M, x, y, add); }
  static void        diagonal(const Host &M, double *d) { packsell_diagonal(M, d); }
  static int         scale_exponent(const Host &M) { return M.scale_exponent; }
  static std::string describe(const Options &o)
  {
    const std::string sigma = o.sigma == kPackSellSigmaAuto ? "auto" : std::to_string(o.sigma);
    return "slice height " + std::to_string(o.slice_height) + ", sigma " + sigma + ", value format " + o.value_format.name() + ", scaling " + (o.scaling == PackSellScaling::Auto ? "auto" : "none") + ", hybrid " + o.hybrid.name() + ", column gaps " + (o.column_gaps ? "auto" : "off") + ordering_note(o.ordering);
  }
  static bool        lossy(const Options &o) { return o.value_format.lossy(); }
  static std::string values_note(const Options &o)
  {
    const ValueFormat &vf = o.value_format;
    if (!vf.lossy()) return "lossless (" + vf.name() + ": the matrix's FP64 values)";
    char u[32];
    std::snprintf(u, sizeof(u), "%.3g", vf.unit_roundoff());
    return "LOSSY " + vf.name() + " (unit roundoff " + u + "): products use a rounded copy of this matrix, not the matrix itself";
  }
};

} // namespace pspmv
