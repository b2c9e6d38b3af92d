// MatView (ASCII info formats), the -info line of a layout build, and the storage statistics
// of the layouts.
#include "spmvimpl.hpp"

#include <algorithm>
#include <sstream>

namespace pspmv
{
namespace glue
{

PetscErrorCode ViewWantsFormatInfo(PetscViewer viewer, PetscBool *flg)
{
  PetscBool         ascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  *flg = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  *flg = (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewFormat(Mat A, PetscViewer viewer, const TypeInfo *t, const FormatOptions &o, const FormatStats &s, const PetscInt scale[2], const PetscInt64 device[2], PetscBool free_device_csr, const char *scope)
{
  std::string options, values, stats, line;

  PetscFunctionBegin;
  PetscCallCXX(options = o.Describe());
  PetscCallCXX(values = o.ValuesNote());
  PetscCallCXX(stats = s.to_string());
  char version[128];
  PetscCall(PetscSpMVGetVersion(version, sizeof(version)));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s layout (%s, %s kernels; %s) [%s]:\n", FormatTitle(t->format), ((PetscObject)A)->type_name, t->cuda ? "CUDA" : "host", scope, version));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "options: %s\n", options.c_str()));
  if (!values.empty()) PetscCall(PetscViewerASCIIPrintf(viewer, "values: %s\n", values.c_str()));
  std::istringstream in(stats);
  while (std::getline(in, line)) PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", line.c_str()));
  if (FormatScaled(t->format)) {
    if (scale[0] > scale[1]) PetscCall(PetscViewerASCIIPrintf(viewer, "scale_exponent: none (no nonzeros)\n"));
    else if (scale[0] == scale[1]) PetscCall(PetscViewerASCIIPrintf(viewer, "scale_exponent: %" PetscInt_FMT "\n", scale[0]));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "scale_exponent: %" PetscInt_FMT " to %" PetscInt_FMT " (each block has its own)\n", scale[0], scale[1]));
  }
  if (t->cuda) {
    if (device[1])
      PetscCall(PetscViewerASCIIPrintf(viewer, "device_bytes: layout %" PetscInt64_FMT ", AIJCUSPARSE CSR %" PetscInt64_FMT "%s\n", device[0], device[1], free_device_csr ? " (uploaded by an AIJCUSPARSE operation)" : " (kept for value updates; -mat_spmv_free_device_csr builds without it)"));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "device_bytes: layout %" PetscInt64_FMT ", AIJCUSPARSE CSR not resident\n", device[0]));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewNoLayout(Mat A, PetscViewer viewer, const TypeInfo *t)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s layout (%s, %s kernels): not built yet (the matrix is bound to the CPU; the layout is built at its first use on the GPU)\n", FormatTitle(t->format), ((PetscObject)A)->type_name, t->cuda ? "CUDA" : "host"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The views that list a matrix's entries (ASCII default, common, dense, index; not the INFO
   formats, which ViewFormat() covers, nor machine-read ones such as MATLAB or Matrix Market) of a
   matrix whose products use a lossy copy (PackSELL with a lossy value format): one line first,
   "values: LOSSY <format> (unit roundoff <u>): ...", the words of the ASCII_INFO view, since the
   entries listed are the matrix's exact FP64 ones. */
PetscErrorCode ViewLossyNote(PetscViewer viewer, const FormatOptions &o)
{
  PetscBool         ascii;
  PetscViewerFormat format;
  std::string       values;

  PetscFunctionBegin;
  if (o.format() != FormatOf<PackSellModule>() || !o.Of<PackSellModule>().value_format.lossy()) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_DEFAULT && format != PETSC_VIEWER_ASCII_COMMON && format != PETSC_VIEWER_ASCII_DENSE && format != PETSC_VIEWER_ASCII_INDEX) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCXX(values = o.ValuesNote());
  PetscCall(PetscViewerASCIIPrintf(viewer, "values: %s (the entries listed are the matrix's own FP64 values)\n", values.c_str()));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewVersion(PetscViewer viewer)
{
  char version[128];

  PetscFunctionBegin;
  PetscCall(PetscSpMVGetVersion(version, sizeof(version)));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %s\n", version));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode WarnLossyOperator(Mat A, const FormatOptions &o, PetscBool *warned)
{
  PetscBool   on = PETSC_TRUE;
  const char *name, *prefix = ((PetscObject)A)->prefix ? ((PetscObject)A)->prefix : "";
  std::string values;

  PetscFunctionBegin;
  if (*warned) PetscFunctionReturn(PETSC_SUCCESS);
  *warned = PETSC_TRUE;
  /* read for every matrix of ours (-options_left: used), at its first product */
  PetscCall(PetscOptionsGetBool(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_packsell_lossy_warning", &on, nullptr));
  if (!on || !o.Lossy()) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectGetName((PetscObject)A, &name));
  PetscCallCXX(values = o.ValuesNote());
  PetscCall(
    PetscFPrintf(PetscObjectComm((PetscObject)A), PETSC_STDERR,
                 "WARNING (petscspmv): the %s matrix %s multiplies with %s. The residuals of a KSP that has it as its operator are those of the rounded matrix, not of the one assembled. "
                 "For the exact operator keep -%smat_packsell_value_format exact (the default) and let a rounded copy be the preconditioner (-pc_type mixedkrylov or -ksp_type mixedcg); -%smat_packsell_lossy_warning false silences this warning\n",
                 ((PetscObject)A)->type_name, name, values.c_str(), prefix, prefix));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode InfoLayout(Mat A, const TypeInfo *t, const FormatOptions &o, const Shadow &shadow)
{
  PetscBool   enabled;
  FormatStats s;
  std::string options, backend, built;
  char        bpn[32];

  PetscFunctionBegin;
  PetscCall(PetscInfoEnabled(MAT_CLASSID, &enabled));
  if (!enabled) PetscFunctionReturn(PETSC_SUCCESS);
  s = shadow.Stats();
  PetscCallCXX(options = o.Describe());
  PetscCallCXX(backend = shadow.Backend());
  /* the options the builder resolves (PackSELL's sigma), as built */
  for (size_t i = 0; i < NumOptions(t->format); ++i) {
    const OptionInfo oi       = OptionAt(t->format, i);
    bool             resolved = false;
    PetscCallCore(PETSC_ERR_PLIB, resolved = o.ResolvedByBuild(oi.key));
    if (resolved) PetscCallCXX(built += std::string(", ") + oi.title + " " + std::to_string(o.BuiltValue(oi.key, s)));
  }
  if (FormatScaled(t->format)) PetscCallCXX(built += ", scale exponent " + std::to_string((long long)shadow.ScaleExponent()));
  PetscCall(PetscSNPrintf(bpn, sizeof(bpn), "%.2f", s.bytes_per_nnz()));
  PetscCall(PetscInfo(A, "%s layout built (%s, %s): %" PetscInt64_FMT " rows, %" PetscInt64_FMT " columns, %" PetscInt64_FMT " nonzeros; options: %s; hybrid width K %d, tail nonzeros %" PetscInt64_FMT "%s; %s bytes per nonzero\n", FormatTitle(t->format),
                      ((PetscObject)A)->type_name, backend.c_str(), (PetscInt64)s.rows, (PetscInt64)s.cols, (PetscInt64)s.nnz, options.c_str(), (int)s.hybrid_width, (PetscInt64)s.tail_nnz, built.c_str(), bpn));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void AddStats(FormatStats *sum, const FormatStats &s)
{
  sum->rows += s.rows;
  sum->cols += s.cols;
  sum->nnz += s.nnz;
  sum->stored_slots += s.stored_slots;
  sum->padding_slots += s.padding_slots;
  sum->dummy_words += s.dummy_words;
  sum->gap_entries += s.gap_entries;
  sum->ordered_rows += s.ordered_rows;
  sum->tail_nnz += s.tail_nnz;
  sum->stored_bytes += s.stored_bytes;
  sum->hybrid_width = std::max(sum->hybrid_width, s.hybrid_width);
  sum->sigma        = std::max(sum->sigma, s.sigma);
}

void ToPublicStats(const FormatStats &s, const PetscInt scale[2], MatSpMVStats *out)
{
  const bool any = scale[0] <= scale[1];

  out->scale_exponent     = any ? scale[0] : 0;
  out->scale_exponent_max = any ? scale[1] : 0;
  out->rows               = s.rows;
  out->cols               = s.cols;
  out->nnz                = s.nnz;
  out->stored_slots       = s.stored_slots;
  out->padding_slots      = s.padding_slots;
  out->dummy_words        = s.dummy_words;
  out->tail_nnz           = s.tail_nnz;
  out->stored_bytes       = s.stored_bytes;
  out->hybrid_width       = s.hybrid_width;
}

} // namespace glue
} // namespace pspmv
