// Text form of FormatStats (MatView prints it as is).
#include "format_stats.hpp"
#include <cstdio>

namespace pspmv
{

namespace
{
std::string fixed(double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}
} // namespace

std::string FormatStats::to_string() const
{
  std::string s;
  auto        line = [&s](const char *name, const std::string &value) {
    s += name;
    s += ": ";
    s += value;
    s += '\n';
  };
  line("rows", std::to_string(rows));
  line("cols", std::to_string(cols));
  line("nnz", std::to_string(nnz));
  line("stored_slots", std::to_string(stored_slots));
  line("padding_slots", std::to_string(padding_slots));
  line("dummy_words", std::to_string(dummy_words));
  line("tail_nnz", std::to_string(tail_nnz));
  line("hybrid_width", std::to_string(hybrid_width));
  if (sigma > 0) line("sigma", std::to_string(sigma));
  if (gap_entries > 0) line("column_gap_entries", std::to_string(gap_entries));
  if (ordered_rows > 0) line("ordered_rows", std::to_string(ordered_rows));
  line("stored_bytes", std::to_string(stored_bytes));
  line("bytes_per_nnz", fixed(bytes_per_nnz()));
  line("padding_ratio", fixed(padding_ratio()));
  line("tail_share", fixed(tail_share()));
  return s;
}

} // namespace pspmv
