// The one error channel of the layout builders (PETSc-free): what a build driver or a device
// executor detected, as data. The host API turns it into its exceptions (raise()), the device
// builders return it as it is, and the PETSc glue turns either into one PETSc error with the
// same message (src/petsc/core_error.hpp).
#pragma once
#include "csr.hpp"
#include <cstdint>
#include <string>

namespace pspmv
{

struct BuildError {
  enum class Kind : int {
    None = 0,   // success
    Format,     // bad option or input (FormatError): message is the full sentence
    ValueRange, // a value the format cannot hold (ValueRangeError): row, col, message without them
    Device      // a CUDA call failed: device_code is its cudaError_t, message says what failed
  };
  Kind        kind = Kind::None;
  int64_t     row = -1, col = -1; // ValueRange: the entry, in the CSR's own numbering
  int         device_code = 0;    // Device: the cudaError_t value
  std::string message;

  explicit operator bool() const { return kind != Kind::None; }
  // The full sentence: ValueRangeError::what() for ValueRange ("row r, column c: ..."),
  // the message otherwise.
  std::string what() const;
  // Throws the host API's exception: FormatError, ValueRangeError, std::runtime_error (Device).
  // Nothing for None.
  void raise() const;

  static BuildError format(const std::string &sentence);
  static BuildError value_range(int64_t row, int64_t col, const std::string &message);
  static BuildError value_range(const ValueRangeError &e) { return value_range(e.row, e.col, e.message()); }
  static BuildError device(int code, const std::string &what_failed);
};

// Runs f() (host code that may throw the core's exceptions: option and CSR checks) and
// returns what it threw as a BuildError (None when it returned).
template <class F>
BuildError catch_build_error(F &&f)
{
  try {
    f();
  } catch (const ValueRangeError &e) {
    return BuildError::value_range(e);
  } catch (const FormatError &e) {
    return BuildError::format(e.what());
  }
  return BuildError{};
}

} // namespace pspmv

// Returns the BuildError of expr from the enclosing function when it is one.
#define PSPMV_BUILD_TRY(expr) \
  do { \
    ::pspmv::BuildError pspmv_build_error_ = (expr); \
    if (pspmv_build_error_) return pspmv_build_error_; \
  } while (0)
