// One configuration of a format, and the full check of it on a matrix: layout entry by entry
// (re-deriving the documented rules independently of the builder), stats, diagonal, both
// products against CSR, and optionally the value-only update.
#pragma once
#include "formats/packsell/packsell.hpp"
#include "formats/rgcsr/rgcsr.hpp"
#include "csr_matrix.hpp"
#include "spmv_check.hpp"
#include <string>
#include <vector>

namespace pspmv_test
{

struct FormatConfig {
  enum class Kind {
    RgCsr,
    PackSell
  };
  Kind                   kind         = Kind::RgCsr;
  int32_t                block        = 32; // G (RgCSR) or C (PackSELL)
  int32_t                sigma        = 1;  // or pspmv::kPackSellSigmaAuto: chosen by the builder, checked against the rule
  std::string            value        = "exact";
  std::string            hybrid       = "none";
  pspmv::PackSellScaling scaling      = pspmv::PackSellScaling::Auto;
  bool                   check_update = false;

  std::string            name() const;
  pspmv::RgCsrOptions    rgcsr_options() const;
  pspmv::PackSellOptions packsell_options() const;
};

FormatConfig rgcsr_config(int32_t G, const std::string &hybrid, bool update = false);
FormatConfig packsell_config(int32_t C, int32_t sigma, const std::string &value, const std::string &hybrid, pspmv::PackSellScaling scaling, bool update = false);

void check_format(const CsrMatrix &A, const FormatConfig &cfg, uint64_t seed);

// Entry-by-entry layout checks; fresh = right after a build (checks the auto exponent rule).
void expect_rgcsr_layout(const CsrMatrix &A, const pspmv::RgCsrMatrix &M, int32_t expected_K);
void expect_packsell_layout(const CsrMatrix &A, const pspmv::PackSellMatrix &M, bool fresh);

// Candidate windows of the automatic sigma: 1, C, 2C, 4C, ... up to the first >= rows.
std::vector<int32_t> sigma_candidates(int32_t rows, int32_t C);
// Bytes the automatic sigma rule compares: 4 per stored word, 16 per tail entry.
double packsell_model_bytes(const pspmv::PackSellMatrix &M);
// M was built with sigma auto from A and opt: its sigma is the smallest candidate whose layout,
// built explicitly, stores bytes within 2% of the cheapest candidate's, and M is that layout.
void expect_auto_sigma(const CsrMatrix &A, const pspmv::PackSellOptions &opt, const pspmv::PackSellMatrix &M);

// u and eta of a PackSELL layout (see ErrorModel).
ErrorModel packsell_error_model(const pspmv::PackSellMatrix &M);
// Whether every value of A encodes into f (no scaling) without overflow and without a nonzero
// rounding to zero: exactly the builds with -mat_packsell_scaling none that succeed.
bool values_fit(const CsrMatrix &A, const pspmv::ValueFormat &f);
// The same at the exponent `scaling` gives (auto: expected_auto_exponent): exactly the builds
// (and value updates) with that scaling that succeed; the others throw ValueRangeError.
bool values_fit(const CsrMatrix &A, const pspmv::ValueFormat &f, pspmv::PackSellScaling scaling);
// The exponent of scaling auto, from the documented rule: the largest s <= kMaxScaleExponent
// at which max|a| (finite values) encodes without overflow; 0 for exact or an all-zero matrix.
int32_t expected_auto_exponent(const CsrMatrix &A, const pspmv::ValueFormat &f);
// K the documented rules give for this matrix and configuration.
int32_t expected_width(const CsrMatrix &A, const FormatConfig &cfg);

} // namespace pspmv_test
