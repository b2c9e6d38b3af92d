// What spmv_bench measures: the result of one format on one matrix, a matrix's record, and the
// FP64 reference every product is checked against. PETSc- and CUDA-free.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace bench {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

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

struct Reference {
  std::vector<double> x, y, absy, y_aij;
  double              scale = 1.0; // || |A||x| ||_inf
};

// error = ||y - ref.y||_inf / ref.scale (and error_vs_aij against ref.y_aij when it is set);
// a non-finite y gives nonfinite = true and NaN errors.
void ComputeError(const Reference &ref, const double *y, size_t n, Result &r);

} // namespace bench
