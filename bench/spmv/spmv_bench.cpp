// spmv_bench: MatMult of every GPU format of petscspmv against PETSc's own (aijcusparse,
// sellcuda) and cuSPARSE called directly, on matrix files and generated large matrices, in one
// process. Writes a Ginkgo-like JSON file per run and appends CSV rows (docs/bench/latest.csv).
//
// Timing: x random (fixed seed, no zeros), y poisoned; `-warmup` products, then `-reps`
// products each bracketed by CUDA events recorded on the stream PETSc's current device context
// uses (the stream the petscspmv kernels run on; PETSc's aijcusparse runs on
// PetscDefaultCudaStream, sellcuda on the legacy default stream; by default all of these are the
// NULL stream: both handles go into the header, and a warning is printed if they differ). Between
// products a read of 4x the L2 size evicts the matrix from L2 (-flush_l2 0 turns it off);
// it runs before the start event, so it is not timed. Median, min, max, p10, p90 of the event
// times are reported; also the mean of `-reps` back-to-back products with one synchronisation
// (time_us_wall_mean: warm L2, host launch overhead included).
//
// Bytes of one product = stored matrix bytes + x (cols * value size) + y (rows * value size):
//   aijcusparse, cusparse_csr   nnz * (value + 4) + (rows + 1) * 4
//   sellcuda                    slots * (8 + 4) + (slices + 1) * 4, slots from MatSeqSELLGetFillRatio
//   cusparse_sell               slots * (value + 4) + (slices + 1) * offset size (slice height 32)
//   rgcsrcuda, packsellcuda     MatSpMVGetStats().stored_bytes (every array the product reads)
// GB/s = bytes / median time; GFLOP/s = 2 nnz / median time; copy_bw_fraction = GB/s over the
// device copy bandwidth measured at start (max of cudaMemcpy D2D and a copy kernel, bytes read
// plus bytes written, median of 20 over >= 1 GiB).
//
// Error = ||y - y_ref||_inf / || |A| |x| ||_inf with y_ref the FP64 CSR product on the host
// (error_vs_aijcusparse: the same against aijcusparse's y). Lossless layouts give ~1e-16.
//
// Format options (group size, value format, hybrid, scaling) go through the options database
// under a prefix set on the AIJ source for that one MatConvert (the glue reads the options of the
// matrix it converts; MatSetFromOptions on the result reads the same values, no rebuild), then
// are read back with the MatRgCSRGet*/MatPackSELLGet* getters: a mismatch fails the format.
//
// Robustness: each format runs under an error handler that records PETSc's message; a format
// that fails is written with completed=false and the run goes on. PackSELL with a lossy value
// format that fails (a value overflows the format) is retried with -mat_packsell_scaling auto.
// A CUDA error that poisons the context ends the run after the JSON of the finished matrices
// is written (exit code 3); bench/spmv/run_bench.sh then restarts with the remaining matrices.
//
// The pieces: bench_options (command line), format_spec (-formats tokens), matrix_source (files,
// generators, reference product), petsc_formats (the PETSc types), cusparse_direct and
// cusparse_sell (cuSPARSE), bench_context (settings, timing, bandwidth, device set-up, the JSON
// header), results (what is measured, its rates, and the one writer of the CSV and JSON files).
// This file runs them.
#include "bench_context.hpp"
#include "bench_options.hpp"
#include "cusparse_direct.hpp"
#include "format_spec.hpp"
#include "matrix_source.hpp"
#include "petsc_formats.hpp"
#include "results.hpp"

#include <petscspmv.h>

#include <cuda_runtime.h>
#include <cusparse.h>

#include <petscdevice_cuda.h>
#include <petscmat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

static_assert(sizeof(PetscScalar) == 8, "spmv_bench needs PETSc with real double scalars");

using namespace bench;

