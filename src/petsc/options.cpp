// The -mat_rgcsr_* and -mat_packsell_* options: one table for the options database, -help and
// the setter/getter functions composed on the matrices.
#include "spmvimpl.hpp"

namespace pspmv {
namespace glue {

namespace {

struct OptionSpec {
  Format      format;
  OptionKey   key;
  const char *name, *help, *man;
};

const OptionSpec kOptions[] = {
  {Format::RgCSR, OptionKey::GroupSize, "-mat_rgcsr_group_size", "Rows per RgCSR group, stored column-major (a multiple of 32 in [32, 1024])", "MatRgCSRSetGroupSize"},
  {Format::RgCSR, OptionKey::Hybrid, "-mat_rgcsr_hybrid", "Hybrid split: auto, none, or the width K of the regular part (the rest goes to a COO tail)", "MatRgCSRSetHybrid"},
  {Format::PackSELL, OptionKey::SliceHeight, "-mat_packsell_slice_height", "Rows per PackSELL slice (a multiple of 32 in [32, 1024])", "MatPackSELLSetSliceHeight"},
  {Format::PackSELL, OptionKey::Sigma, "-mat_packsell_sigma", "Window of rows sorted by length before slicing: 1 (no sorting, the default), PETSC_DECIDE (-1: chosen from the row lengths at assembly) or a multiple of the slice height", "MatPackSELLSetSigma"},
  {Format::PackSELL, OptionKey::ValueFormat, "-mat_packsell_value_format", "Value format of the values: exact (FP64, lossless), or lossy fp16, bf16, e8m<m> (7 <= m <= 22) packed in each word", "MatPackSELLSetValueFormat"},
  {Format::PackSELL, OptionKey::Scaling, "-mat_packsell_scaling", "Scale the values by a power of two so they fit the value format: none or auto", "MatPackSELLSetScaling"},
  {Format::PackSELL, OptionKey::Hybrid, "-mat_packsell_hybrid", "Hybrid split: auto, none, or the width K of the regular part (the rest goes to a COO tail)", "MatPackSELLSetHybrid"},
};

static_assert(PETSC_DECIDE == kSigmaDecide, "the sigma option maps PETSC_DECIDE to the automatic choice");

PetscErrorCode ErrorClass(OptionKey key) { return IsIntegerOption(key) ? PETSC_ERR_ARG_OUTOFRANGE : PETSC_ERR_ARG_WRONG; }

} // namespace

const char *SetOptionName(Format f) { return f == Format::RgCSR ? "MatRgCSRSetOption_C" : "MatPackSELLSetOption_C"; }
const char *GetOptionName(Format f) { return f == Format::RgCSR ? "MatRgCSRGetOption_C" : "MatPackSELLGetOption_C"; }

PetscErrorCode ReadOptions(Mat A, PetscSpMVOptionItems PetscOptionsObject, Format f, FormatOptions *opts)
{
  FormatOptions o      = *opts;
  PetscOptions  db     = ((PetscObject)A)->options;
  const char   *prefix = ((PetscObject)A)->prefix;

  PetscFunctionBegin;
  if (PetscOptionsObject) PetscOptionsHeadBegin(PetscOptionsObject, f == Format::RgCSR ? "RgCSR (petscspmv) options" : "PackSELL (petscspmv) options");
  for (const OptionSpec &spec : kOptions) {
    PetscBool set = PETSC_FALSE;
    PetscInt  iv  = 0;
    char      sv[256];

    if (spec.format != f) continue;
    sv[0] = 0;
    if (IsIntegerOption(spec.key)) {
      const PetscInt cur = (PetscInt)o.GetInt(spec.key);
      if (PetscOptionsObject) PetscCall(PetscOptionsInt(spec.name, spec.help, spec.man, cur, &iv, &set));
      else PetscCall(PetscOptionsGetInt(db, prefix, spec.name, &iv, &set));
    } else {
      std::string cur;
      PetscCallCXX(cur = o.GetString(f, spec.key));
      if (PetscOptionsObject) PetscCall(PetscOptionsString(spec.name, spec.help, spec.man, cur.c_str(), sv, sizeof(sv), &set));
      else PetscCall(PetscOptionsGetString(db, prefix, spec.name, sv, sizeof(sv), &set));
    }
    /* each value on its own first; the set as a whole below, so the order does not matter */
    if (set) PetscCallCore(ErrorClass(spec.key), o.Set(f, spec.key, iv, sv, false));
  }
  if (PetscOptionsObject) PetscOptionsHeadEnd();
  PetscCallCore(PETSC_ERR_ARG_OUTOFRANGE, o.Validate(f));
  *opts = o;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetOption(Format f, FormatOptions *opts, OptionKey key, PetscInt ivalue, const char svalue[])
{
  PetscFunctionBegin;
  PetscCallCore(ErrorClass(key), opts->Set(f, key, ivalue, svalue, true));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetOption(Format f, const FormatOptions &opts, std::string names[], OptionKey key, PetscInt *ivalue, const char *svalue[])
{
  PetscFunctionBegin;
  if (IsIntegerOption(key)) {
    PetscCheck(ivalue, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "integer option queried without an integer output");
    PetscCallCore(PETSC_ERR_ARG_WRONG, *ivalue = (PetscInt)opts.GetInt(key));
  } else {
    PetscCheck(svalue, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "string option queried without a string output");
    PetscCallCore(PETSC_ERR_ARG_WRONG, names[(int)key] = opts.GetString(f, key));
    *svalue = names[(int)key].c_str();
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ComposeOptionFunctions(Mat A, Format f, SetOptionFn set, GetOptionFn get, GetStatsFn stats)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, SetOptionName(f), set));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, GetOptionName(f), get));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSpMVGetStats_C", stats));
  /* with the options: MatAXPY() results that keep them */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAXPYGetPreallocation_C", set ? MatAXPYGetPreallocation_SpMV : nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
