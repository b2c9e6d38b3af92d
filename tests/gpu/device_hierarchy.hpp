// A multigrid hierarchy of tests/support/mg_hierarchies.hpp on the device, for the tests of the
// device V-cycle (src/mixed/mg_cycle_device.hpp): the levels' CSRs uploaded, the cycle's inputs,
// and the coarse solve (a host Cholesky through copies) as the cycle's hook.
#pragma once
#include "device_compare.hpp"
#include "mg_hierarchies.hpp"
#include "mixed/mg_cycle_device.hpp"
#include <memory>
#include <stdexcept>
#include <vector>

namespace gputest
{

struct DeviceHierarchy {
  std::vector<std::unique_ptr<DevCsr>>                mats; // A_0, P_0, A_1, P_1, ...
  std::vector<pspmv::mixed::cuda::DeviceMgLevelInput> in;
  // emax: the levels' (empty: 0, estimated by the cycle)
  explicit DeviceHierarchy(const pspmv_test::Hierarchy &h, const std::vector<double> &emax = {})
  {
    for (size_t l = 0; l < h.A.size(); ++l) {
      pspmv::mixed::cuda::DeviceMgLevelInput I;
      mats.push_back(std::make_unique<DevCsr>(h.A[l]));
      I.A = mats.back()->v;
      if (l > 0) {
        mats.push_back(std::make_unique<DevCsr>(h.P[l]));
        I.P = mats.back()->v;
      }
      if (!emax.empty()) I.emax = emax[l];
      in.push_back(I);
    }
  }
};

// The coarse hook x = A_c^-1 b of a device cycle on the legacy stream: b copied to the host,
// chol.solve, x copied back (synchronous copies). Throws std::runtime_error on a failed copy.
inline std::function<void(const double *, double *)> host_coarse_solve(const pspmv_test::Cholesky &chol, size_t rows)
{
  auto hb = std::make_shared<std::vector<double>>(rows), hx = std::make_shared<std::vector<double>>(rows);
  return [&chol, hb, hx, rows](const double *b, double *x) {
    if (cudaMemcpy(hb->data(), b, rows * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess) throw std::runtime_error("copy b");
    chol.solve(hb->data(), hx->data());
    if (cudaMemcpy(x, hx->data(), rows * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess) throw std::runtime_error("copy x");
  };
}

} // namespace gputest
