// The two device formats behind one interface, for the typed tests (TYPED_TEST_SUITE over
// DeviceFormats): the host side (tests/support/host_formats.hpp) plus the device type, the
// lossy bound of a product and the check of one configuration (format_checks.hpp). Everything
// a test asserts stays in the test.
#pragma once
#include "format_checks.hpp"
#include "formats/device_formats.hpp"
#include "host_formats.hpp"
#include <string>
#include <vector>

namespace gputest
{

struct RgCsrFormat : pspmv_test::RgCsrHost {
  using Device = pspmv::cuda::DeviceRgCsr;
  using Config = RgConfig;
  static LossyBound bound(const Host &) { return {}; } // exact layout
  // Every configuration of check(): rgcsr_configs() (the scaling does not apply).
  static std::vector<Config> configs(pspmv::PackSellScaling = pspmv::PackSellScaling::None) { return rgcsr_configs(); }
  static void                check(const HostCsr &A, const Config &c, const std::string &label) { check_rgcsr(A, c, label); }
  static bool                scaled(const Config &) { return false; }
};

struct PackSellFormat : pspmv_test::PackSellHost {
  using Device = pspmv::cuda::DevicePackSell;
  using Config = PsConfig;
  static LossyBound          bound(const Host &M) { return lossy_bound(M.value_format, M.scale_exponent); }
  static std::vector<Config> configs(pspmv::PackSellScaling scaling = pspmv::PackSellScaling::None) { return packsell_configs(scaling); }
  static void                check(const HostCsr &A, const Config &c, const std::string &label) { check_packsell(A, c, label); }
  static bool                scaled(const Config &c) { return c.scaling == pspmv::PackSellScaling::Auto; }
};

using DeviceFormats = testing::Types<RgCsrFormat, PackSellFormat>;

// Every configuration of format F on A (check_rgcsr / check_packsell).
template <class F>
void check_all_configs(const HostCsr &A, const std::string &label, pspmv::PackSellScaling scaling = pspmv::PackSellScaling::None)
{
  for (const typename F::Config &c : F::configs(scaling)) F::check(A, c, label);
}

} // namespace gputest
