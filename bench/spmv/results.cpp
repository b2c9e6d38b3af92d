#include "results.hpp"

#include <cstdarg>
#include <sstream>

namespace bench
{

// ---------------------------------------------------------------- what is measured

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

Rates RatesOf(double t_us, double bytes, double nnz, double copy_bw, double t_base_us)
{
  Rates r;
  r.gbytes_per_s = bytes / (t_us * 1e-6) / 1e9;
  r.gflops       = 2.0 * nnz / (t_us * 1e-6) / 1e9;
  if (std::isfinite(copy_bw) && copy_bw > 0) r.copy_bw_fraction = r.gbytes_per_s / copy_bw;
  if (std::isfinite(t_base_us) && t_base_us > 0) r.speedup = t_base_us / t_us;
  return r;
}

double BaselineTime(const MatrixRecord &m)
{
  for (auto &p : m.results)
    if (p.first == "aijcusparse" && p.second.completed) return p.second.median;
  return kNaN;
}

// ---------------------------------------------------------------- CSV

CsvWriter::CsvWriter(const std::string &path, const std::string &columns, bool append, const char *program)
{
  bool need_header = true;
  if (append)
    if (FILE *t = std::fopen(path.c_str(), "r")) {
      std::fseek(t, 0, SEEK_END);
      need_header = std::ftell(t) == 0;
      std::fclose(t);
    }
  f_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!f_) {
    std::fprintf(stderr, "%s: cannot %s %s\n", program, append ? "append to" : "write", path.c_str());
    return;
  }
  if (need_header) std::fprintf(f_, "%s\n", columns.c_str());
}

CsvWriter::~CsvWriter()
{
  if (f_) std::fclose(f_);
}

void CsvWriter::Row(const char *format, ...)
{
  if (!f_) return;
  va_list ap;
  va_start(ap, format);
  std::vfprintf(f_, format, ap);
  va_end(ap);
  std::fputc('\n', f_);
}

void AppendCsv(const std::string &path, const MatrixRecord &m, double copy_bw)
{
  if (path.empty()) return;
  CsvWriter csv(path, "matrix,rows,nnz,format,time_us,gbytes_per_s,gflops,copy_bw_fraction,speedup_vs_aijcusparse,time_us_p10,time_us_p90", true, "spmv_bench");
  if (!csv) return;
  const double tbase = BaselineTime(m);
  // a number, or nothing when it is not finite
  const auto opt = [](const char *format, double v) {
    char b[64] = "";
    if (std::isfinite(v)) std::snprintf(b, sizeof(b), format, v);
    return std::string(b);
  };
  for (auto &p : m.results) {
    const Result &r = p.second;
    if (!r.completed) {
      csv.Row("%s,%lld,%lld,%s,,,,,,,", m.name.c_str(), m.rows, m.nnz, p.first.c_str());
      continue;
    }
    const Rates q = RatesOf(r.median, r.bytes, double(m.nnz), copy_bw, tbase);
    csv.Row("%s,%lld,%lld,%s,%.3f,%.2f,%.3f,%s,%s,%.3f,%.3f", m.name.c_str(), m.rows, m.nnz, p.first.c_str(), r.median, q.gbytes_per_s, q.gflops, opt("%.4f", q.copy_bw_fraction).c_str(), opt("%.3f", q.speedup).c_str(), r.p10, r.p90);
  }
}

// ---------------------------------------------------------------- JSON

