// kernel_bench: the CUDA kernels of src/cuda alone (no PETSc), to compare kernel variants
// that the Mat types do not expose: the COO tail fused into the regular kernel or in its own
// kernel, and the threads per row T (runs 4-5 of docs/bench/history.md also compared PackSELL
// and RgCSR loops).
//
//   kernel_bench [-gen lap27:128,...] [-f a.mtx,...] [-reps 50] [-csv out.csv] [-threads 1,2,4,8]
//                [-widths 8,16,32] [-sigmas 1,0,4096] [-formats csr,rgcsr,fp16,bf16,e8m14,exact]
//                [-column_gaps auto|off]
//
// Variants: the T upload chose (format name marked "*") with both tail paths (fused where
// the plan allows it, and in its own kernel), then every other T of -threads (default none)
// with the default tail (its own kernel); then, for each fixed hybrid width K of -widths
// (default none; format name ":K<width>"), the same. Format "csr": cuSPARSE's
// CSR SpMV (generic API, FP64, CUSPARSE_SPMV_CSR_ALG1, as aijcusparse calls it) on the same
// stream, the reference the ratios of docs/benchmarks.md are taken to.
// PackSELL layouts are built for each sort window of -sigmas (default 1; 0 = auto, the
// window the builder chose is in the name, ":sauto=<sigma>"; others ":s<sigma>"). -formats
// picks the formats (default all six). -column_gaps off builds PackSELL without column gaps
// (default auto: where they pay, as the Mat types do; the name then ends ":gaps").
// Each product: L2 flushed (256 MiB read), then CUDA events around cuda::spmv; median of
// `reps`. GB/s counts the format's stored bytes + x + y (as spmv_bench does). Every variant's
// result is compared with the FP64 CSR product (max |error| / max (|A||x|)) so a fast wrong
// variant shows. Layouts use the formats' defaults (hybrid auto; PackSELL C = 32, sigma 1,
// scaling auto for the lossy formats); RgCSR with G = 64. Exits 1 if any result is off by more
// than its format allows (max |error| / max |A||x|: 1e-12 for FP64 values, twice the unit
// roundoff for the others).
#include "bench_kernels.hpp"
#include "formats/packsell/packsell.hpp"
#include "formats/rgcsr/rgcsr.hpp"
#include "cuda/coo_tail.cuh"
#include "formats/device_formats.hpp"
#include "matrix_source.hpp"
#include "results.hpp"

#include <cusparse.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace
{

#define CK(call) \
  do { \
    const cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1); \
    } \
  } while (0)

struct Env {
  bool              failed;
  cudaStream_t      stream;
  void             *flush;
  size_t            flush_bytes;
  double           *sink;
  int               reps;
  bench::CsvWriter *csv;
};

// Median time (us) of `reps` products after 3 warm-ups, L2 flushed before each.
double time_product(const Env &e, const std::function<cudaError_t()> &op)
{
  for (int i = 0; i < 3; ++i) CK(op());
  std::vector<cudaEvent_t> ev(2 * size_t(e.reps));
  for (auto &v : ev) CK(cudaEventCreate(&v));
  for (int i = 0; i < e.reps; ++i) {
    CK(bench_read(e.flush, e.flush_bytes, e.sink, e.stream));
    CK(cudaEventRecord(ev[2 * size_t(i)], e.stream));
    CK(op());
    CK(cudaEventRecord(ev[2 * size_t(i) + 1], e.stream));
  }
  CK(cudaStreamSynchronize(e.stream));
  std::vector<double> t;
  for (int i = 0; i < e.reps; ++i) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev[2 * size_t(i)], ev[2 * size_t(i) + 1]));
    t.push_back(1e3 * ms);
  }
  for (auto &v : ev) CK(cudaEventDestroy(v));
  std::sort(t.begin(), t.end());
  return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
}

struct Problem {
  bench::HostCsr      A;
  std::vector<double> x, yref, absy;
  double             *dx = nullptr, *dy = nullptr;
};

