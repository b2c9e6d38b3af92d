// Public setters and getters of petscspmv.h: each dispatches to the function its matrix type
// composed (PetscTryMethod for setters: other types ignore them; PetscUseMethod for getters).
#include "spmvimpl.hpp"

using pspmv::glue::Format;
using pspmv::glue::FormatName;
using pspmv::glue::FormatOf;
using pspmv::glue::FormatTitle;
using pspmv::glue::GetOptionFn;
using pspmv::glue::GetOptionName;
using pspmv::glue::SetOptionName;

namespace {

PetscErrorCode SetInt(Mat A, Format f, const char key[], PetscInt v)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, v, 2);
  PetscTryMethod(A, SetOptionName(f), (Mat, const char[], PetscInt, const char[]), (A, key, v, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetString(Mat A, Format f, const char key[], const char v[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  PetscTryMethod(A, SetOptionName(f), (Mat, const char[], PetscInt, const char[]), (A, key, 0, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "rgcsr, rgcsrcuda": the root names of the families of format f (every family when f is null). */
PetscErrorCode RootNames(const Format *f, char names[], size_t len)
{
  PetscInt                            n;
  const pspmv::glue::TypeInfo *const *types = pspmv::glue::Types(&n);

  PetscFunctionBegin;
  names[0] = 0;
  for (PetscInt i = 0; i < n; i++) {
    if (f && types[i]->format != *f) continue;
    if (names[0]) PetscCall(PetscStrlcat(names, ", ", len));
    PetscCall(PetscStrlcat(names, types[i]->root, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Getters need a matrix of the format: anything else is an error that says so. */
PetscErrorCode GetOptionFunction(Mat A, Format f, const char *caller, GetOptionFn *fn)
{
  MatType type;
  char    names[256];

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, GetOptionName(f), fn));
  PetscCall(MatGetType(A, &type));
  PetscCall(RootNames(&f, names, sizeof(names)));
  PetscCheck(*fn, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "%s() needs a %s matrix (types %s, seq or mpi); this one is %s", caller, FormatTitle(f), names, type ? type : "untyped");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetInt(Mat A, Format f, const char key[], PetscInt *v, const char *caller)
{
  GetOptionFn fn;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  PetscCall(GetOptionFunction(A, f, caller, &fn));
  PetscCall((*fn)(A, key, v, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetString(Mat A, Format f, const char key[], const char *v[], const char *caller)
{
  GetOptionFn fn;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  PetscCall(GetOptionFunction(A, f, caller, &fn));
  PetscCall((*fn)(A, key, nullptr, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetIntC(Mat A, Format f, const char key[], PetscInt v, const char *) { return SetInt(A, f, key, v); }
PetscErrorCode SetStringC(Mat A, Format f, const char key[], const char v[], const char *) { return SetString(A, f, key, v); }

} // namespace

/* One public function per option and direction; the work is in the four helpers above. */
#define PSPMV_OPTION_API(name, helper, type, Module, key) \
  static_assert(pspmv::HasOption<pspmv::Module>(key), #name ": the module has no option " key); \
  PetscErrorCode name(Mat A, type value) \
  { \
    PetscFunctionBegin; \
    PetscCall(helper(A, FormatOf<pspmv::Module>(), key, value, #name)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

PSPMV_OPTION_API(MatRgCSRSetGroupSize, SetIntC, PetscInt, RgCsrModule, "group_size")
PSPMV_OPTION_API(MatRgCSRGetGroupSize, GetInt, PetscInt *, RgCsrModule, "group_size")
PSPMV_OPTION_API(MatRgCSRSetHybrid, SetStringC, const char *, RgCsrModule, "hybrid")
PSPMV_OPTION_API(MatRgCSRGetHybrid, GetString, const char **, RgCsrModule, "hybrid")
PSPMV_OPTION_API(MatPackSELLSetSliceHeight, SetIntC, PetscInt, PackSellModule, "slice_height")
PSPMV_OPTION_API(MatPackSELLGetSliceHeight, GetInt, PetscInt *, PackSellModule, "slice_height")
PSPMV_OPTION_API(MatPackSELLSetSigma, SetIntC, PetscInt, PackSellModule, "sigma")
PSPMV_OPTION_API(MatPackSELLGetSigma, GetInt, PetscInt *, PackSellModule, "sigma")
PSPMV_OPTION_API(MatPackSELLSetValueFormat, SetStringC, const char *, PackSellModule, "value_format")
PSPMV_OPTION_API(MatPackSELLGetValueFormat, GetString, const char **, PackSellModule, "value_format")
PSPMV_OPTION_API(MatPackSELLSetScaling, SetStringC, const char *, PackSellModule, "scaling")
PSPMV_OPTION_API(MatPackSELLGetScaling, GetString, const char **, PackSellModule, "scaling")
PSPMV_OPTION_API(MatPackSELLSetHybrid, SetStringC, const char *, PackSellModule, "hybrid")
PSPMV_OPTION_API(MatPackSELLGetHybrid, GetString, const char **, PackSellModule, "hybrid")

PetscErrorCode MatSpMVSetFreeDeviceCSR(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveBool(A, flg, 2);
  PetscTryMethod(A, "MatSpMVSetFreeDeviceCSR_C", (Mat, PetscBool), (A, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatSpMVGetStats(Mat A, MatSpMVStats *stats)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(stats, 2);
  {
    pspmv::glue::GetStatsFn fn;
    MatType                 type;
    char                    names[256];
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSpMVGetStats_C", &fn));
    PetscCall(MatGetType(A, &type));
    PetscCall(RootNames(nullptr, names, sizeof(names)));
    PetscCheck(fn, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "MatSpMVGetStats() needs a matrix of a petscspmv type (%s); this one is %s", names, type ? type : "untyped");
    PetscCall((*fn)(A, stats));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
