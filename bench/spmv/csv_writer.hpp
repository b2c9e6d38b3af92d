// The CSV rows of spmv_bench (docs/bench/latest.csv, bench/tables/spmv_plot.py): one a format and matrix,
// appended after every matrix; the header line when the file is new or empty.
#pragma once
#include "bench_context.hpp"
#include "bench_results.hpp"

#include <string>

namespace bench {

// matrix,rows,nnz,format,time_us,gbytes_per_s,gflops,copy_bw_fraction,speedup_vs_aijcusparse
// (empty numbers for a format that failed; nothing when path is empty).
void AppendCsv(const Bench &b, const std::string &path, const MatrixRecord &m);

} // namespace bench
