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
// is written (exit code 3); bench/run_bench.sh then restarts with the remaining matrices.
#include "bench_kernels.hpp"
#include "matrix_source.hpp"

#include <petscspmv.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <petscdevice_cuda.h>
#include <petscmat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>
#if defined(_OPENMP)
  #include <omp.h>
#endif

static_assert(sizeof(PetscInt) == 4, "spmv_bench needs PETSc with 32-bit indices");
static_assert(sizeof(PetscScalar) == 8, "spmv_bench needs PETSc with real double scalars");

static const char help[] =
  "spmv_bench: SpMV (MatMult) of aijcusparse, sellcuda, rgcsrcuda, packsellcuda and cuSPARSE.\n"
  "  -f a.mtx[.gz|.xz],b.petsc,...  matrix files (Matrix Market or PETSc binary); -flist FILE: one path a line\n"
  "  -gen lap7:N,lap27:N,powerlaw:ROWS:AVG:ALPHA:SEED  generated matrices\n"
  "  -formats LIST     default: aijcusparse,sellcuda,rgcsrcuda:g32,rgcsrcuda:g64,rgcsrcuda:g128,rgcsrcuda:g256,\n"
  "                    packsellcuda:fp16,packsellcuda:bf16,packsellcuda:e8m14,packsellcuda:e8m22,packsellcuda:exact,\n"
  "                    cusparse_csr:fp64,cusparse_sell:fp64,cusparse_sell:fp16\n"
  "                    rgcsrcuda[:g<G>][:hyb=auto|none|K]  packsellcuda[:<value format>][:hyb=..][:scaling=auto][:C=..][:sigma=..]\n"
  "                    cusparse_csr:fp64|fp16  cusparse_sell:fp64|fp16; any token mat_x=v sets -mat_x v for that format\n"
  "  -reps 100 -warmup 10 -flush_l2 1 -copy_bytes 1073741824 -time_limit 0 (s; skip matrices after it)\n"
  "  -json out.json -csv out.csv -commit SHA -label TEXT -progress FILE (a line per matrix started/done)\n"
  "  -save_binary DIR  also write each matrix as DIR/<name>.petsc (PETSc binary, read back with -f)\n"
  "  -cpu  host types (aij, seqsell, rgcsr, packsell) and host timers: checks the program without a GPU\n";

namespace {

using bench::HostCsr;
using bench::split;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// ------------------------------------------------------------------------------ JSON output
std::string jstr(const std::string &s)
{
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"': o += "\\\""; break;
    case '\\': o += "\\\\"; break;
    case '\n': o += "\\n"; break;
    case '\r': o += "\\r"; break;
    case '\t': o += "\\t"; break;
    default:
      if (c < 0x20) {
        char b[8];
        std::snprintf(b, sizeof(b), "\\u%04x", c);
        o += b;
      } else o += char(c);
    }
  }
  return o + "\"";
}
std::string jnum(double v)
{
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof(b), "%.10g", v);
  return b;
}
std::string jint(long long v) { return std::to_string(v); }
std::string jbool(bool v) { return v ? "true" : "false"; }

// ------------------------------------------------------------------------------ errors
struct ErrorCapture {
  std::string message;
  bool        have = false;
  void        reset()
  {
    message.clear();
    have = false;
  }
};

PetscErrorCode CaptureHandler(MPI_Comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  auto *c = static_cast<ErrorCapture *>(ctx);
  if (!c->have) { // the first call carries the message; the calls up the stack repeat it
    std::string m = mess ? mess : "";
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    if (m.empty()) {
      const char *text = nullptr;
      PetscErrorMessage(n, &text, nullptr);
      m = text ? text : "unknown PETSc error";
    }
    c->message = m + " [PETSc error " + std::to_string((int)n) + " in " + (fun ? fun : "?") + "() at " + (file ? file : "?") + ":" + std::to_string(line) + "]";
    c->have    = true;
  }
  return n;
}

// ------------------------------------------------------------------------------ formats
struct FormatSpec {
  std::string name;    // as given in -formats: the CSV "format" column
  std::string family;  // aijcusparse sellcuda rgcsrcuda packsellcuda cusparse_csr cusparse_sell
  std::string mattype; // PETSc type MatConvert goes to (PETSc families)
  std::vector<std::pair<std::string, std::string>> options; // option name (no '-') and value
  std::string value_format;                                 // packsell / cusparse precision
  bool        explicit_scaling = false;
  bool        petsc            = true;

  bool lossy() const { return family == "packsellcuda" ? value_format != "exact" : value_format == "fp16"; }
  // relative rounding bound of one stored value (and, for cusparse fp16, of x, y and FP32 sums)
  double error_bound() const
  {
    const double dbl = 1e-13;
    if (!lossy()) return dbl;
    if (family == "packsellcuda") {
      if (value_format == "fp16") return std::ldexp(1.0, -11) + dbl;
      if (value_format == "bf16") return std::ldexp(1.0, -8) + dbl;
      if (value_format.rfind("e8m", 0) == 0) return std::ldexp(1.0, -(std::atoi(value_format.c_str() + 3) + 1)) + dbl;
    }
    return 3 * std::ldexp(1.0, -11) + 1e-6; // cusparse fp16: A, x and y rounded, FP32 accumulation
  }
};

std::string option_value(const FormatSpec &f, const std::string &name)
{
  for (auto &o : f.options)
    if (o.first == name) return o.second;
  return "";
}

