// The JSON file of spmv_bench (Ginkgo-like: a header, then per matrix "spmv": {format: result}),
// rewritten whole (through a .tmp file and a rename) after every matrix.
#pragma once
#include "bench_context.hpp"
#include "bench_results.hpp"

#include <string>
#include <vector>

namespace bench {

// JSON string literal of s (quotes and escapes); number with %.10g, null when not finite.
std::string jstr(const std::string &s);
std::string jnum(double v);
std::string jbool(bool v);

// One format's object; indent is the indentation of the line it starts on.
std::string ResultJson(const Result &r, const std::string &indent, double nnz, double copy_bw, double taij);
// Writes the records to path, a top-level JSON list of per-matrix objects as Ginkgo's
// benchmark tools read them, and the run's header (device, bandwidths, timing method, skipped
// matrices) to path's name with "-header.json" for ".json" (nothing when path is empty).
void WriteJson(const Bench &b, const std::string &path, const std::vector<MatrixRecord> &mats, const std::vector<std::string> &skipped, bool aborted, const std::string &abort_reason);

} // namespace bench