namespace
{

/* v's array as PetscInt: v itself, or its copy in `copy` with 64-bit PetscInt */
template <class I>
PetscInt *AsPetscInt(std::vector<I> &v, std::vector<PetscInt> &copy)
{
  if constexpr (std::is_same_v<I, PetscInt>) return v.data();
  else {
    copy.assign(v.begin(), v.end());
    return copy.data();
  }
}

void Progress(const std::string &path, const std::string &what, const std::string &name)
{
  if (path.empty()) return;
  if (FILE *f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%s %s\n", what.c_str(), name.c_str());
    std::fclose(f);
  }
}

// One attempt of format f under the capturing error handler; on failure r.completed is false and
// r.message holds PETSc's message.
PetscErrorCode Attempt(Bench &b, const HostCsr &H, PetscMats &m, const FormatSpec &f, bool scaled, Reference &ref, Result &r)
{
  Mat            B    = nullptr;
  PetscErrorCode ierr = PETSC_SUCCESS;

  r             = Result();
  r.error_bound = f.error_bound();
  b.cap.reset();
  PetscCall(PetscPushErrorHandler(CaptureHandler, &b.cap));
  try {
    ierr = f.petsc ? RunPetscOnce(b, H, m, f, scaled, ref, &B, r) : RunCusparse(b, H, f, ref, r);
  } catch (const std::exception &e) {
    ierr = PETSC_ERR_LIB;
    if (!b.cap.have) b.cap.message = std::string("C++ exception: ") + e.what();
    b.cap.have = true;
  }
  if (B) (void)MatDestroy(&B);
  PetscCall(PetscPopErrorHandler());
  r.completed = !ierr;
  if (ierr) {
    r.message = b.cap.have ? b.cap.message : "PETSc error " + std::to_string((int)ierr);
    r.us.clear();
  }
  return PETSC_SUCCESS;
}

// Runs format f (PackSELL with a lossy value format is retried with scaling auto when it fails).
Result RunFormat(Bench &b, const HostCsr &H, PetscMats &m, const FormatSpec &f, Reference &ref, bool *aborted, std::string *abort_reason, const std::string &matname)
{
  Result      r;
  std::string why;

  if (Attempt(b, H, m, f, false, ref, r)) r.message = "could not run the attempt (error handler)";
  if (!r.completed && CudaContextLost(b, &why)) {
    *aborted      = true;
    *abort_reason = "CUDA context lost in " + matname + " / " + f.name + ": " + why + " (after: " + r.message + ")";
    return r;
  }
  if (!r.completed && f.family == "packsellcuda" && f.lossy() && !f.explicit_scaling) {
    const std::string first = r.message;
    PetscPrintf(PETSC_COMM_SELF, "  %-24s failed (%s); retrying with -mat_packsell_scaling auto\n", f.name.c_str(), first.substr(0, 200).c_str());
    Result r2;
    if (Attempt(b, H, m, f, true, ref, r2)) r2.message = "could not run the attempt (error handler)";
    if (r2.completed) r2.note = "failed without scaling (" + first + "); timed with -mat_packsell_scaling auto";
    else {
      r2.message += " (retry with -mat_packsell_scaling auto; first attempt: " + first + ")";
      if (CudaContextLost(b, &why)) {
        *aborted      = true;
        *abort_reason = "CUDA context lost in " + matname + " / " + f.name + ": " + why;
      }
    }
    return r2;
  }
  return r;
}

} // namespace

