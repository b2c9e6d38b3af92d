// The PETSc formats of spmv_bench (aijcusparse, sellcuda, rgcsrcuda, packsellcuda and their host
// types with -cpu): MatConvert from AIJ with the format's options, stats, timing, check; and
// the PETSc binary matrix files.
#pragma once
#include "bench_context.hpp"
#include "results.hpp"
#include "format_spec.hpp"
#include "matrix_source.hpp"

#include <petscmat.h>

#include <string>
#include <vector>

namespace bench
{

struct PetscMats {
  Mat                   A = nullptr;    // MATSEQAIJ on the HostCsr arrays (their PetscInt copies with 64-bit PetscInt)
  std::vector<PetscInt> rowptr, colidx; // the copies (empty with 32-bit PetscInt)
  Vec                   x = nullptr, y = nullptr;
};

// One attempt of a PETSc format: convert, first product (upload), stats, timing, check.

PetscErrorCode RunPetscOnce(Bench &b, const HostCsr &H, PetscMats &m, const FormatSpec &f, bool scaled_retry, Reference &ref, Mat *Bout, Result &r);

// Loads a PETSc binary matrix file into host CSR.

PetscErrorCode LoadPetscBinary(const std::string &path, HostCsr &H);

} // namespace bench
