// What the SpMV benchmarks measure and the one writer of their results: the result of one format
// on one matrix, a matrix's record, the FP64 reference every product is checked against, the
// rates derived from a time (one computation for every output), and the files: CSV rows
// (spmv_bench's docs/bench/latest.csv, kernel_bench's -csv) and spmv_bench's Ginkgo-like JSON.
// PETSc- and CUDA-free: kernel_bench links it without PETSc.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace bench
{

const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Result {
  bool                                             completed = false;
  std::string                                      message; // why it failed
  std::string                                      note;
  std::vector<double>                              us; // event times of the timed products
  double                                           wall_us_mean = kNaN;
  double                                           matrix_bytes = kNaN, bytes = kNaN;
  std::string                                      bytes_source;
  double                                           error = kNaN, error_vs_aij = kNaN, error_bound = kNaN;
  bool                                             nonfinite = false;
  double                                           setup_s   = kNaN;
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
  std::string                                 name, source, kind;
  long long                                   rows = 0, cols = 0, nnz = 0, max_row = 0;
  double                                      load_s = kNaN, reference_s = kNaN;
  std::vector<std::pair<std::string, Result>> results;
};

struct Reference {
  std::vector<double> x, y, absy, y_aij;
  double              scale = 1.0; // || |A||x| ||_inf
};

// error = ||y - ref.y||_inf / ref.scale (and error_vs_aij against ref.y_aij when it is set);
// a non-finite y gives nonfinite = true and NaN errors.
void ComputeError(const Reference &ref, const double *y, size_t n, Result &r);

// The rates of one product of t_us microseconds that reads `bytes` bytes of a matrix with nnz
// nonzeros: GB/s = bytes / t, GFLOP/s = 2 nnz / t, the share of the copy bandwidth copy_bw (GB/s)
// and the speedup over a baseline time t_base_us (NaN where copy_bw or t_base_us is not a
// positive finite number).
struct Rates {
  double gbytes_per_s = kNaN, gflops = kNaN, copy_bw_fraction = kNaN, speedup = kNaN;
};
Rates RatesOf(double t_us, double bytes, double nnz, double copy_bw = kNaN, double t_base_us = kNaN);
// aijcusparse's median time on m (the baseline of the speedups); NaN when it did not complete.
double BaselineTime(const MatrixRecord &m);

// A CSV file of results: `columns` is its header line; append: rows go after what the file holds
// and the header is written only when it is new or empty (else the file is rewritten). Row() takes
// printf's format and arguments of one line (without the newline). A file that cannot be opened
// is reported on stderr under `program` and the writer drops the rows.
class CsvWriter {
public:
  CsvWriter(const std::string &path, const std::string &columns, bool append, const char *program);
  ~CsvWriter();
  CsvWriter(const CsvWriter &)            = delete;
  CsvWriter &operator=(const CsvWriter &) = delete;
  explicit   operator bool() const { return f_ != nullptr; }
  void       Row(const char *format, ...) __attribute__((format(printf, 2, 3)));

private:
  FILE *f_ = nullptr;
};

// spmv_bench's CSV (docs/bench/latest.csv, bench/tables/spmv_plot.py), one row per format of m:
// matrix,rows,nnz,format,time_us,gbytes_per_s,gflops,copy_bw_fraction,speedup_vs_aijcusparse,
// time_us_p10,time_us_p90 (empty numbers for a format that failed; nothing when path is empty).
void AppendCsv(const std::string &path, const MatrixRecord &m, double copy_bw);

// JSON text: a string literal (quotes and escapes), a number (%.10g; null when not finite), a bool.
std::string jstr(const std::string &s);
std::string jnum(double v);
std::string jbool(bool v);

// The run's header of the JSON file: (key, JSON value) pairs in order (bench_context's RunHeader()).
using JsonFields = std::vector<std::pair<std::string, std::string>>;

// Writes the records to path, a top-level JSON list of per-matrix objects as Ginkgo's benchmark
// tools read them, and the run's header (header's fields, then the units and models of the
// records, the skipped matrices and why the run stopped) to path's name with "-header.json" for
// ".json", each through a .tmp file and a rename (nothing when path is empty).
void WriteJson(const std::string &path, const JsonFields &header, double copy_bw, const std::vector<MatrixRecord> &mats, const std::vector<std::string> &skipped, bool aborted, const std::string &abort_reason);

} // namespace bench
