// One configuration of a format, built on the host, uploaded, and checked on the device.
#pragma once
#include "formats/packsell/packsell.hpp"
#include "formats/rgcsr/rgcsr.hpp"
#include "gpu_test_util.hpp"
#include <string>
#include <vector>

namespace gputest
{

struct RgConfig {
  int32_t             group_size = 32;
  pspmv::HybridOption hybrid;
  int32_t             threads_per_row = 0; // 0: what upload chose; 1, 2, 4, 8: forced before the product
  std::string         name() const;
  pspmv::RgCsrOptions options() const;
};

struct PsConfig {
  int32_t                slice_height = 32;
  int32_t                sigma        = 1;
  pspmv::ValueFormat     format       = pspmv::ValueFormat::fp16();
  pspmv::PackSellScaling scaling      = pspmv::PackSellScaling::None;
  pspmv::HybridOption    hybrid;
  int32_t                threads_per_row = 0; // 0: what upload chose; 1, 2, 4, 8: forced before the product
  std::string            name() const;
  pspmv::PackSellOptions options() const;
};

pspmv::HybridOption hybrid_none();
pspmv::HybridOption hybrid_auto();
pspmv::HybridOption hybrid_fixed(int32_t K);

// G = 32, 64, 128 x hybrid none, auto, fixed 2 (threads per row as upload chose), plus
// (G = 32, none) and (G = 64, fixed 5) with T = 1, 2, 4, 8 forced.
std::vector<RgConfig> rgcsr_configs();
// exact, fp16, bf16, e8m14, e8m22 x sigma 1, 1024 x hybrid none, auto, fixed 2 (C = 32),
// plus C = 64, 128, 256 with sorting and auto hybrid, plus T = 1, 2, 4, 8 threads per row
// forced on (C = 32, bf16, unsorted, none), (C = 64, exact, sorted, none: rows of several
// rounds) and (C = 32, fp16, unsorted, auto): upload picks T > 1 for most test matrices, so
// T = 1, the kernel of every large matrix, is forced too. `scaling` for every lossy format.
std::vector<PsConfig> packsell_configs(pspmv::PackSellScaling scaling);

// Builds, uploads, checks the product (both add modes) against the host references, the
// diagonal and stored_bytes against the host, then releases. `label` prefixes messages.
void check_rgcsr(const HostCsr &A, const RgConfig &c, const std::string &label, uint64_t seed = 1);
// A lossy configuration that cannot hold A's values (an overflow without scaling, a nonzero
// stored as zero) must be refused with ValueRangeError by the build: checked, nothing uploaded.
void check_packsell(const HostCsr &A, const PsConfig &c, const std::string &label, uint64_t seed = 1);
// Whether the host build of A with f and scaling succeeds (the documented rules: exponent 0,
// or for auto the largest s <= kMaxScaleExponent at which max|a| fits; then no overflow and no
// nonzero rounded to zero).
bool packsell_values_fit(const HostCsr &A, const pspmv::ValueFormat &f, pspmv::PackSellScaling scaling);

} // namespace gputest
