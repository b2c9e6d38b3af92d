// The builders' error channel (build_error.hpp).
#include "build_error.hpp"
#include <stdexcept>

namespace pspmv
{

std::string BuildError::what() const
{
  if (kind == Kind::ValueRange) return "row " + std::to_string(row) + ", column " + std::to_string(col) + ": " + message;
  return message;
}

void BuildError::raise() const
{
  switch (kind) {
  case Kind::None:
    return;
  case Kind::Format:
    throw FormatError(message);
  case Kind::ValueRange:
    throw ValueRangeError(row, col, message);
  case Kind::Device:
    throw std::runtime_error(message);
  }
}

BuildError BuildError::format(const std::string &sentence)
{
  BuildError e;
  e.kind    = Kind::Format;
  e.message = sentence;
  return e;
}

BuildError BuildError::value_range(int64_t row, int64_t col, const std::string &message)
{
  BuildError e;
  e.kind    = Kind::ValueRange;
  e.row     = row;
  e.col     = col;
  e.message = message;
  return e;
}

BuildError BuildError::device(int code, const std::string &what_failed)
{
  BuildError e;
  e.kind        = Kind::Device;
  e.device_code = code;
  e.message     = what_failed;
  return e;
}

} // namespace pspmv