// max |y - yref| / max |A||x| of the device result.
// y = NaN before a variant runs, so one that writes nothing fails rel_error.
void poison_y(const Problem &p)
{
  CK(cudaMemset(p.dy, 0xff, sizeof(double) * p.yref.size()));
}

double rel_error(const Problem &p)
{
  std::vector<double> y(p.yref.size());
  CK(cudaMemcpy(y.data(), p.dy, y.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double err = 0, scale = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    err   = std::max(err, std::isfinite(y[i]) ? std::fabs(y[i] - p.yref[i]) : INFINITY);
    scale = std::max(scale, p.absy[i]);
  }
  return scale > 0 ? err / scale : err;
}

// The tail path a product takes: the plan decides (fused only up to ~200k entries at T = 1, 2
// and ~68k at T = 4, 8 on an H200; every kernel of ours holds enough blocks per
// multiprocessor to fuse).
std::string tail_label(const pspmv::cuda::DeviceCooTail &t, int threads_per_row)
{
  if (t.nnz == 0) return "";
  pspmv::cuda::detail::TailPlan plan;
  CK(pspmv::cuda::detail::plan_fused_tail(t, true, threads_per_row, &plan));
  return plan.fused_blocks > 0 ? "fused-tail" : "separate-tail";
}

void report(Env &e, const Problem &p, const std::string &format, const std::string &variant, double us, int64_t stored, int64_t tail_nnz, int32_t K, double bound)
{
  const double bytes = double(stored) + 8.0 * (p.A.rows + p.A.cols);
  const double gbs   = bench::RatesOf(us, bytes, double(p.A.nnz())).gbytes_per_s;
  const double err   = rel_error(p);
  if (!(err <= bound)) {
    e.failed = true;
    std::fprintf(stderr, "kernel_bench: %s %s %s: error %.3e above %.1e\n", p.A.name.c_str(), format.c_str(), variant.c_str(), err, bound);
  }
  std::printf("%-28s %-20s %-22s %10.2f %9.1f %10lld %7d %9.2e\n", p.A.name.c_str(), format.c_str(), variant.c_str(), us, gbs, (long long)tail_nnz, K, err);
  if (e.csv) e.csv->Row("%s,%d,%lld,%s,%s,%.3f,%.1f,%lld,%d,%.3e", p.A.name.c_str(), p.A.rows, (long long)p.A.nnz(), format.c_str(), variant.c_str(), us, gbs, (long long)tail_nnz, K, err);
}

// Times one product variant of the uploaded matrix d (its threads_per_row and tail path).
template <class D>
void time_variant(Env &e, Problem &p, D &d, const std::string &format, int32_t K, double bound)
{
  poison_y(p);
  const double us = time_product(e, [&] { return pspmv::cuda::spmv(d, p.dx, p.dy, false, e.stream); });
  CK(cudaStreamSynchronize(e.stream));
  const std::string tail = d.tail.nnz == 0 ? "no-tail" : d.tail.allow_fused ? tail_label(d.tail, d.threads_per_row) : "separate-tail";
  report(e, p, format, "T" + std::to_string(d.threads_per_row) + ":" + tail, us, pspmv::cuda::stored_bytes(d), d.tail.nnz, K, bound);
}

// Times the uploaded matrix d with the threads per row upload chose (marked "*"), with the
// tail allowed to fuse and, when it has a tail, in its own kernel; then with each other T of
// `threads` (tail in its own kernel, the default); releases d.
template <class D>
void run_variants(Env &e, Problem &p, D &d, const std::string &format, const std::vector<int> &threads, int32_t K, double bound)
{
  const int32_t chosen = d.threads_per_row;
  for (const bool fused : {true, false}) {
    if (!fused && d.tail.nnz == 0) continue;
    d.tail.allow_fused = fused;
    time_variant(e, p, d, format + "*", K, bound);
  }
  d.tail.allow_fused = false; // the default path
  for (const int T : threads) {
    if (T == chosen) continue;
    d.threads_per_row = T;
    time_variant(e, p, d, format, K, bound);
  }
  CK(pspmv::cuda::release(&d));
}

// Layout variants of a format: the default hybrid width (auto), then each fixed K of `widths`.
std::vector<pspmv::HybridOption> hybrid_variants(const std::vector<int> &widths)
{
  std::vector<pspmv::HybridOption> v(1);
  for (const int K : widths) {
    pspmv::HybridOption h;
    h.mode  = pspmv::HybridOption::Mode::Fixed;
    h.width = K;
    v.push_back(h);
  }
  return v;
}

void run_rgcsr(Env &e, Problem &p, const pspmv::CsrView &v, const std::vector<int> &threads, const std::vector<int> &widths)
{
  for (const pspmv::HybridOption &h : hybrid_variants(widths)) {
    pspmv::RgCsrOptions o;
    o.group_size               = 64;
    o.hybrid                   = h;
    const pspmv::RgCsrMatrix M = pspmv::build_rgcsr(v, o);
    pspmv::cuda::DeviceRgCsr d;
    CK(pspmv::cuda::upload(M, &d));
    const bool fixed = h.mode == pspmv::HybridOption::Mode::Fixed;
    run_variants(e, p, d, "rgcsr:g64" + (fixed ? ":K" + std::to_string(h.width) : ""), threads, M.hybrid_width, 1e-12);
  }
}

void run_packsell(Env &e, Problem &p, const pspmv::CsrView &v, const pspmv::ValueFormat &f, const std::vector<int> &threads, const std::vector<int> &widths, const std::vector<int> &sigmas, bool column_gaps)
{
  for (const int sigma : sigmas)
    for (const pspmv::HybridOption &h : hybrid_variants(widths)) {
      pspmv::PackSellOptions o;
      o.value_format                = f;
      o.scaling                     = f.lossy() ? pspmv::PackSellScaling::Auto : pspmv::PackSellScaling::None;
      o.hybrid                      = h;
      o.sigma                       = sigma == 0 ? pspmv::kPackSellSigmaAuto : sigma;
      o.column_gaps                 = column_gaps;
      const pspmv::PackSellMatrix M = pspmv::build_packsell(v, o);
      pspmv::cuda::DevicePackSell d;
      CK(pspmv::cuda::upload(M, &d));
      const bool        fixed  = h.mode == pspmv::HybridOption::Mode::Fixed;
      const std::string window = sigma == 1 ? "" : sigma == 0 ? ":sauto=" + std::to_string(M.sigma) : ":s" + std::to_string(sigma);
      run_variants(e, p, d, "packsell:" + f.name() + window + (M.gaps.empty() ? "" : ":gaps") + (fixed ? ":K" + std::to_string(h.width) : ""), threads, M.hybrid_width, f.lossy() ? 2 * f.unit_roundoff() : 1e-12);
    }
}

void cusparse_check(cusparseStatus_t st, const char *call, int line)
{
  if (st == CUSPARSE_STATUS_SUCCESS) return;
  std::fprintf(stderr, "cuSPARSE error %d (%s) at line %d\n", int(st), call, line);
  std::exit(1);
}
#define CKS(call) cusparse_check((call), #call, __LINE__)

// cuSPARSE CSR SpMV, FP64 (the kernel aijcusparse runs), y = A x; bytes as spmv_bench counts them.
void run_cusparse_csr(Env &e, Problem &p)
{
  const bench::HostCsr &A  = p.A;
  int32_t              *rp = nullptr, *ci = nullptr;
  double               *va  = nullptr;
  void                 *buf = nullptr;
  CK(cudaMalloc(&rp, sizeof(int32_t) * A.rowptr.size()));
  CK(cudaMalloc(&ci, sizeof(int32_t) * std::max<size_t>(1, A.colidx.size())));
  CK(cudaMalloc(&va, sizeof(double) * std::max<size_t>(1, A.values.size())));
  CK(cudaMemcpy(rp, A.rowptr.data(), sizeof(int32_t) * A.rowptr.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(ci, A.colidx.data(), sizeof(int32_t) * A.colidx.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(va, A.values.data(), sizeof(double) * A.values.size(), cudaMemcpyHostToDevice));
  cusparseHandle_t     h = nullptr;
  cusparseSpMatDescr_t M = nullptr;
  cusparseDnVecDescr_t X = nullptr, Y = nullptr;
  CKS(cusparseCreate(&h));
  CKS(cusparseSetStream(h, e.stream));
  CKS(cusparseCreateCsr(&M, A.rows, A.cols, A.nnz(), rp, ci, va, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CKS(cusparseCreateDnVec(&X, A.cols, p.dx, CUDA_R_64F));
  CKS(cusparseCreateDnVec(&Y, A.rows, p.dy, CUDA_R_64F));
  const double one = 1.0, zero = 0.0;
  const auto   op    = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t       bytes = 0;
  CKS(cusparseSpMV_bufferSize(h, op, &one, M, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, &bytes));
  CK(cudaMalloc(&buf, std::max<size_t>(bytes, 16)));
  CKS(cusparseSpMV_preprocess(h, op, &one, M, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, buf));
  poison_y(p);
  const double us = time_product(e, [&] { return cusparseSpMV(h, op, &one, M, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, buf) == CUSPARSE_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown; });
  CK(cudaStreamSynchronize(e.stream));
  report(e, p, "cusparse_csr", "fp64", us, A.nnz() * 12 + int64_t(A.rows + 1) * 4, 0, 0, 1e-12);
  CKS(cusparseDestroyDnVec(X));
  CKS(cusparseDestroyDnVec(Y));
  CKS(cusparseDestroySpMat(M));
  CKS(cusparseDestroy(h));
  for (void *ptr : {(void *)rp, (void *)ci, (void *)va, buf}) CK(cudaFree(ptr));
}

// Parses a comma-separated list of integers for option `opt`; false (with a message) if an
// entry is not valid.
bool int_list(const char *opt, const char *arg, bool (*valid)(int), std::vector<int> *out)
{
  for (const auto &t : bench::split(arg, ',')) {
    char      *end = nullptr;
    const long l   = std::strtol(t.c_str(), &end, 10);
    const int  v   = end != t.c_str() && *end == '\0' && l >= INT_MIN && l <= INT_MAX ? int(l) : -1;
    if (v < 0 || !valid(v)) {
      std::fprintf(stderr, "%s: '%s' is not allowed (threads per row: 1, 2, 4, 8; widths: >= 1; sigmas: 0, 1 or a multiple of 32)\n", opt, t.c_str());
      return false;
    }
    out->push_back(v);
  }
  return true;
}

} // namespace

int main(int argc, char **argv)
{
  std::vector<std::string> gens, files;
  std::vector<int>         threads; // threads per row to time besides upload's choice
  std::vector<int>         widths;  // fixed hybrid widths K to time besides auto
  std::vector<int>         sigmas;  // PackSELL sort windows (0: auto); default {1}
  std::vector<std::string> formats     = {"csr", "rgcsr", "fp16", "bf16", "e8m14", "exact"};
  bool                     column_gaps = true; // -column_gaps auto|off (PackSellOptions::column_gaps)
  Env                      e{};
  e.reps          = 50;
  const char *csv = nullptr;
  if (argc % 2 == 0) {
    std::fprintf(stderr, "option %s needs a value\n", argv[argc - 1]);
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-gen")) gens = bench::split(argv[i + 1], ',');
    else if (!std::strcmp(argv[i], "-f")) files = bench::split(argv[i + 1], ',');
    else if (!std::strcmp(argv[i], "-reps")) e.reps = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "-csv")) csv = argv[i + 1];
    else if (!std::strcmp(argv[i], "-threads")) {
      if (!int_list(
            argv[i], argv[i + 1], [](int v) { return v == 1 || v == 2 || v == 4 || v == 8; }, &threads))
        return 2;
    } else if (!std::strcmp(argv[i], "-widths")) {
      if (!int_list(
            argv[i], argv[i + 1], [](int v) { return v >= 1; }, &widths))
        return 2;
    } else if (!std::strcmp(argv[i], "-sigmas")) {
      if (!int_list(
            argv[i], argv[i + 1], [](int v) { return v == 0 || v == 1 || (v > 0 && v % 32 == 0); }, &sigmas))
        return 2;
    } else if (!std::strcmp(argv[i], "-column_gaps")) {
      if (std::strcmp(argv[i + 1], "auto") && std::strcmp(argv[i + 1], "off")) {
        std::fprintf(stderr, "-column_gaps: '%s' is not auto or off\n", argv[i + 1]);
        return 2;
      }
      column_gaps = !std::strcmp(argv[i + 1], "auto");
    } else if (!std::strcmp(argv[i], "-formats")) {
      formats = bench::split(argv[i + 1], ',');
      for (const auto &f : formats)
        if (f != "csr" && f != "rgcsr" && f != "fp16" && f != "bf16" && f != "e8m14" && f != "exact") {
          std::fprintf(stderr, "-formats: '%s' is not one of csr, rgcsr, fp16, bf16, e8m14, exact\n", f.c_str());
          return 2;
        }
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (sigmas.empty()) sigmas.push_back(1);
  CK(cudaStreamCreateWithFlags(&e.stream, cudaStreamNonBlocking));
  e.flush_bytes = size_t(256) << 20;
  CK(cudaMalloc(&e.flush, e.flush_bytes));
  CK(cudaMemset(e.flush, 0x3f, e.flush_bytes));
  CK(cudaMalloc(&e.sink, sizeof(double)));
  std::unique_ptr<bench::CsvWriter> csv_file;
  if (csv) csv_file = std::make_unique<bench::CsvWriter>(csv, "matrix,rows,nnz,format,variant,time_us,gbytes_per_s,tail_nnz,hybrid_width,rel_error", false, "kernel_bench");
  e.csv = csv_file && *csv_file ? csv_file.get() : nullptr;
  std::printf("%-28s %-20s %-22s %10s %9s %10s %7s %9s\n", "matrix", "format", "variant", "median_us", "GB/s", "tail_nnz", "K", "error");
  std::vector<std::string> specs;
  for (auto &g : gens) specs.push_back("gen:" + g);
  for (auto &f : files) specs.push_back(f);
  for (const auto &spec : specs) {
    Problem p;
    p.A = spec.rfind("gen:", 0) == 0 ? bench::generate_matrix(spec.substr(4)) : bench::read_matrix_market(spec);
    p.x = bench::make_x(p.A.cols, 7);
    p.yref.resize(size_t(p.A.rows));
    p.absy.resize(size_t(p.A.rows));
    bench::reference_spmv(p.A, p.x.data(), p.yref.data(), p.absy.data());
    CK(cudaMalloc(&p.dx, sizeof(double) * std::max<size_t>(1, p.x.size())));
    CK(cudaMalloc(&p.dy, sizeof(double) * std::max<size_t>(1, p.yref.size())));
    CK(cudaMemcpy(p.dx, p.x.data(), sizeof(double) * p.x.size(), cudaMemcpyHostToDevice));
    const pspmv::CsrView v{p.A.rows, p.A.cols, p.A.rowptr.data(), p.A.colidx.data(), p.A.values.data()};
    const auto           wanted = [&](const char *name) { return std::count(formats.begin(), formats.end(), name) > 0; };
    if (wanted("csr")) run_cusparse_csr(e, p);
    if (wanted("rgcsr")) run_rgcsr(e, p, v, threads, widths);
    for (const auto &f : {pspmv::ValueFormat::fp16(), pspmv::ValueFormat::bf16(), pspmv::ValueFormat::e8m(14), pspmv::ValueFormat::exact()})
      if (wanted(f.name().c_str())) run_packsell(e, p, v, f, threads, widths, sigmas, column_gaps);
    CK(cudaFree(p.dx));
    CK(cudaFree(p.dy));
    std::fflush(stdout);
  }
  return e.failed ? 1 : 0;
}
