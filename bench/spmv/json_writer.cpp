#include "json_writer.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace bench {

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
std::string jbool(bool v) { return v ? "true" : "false"; }

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

// Writes text to path through a temporary file (a reader never sees half a file).
static void WriteAtomically(const std::string &path, const std::string &text)
{
  const std::string tmp = path + ".tmp";
  FILE             *f   = std::fopen(tmp.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "spmv_bench: cannot write %s\n", tmp.c_str());
    return;
  }
  std::fputs(text.c_str(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());
}

void WriteJson(const Bench &b, const std::string &path, const std::vector<MatrixRecord> &mats, const std::vector<std::string> &skipped, bool aborted, const std::string &abort_reason)
{
  if (path.empty()) return;
  std::ostringstream o, h;
  // The run's header: its own file beside the records (path without .json + "-header.json").
  h << "{\n  \"header\": {\n";
  h << "    \"program\": \"petscspmv bench/spmv/spmv_bench\", \"date\": " << jstr(b.date) << ", \"host\": " << jstr(b.host) << ", \"commit\": " << jstr(b.commit) << ", \"label\": " << jstr(b.label) << ",\n";
  h << "    \"gpu\": {\"name\": " << jstr(b.gpu_name) << ", \"multiprocessors\": " << b.gpu_sms << ", \"l2_bytes\": " << b.gpu_l2 << ", \"memory_bytes\": " << b.gpu_mem << "},\n";
  h << "    \"cuda_runtime\": " << jstr(b.cuda_runtime) << ", \"cuda_driver\": " << jstr(b.cuda_driver) << ", \"cusparse\": " << jstr(b.cusparse_version) << ", \"petsc\": " << jstr(b.petsc_version) << ",\n";
  h << "    \"cpu_mode\": " << jbool(b.cpu) << ", \"omp_threads\": " << b.omp_threads << ",\n";
  h << "    \"copy_bw_gbps\": " << jnum(b.copy_bw) << ", \"copy_bw_memcpy_gbps\": " << jnum(b.copy_bw_memcpy) << ", \"copy_bw_kernel_gbps\": " << jnum(b.copy_bw_kernel) << ", \"read_bw_gbps\": " << jnum(b.read_bw) << ", \"launch_floor_us\": " << jnum(b.launch_floor_us)
    << ", \"copy_bw_method\": " << jstr(b.copy_bw_method) << ",\n";
  h << "    \"repetitions\": " << b.reps << ", \"warmup\": " << b.warmup << ", \"flush_l2\": " << jbool(b.flush) << ", \"flush_bytes\": " << b.flushbytes << ",\n";
  h << "    \"timing_stream\": " << jstr(b.stream_desc) << ", \"petsc_default_cuda_stream\": " << jstr(b.default_stream_desc) << ",\n";
  h << "    \"time_unit\": \"time_us_*: microseconds (CUDA events; median of repetitions); time: nanoseconds (Ginkgo's field)\",\n";
  h << "    \"bytes_model\": \"stored matrix bytes + x (cols * value size) + y (rows * value size); GB/s = bytes / median time\",\n";
  h << "    \"error_metric\": \"||y - y_ref||_inf / || |A||x| ||_inf, y_ref the FP64 CSR product on the host\"";
  if (!skipped.empty()) {
    h << ",\n    \"skipped\": [";
    for (size_t i = 0; i < skipped.size(); ++i) h << (i ? ", " : "") << jstr(skipped[i]);
    h << "]";
  }
  if (aborted) h << ",\n    \"aborted\": " << jstr(abort_reason);
  h << "\n  }\n}\n";
  // The records: a top-level list of per-matrix objects, the layout of Ginkgo's benchmark
  // results ("filename", "problem", "spmv": {format: {"storage", "time" [ns], "repetitions",
  // "completed", ...}}, "optimal"), so that Ginkgo's tools read it.
  o << "[";
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
  o << "\n]\n";
  const std::string base = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0 ? path.substr(0, path.size() - 5) : path;
  WriteAtomically(path, o.str());
  WriteAtomically(base + "-header.json", h.str());
}

} // namespace bench
