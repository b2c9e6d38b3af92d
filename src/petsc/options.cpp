// The -mat_<format>_<option> options of every format of the registry: the options database,
// -help, and the setter/getter functions composed on the matrices.
#include "spmvimpl.hpp"

namespace pspmv
{
namespace glue
{

namespace
{

static_assert(PETSC_DECIDE == kOptionDecide, "integer options map PETSC_DECIDE to the builder's choice");

PetscErrorCode ErrorClass(bool integer)
{
  return integer ? PETSC_ERR_ARG_OUTOFRANGE : PETSC_ERR_ARG_WRONG;
}

/* "MatRgCSRSetOption_C" and the like, one pair per format (a name that does not fit is cut: no
   format title is that long). */
OptionFnName ComposedName(Format f, bool set)
{
  OptionFnName n;
  (void)PetscSNPrintf(n.s, sizeof(n.s), "Mat%s%s", FormatTitle(f), set ? "SetOption_C" : "GetOption_C");
  return n;
}

} // namespace

OptionFnName SetOptionName(Format f)
{
  return ComposedName(f, true);
}
OptionFnName GetOptionName(Format f)
{
  return ComposedName(f, false);
}

PetscErrorCode ReadOptions(Mat A, PetscSpMVOptionItems PetscOptionsObject, FormatOptions *opts)
{
  PetscFunctionBegin;
  PetscCall(ReadFormatOptions((PetscObject)A, "", PetscOptionsObject, opts));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReadFormatOptions(PetscObject obj, const char infix[], PetscSpMVOptionItems PetscOptionsObject, FormatOptions *opts)
{
  FormatOptions o      = *opts;
  const Format  f      = o.format();
  PetscOptions  db     = obj->options;
  const char   *prefix = obj->prefix;
  char          title[64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(title, sizeof(title), "%s (petscspmv) options", FormatTitle(f)));
  if (PetscOptionsObject) PetscOptionsHeadBegin(PetscOptionsObject, title);
  for (size_t i = 0; i < NumOptions(f); i++) {
    const OptionInfo spec = OptionAt(f, i);
    PetscBool        set  = PETSC_FALSE;
    PetscInt         iv   = 0;
    char             name[128], sv[256];

    PetscCall(PetscSNPrintf(name, sizeof(name), "-%smat_%s_%s", infix, FormatName(f), spec.key));
    if (infix[0] && spec.refused_by_copies) { /* a solver's copy (infix: its options) */
      PetscBool has;
      PetscCall(PetscOptionsHasName(db, prefix, name, &has));
      PetscCheck(!has, PetscObjectComm(obj), PETSC_ERR_SUP, "-%s%s: %s", prefix ? prefix : "", name + 1, spec.refused_by_copies);
      continue;
    }
    sv[0] = 0;
    if (spec.integer) {
      PetscInt cur;
      PetscCallCore(PETSC_ERR_PLIB, cur = (PetscInt)o.GetInt(spec.key));
      if (PetscOptionsObject) PetscCall(PetscOptionsInt(name, spec.help, spec.setter, cur, &iv, &set));
      else PetscCall(PetscOptionsGetInt(db, prefix, name, &iv, &set));
    } else {
      std::string cur;
      PetscCallCore(PETSC_ERR_PLIB, cur = o.GetString(spec.key));
      if (PetscOptionsObject) PetscCall(PetscOptionsString(name, spec.help, spec.setter, cur.c_str(), sv, sizeof(sv), &set));
      else PetscCall(PetscOptionsGetString(db, prefix, name, sv, sizeof(sv), &set));
    }
    /* each value on its own first; the set as a whole below, so the order does not matter */
    if (set) PetscCallCore(ErrorClass(spec.integer), o.Set(spec.key, iv, sv, false));
  }
  if (PetscOptionsObject) PetscOptionsHeadEnd();
  PetscCall(NameFormatOptions(obj, infix, &o));
  PetscCallCore(PETSC_ERR_ARG_OUTOFRANGE, o.Validate());
  *opts = o;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode NameFormatOptions(PetscObject obj, const char infix[], FormatOptions *opts)
{
  PetscFunctionBegin;
  PetscCallCore(PETSC_ERR_PLIB, opts->NameOptions(std::string("-") + (obj->prefix ? obj->prefix : "") + infix + "mat_" + FormatName(opts->format()) + "_"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetOption(FormatOptions *opts, const char key[], PetscInt ivalue, const char svalue[])
{
  bool integer = false;

  PetscFunctionBegin;
  PetscCallCore(PETSC_ERR_ARG_WRONG, integer = opts->IsInteger(key));
  PetscCallCore(ErrorClass(integer), opts->Set(key, ivalue, svalue, true));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetOption(const FormatOptions &opts, std::map<std::string, std::string> *names, const char key[], PetscInt *ivalue, const char *svalue[])
{
  bool integer = false;

  PetscFunctionBegin;
  PetscCallCore(PETSC_ERR_ARG_WRONG, integer = opts.IsInteger(key));
  if (integer) {
    PetscCheck(ivalue, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "integer option queried without an integer output");
    PetscCallCore(PETSC_ERR_ARG_WRONG, *ivalue = (PetscInt)opts.GetInt(key));
  } else {
    PetscCheck(svalue, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "string option queried without a string output");
    PetscCallCore(PETSC_ERR_ARG_WRONG, (*names)[key] = opts.GetString(key));
    *svalue = (*names)[key].c_str();
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ReadFreeDeviceCsr(Mat A, PetscSpMVOptionItems PetscOptionsObject, PetscBool *flg)
{
  PetscFunctionBegin;
  if (PetscOptionsObject) {
    PetscOptionsHeadBegin(PetscOptionsObject, "CUDA layouts (petscspmv) options");
    PetscCall(PetscOptionsBool("-mat_spmv_free_device_csr", "Build and update the layout without keeping AIJCUSPARSE's device CSR (device memory: the layout alone)", "MatSpMVSetFreeDeviceCSR", *flg, flg, nullptr));
    PetscOptionsHeadEnd();
  } else PetscCall(PetscOptionsGetBool(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_spmv_free_device_csr", flg, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ComposeOptionFunctions(Mat A, const TypeInfo *t, SetOptionFn set, GetOptionFn get, GetStatsFn stats, SetFreeCsrFn freecsr)
{
  const Format f = t->format;

  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, SetOptionName(f).s, set));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, GetOptionName(f).s, get));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSpMVGetStats_C", stats));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSpMVSetFreeDeviceCSR_C", freecsr));
  /* with the options: MatAXPY() results that keep them */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAXPYGetPreallocation_C", set ? MatAXPYGetPreallocation_SpMV : nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
