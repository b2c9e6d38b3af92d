#include "petsc_formats.hpp"

#include <petscspmv.h>

#include <cuda_runtime.h>

#include <petscdevice_cuda.h>

#include <cmath>
#include <limits>
#include <vector>

namespace bench
{

namespace
{

PetscErrorCode SetStatsFromGlue(Mat B, Result &r)
{
  MatSpMVStats st;

  PetscFunctionBegin;
  PetscCall(MatSpMVGetStats(B, &st));
  r.matrix_bytes = double(st.stored_bytes);
  r.bytes_source = "MatSpMVGetStats";
  r.stats        = {{"stored_bytes", double(st.stored_bytes)}, {"stored_slots", double(st.stored_slots)}, {"padding_slots", double(st.padding_slots)}, {"dummy_words", double(st.dummy_words)}, {"tail_nnz", double(st.tail_nnz)}, {"hybrid_width", double(st.hybrid_width)}, {"bytes_per_nnz", st.nnz ? double(st.stored_bytes) / double(st.nnz) : kNaN}};
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Reads the effective format options back and checks them against what the spec asked for.
PetscErrorCode CheckOptions(Mat B, const FormatSpec &f, bool scaled_retry, Result &r)
{
  PetscFunctionBegin;
  std::string want, have;
  if (f.family == "rgcsrcuda") {
    PetscInt    G;
    const char *h;
    PetscCall(MatRgCSRGetGroupSize(B, &G));
    PetscCall(MatRgCSRGetHybrid(B, &h));
    r.info.emplace_back("group_size", std::to_string((long long)G));
    r.info.emplace_back("hybrid", h);
    want = option_value(f, "mat_rgcsr_group_size");
    PetscCheck(want.empty() || want == std::to_string((long long)G), PETSC_COMM_SELF, PETSC_ERR_PLIB, "asked for group size %s but the matrix has %d: the option was not applied", want.c_str(), (int)G);
    want = option_value(f, "mat_rgcsr_hybrid");
    PetscCheck(want.empty() || want == h, PETSC_COMM_SELF, PETSC_ERR_PLIB, "asked for hybrid %s but the matrix has %s: the option was not applied", want.c_str(), h);
  } else if (f.family == "packsellcuda") {
    PetscInt    C, sigma;
    const char *vf, *sc, *h;
    PetscCall(MatPackSELLGetValueFormat(B, &vf));
    PetscCall(MatPackSELLGetScaling(B, &sc));
    PetscCall(MatPackSELLGetHybrid(B, &h));
    PetscCall(MatPackSELLGetSliceHeight(B, &C));
    PetscCall(MatPackSELLGetSigma(B, &sigma));
    r.info.emplace_back("value_format", vf);
    r.info.emplace_back("scaling", sc);
    r.info.emplace_back("hybrid", h);
    r.info.emplace_back("slice_height", std::to_string((long long)C));
    r.info.emplace_back("sigma", std::to_string((long long)sigma));
    PetscCheck(f.value_format == vf, PETSC_COMM_SELF, PETSC_ERR_PLIB, "asked for value format %s but the matrix has %s: the option was not applied", f.value_format.c_str(), vf);
    want = scaled_retry ? "auto" : option_value(f, "mat_packsell_scaling");
    PetscCheck(want.empty() || want == sc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "asked for scaling %s but the matrix has %s: the option was not applied", want.c_str(), sc);
    want = option_value(f, "mat_packsell_hybrid");
    PetscCheck(want.empty() || want == h, PETSC_COMM_SELF, PETSC_ERR_PLIB, "asked for hybrid %s but the matrix has %s: the option was not applied", want.c_str(), h);
  }
  (void)have;
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode RunPetscOnce(Bench &b, const HostCsr &H, PetscMats &m, const FormatSpec &f, bool scaled_retry, Reference &ref, Mat *Bout, Result &r)
{
  Mat                      B = nullptr;
  std::string              prefix;
  std::vector<std::string> set_names;

  PetscFunctionBegin;
  const double t0 = now_s();
  if (f.family == "sellcuda") {
    // AIJ -> SELL is a specialised converter; SELL -> SELLCUDA in place (AIJ -> SELLCUDA directly
    // would go through MatConvert_Basic, a MatSetValues loop)
    PetscCall(MatConvert(m.A, MATSEQSELL, MAT_INITIAL_MATRIX, &B));
    *Bout = B;
    if (!b.cpu) PetscCall(MatConvert(B, MATSEQSELLCUDA, MAT_INPLACE_MATRIX, &B));
    *Bout = B;
  } else {
    auto opts = f.options;
    if (scaled_retry) opts.emplace_back("mat_packsell_scaling", "auto");
    if (!opts.empty()) {
      // per-conversion prefix on the source matrix: the glue reads the options of the matrix it
      // converts (and MatSetFromOptions on the result reads the same ones again)
      prefix = "bench" + std::to_string(++b.attempt) + "_";
      for (auto &o : opts) {
        const std::string name = "-" + prefix + o.first;
        PetscCall(PetscOptionsSetValue(nullptr, name.c_str(), o.second.c_str()));
        set_names.push_back(name);
      }
      PetscCall(MatSetOptionsPrefix(m.A, prefix.c_str()));
    }
    PetscErrorCode ierr = MatConvert(m.A, f.mattype.c_str(), MAT_INITIAL_MATRIX, &B);
    if (!prefix.empty()) PetscCall(MatSetOptionsPrefix(m.A, nullptr));
    if (!ierr && B && !prefix.empty()) {
      *Bout = B;
      ierr  = MatSetOptionsPrefix(B, prefix.c_str());
      if (!ierr) ierr = MatSetFromOptions(B);
    }
    for (auto &n : set_names) PetscCall(PetscOptionsClearValue(nullptr, n.c_str()));
    PetscCall(ierr);
    *Bout = B;
  }
  PetscCall(MatMult(B, m.x, m.y)); // uploads the layout where a type does it lazily
  if (!b.cpu) PetscCallCUDA(cudaDeviceSynchronize());
  r.setup_s = now_s() - t0;
  {
    MatType t;
    PetscCall(MatGetType(B, &t));
    r.info.emplace_back("mat_type", t);
  }
  PetscCall(CheckOptions(B, f, scaled_retry, r));

  // stored matrix bytes
  const double nnz = double(H.nnz()), rows = double(H.rows), cols = double(H.cols);
  if (f.family == "aijcusparse") {
    r.matrix_bytes = nnz * (8 + 4) + (rows + 1) * 4;
    r.bytes_source = "nnz*(8+4)+(rows+1)*4";
  } else if (f.family == "sellcuda") {
    PetscReal ratio = 0, avgw = 0;
    PetscInt  maxw = 0;
    PetscCall(MatSeqSELLGetFillRatio(B, &ratio));
    PetscCall(MatSeqSELLGetAvgSliceWidth(B, &avgw));
    PetscCall(MatSeqSELLGetMaxSliceWidth(B, &maxw));
    const double slots  = ratio < 1 ? std::floor(nnz / (1.0 - double(ratio)) + 0.5) : nnz;
    const double slices = std::ceil(rows / 16.0); // PETSc's slice height with CUDA (sell.c)
    r.matrix_bytes      = slots * (8 + 4) + (slices + 1) * 4;
    r.bytes_source      = "slots*(8+4)+(slices+1)*4, slots=nnz/(1-MatSeqSELLGetFillRatio), slice height 16";
    r.stats             = {{"stored_slots", slots}, {"padding_slots", slots - nnz}, {"avg_slice_width", double(avgw)}, {"max_slice_width", double(maxw)}, {"bytes_per_nnz", nnz > 0 ? r.matrix_bytes / nnz : kNaN}};
  } else PetscCall(SetStatsFromGlue(B, r));
  r.bytes = r.matrix_bytes + cols * 8 + rows * 8;

  // timing
  auto op = [&]() -> PetscErrorCode {
    PetscCall(MatMult(B, m.x, m.y));
    return PETSC_SUCCESS;
  };
  PetscCall(TimeOp(b, op, r));

  // correctness on a poisoned y
  PetscCall(VecSet(m.y, std::numeric_limits<double>::quiet_NaN()));
  PetscCall(MatMult(B, m.x, m.y));
  {
    const PetscScalar *ya;
    PetscCall(VecGetArrayRead(m.y, &ya));
    ComputeError(ref, ya, size_t(H.rows), r);
    if (f.family == "aijcusparse" && !r.nonfinite) {
      ref.y_aij.assign(ya, ya + H.rows);
      r.error_vs_aij = 0;
    }
    PetscCall(VecRestoreArrayRead(m.y, &ya));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode LoadPetscBinary(const std::string &path, HostCsr &H)
{
  PetscViewer     v;
  Mat             A;
  PetscInt        m, n;
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscMemType    mt;

  PetscFunctionBegin;
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, path.c_str(), FILE_MODE_READ, &v));
  PetscCall(MatCreate(PETSC_COMM_SELF, &A));
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatLoad(A, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mt));
  PetscCheck(m <= INT32_MAX && n <= INT32_MAX && ai[m] <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: %" PetscInt_FMT " x %" PetscInt_FMT " with %" PetscInt_FMT " nonzeros does not fit the benchmark's 32-bit CSR", path.c_str(), m, n, ai[m]);
  H.name   = bench::matrix_name_from_path(path);
  H.source = path;
  H.kind   = "PETSc binary";
  H.rows   = m;
  H.cols   = n;
  H.rowptr.assign(ai, ai + m + 1);
  H.colidx.assign(aj, aj + ai[m]);
  H.values.assign(aa, aa + ai[m]);
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace bench
