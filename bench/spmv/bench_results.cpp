// Error of a product against the FP64 reference.
#include "bench_results.hpp"

namespace bench {

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

} // namespace bench