int main(int argc, char **argv)
{
  Bench                     b;
  Options                   opt;
  std::vector<MatrixRecord> records;
  std::vector<std::string>  skipped;
  int                       exit_code = 0;

  PetscCall(PetscInitialize(&argc, &argv, nullptr, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(ParseOptions(b, opt));
  PetscCall(Setup(b));

  const double t_start = now_s();
  bool         aborted = false;
  std::string  abort_reason;
  for (size_t si = 0; si < opt.sources.size() && !aborted; ++si) {
    const Source &src = opt.sources[si];
    if (opt.time_limit > 0 && now_s() - t_start > opt.time_limit) {
      skipped.push_back(src.spec);
      continue;
    }
    Progress(opt.progress, "start", src.spec);
    MatrixRecord rec;
    HostCsr      H;
    double       t0 = now_s();
    // load or generate
    try {
      if (src.generated) H = bench::generate_matrix(src.spec);
      else if (bench::is_matrix_market(src.spec)) H = bench::read_matrix_market(src.spec);
      else {
        b.cap.reset();
        PetscCall(PetscPushErrorHandler(CaptureHandler, &b.cap));
        PetscErrorCode ierr = LoadPetscBinary(src.spec, H);
        PetscCall(PetscPopErrorHandler());
        if (ierr) throw std::runtime_error(b.cap.message);
      }
    } catch (const std::exception &e) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "spmv_bench: skipping %s: %s\n", src.spec.c_str(), e.what()));
      skipped.push_back(src.spec + ": " + e.what());
      Progress(opt.progress, "done", src.spec);
      continue;
    }
    rec.name    = H.name;
    rec.source  = H.source;
    rec.kind    = H.kind;
    rec.rows    = H.rows;
    rec.cols    = H.cols;
    rec.nnz     = H.nnz();
    rec.max_row = H.max_row_length();
    rec.load_s  = now_s() - t0;

    // reference
    t0 = now_s();
    Reference ref;
    ref.x = bench::make_x(H.cols, 20240601ULL);
    ref.y.resize(size_t(H.rows));
    ref.absy.resize(size_t(H.rows));
    bench::reference_spmv(H, ref.x.data(), ref.y.data(), ref.absy.data());
    ref.scale = 0;
    for (double a : ref.absy) ref.scale = std::max(ref.scale, a);
    if (!(ref.scale > 0)) ref.scale = 1;
    rec.reference_s = now_s() - t0;

    // PETSc objects on the host arrays
    PetscMats m;
    PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, H.rows, H.cols, AsPetscInt(H.rowptr, m.rowptr), AsPetscInt(H.colidx, m.colidx), H.values.data(), &m.A));
    if (b.cpu) {
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, H.cols, &m.x));
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, H.rows, &m.y));
    } else {
      PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, H.cols, &m.x));
      PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, H.rows, &m.y));
    }
    {
      PetscScalar *xa;
      PetscCall(VecGetArrayWrite(m.x, &xa));
      std::copy(ref.x.begin(), ref.x.end(), xa);
      PetscCall(VecRestoreArrayWrite(m.x, &xa));
      if (!b.cpu) {
        const PetscScalar *dx;
        PetscCall(VecCUDAGetArrayRead(m.x, &dx)); // x lives on the device from now on
        PetscCall(VecCUDARestoreArrayRead(m.x, &dx));
      }
      PetscCall(VecSet(m.y, 0.0));
    }
    if (!opt.save_dir.empty()) {
      // PETSc binary copy of the matrix (MatLoad reads it back with -f)
      PetscViewer       v;
      const std::string out = opt.save_dir + "/" + rec.name + ".petsc";
      PetscCall(PetscViewerCreate(PETSC_COMM_SELF, &v));
      PetscCall(PetscViewerSetType(v, PETSCVIEWERBINARY));
      PetscCall(PetscViewerBinarySkipInfo(v));
      PetscCall(PetscViewerFileSetMode(v, FILE_MODE_WRITE));
      PetscCall(PetscViewerFileSetName(v, out.c_str()));
      PetscCall(MatView(m.A, v));
      PetscCall(PetscViewerDestroy(&v));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "spmv_bench: wrote %s\n", out.c_str()));
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n%s: %lld x %lld, %lld nonzeros (max %lld a row), loaded in %.2f s\n", rec.name.c_str(), rec.rows, rec.cols, rec.nnz, rec.max_row, rec.load_s));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  %-24s %10s %10s %9s %8s %6s %9s %10s %7s\n", "format", "median_us", "min_us", "GB/s", "GFLOP/s", "copy%", "speedup", "error", "setup_s"));

    double taij = kNaN;
    for (const FormatSpec &f : opt.formats) {
      Result r = RunFormat(b, H, m, f, ref, &aborted, &abort_reason, rec.name);
      r.finish();
      if (r.completed && f.name == "aijcusparse") taij = r.median;
      rec.results.emplace_back(f.name, r);
      if (r.completed) {
        const Rates q = RatesOf(r.median, r.bytes, double(rec.nnz), b.copy_bw, taij);
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "  %-24s %10.2f %10.2f %9.1f %8.1f %6.1f %9.3f %10.2e %7.2f%s\n", f.name.c_str(), r.median, r.min, q.gbytes_per_s, q.gflops, 100 * q.copy_bw_fraction, q.speedup, r.error, r.setup_s, (std::isfinite(r.error) && r.error <= r.error_bound) ? "" : "  ERROR ABOVE BOUND"));
      } else PetscCall(PetscPrintf(PETSC_COMM_SELF, "  %-24s FAILED: %s\n", f.name.c_str(), r.message.substr(0, 300).c_str()));
      if (aborted) break;
    }
    PetscCall(MatDestroy(&m.A));
    PetscCall(VecDestroy(&m.x));
    PetscCall(VecDestroy(&m.y));
    records.push_back(std::move(rec));
    AppendCsv(opt.csv, records.back(), b.copy_bw);
    WriteJson(opt.json, RunHeader(b), b.copy_bw, records, skipped, aborted, abort_reason);
    Progress(opt.progress, aborted ? "aborted" : "done", src.spec);
  }
  if (aborted) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "spmv_bench: stopping: %s\n", abort_reason.c_str()));
    exit_code = 3;
  }
  WriteJson(opt.json, RunHeader(b), b.copy_bw, records, skipped, aborted, abort_reason);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "\nspmv_bench: %zu matrices in %.1f s%s%s\n", records.size(), now_s() - t_start, opt.json.empty() ? "" : ", JSON ", opt.json.c_str()));

  if (!b.cpu && !aborted) {
    for (auto &e : b.ev) cudaEventDestroy(e);
    if (b.flushbuf) cudaFree(b.flushbuf);
    if (b.sink) cudaFree(b.sink);
    if (b.sp) cusparseDestroy(b.sp);
  }
  if (aborted) {
    // the CUDA context is unusable: PetscFinalize would try to free device memory
    std::fflush(nullptr);
    std::_Exit(exit_code);
  }
  PetscCall(PetscFinalize());
  return exit_code;
}
