// layout_bytes: what column gaps change in PackSELL layouts (host builds only: no GPU, no
// PETSc). For every matrix and value format, the layout with -mat_packsell_column_gaps off and
// auto: stored bytes per nonzero, dummy words, gap table entries. One CSV row per pair
// (docs/bench/packsell_gaps.csv, docs/benchmarks.md).
//
//   layout_bytes [-f a.mtx,b.mtx.gz,...] [-gen lap7:128,...] [-formats fp16,bf16,e8m14,exact]
//                [-C 32] [-commit SHA] [-csv FILE]
//
// Layouts: slice height C (default 32), sigma 1, hybrid auto, scaling auto for the lossy formats
// (so every value fits; a matrix a format still cannot hold gets the row "refused"). Generated
// matrices: matrix_source.hpp's specs.
#include "formats/packsell/packsell.hpp"
#include "matrix_source.hpp"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace
{

pspmv::PackSellMatrix build(const bench::HostCsr &A, const std::string &format, int32_t C, bool gaps)
{
  pspmv::PackSellOptions o;
  o.slice_height = C;
  o.value_format = pspmv::ValueFormat::parse(format);
  o.scaling      = o.value_format.lossy() ? pspmv::PackSellScaling::Auto : pspmv::PackSellScaling::None;
  o.column_gaps  = gaps;
  return pspmv::build_packsell(pspmv::CsrView{A.rows, A.cols, A.rowptr.data(), A.colidx.data(), A.values.data()}, o);
}

} // namespace

int main(int argc, char **argv)
{
  std::vector<std::string> files, gens, formats{"fp16", "bf16", "e8m14", "exact"};
  int32_t                  C      = 32;
  std::string              commit = "unknown", csv;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "-f") files = bench::split(v, ',');
    else if (k == "-gen") gens = bench::split(v, ',');
    else if (k == "-formats") formats = bench::split(v, ',');
    else if (k == "-C") C = std::stoi(v);
    else if (k == "-commit") commit = v;
    else if (k == "-csv") csv = v;
    else {
      std::fprintf(stderr, "layout_bytes: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  FILE *out = csv.empty() ? stdout : std::fopen(csv.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "layout_bytes: cannot write %s\n", csv.c_str());
    return 2;
  }
  std::fprintf(out, "matrix,rows,nnz,value_format,bytes_per_nnz_off,bytes_per_nnz_auto,dummy_words_off,dummy_words_auto,gap_entries,bytes_auto_over_off,commit\n");
  std::vector<std::string> specs;
  for (const std::string &f : files) specs.push_back("f:" + f);
  for (const std::string &g : gens) specs.push_back("g:" + g);
  int rc = 0;
  for (const std::string &spec : specs) {
    bench::HostCsr A;
    try {
      A = spec[0] == 'f' ? bench::read_matrix_market(spec.substr(2)) : bench::generate_matrix(spec.substr(2));
    } catch (const std::exception &e) {
      std::fprintf(stderr, "layout_bytes: %s\n", e.what());
      rc = 1;
      continue;
    }
    for (const std::string &f : formats) {
      try {
        const pspmv::FormatStats off = build(A, f, C, false).stats(), on = build(A, f, C, true).stats();
        std::fprintf(out, "%s,%d,%lld,%s,%.4f,%.4f,%lld,%lld,%lld,%.4f,%s\n", A.name.c_str(), A.rows, (long long)A.nnz(), f.c_str(), off.bytes_per_nnz(), on.bytes_per_nnz(), (long long)off.dummy_words, (long long)on.dummy_words, (long long)on.gap_entries,
                     double(on.stored_bytes) / double(off.stored_bytes), commit.c_str());
        if (on.stored_bytes > off.stored_bytes) rc = 1; // never larger: the builder keeps the smaller
      } catch (const pspmv::ValueRangeError &) {
        std::fprintf(out, "%s,%d,%lld,%s,refused,refused,,,,,%s\n", A.name.c_str(), A.rows, (long long)A.nnz(), f.c_str(), commit.c_str());
      }
      std::fflush(out);
    }
  }
  if (out != stdout) std::fclose(out);
  return rc;
}