std::string jstr(const std::string &s)
{
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      o += "\\\"";
      break;
    case '\\':
      o += "\\\\";
      break;
    case '\n':
      o += "\\n";
      break;
    case '\r':
      o += "\\r";
      break;
    case '\t':
      o += "\\t";
      break;
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
std::string jbool(bool v)
{
  return v ? "true" : "false";
}

namespace
{

// One format's object; indent is the indentation of the line it starts on. The rates are those
// of the CSV (RatesOf), null where not defined.
std::string ResultJson(const Result &r, const std::string &indent, double nnz, double copy_bw, double tbase)
{
  std::ostringstream o;
  const double       t = r.median;
  const Rates        q = RatesOf(t, r.bytes, nnz, copy_bw, tbase);
  o << "{\n";
  o << indent << "  \"completed\": " << jbool(r.completed);
  if (!r.message.empty()) o << ",\n" << indent << "  \"error_message\": " << jstr(r.message);
  if (!r.note.empty()) o << ",\n" << indent << "  \"note\": " << jstr(r.note);
  o << ",\n"
    << indent << "  \"time_us_median\": " << jnum(t) << ", \"time_us_min\": " << jnum(r.min) << ", \"time_us_max\": " << jnum(r.max) << ", \"time_us_p10\": " << jnum(r.p10) << ", \"time_us_p90\": " << jnum(r.p90) << ", \"time_us_mean\": " << jnum(r.mean) << ", \"time_us_wall_mean\": " << jnum(r.wall_us_mean);
  o << ",\n" << indent << "  \"time\": " << jnum(t * 1e3) << ", \"repetitions\": " << r.us.size();
  o << ",\n" << indent << "  \"storage\": " << jnum(r.matrix_bytes) << ", \"bytes\": " << jnum(r.bytes) << ", \"bytes_source\": " << jstr(r.bytes_source);
  o << ",\n"
    << indent << "  \"gbytes_per_s\": " << jnum(q.gbytes_per_s) << ", \"gflops\": " << jnum(q.gflops) << ", \"copy_bw_fraction\": " << jnum(q.copy_bw_fraction) << ", \"speedup_vs_aijcusparse\": " << jnum(q.speedup) << ", \"setup_s\": " << jnum(r.setup_s);
  o << ",\n"
    << indent << "  \"error\": " << jnum(r.error) << ", \"error_vs_aijcusparse\": " << jnum(r.error_vs_aij) << ", \"error_bound\": " << jnum(r.error_bound) << ", \"error_ok\": " << jbool(r.completed && std::isfinite(r.error) && r.error <= r.error_bound) << ", \"nonfinite_output\": " << jbool(r.nonfinite);
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
void WriteAtomically(const std::string &path, const std::string &text)
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

} // namespace

void WriteJson(const std::string &path, const JsonFields &header, double copy_bw, const std::vector<MatrixRecord> &mats, const std::vector<std::string> &skipped, bool aborted, const std::string &abort_reason)
{
  if (path.empty()) return;
  std::ostringstream o, h;
  // The run's header: its own file beside the records (path without .json + "-header.json").
  JsonFields fields = header;
  fields.emplace_back("time_unit", jstr("time_us_*: microseconds (CUDA events; median of repetitions); time: nanoseconds (Ginkgo's field)"));
  fields.emplace_back("bytes_model", jstr("stored matrix bytes + x (cols * value size) + y (rows * value size); GB/s = bytes / median time"));
  fields.emplace_back("error_metric", jstr("||y - y_ref||_inf / || |A||x| ||_inf, y_ref the FP64 CSR product on the host"));
  if (!skipped.empty()) {
    std::string list = "[";
    for (size_t i = 0; i < skipped.size(); ++i) list += (i ? ", " : "") + jstr(skipped[i]);
    fields.emplace_back("skipped", list + "]");
  }
  if (aborted) fields.emplace_back("aborted", jstr(abort_reason));
  h << "{\n  \"header\": {";
  for (size_t i = 0; i < fields.size(); ++i) h << (i ? "," : "") << "\n    " << jstr(fields[i].first) << ": " << fields[i].second;
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
    std::string  best;
    double       tbest = std::numeric_limits<double>::infinity();
    const double tbase = BaselineTime(m);
    for (size_t i = 0; i < m.results.size(); ++i) {
      const Result &r = m.results[i].second;
      o << (i ? "," : "") << "\n        " << jstr(m.results[i].first) << ": " << ResultJson(r, "        ", double(m.nnz), copy_bw, tbase);
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
