// cuSPARSE's sliced ELL built on the host from CSR, and the host stand-in of the cuSPARSE
// product (-cpu) on the very arrays that would be uploaded.
#pragma once
#include "matrix_source.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace bench
{

// Sliced ELL with slices of C rows in cuSPARSE's layout: the k-th nonzero of row i at
// off[i / C] + k * C + i % C; padding column -1, value 0; every slice C * (its longest row) slots.
struct Sell {
  int32_t                    C       = 32;
  long long                  nslices = 0, slots = 0;
  std::vector<int64_t>       off;
  std::unique_ptr<int32_t[]> col;
  std::unique_ptr<double[]>  val;
};

// Builds S from H (slices of C rows), filled slice by slice in parallel.
void BuildSell(const HostCsr &H, int32_t C, Sell &S);
// Host stand-in of the cuSPARSE product (cpu mode): the same arrays, FP16 rounding of A, x and y
// emulated with FP32 sums; y in FP64 (rescaled by 2^k).
void EmulateCusparse(const HostCsr &H, const Sell *S, bool half, int k, const std::vector<double> &x, std::vector<double> &y);

} // namespace bench
