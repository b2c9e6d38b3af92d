// Matrices for spmv_bench: Matrix Market files and generated large matrices, as host CSR with
// 32-bit indices and FP64 values (the arrays a MATSEQAIJ is created on). PETSc-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bench
{

struct HostCsr {
  std::string          name;   // short name used in the CSV/JSON (file stem or generator spec)
  std::string          source; // path or generator spec
  std::string          kind;   // "matrix market <field> <symmetry>", "generated ..."
  int32_t              rows = 0, cols = 0;
  std::vector<int32_t> rowptr; // rows+1
  std::vector<int32_t> colidx; // nnz, strictly increasing inside each row
  std::vector<double>  values; // nnz

  int64_t nnz() const { return rowptr.empty() ? 0 : rowptr.back(); }
  int32_t max_row_length() const;
};

// File stem without .gz/.xz/.bz2 and .mtx/.petsc/.bin/.dat (e.g. "G3_circuit").
std::string matrix_name_from_path(const std::string &path);
bool        is_matrix_market(const std::string &path); // .mtx, .mtx.gz, .mtx.xz, .mtx.bz2

// Reads a Matrix Market coordinate file (real, integer or pattern; general, symmetric or
// skew-symmetric; plain, .gz, .xz or .bz2) with the reader of tests/support (matrix_market.hpp).
// Symmetric storage is expanded, duplicates summed, columns sorted, explicit zeros kept,
// integer values kept. Pattern files get
// deterministic values uniform in [0.5, 1.5] with random signs (the same rule as
// scripts/mtx2petsc.py, not the same numbers), equal for (i,j) and (j,i).
// Throws std::runtime_error naming the file.
HostCsr read_matrix_market(const std::string &path);

// Generated matrices (throws std::runtime_error for a bad spec):
//   lap7:N    3-D 7-point Laplacian on an N^3 grid (N^3 rows; 6 on the diagonal, -1 off it)
//   lap27:N   3-D 27-point Laplacian on an N^3 grid (26 on the diagonal, -1 off it)
//   lap7:N:shuffled, lap27:N:shuffled  the same in a random symmetric order (a fixed permutation:
//             B(i, j) = A(q[i], q[j])), a matrix in poor order
//   powerlaw:ROWS:AVG:ALPHA:SEED  square, row lengths from a Pareto law with tail exponent
//             ALPHA (> 1; P(len > l) ~ l^-(ALPHA-1)) scaled to mean AVG, at least 1, at most
//             ROWS; uniformly random distinct columns; values uniform in +-[0.1, 1].
// Deterministic for a given spec whatever the number of threads.
HostCsr generate_matrix(const std::string &spec);
// Fields of s between sep characters ("" gives no field, "a:" gives "a" and "").
std::vector<std::string> split(const std::string &s, char sep);

// y = A x and absy = |A| |x| in FP64 (the reference every format is checked against).
void reference_spmv(const HostCsr &A, const double *x, double *y, double *absy);

// Deterministic x: uniform in [-1, -0.25] U [0.25, 1] (no zeros), from a fixed seed.
std::vector<double> make_x(int32_t n, uint64_t seed);

} // namespace bench