FormatSpec parse_format(const std::string &spec, bool cpu)
{
  FormatSpec               f;
  std::vector<std::string> t = split(spec, ':');
  if (t.empty()) throw std::runtime_error("empty format name in -formats");
  f.name   = spec;
  f.family = t[0];
  auto kv  = [&](const std::string &tok, std::string &k, std::string &v) {
    const size_t e = tok.find('=');
    if (e == std::string::npos) return false;
    k = tok.substr(0, e);
    v = tok.substr(e + 1);
    return true;
  };
  const std::string fam = f.family;
  std::string       k, v;
  if (fam == "aijcusparse" || fam == "sellcuda") {
    f.mattype = fam == "aijcusparse" ? (cpu ? MATSEQAIJ : MATSEQAIJCUSPARSE) : (cpu ? MATSEQSELL : MATSEQSELLCUDA);
    for (size_t i = 1; i < t.size(); ++i) {
      if (kv(t[i], k, v) && k.rfind("mat_", 0) == 0) f.options.emplace_back(k, v);
      else throw std::runtime_error("format '" + spec + "': unknown token '" + t[i] + "'");
    }
  } else if (fam == "rgcsrcuda") {
    f.mattype = cpu ? MATRGCSR : MATRGCSRCUDA;
    for (size_t i = 1; i < t.size(); ++i) {
      if (t[i].size() > 1 && t[i][0] == 'g' && std::isdigit((unsigned char)t[i][1])) f.options.emplace_back("mat_rgcsr_group_size", t[i].substr(1));
      else if (kv(t[i], k, v) && (k == "hyb" || k == "hybrid")) f.options.emplace_back("mat_rgcsr_hybrid", v);
      else if (kv(t[i], k, v) && k.rfind("mat_", 0) == 0) f.options.emplace_back(k, v);
      else throw std::runtime_error("format '" + spec + "': unknown token '" + t[i] + "' (g<G>, hyb=auto|none|K, mat_<option>=<value>)");
    }
  } else if (fam == "packsellcuda") {
    f.mattype = cpu ? MATPACKSELL : MATPACKSELLCUDA;
    for (size_t i = 1; i < t.size(); ++i) {
      if (!kv(t[i], k, v)) {
        f.value_format = t[i];
        f.options.emplace_back("mat_packsell_value_format", t[i]);
      } else if (k == "hyb" || k == "hybrid") f.options.emplace_back("mat_packsell_hybrid", v);
      else if (k == "scaling") {
        f.options.emplace_back("mat_packsell_scaling", v);
        f.explicit_scaling = true;
      } else if (k == "C") f.options.emplace_back("mat_packsell_slice_height", v);
      else if (k == "sigma") f.options.emplace_back("mat_packsell_sigma", v);
      else if (k.rfind("mat_", 0) == 0) f.options.emplace_back(k, v);
      else throw std::runtime_error("format '" + spec + "': unknown token '" + t[i] + "'");
    }
    if (f.value_format.empty()) f.value_format = "exact"; // the type's default (lossless)
  } else if (fam == "cusparse_csr" || fam == "cusparse_sell") {
    f.petsc        = false;
    f.value_format = t.size() > 1 ? t[1] : "fp64";
    if (t.size() > 2 || (f.value_format != "fp64" && f.value_format != "fp16")) throw std::runtime_error("format '" + spec + "': use " + fam + ":fp64 or " + fam + ":fp16");
  } else throw std::runtime_error("unknown format family '" + fam + "' in '" + spec + "'");
  return f;
}

// ------------------------------------------------------------------------------ results
struct Result {
  bool        completed = false;
  std::string message; // why it failed
  std::string note;
  std::vector<double> us; // event times of the timed products
  double      wall_us_mean = kNaN;
  double      matrix_bytes = kNaN, bytes = kNaN;
  std::string bytes_source;
  double      error = kNaN, error_vs_aij = kNaN, error_bound = kNaN;
  bool        nonfinite = false;
  double      setup_s   = kNaN;
  std::vector<std::pair<std::string, std::string>> info;  // strings: effective options, types
  std::vector<std::pair<std::string, double>>      stats; // numbers: layout statistics
  // derived
  double median = kNaN, min = kNaN, max = kNaN, p10 = kNaN, p90 = kNaN, mean = kNaN;

  void finish()
  {
    if (us.empty()) return;
    std::vector<double> s = us;
    std::sort(s.begin(), s.end());
    const size_t n = s.size();
    median         = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    min            = s.front();
    max            = s.back();
    p10            = s[size_t(std::floor(0.1 * double(n - 1)))];
    p90            = s[size_t(std::ceil(0.9 * double(n - 1)))];
    double t       = 0;
    for (double v : s) t += v;
    mean = t / double(n);
  }
};

struct MatrixRecord {
  std::string name, source, kind;
  long long   rows = 0, cols = 0, nnz = 0, max_row = 0;
  double      load_s = kNaN, reference_s = kNaN;
  std::vector<std::pair<std::string, Result>> results;
};

// ------------------------------------------------------------------------------ context
struct Bench {
  bool        cpu = false;
  PetscInt    reps = 100, warmup = 10;
  PetscBool   flush = PETSC_TRUE;
  size_t      copy_bytes = size_t(1) << 30;
  cudaStream_t stream = nullptr;
  std::string stream_desc, default_stream_desc;
  void       *flushbuf = nullptr;
  size_t      flushbytes = 0;
  double     *sink = nullptr;
  std::vector<cudaEvent_t> ev;
  cusparseHandle_t sp = nullptr;
  double copy_bw = kNaN, copy_bw_memcpy = kNaN, copy_bw_kernel = kNaN, read_bw = kNaN;
  double launch_floor_us = kNaN; // median events-to-events time of one empty kernel after the L2 flush
  std::string copy_bw_method;
  int         attempt = 0;
  ErrorCapture cap;
  // header
  std::string date, host, gpu_name, cuda_runtime, cuda_driver, cusparse_version, petsc_version, commit, label;
  long long   gpu_sms = 0, gpu_l2 = 0, gpu_mem = 0;
  int         omp_threads = 1;
};

// Fills r.us with `reps` timed runs of op (and wall_us_mean).
PetscErrorCode TimeOp(Bench &b, const std::function<PetscErrorCode()> &op, Result &r)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < b.warmup; ++i) PetscCall(op());
  r.us.assign(size_t(b.reps), kNaN);
  if (b.cpu) {
    for (PetscInt i = 0; i < b.reps; ++i) {
      const double t0 = now_s();
      PetscCall(op());
      r.us[size_t(i)] = (now_s() - t0) * 1e6;
    }
    r.wall_us_mean = kNaN;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallCUDA(cudaDeviceSynchronize());
  for (PetscInt i = 0; i < b.reps; ++i) {
    if (b.flush && b.flushbuf) PetscCallCUDA(bench_read(b.flushbuf, b.flushbytes, b.sink, b.stream));
    PetscCallCUDA(cudaEventRecord(b.ev[size_t(2 * i)], b.stream));
    PetscCall(op());
    PetscCallCUDA(cudaEventRecord(b.ev[size_t(2 * i + 1)], b.stream));
  }
  PetscCallCUDA(cudaDeviceSynchronize());
  for (PetscInt i = 0; i < b.reps; ++i) {
    float ms = 0;
    PetscCallCUDA(cudaEventElapsedTime(&ms, b.ev[size_t(2 * i)], b.ev[size_t(2 * i + 1)]));
    r.us[size_t(i)] = double(ms) * 1e3;
  }
  const double t0 = now_s();
  for (PetscInt i = 0; i < b.reps; ++i) PetscCall(op());
  PetscCallCUDA(cudaDeviceSynchronize());
  r.wall_us_mean = (now_s() - t0) * 1e6 / double(b.reps);
  PetscFunctionReturn(PETSC_SUCCESS);
}

struct Reference {
  std::vector<double> x, y, absy, y_aij;
  double              scale = 1.0; // || |A||x| ||_inf
};

void ComputeError(const Reference &ref, const double *y, size_t n, Result &r)
{
  double e = 0, ea = 0;
  bool   bad = false;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(y[i])) {
      bad = true;
      break;
    }
    e = std::max(e, std::fabs(y[i] - ref.y[i]));
    if (!ref.y_aij.empty()) ea = std::max(ea, std::fabs(y[i] - ref.y_aij[i]));
  }
  r.nonfinite = bad;
  r.error     = bad ? kNaN : e / ref.scale;
  if (!ref.y_aij.empty()) r.error_vs_aij = bad ? kNaN : ea / ref.scale;
}

