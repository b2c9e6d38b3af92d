// The order a layout stores its rows and columns in (PETSc-free): the option every format has.
#pragma once
#include "core/csr.hpp"

#include <string>

namespace pspmv
{

// The order a layout stores its rows and columns in (field Options::ordering, option
// "ordering"): the matrix's own, or reverse Cuthill-McKee (square matrices and MPI diagonal
// blocks; others keep their order), which brings the columns of a
// matrix in poor order (a mesh from an unstructured generator, a graph) close to its diagonal
// so the product's reads of x hit the cache. The ordering is computed and applied by the
// PETSc glue at the build (PETSc's MatGetOrdering(), then PermutedCsr of core/csr_permute.hpp);
// the builders ignore the field.
enum class LayoutOrdering {
  Natural,
  Rcm
};

inline LayoutOrdering parse_layout_ordering(const std::string &s)
{
  if (s == "natural") return LayoutOrdering::Natural;
  if (s == "rcm") return LayoutOrdering::Rcm;
  throw FormatError("ordering '" + s + "' is not valid: use natural or rcm");
}

inline std::string layout_ordering_name(LayoutOrdering o)
{
  return o == LayoutOrdering::Rcm ? "rcm" : "natural";
}

} // namespace pspmv
