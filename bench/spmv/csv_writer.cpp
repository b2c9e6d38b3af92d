#include "csv_writer.hpp"

#include <cmath>
#include <cstdio>

namespace bench {

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
  if (need_header) std::fputs("matrix,rows,nnz,format,time_us,gbytes_per_s,gflops,copy_bw_fraction,speedup_vs_aijcusparse,time_us_p10,time_us_p90\n", f);
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
      std::fprintf(f, ",%.3f,%.3f\n", r.p10, r.p90);
    } else std::fputs(",,,,,,,\n", f);
  }
  std::fclose(f);
}

} // namespace bench
