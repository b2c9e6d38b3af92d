// Public setters and getters of petscspmv.h: each dispatches to the function its matrix type
// composed (PetscTryMethod for setters: other types ignore them; PetscUseMethod for getters).
#include "spmvimpl.hpp"

using pspmv::glue::Format;
using pspmv::glue::GetOptionName;
using pspmv::glue::OptionKey;
using pspmv::glue::SetOptionName;

namespace {

PetscErrorCode SetInt(Mat A, Format f, OptionKey key, PetscInt v)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, v, 2);
  PetscTryMethod(A, SetOptionName(f), (Mat, OptionKey, PetscInt, const char[]), (A, key, v, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetString(Mat A, Format f, OptionKey key, const char v[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  PetscTryMethod(A, SetOptionName(f), (Mat, OptionKey, PetscInt, const char[]), (A, key, 0, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetInt(Mat A, Format f, OptionKey key, PetscInt *v)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  PetscUseMethod(A, GetOptionName(f), (Mat, OptionKey, PetscInt *, const char *[]), (A, key, v, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetString(Mat A, Format f, OptionKey key, const char *v[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(v, 2);
  PetscUseMethod(A, GetOptionName(f), (Mat, OptionKey, PetscInt *, const char *[]), (A, key, nullptr, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

/* One public function per option and direction; the work is in the four helpers above. */
#define PSPMV_OPTION_API(name, helper, type, fmt, key) \
  PetscErrorCode name(Mat A, type value) \
  { \
    PetscFunctionBegin; \
    PetscCall(helper(A, Format::fmt, OptionKey::key, value)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }

PSPMV_OPTION_API(MatRgCSRSetGroupSize, SetInt, PetscInt, RgCSR, GroupSize)
PSPMV_OPTION_API(MatRgCSRGetGroupSize, GetInt, PetscInt *, RgCSR, GroupSize)
PSPMV_OPTION_API(MatRgCSRSetHybrid, SetString, const char *, RgCSR, Hybrid)
PSPMV_OPTION_API(MatRgCSRGetHybrid, GetString, const char **, RgCSR, Hybrid)
PSPMV_OPTION_API(MatPackSELLSetSliceHeight, SetInt, PetscInt, PackSELL, SliceHeight)
PSPMV_OPTION_API(MatPackSELLGetSliceHeight, GetInt, PetscInt *, PackSELL, SliceHeight)
PSPMV_OPTION_API(MatPackSELLSetSigma, SetInt, PetscInt, PackSELL, Sigma)
PSPMV_OPTION_API(MatPackSELLGetSigma, GetInt, PetscInt *, PackSELL, Sigma)
PSPMV_OPTION_API(MatPackSELLSetValueFormat, SetString, const char *, PackSELL, ValueFormat)
PSPMV_OPTION_API(MatPackSELLGetValueFormat, GetString, const char **, PackSELL, ValueFormat)
PSPMV_OPTION_API(MatPackSELLSetScaling, SetString, const char *, PackSELL, Scaling)
PSPMV_OPTION_API(MatPackSELLGetScaling, GetString, const char **, PackSELL, Scaling)
PSPMV_OPTION_API(MatPackSELLSetHybrid, SetString, const char *, PackSELL, Hybrid)
PSPMV_OPTION_API(MatPackSELLGetHybrid, GetString, const char **, PackSELL, Hybrid)

PetscErrorCode MatSpMVGetStats(Mat A, MatSpMVStats *stats)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(stats, 2);
  PetscUseMethod(A, "MatSpMVGetStats_C", (Mat, MatSpMVStats *), (A, stats));
  PetscFunctionReturn(PETSC_SUCCESS);
}
