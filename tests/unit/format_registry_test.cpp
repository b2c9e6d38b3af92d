// The format registry as the glue sees it (src/formats/registry.hpp, src/petsc/format_options.*):
// every module's options have unique keys, round-trip through their canonical strings, and
// default sets validate; FormatOptions keeps its format.
#include "petsc/format_options.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace pspmv;
using namespace pspmv::glue;

TEST(FormatRegistry, EveryFormatHasUniqueKeysAndValidDefaults)
{
  for (size_t i = 0; i < Formats::size; ++i) {
    const Format  f{i};
    FormatOptions o(f);
    EXPECT_EQ(o.format(), f);
    EXPECT_NO_THROW(o.Validate()) << FormatTitle(f);
    std::set<std::string> keys;
    ASSERT_GT(NumOptions(f), 0u);
    for (size_t k = 0; k < NumOptions(f); ++k) {
      const OptionInfo info = OptionAt(f, k);
      EXPECT_TRUE(keys.insert(info.key).second) << FormatTitle(f) << ": duplicate option " << info.key;
      EXPECT_TRUE(info.help && *info.help && info.setter && *info.setter) << info.key;
    }
  }
}

TEST(FormatRegistry, OptionsRoundTripThroughTheirCanonicalStrings)
{
  for (size_t i = 0; i < Formats::size; ++i) {
    const Format f{i};
    for (size_t k = 0; k < NumOptions(f); ++k) {
      const OptionInfo  info = OptionAt(f, k);
      FormatOptions     o(f), p(f);
      const std::string s = o.GetString(info.key);
      if (info.integer) p.Set(info.key, o.GetInt(info.key), nullptr);
      else p.Set(info.key, 0, s.c_str());
      EXPECT_EQ(p.GetString(info.key), s) << FormatTitle(f) << " " << info.key;
      EXPECT_TRUE(p == o) << FormatTitle(f) << " " << info.key;
    }
  }
}

TEST(FormatRegistry, SetValidatesAndKeepsTheSetOnError)
{
  FormatOptions o(FormatOf<RgCsrModule>());
  EXPECT_THROW(o.Set("group_size", 33, nullptr), FormatError);
  EXPECT_EQ(o.GetInt("group_size"), 32);
  o.Set("group_size", 64, nullptr);
  EXPECT_EQ(o.GetInt("group_size"), 64);
  EXPECT_THROW(o.Set("value_format", 0, "fp16"), FormatError); // a PackSELL option
  EXPECT_THROW(o.GetInt("hybrid"), FormatError);               // a string option

  FormatOptions p(FormatOf<PackSellModule>());
  EXPECT_EQ(p.GetString("value_format"), "exact"); // lossless by default
  p.Set("sigma", PackSellModule::kSigmaDecide, nullptr);
  EXPECT_TRUE(p.ResolvedByBuild("sigma"));
  EXPECT_FALSE(p.ResolvedByBuild("slice_height"));
  FormatStats s;
  s.sigma = 256;
  EXPECT_EQ(p.BuiltValue("sigma", s), 256);
  EXPECT_THROW(p.Set("sigma", 0, nullptr), FormatError); // 0 is not a window
  EXPECT_FALSE(FormatOptions(FormatOf<RgCsrModule>()) == FormatOptions(FormatOf<PackSellModule>()));
  EXPECT_NE(p.ValuesNote().find("lossless"), std::string::npos);
  p.Set("value_format", 0, "bf16");
  EXPECT_NE(p.ValuesNote().find("LOSSY"), std::string::npos);
}

static_assert(HasOption<RgCsrModule>("group_size") && !HasOption<RgCsrModule>("sigma"), "option lookup at compile time");