// ------------------------------------------------------------------------------ PETSc formats
struct PetscMats {
  Mat A = nullptr; // MATSEQAIJ on the HostCsr arrays
  Vec x = nullptr, y = nullptr;
};

PetscErrorCode SetStatsFromGlue(Mat B, Result &r)
{
  MatSpMVStats st;

  PetscFunctionBegin;
  PetscCall(MatSpMVGetStats(B, &st));
  r.matrix_bytes = double(st.stored_bytes);
  r.bytes_source = "MatSpMVGetStats";
  r.stats        = {{"stored_bytes", double(st.stored_bytes)}, {"stored_slots", double(st.stored_slots)}, {"padding_slots", double(st.padding_slots)}, {"dummy_words", double(st.dummy_words)},
                    {"tail_nnz", double(st.tail_nnz)},         {"hybrid_width", double(st.hybrid_width)}, {"bytes_per_nnz", st.nnz ? double(st.stored_bytes) / double(st.nnz) : kNaN}};
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

// One attempt of a PETSc format: convert, first product (upload), stats, timing, check.
PetscErrorCode RunPetscOnce(Bench &b, const HostCsr &H, PetscMats &m, const FormatSpec &f, bool scaled_retry, Reference &ref, Mat *Bout, Result &r)
{
  Mat         B = nullptr;
  std::string prefix;
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
    PetscInt  maxw  = 0;
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

bool CudaContextLost(Bench &b, std::string *why)
{
  if (b.cpu) return false;
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e == cudaSuccess) return false;
  (void)cudaGetLastError();
  cudaError_t e2 = cudaDeviceSynchronize();
  if (e2 == cudaSuccess) e2 = cudaGetLastError();
  if (e2 == cudaSuccess) return false;
  *why = std::string(cudaGetErrorName(e2)) + ": " + cudaGetErrorString(e2);
  return true;
}

// ------------------------------------------------------------------------------ cuSPARSE direct
struct DevMem {
  std::vector<void *> ptrs;
  cusparseSpMatDescr_t A = nullptr;
  cusparseDnVecDescr_t X = nullptr, Y = nullptr;
  void *alloc(size_t bytes)
  {
    void *p = nullptr;
    if (cudaMalloc(&p, bytes ? bytes : 16) != cudaSuccess) return nullptr;
    ptrs.push_back(p);
    return p;
  }
  ~DevMem()
  {
    if (A) cusparseDestroySpMat(A);
    if (X) cusparseDestroyDnVec(X);
    if (Y) cusparseDestroyDnVec(Y);
    for (void *p : ptrs) cudaFree(p);
  }
};

template <class T>
PetscErrorCode Upload(DevMem &d, const T *h, size_t n, T **out)
{
  PetscFunctionBegin;
  *out = static_cast<T *>(d.alloc(sizeof(T) * n));
  PetscCheck(*out, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMalloc of %zu bytes failed", sizeof(T) * n);
  if (n) PetscCallCUDA(cudaMemcpy(*out, h, sizeof(T) * n, cudaMemcpyHostToDevice));
  PetscFunctionReturn(PETSC_SUCCESS);
}
template <class T>
PetscErrorCode Upload(DevMem &d, const std::vector<T> &h, T **out)
{
  return Upload(d, h.data(), h.size(), out);
}

// Sliced ELL with slices of C rows in cuSPARSE's layout: the k-th nonzero of row i at
// off[i / C] + k * C + i % C; padding column -1, value 0; every slice C * (its longest row) slots.
struct Sell {
  int32_t                    C       = 32;
  long long                  nslices = 0, slots = 0;
  std::vector<int64_t>       off;
  std::unique_ptr<int32_t[]> col;
  std::unique_ptr<double[]>  val;
};

void BuildSell(const HostCsr &H, int32_t C, Sell &S)
{
  S.C       = C;
  S.nslices = (H.rows + C - 1) / C;
  S.off.assign(size_t(S.nslices) + 1, 0);
  for (long long sl = 0; sl < S.nslices; ++sl) {
    int32_t w = 0;
    for (int32_t i = int32_t(sl * C); i < std::min<int32_t>(H.rows, int32_t((sl + 1) * C)); ++i) w = std::max(w, H.rowptr[i + 1] - H.rowptr[i]);
    S.off[size_t(sl) + 1] = S.off[size_t(sl)] + int64_t(C) * w;
  }
  S.slots = S.off.back();
  // uninitialised buffers filled slice by slice in parallel (no serial memset of GBs)
  S.col.reset(new int32_t[size_t(std::max<long long>(S.slots, 1))]);
  S.val.reset(new double[size_t(std::max<long long>(S.slots, 1))]);
#pragma omp parallel for schedule(dynamic, 64)
  for (long long sl = 0; sl < S.nslices; ++sl) {
    std::fill(S.col.get() + S.off[size_t(sl)], S.col.get() + S.off[size_t(sl) + 1], -1);
    std::fill(S.val.get() + S.off[size_t(sl)], S.val.get() + S.off[size_t(sl) + 1], 0.0);
    for (int32_t i = int32_t(sl * C); i < std::min<int32_t>(H.rows, int32_t((sl + 1) * C)); ++i) {
      const int64_t base = S.off[size_t(sl)] + (i % C);
      for (int32_t q = H.rowptr[i]; q < H.rowptr[i + 1]; ++q) {
        const int64_t at   = base + int64_t(q - H.rowptr[i]) * C;
        S.col[size_t(at)] = H.colidx[size_t(q)];
        S.val[size_t(at)] = H.values[size_t(q)];
      }
    }
  }
}

// Host stand-in of the cuSPARSE product (cpu mode): the same arrays, FP16 rounding of A, x and y
// emulated with FP32 sums; y in FP64 (rescaled by 2^k).
void EmulateCusparse(const HostCsr &H, const Sell *S, bool half, int k, const std::vector<double> &x, std::vector<double> &y)
{
  auto a_of = [&](double v) { return half ? double(__half2float(__double2half(std::ldexp(v, -k)))) : v; };
  auto x_of = [&](int32_t j) { return half ? double(__half2float(__double2half(x[size_t(j)]))) : x[size_t(j)]; };
  y.assign(size_t(H.rows), 0.0);
#pragma omp parallel for schedule(dynamic, 1024)
  for (int32_t i = 0; i < H.rows; ++i) {
    double sd = 0;
    float  sf = 0;
    if (S) {
      const int64_t base = S->off[size_t(i / S->C)] + (i % S->C), w = (S->off[size_t(i / S->C) + 1] - S->off[size_t(i / S->C)]) / S->C;
      for (int64_t q = 0; q < w; ++q) {
        const int32_t c = S->col[size_t(base + q * S->C)];
        if (c < 0) continue;
        if (half) sf += float(a_of(S->val[size_t(base + q * S->C)]) * x_of(c));
        else sd += S->val[size_t(base + q * S->C)] * x[size_t(c)];
      }
    } else {
      for (int32_t q = H.rowptr[i]; q < H.rowptr[i + 1]; ++q) {
        if (half) sf += float(a_of(H.values[size_t(q)]) * x_of(H.colidx[size_t(q)]));
        else sd += H.values[size_t(q)] * x[size_t(H.colidx[size_t(q)])];
      }
    }
    y[size_t(i)] = half ? std::ldexp(double(__half2float(__float2half(sf))), k) : sd;
  }
}

PetscErrorCode RunCusparse(Bench &b, const HostCsr &H, const FormatSpec &f, const Reference &ref, Result &r)
{
  const bool   half = f.value_format == "fp16", sell = f.family == "cusparse_sell";
  const size_t vb   = half ? 2 : 8;
  DevMem       d;
  const double t0   = now_s();

  PetscFunctionBegin;
  // fp16: scale by 2^-k so that values and results fit (|y_i| <= (|A||x|)_i <= scale)
  int k = 0;
  if (half) {
    double amax = 0;
    for (double v : H.values) amax = std::max(amax, std::fabs(v));
    const double m = std::max(amax, ref.scale);
    while (std::ldexp(m, -k) > 16384.0) ++k;
    if (k) r.info.emplace_back("scale", "values stored times 2^-" + std::to_string(k) + " (fp16 range); y rescaled on the host");
    r.error_bound = 3 * std::ldexp(1.0, -11) + double(H.max_row_length()) * std::ldexp(1.0, -24); // A, x, y rounded; FP32 sums
  }
  Sell S;
  if (sell) {
    BuildSell(H, 32, S);
    r.matrix_bytes = double(S.slots) * double(vb + 4) + double(S.nslices + 1) * (S.slots <= std::numeric_limits<int32_t>::max() ? 4 : 8);
    r.bytes_source = "slots*(value+4)+(slices+1)*offset, slice 32, padding column -1";
    r.stats        = {{"stored_slots", double(S.slots)}, {"padding_slots", double(S.slots - H.nnz())}, {"bytes_per_nnz", H.nnz() ? r.matrix_bytes / double(H.nnz()) : kNaN}};
  } else {
    r.matrix_bytes = double(H.nnz()) * double(vb + 4) + double(H.rows + 1) * 4;
    r.bytes_source = "nnz*(value+4)+(rows+1)*4";
  }
  if (b.cpu) {
    // no GPU: the same arrays through the host stand-in (checks the layout and the fp16 path)
    std::vector<double> y;
    r.info.emplace_back("types", half ? "host emulation (cpu mode): A=fp16,x=fp16,y=fp16,compute=fp32" : "host emulation (cpu mode): fp64");
    r.setup_s = now_s() - t0;
    r.bytes   = r.matrix_bytes + double(H.cols) * double(vb) + double(H.rows) * double(vb);
    auto op   = [&]() -> PetscErrorCode {
      EmulateCusparse(H, sell ? &S : nullptr, half, k, ref.x, y);
      return PETSC_SUCCESS;
    };
    PetscCall(TimeOp(b, op, r));
    ComputeError(ref, y.data(), y.size(), r);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  // values to the device: FP64 as they are, FP16 rounded after the 2^-k scaling
  auto upload_vals = [&](const double *src, size_t n, void **out) -> PetscErrorCode {
    PetscFunctionBegin;
    if (half) {
      std::unique_ptr<__half[]> v16(new __half[n ? n : 1]);
#pragma omp parallel for schedule(static)
      for (size_t i = 0; i < n; ++i) v16[i] = __double2half(std::ldexp(src[i], -k));
      PetscCall(Upload(d, v16.get(), n, reinterpret_cast<__half **>(out)));
    } else PetscCall(Upload(d, src, n, reinterpret_cast<double **>(out)));
    PetscFunctionReturn(PETSC_SUCCESS);
  };
  void *dvals = nullptr;
  if (!sell) {
    int32_t *drp, *dci;
    PetscCall(Upload(d, H.rowptr, &drp));
    PetscCall(Upload(d, H.colidx, &dci));
    PetscCall(upload_vals(H.values.data(), H.values.size(), &dvals));
    PetscCallCUSPARSE(cusparseCreateCsr(&d.A, H.rows, H.cols, H.nnz(), drp, dci, dvals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, half ? CUDA_R_16F : CUDA_R_64F));
  } else {
    void               *doff;
    cusparseIndexType_t offtype = CUSPARSE_INDEX_32I;
    if (S.slots <= std::numeric_limits<int32_t>::max()) {
      std::vector<int32_t> off32(S.off.begin(), S.off.end());
      PetscCall(Upload(d, off32, reinterpret_cast<int32_t **>(&doff)));
    } else {
      offtype = CUSPARSE_INDEX_64I;
      PetscCall(Upload(d, S.off, reinterpret_cast<int64_t **>(&doff)));
    }
    int32_t *dcol;
    PetscCall(Upload(d, S.col.get(), size_t(S.slots), &dcol));
    S.col.reset();
    PetscCall(upload_vals(S.val.get(), size_t(S.slots), &dvals));
    S.val.reset();
    PetscCallCUSPARSE(cusparseCreateSlicedEll(&d.A, H.rows, H.cols, H.nnz(), S.slots, S.C, doff, dcol, dvals, offtype, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, half ? CUDA_R_16F : CUDA_R_64F));
  }

  // vectors
  void *dx, *dy;
  if (half) {
    std::vector<__half> xh(ref.x.size());
    for (size_t i = 0; i < xh.size(); ++i) xh[i] = __double2half(ref.x[i]);
    PetscCall(Upload(d, xh, reinterpret_cast<__half **>(&dx)));
  } else PetscCall(Upload(d, ref.x, reinterpret_cast<double **>(&dx)));
  dy = d.alloc(sizeof(double) * size_t(std::max(H.rows, 1))); // big enough for any y type
  PetscCheck(dy, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMalloc of y failed");
  PetscCallCUSPARSE(cusparseCreateDnVec(&d.X, H.cols, dx, half ? CUDA_R_16F : CUDA_R_64F));

  // fp16: A and x in FP16, compute FP32; y FP16 if cuSPARSE takes it, else FP32
  const cudaDataType  compute = half ? CUDA_R_32F : CUDA_R_64F;
  const cusparseSpMVAlg_t alg = sell ? CUSPARSE_SPMV_SELL_ALG1 : CUSPARSE_SPMV_CSR_ALG1;
  const double        alpha64 = 1.0, beta64 = 0.0;
  const float         alpha32 = 1.0f, beta32 = 0.0f;
  const void         *alpha = half ? (const void *)&alpha32 : (const void *)&alpha64, *beta = half ? (const void *)&beta32 : (const void *)&beta64;
  size_t              bufsize = 0;
  void               *dbuf    = nullptr;
  cudaDataType        ytype   = half ? CUDA_R_16F : CUDA_R_64F;
  std::string         tried;
  // a combination counts once bufferSize, preprocess (where offered) and one product accept it
  for (;;) {
    cusparseStatus_t st = cusparseCreateDnVec(&d.Y, H.rows, dy, ytype);
    std::string      stage = "cusparseCreateDnVec";
    if (st == CUSPARSE_STATUS_SUCCESS) {
      stage = "cusparseSpMV_bufferSize";
      st    = cusparseSpMV_bufferSize(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.A, d.X, beta, d.Y, compute, alg, &bufsize);
    }
    if (st == CUSPARSE_STATUS_SUCCESS && bufsize) {
      dbuf = d.alloc(bufsize);
      PetscCheck(dbuf, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMalloc of the cuSPARSE buffer (%zu bytes) failed", bufsize);
    }
    if (st == CUSPARSE_STATUS_SUCCESS) {
      const cusparseStatus_t pp = cusparseSpMV_preprocess(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.A, d.X, beta, d.Y, compute, alg, dbuf);
      if (pp != CUSPARSE_STATUS_SUCCESS) r.info.emplace_back("preprocess", cusparseGetErrorString(pp));
      stage = "cusparseSpMV";
      st    = cusparseSpMV(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.A, d.X, beta, d.Y, compute, alg, dbuf);
    }
    if (st == CUSPARSE_STATUS_SUCCESS) break;
    tried += std::string(tried.empty() ? "" : "; ") + "y " + (ytype == CUDA_R_16F ? "fp16" : ytype == CUDA_R_32F ? "fp32" : "fp64") + ": " + stage + " said " + cusparseGetErrorString(st);
    if (d.Y) cusparseDestroyDnVec(d.Y);
    d.Y = nullptr;
    PetscCheck(half && ytype == CUDA_R_16F, PETSC_COMM_SELF, PETSC_ERR_LIB, "cuSPARSE refused the combination (%s)", tried.c_str());
    ytype = CUDA_R_32F; // documented mixed precision: A and x FP16, y FP32, compute FP32
  }
  const size_t yb = ytype == CUDA_R_16F ? 2 : (ytype == CUDA_R_32F ? 4 : 8);
  r.info.emplace_back("types", std::string("A=") + (half ? "fp16" : "fp64") + ",x=" + (half ? "fp16" : "fp64") + ",y=" + (yb == 2 ? "fp16" : yb == 4 ? "fp32" : "fp64") + ",compute=" + (half ? "fp32" : "fp64"));
  r.info.emplace_back("algorithm", sell ? "CUSPARSE_SPMV_SELL_ALG1" : "CUSPARSE_SPMV_CSR_ALG1");
  if (!tried.empty()) r.info.emplace_back("refused", tried);
  PetscCallCUDA(cudaDeviceSynchronize());
  r.setup_s = now_s() - t0;
  r.bytes   = r.matrix_bytes + double(H.cols) * double(vb) + double(H.rows) * double(yb);

  auto op = [&]() -> PetscErrorCode {
    PetscCallCUSPARSE(cusparseSpMV(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.A, d.X, beta, d.Y, compute, alg, dbuf));
    return PETSC_SUCCESS;
  };
  PetscCall(TimeOp(b, op, r));

  // correctness on a poisoned y (0xFF bytes are NaN in every float type)
  PetscCallCUDA(cudaMemsetAsync(dy, 0xFF, sizeof(double) * size_t(H.rows), b.stream));
  PetscCall(op());
  PetscCallCUDA(cudaDeviceSynchronize());
  std::vector<double> y(size_t(H.rows));
  if (yb == 8) PetscCallCUDA(cudaMemcpy(y.data(), dy, 8 * y.size(), cudaMemcpyDeviceToHost));
  else if (yb == 4) {
    std::vector<float> t(y.size());
    PetscCallCUDA(cudaMemcpy(t.data(), dy, 4 * t.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < y.size(); ++i) y[i] = std::ldexp(double(t[i]), k);
  } else {
    std::vector<__half> t(y.size());
    PetscCallCUDA(cudaMemcpy(t.data(), dy, 2 * t.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < y.size(); ++i) y[i] = std::ldexp(double(__half2float(t[i])), k);
  }
  ComputeError(ref, y.data(), y.size(), r);
  PetscFunctionReturn(PETSC_SUCCESS);
}

// ------------------------------------------------------------------------------ bandwidth
PetscErrorCode MeasureBandwidth(Bench &b)
{
  PetscFunctionBegin;
  if (b.cpu) {
    const size_t      n = size_t(256) << 20;
    std::vector<char> a(n, 0x3f), c(n, 0);
    std::vector<double> t;
    for (int i = 0; i < 5; ++i) {
      const double t0 = now_s();
      std::memcpy(c.data(), a.data(), n);
      t.push_back(now_s() - t0);
      a[size_t(i)] = c[size_t(n - 1 - i)];
    }
    std::sort(t.begin(), t.end());
    b.copy_bw = b.copy_bw_memcpy = 2.0 * double(n) / t[t.size() / 2] / 1e9;
    b.copy_bw_method             = "host memcpy of 256 MiB (cpu mode)";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  const size_t n = b.copy_bytes & ~size_t(15);
  void        *src = nullptr, *dst = nullptr;
  PetscCallCUDA(cudaMalloc(&src, n));
  PetscCallCUDA(cudaMalloc(&dst, n));
  PetscCallCUDA(cudaMemset(src, 0x3f, n)); // doubles of 0x3f3f... : finite, not zero
  PetscCallCUDA(cudaMemset(dst, 0x11, n));
  cudaEvent_t e0, e1;
  PetscCallCUDA(cudaEventCreate(&e0));
  PetscCallCUDA(cudaEventCreate(&e1));
  auto median_of = [&](const std::function<cudaError_t()> &f, double *ms_med) -> PetscErrorCode {
    std::vector<double> t;
    PetscFunctionBegin;
    for (int i = 0; i < 3; ++i) PetscCallCUDA(f());
    for (int i = 0; i < 20; ++i) {
      float ms;
      PetscCallCUDA(cudaEventRecord(e0, b.stream));
      PetscCallCUDA(f());
      PetscCallCUDA(cudaEventRecord(e1, b.stream));
      PetscCallCUDA(cudaEventSynchronize(e1));
      PetscCallCUDA(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    *ms_med = 0.5 * (t[9] + t[10]);
    PetscFunctionReturn(PETSC_SUCCESS);
  };
  double ms;
  PetscCall(median_of([&]() { return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, b.stream); }, &ms));
  b.copy_bw_memcpy = 2.0 * double(n) / (ms * 1e-3) / 1e9;
  PetscCall(median_of([&]() { return bench_copy(src, dst, n, b.stream); }, &ms));
  b.copy_bw_kernel = 2.0 * double(n) / (ms * 1e-3) / 1e9;
  PetscCall(median_of([&]() { return bench_read(src, n, b.sink, b.stream); }, &ms));
  b.read_bw = double(n) / (ms * 1e-3) / 1e9;
  b.copy_bw = std::max(b.copy_bw_memcpy, b.copy_bw_kernel);
  b.copy_bw_method = std::string("max of cudaMemcpyAsync D2D and a copy kernel over ") + std::to_string(n >> 20) + " MiB, bytes read + written, median of 20 (" + (b.copy_bw_memcpy >= b.copy_bw_kernel ? "memcpy" : "kernel") + " won)";
  PetscCallCUDA(cudaEventDestroy(e0));
  PetscCallCUDA(cudaEventDestroy(e1));
  PetscCallCUDA(cudaFree(src));
  PetscCallCUDA(cudaFree(dst));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// ------------------------------------------------------------------------------ output
std::string ResultJson(const Result &r, const std::string &indent, double nnz, double copy_bw, double taij)
{
  std::ostringstream o;
  const double       t = r.median;
  o << "{\n";
  o << indent << "  \"completed\": " << jbool(r.completed);
  if (!r.message.empty()) o << ",\n" << indent << "  \"error_message\": " << jstr(r.message);
  if (!r.note.empty()) o << ",\n" << indent << "  \"note\": " << jstr(r.note);
  o << ",\n" << indent << "  \"time_us_median\": " << jnum(t) << ", \"time_us_min\": " << jnum(r.min) << ", \"time_us_max\": " << jnum(r.max) << ", \"time_us_p10\": " << jnum(r.p10) << ", \"time_us_p90\": " << jnum(r.p90)
    << ", \"time_us_mean\": " << jnum(r.mean) << ", \"time_us_wall_mean\": " << jnum(r.wall_us_mean);
  o << ",\n" << indent << "  \"time\": " << jnum(t * 1e3) << ", \"repetitions\": " << r.us.size();
  o << ",\n" << indent << "  \"storage\": " << jnum(r.matrix_bytes) << ", \"bytes\": " << jnum(r.bytes) << ", \"bytes_source\": " << jstr(r.bytes_source);
  const double gbs = r.bytes / (t * 1e-6) / 1e9;
  o << ",\n" << indent << "  \"gbytes_per_s\": " << jnum(gbs) << ", \"gflops\": " << jnum(2.0 * nnz / (t * 1e-6) / 1e9) << ", \"copy_bw_fraction\": " << jnum(gbs / copy_bw)
    << ", \"speedup_vs_aijcusparse\": " << jnum(taij / t) << ", \"setup_s\": " << jnum(r.setup_s);
  o << ",\n" << indent << "  \"error\": " << jnum(r.error) << ", \"error_vs_aijcusparse\": " << jnum(r.error_vs_aij) << ", \"error_bound\": " << jnum(r.error_bound)
    << ", \"error_ok\": " << jbool(r.completed && std::isfinite(r.error) && r.error <= r.error_bound) << ", \"nonfinite_output\": " << jbool(r.nonfinite);
  if (!r.info.empty()) {
    o << ",\n" << indent << "  \"info\": {";
    for (size_t i = 0; i < r.info.size(); ++i) o << (i ? ", " : "") << jstr(r.info[i].first) << ": " << jstr(r.info[i].second);
    o << "}";
  }
  if (!r.stats.empty()) {
    o << ",\n" << indent << "  \"stats\": {";
    for (size_t i = 0; i < r.stats.size(); ++i) o << (i ? ", " : "") << jstr(r.stats[i].first) << ": " << jnum(r.stats[i].second);
    o << "}";
  }
  if (!r.us.empty()) {
    o << ",\n" << indent << "  \"times_us\": [";
    for (size_t i = 0; i < r.us.size(); ++i) o << (i ? "," : "") << jnum(r.us[i]);
    o << "]";
  }
  o << "\n" << indent << "}";
  return o.str();
}

void WriteJson(const Bench &b, const std::string &path, const std::vector<MatrixRecord> &mats, const std::vector<std::string> &skipped, bool aborted, const std::string &abort_reason)
{
  if (path.empty()) return;
  std::ostringstream o;
  o << "{\n  \"header\": {\n";
  o << "    \"program\": \"petscspmv bench/spmv_bench\", \"date\": " << jstr(b.date) << ", \"host\": " << jstr(b.host) << ", \"commit\": " << jstr(b.commit) << ", \"label\": " << jstr(b.label) << ",\n";
  o << "    \"gpu\": {\"name\": " << jstr(b.gpu_name) << ", \"multiprocessors\": " << b.gpu_sms << ", \"l2_bytes\": " << b.gpu_l2 << ", \"memory_bytes\": " << b.gpu_mem << "},\n";
  o << "    \"cuda_runtime\": " << jstr(b.cuda_runtime) << ", \"cuda_driver\": " << jstr(b.cuda_driver) << ", \"cusparse\": " << jstr(b.cusparse_version) << ", \"petsc\": " << jstr(b.petsc_version) << ",\n";
  o << "    \"cpu_mode\": " << jbool(b.cpu) << ", \"omp_threads\": " << b.omp_threads << ",\n";
  o << "    \"copy_bw_gbps\": " << jnum(b.copy_bw) << ", \"copy_bw_memcpy_gbps\": " << jnum(b.copy_bw_memcpy) << ", \"copy_bw_kernel_gbps\": " << jnum(b.copy_bw_kernel) << ", \"read_bw_gbps\": " << jnum(b.read_bw) << ", \"launch_floor_us\": " << jnum(b.launch_floor_us)
    << ", \"copy_bw_method\": " << jstr(b.copy_bw_method) << ",\n";
  o << "    \"repetitions\": " << b.reps << ", \"warmup\": " << b.warmup << ", \"flush_l2\": " << jbool(b.flush) << ", \"flush_bytes\": " << b.flushbytes << ",\n";
  o << "    \"timing_stream\": " << jstr(b.stream_desc) << ", \"petsc_default_cuda_stream\": " << jstr(b.default_stream_desc) << ",\n";
  o << "    \"time_unit\": \"time_us_*: microseconds (CUDA events; median of repetitions); time: nanoseconds (Ginkgo's field)\",\n";
  o << "    \"bytes_model\": \"stored matrix bytes + x (cols * value size) + y (rows * value size); GB/s = bytes / median time\",\n";
  o << "    \"error_metric\": \"||y - y_ref||_inf / || |A||x| ||_inf, y_ref the FP64 CSR product on the host\"";
  if (!skipped.empty()) {
    o << ",\n    \"skipped\": [";
    for (size_t i = 0; i < skipped.size(); ++i) o << (i ? ", " : "") << jstr(skipped[i]);
    o << "]";
  }
  if (aborted) o << ",\n    \"aborted\": " << jstr(abort_reason);
  o << "\n  },\n  \"matrices\": [";
  for (size_t mi = 0; mi < mats.size(); ++mi) {
    const MatrixRecord &m = mats[mi];
    o << (mi ? "," : "") << "\n    {\n";
    o << "      \"name\": " << jstr(m.name) << ", \"filename\": " << jstr(m.source) << ", \"kind\": " << jstr(m.kind) << ",\n";
    o << "      \"rows\": " << m.rows << ", \"cols\": " << m.cols << ", \"nnz\": " << m.nnz << ", \"max_row_nnz\": " << m.max_row << ", \"load_s\": " << jnum(m.load_s) << ", \"reference_s\": " << jnum(m.reference_s) << ",\n";
    o << "      \"problem\": {\"rows\": " << m.rows << ", \"cols\": " << m.cols << ", \"nonzeros\": " << m.nnz << "},\n";
    o << "      \"spmv\": {";
    std::string best;
    double      tbest = std::numeric_limits<double>::infinity(), taij = kNaN;
    for (auto &p : m.results)
      if (p.first == "aijcusparse" && p.second.completed) taij = p.second.median;
    for (size_t i = 0; i < m.results.size(); ++i) {
      const Result &r = m.results[i].second;
      o << (i ? "," : "") << "\n        " << jstr(m.results[i].first) << ": " << ResultJson(r, "        ", double(m.nnz), b.copy_bw, taij);
      if (r.completed && r.median < tbest) {
        tbest = r.median;
        best  = m.results[i].first;
      }
    }
    o << "\n      },\n      \"optimal\": {\"spmv\": " << jstr(best) << "}\n    }";
  }
  o << "\n  ]\n}\n";
  const std::string tmp = path + ".tmp";
  FILE             *f   = std::fopen(tmp.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "spmv_bench: cannot write %s\n", tmp.c_str());
    return;
  }
  std::fputs(o.str().c_str(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());
}

void AppendCsv(const Bench &b, const std::string &path, const MatrixRecord &m)
{
  if (path.empty()) return;
  bool need_header = true;
  if (FILE *t = std::fopen(path.c_str(), "r")) {
    std::fseek(t, 0, SEEK_END);
    need_header = std::ftell(t) == 0;
    std::fclose(t);
  }
  FILE *f = std::fopen(path.c_str(), "a");
  if (!f) {
    std::fprintf(stderr, "spmv_bench: cannot append to %s\n", path.c_str());
    return;
  }
  if (need_header) std::fputs("matrix,rows,nnz,format,time_us,gbytes_per_s,gflops,copy_bw_fraction,speedup_vs_aijcusparse\n", f);
  double taij = kNaN;
  for (auto &p : m.results)
    if (p.first == "aijcusparse" && p.second.completed) taij = p.second.median;
  for (auto &p : m.results) {
    const Result &r = p.second;
    std::fprintf(f, "%s,%lld,%lld,%s", m.name.c_str(), m.rows, m.nnz, p.first.c_str());
    if (r.completed) {
      const double t = r.median, gbs = r.bytes / (t * 1e-6) / 1e9, gfl = 2.0 * double(m.nnz) / (t * 1e-6) / 1e9;
      std::fprintf(f, ",%.3f,%.2f,%.3f,", t, gbs, gfl);
      if (std::isfinite(b.copy_bw) && b.copy_bw > 0) std::fprintf(f, "%.4f", gbs / b.copy_bw);
      std::fputs(",", f);
      if (std::isfinite(taij)) std::fprintf(f, "%.3f", taij / t);
      std::fputs("\n", f);
    } else std::fputs(",,,,,\n", f);
  }
  std::fclose(f);
}

void Progress(const std::string &path, const std::string &what, const std::string &name)
{
  if (path.empty()) return;
  if (FILE *f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%s %s\n", what.c_str(), name.c_str());
    std::fclose(f);
  }
}

std::string utc_now()
{
  char        buf[64];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

PetscErrorCode GetStringList(const char *name, std::vector<std::string> &out)
{
  char      buf[PETSC_MAX_PATH_LEN * 64];
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(nullptr, nullptr, name, buf, sizeof(buf), &set));
  if (set)
    for (auto &s : split(buf, ','))
      if (!s.empty()) out.push_back(s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Setup(Bench &b)
{
  PetscFunctionBegin;
  {
    char v[256];
    PetscCall(PetscGetVersion(v, sizeof(v)));
    b.petsc_version = v;
  }
  {
    char h[256] = {0};
    gethostname(h, sizeof(h) - 1);
    b.host = h;
  }
  b.date = utc_now();
#if defined(_OPENMP)
  b.omp_threads = omp_get_max_threads();
#endif
  if (b.cpu) {
    b.gpu_name    = "none (cpu mode)";
    b.stream_desc = "none (host timers)";
    PetscCall(MeasureBandwidth(b));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  int dev = 0, rt = 0, drv = 0;
  PetscCallCUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  PetscCallCUDA(cudaGetDeviceProperties(&prop, dev));
  b.gpu_name = prop.name;
  b.gpu_sms  = prop.multiProcessorCount;
  b.gpu_l2   = prop.l2CacheSize;
  b.gpu_mem  = (long long)prop.totalGlobalMem;
  PetscCallCUDA(cudaRuntimeGetVersion(&rt));
  PetscCallCUDA(cudaDriverGetVersion(&drv));
  b.cuda_runtime = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
  b.cuda_driver  = std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10);
  // the stream PETSc's current device context (and so the petscspmv kernels) uses
  {
    PetscDeviceContext dctx;
    cudaStream_t      *h = nullptr;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetStreamHandle(dctx, (void **)&h));
    b.stream = h ? *h : nullptr;
    char s[64];
    std::snprintf(s, sizeof(s), "%p", (void *)b.stream);
    b.stream_desc = b.stream ? std::string("PetscDeviceContext stream ") + s : "legacy default stream (NULL) of the PetscDeviceContext";
    std::snprintf(s, sizeof(s), "%p", (void *)PetscDefaultCudaStream);
    b.default_stream_desc = PetscDefaultCudaStream ? std::string(s) : "NULL (legacy default stream)";
    if (b.stream != PetscDefaultCudaStream) PetscCall(PetscPrintf(PETSC_COMM_SELF, "spmv_bench: warning: the device context stream (%s) is not PetscDefaultCudaStream (%s): aijcusparse events may not bracket its kernels\n", b.stream_desc.c_str(), b.default_stream_desc.c_str()));
  }
  PetscCallCUSPARSE(cusparseCreate(&b.sp));
  PetscCallCUSPARSE(cusparseSetStream(b.sp, b.stream));
  {
    int v = 0;
    PetscCallCUSPARSE(cusparseGetVersion(b.sp, &v));
    b.cusparse_version = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." + std::to_string(v % 100);
  }
  PetscCallCUDA(cudaMalloc((void **)&b.sink, sizeof(double)));
  b.ev.resize(size_t(2 * b.reps));
  for (auto &e : b.ev) PetscCallCUDA(cudaEventCreate(&e));
  PetscCall(MeasureBandwidth(b));
  if (b.flush) {
    b.flushbytes = std::max<size_t>(size_t(4) * size_t(b.gpu_l2), size_t(256) << 20);
    PetscCallCUDA(cudaMalloc(&b.flushbuf, b.flushbytes));
    PetscCallCUDA(cudaMemset(b.flushbuf, 0x3f, b.flushbytes));
  }
  if (!b.cpu) { // the floor under any product: one empty kernel timed exactly like a MatMult
    Result floor;
    PetscCall(TimeOp(b, [&]() -> PetscErrorCode { PetscFunctionBegin; PetscCallCUDA(bench_empty(b.stream)); PetscFunctionReturn(PETSC_SUCCESS); }, floor));
    std::vector<double> s = floor.us;
    std::sort(s.begin(), s.end());
    b.launch_floor_us = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "spmv_bench: %s, CUDA %s (driver %s), cuSPARSE %s, %s; copy bandwidth %.0f GB/s (memcpy %.0f, kernel %.0f), read %.0f GB/s; launch floor %.2f us\n", b.gpu_name.c_str(), b.cuda_runtime.c_str(), b.cuda_driver.c_str(),
                        b.cusparse_version.c_str(), b.petsc_version.c_str(), b.copy_bw, b.copy_bw_memcpy, b.copy_bw_kernel, b.read_bw, b.launch_floor_us));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Loads a PETSc binary matrix file into host CSR.
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


struct Source {
  std::string spec;
  bool        generated;
};

} // namespace

int main(int argc, char **argv)
{
  Bench                    b;
  std::vector<Source>      sources;
  std::vector<FormatSpec>  formats;
  std::vector<MatrixRecord> records;
  std::vector<std::string> skipped;
  std::string              json, csv, progress, save_dir;
  PetscReal                time_limit = 0;
  int                      exit_code  = 0;

  PetscCall(PetscInitialize(&argc, &argv, nullptr, help));
  PetscCall(PetscSpMVInitializePackage());
  {
    PetscBool flg = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-cpu", &flg, nullptr));
    b.cpu = flg;
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &b.reps, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-warmup", &b.warmup, nullptr));
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-flush_l2", &b.flush, nullptr));
    PetscReal cb = PetscReal(b.copy_bytes);
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-copy_bytes", &cb, nullptr));
    PetscCheck(cb >= 1 << 20, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-copy_bytes must be at least 1 MiB");
    b.copy_bytes = size_t(cb);
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-time_limit", &time_limit, nullptr));
    PetscCheck(b.reps >= 1 && b.warmup >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be >= 1 and -warmup >= 0");
    char buf[PETSC_MAX_PATH_LEN];
    PetscBool set;
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-json", buf, sizeof(buf), &set));
    if (set) json = buf;
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-csv", buf, sizeof(buf), &set));
    if (set) csv = buf;
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-progress", buf, sizeof(buf), &set));
    if (set) progress = buf;
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-commit", buf, sizeof(buf), &set));
    if (set) b.commit = buf;
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-label", buf, sizeof(buf), &set));
    if (set) b.label = buf;
    std::vector<std::string> files, gens, fmts;
    PetscCall(GetStringList("-f", files));
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-flist", buf, sizeof(buf), &set));
    if (set) {
      FILE *fl = std::fopen(buf, "r");
      PetscCheck(fl, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open the -flist file %s", buf);
      char line[PETSC_MAX_PATH_LEN];
      while (std::fgets(line, sizeof(line), fl)) {
        std::string s(line);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
        if (!s.empty() && s[0] != '#') files.push_back(s);
      }
      std::fclose(fl);
    }
    PetscCall(PetscOptionsGetString(nullptr, nullptr, "-save_binary", buf, sizeof(buf), &set));
    if (set) save_dir = buf;
    PetscCall(GetStringList("-gen", gens));
    PetscCall(GetStringList("-formats", fmts));
    if (fmts.empty())
      fmts = split("aijcusparse,sellcuda,rgcsrcuda:g32,rgcsrcuda:g64,rgcsrcuda:g128,rgcsrcuda:g256,packsellcuda:fp16,packsellcuda:bf16,packsellcuda:e8m14,packsellcuda:e8m22,packsellcuda:exact,cusparse_csr:fp64,cusparse_sell:fp64,cusparse_sell:fp16", ',');
    for (auto &f : files) sources.push_back({f, false});
    for (auto &g : gens) sources.push_back({g, true});
    try {
      for (auto &f : fmts) formats.push_back(parse_format(f, b.cpu));
    } catch (const std::exception &e) {
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s", e.what());
    }
    PetscCheck(!sources.empty(), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "no matrices: give -f FILES, -flist FILE and/or -gen SPECS (see -help)");
  }
  PetscCall(Setup(b));

  const double t_start = now_s();
  bool         aborted = false;
  std::string  abort_reason;
  for (size_t si = 0; si < sources.size() && !aborted; ++si) {
    const Source &src = sources[si];
    if (time_limit > 0 && now_s() - t_start > time_limit) {
      skipped.push_back(src.spec);
      continue;
    }
    Progress(progress, "start", src.spec);
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
      Progress(progress, "done", src.spec);
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
    PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, H.rows, H.cols, H.rowptr.data(), H.colidx.data(), H.values.data(), &m.A));
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
    if (!save_dir.empty()) {
      // PETSc binary copy of the matrix (MatLoad reads it back with -f)
      PetscViewer       v;
      const std::string out = save_dir + "/" + rec.name + ".petsc";
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
    for (const FormatSpec &f : formats) {
      Result r = RunFormat(b, H, m, f, ref, &aborted, &abort_reason, rec.name);
      r.finish();
      if (r.completed && f.name == "aijcusparse") taij = r.median;
      rec.results.emplace_back(f.name, r);
      if (r.completed) {
        const double gbs = r.bytes / (r.median * 1e-6) / 1e9, gfl = 2.0 * double(rec.nnz) / (r.median * 1e-6) / 1e9;
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "  %-24s %10.2f %10.2f %9.1f %8.1f %6.1f %9.3f %10.2e %7.2f%s\n", f.name.c_str(), r.median, r.min, gbs, gfl, 100 * gbs / b.copy_bw, taij / r.median, r.error, r.setup_s,
                              (std::isfinite(r.error) && r.error <= r.error_bound) ? "" : "  ERROR ABOVE BOUND"));
      } else PetscCall(PetscPrintf(PETSC_COMM_SELF, "  %-24s FAILED: %s\n", f.name.c_str(), r.message.substr(0, 300).c_str()));
      if (aborted) break;
    }
    PetscCall(MatDestroy(&m.A));
    PetscCall(VecDestroy(&m.x));
    PetscCall(VecDestroy(&m.y));
    records.push_back(std::move(rec));
    AppendCsv(b, csv, records.back());
    WriteJson(b, json, records, skipped, aborted, abort_reason);
    Progress(progress, aborted ? "aborted" : "done", src.spec);
  }
  if (aborted) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "spmv_bench: stopping: %s\n", abort_reason.c_str()));
    exit_code = 3;
  }
  WriteJson(b, json, records, skipped, aborted, abort_reason);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "\nspmv_bench: %zu matrices in %.1f s%s%s\n", records.size(), now_s() - t_start, json.empty() ? "" : ", JSON ", json.c_str()));

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
