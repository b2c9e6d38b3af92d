// The ordering option's layout (CreateOrderedShadow, shadow.hpp): the inner layout holds
// P A P^T, P from PETSc's MatGetOrdering() on the square matrix (or MPI diagonal block); products
// gather x into P's order and scatter y back (a Permuter, permuter.hpp: on the device one kernel
// each on the stream of the inner product). Value updates gather A's host values into the
// permuted CSR (PermutedCsr) and update the inner layout from it.
#include "block_csr.hpp"
#include "core/csr_permute.hpp"
#include "core_error.hpp"
#include "permuter.hpp"
#include "shadow.hpp"

#include <string>
#include <utility>
#include <vector>

namespace pspmv
{
namespace glue
{

namespace
{

/* The rows of A in ordering o (new index -> old index), from MatGetOrdering() on a SeqAIJ copy
   of A's pattern (A may be inside its first assembly, which MatGetOrdering() refuses); the copy
   has a prefix of its own, so that its assembly shows in no -mat_view of the user's. */
PetscErrorCode ComputeOrdering(Mat A, LayoutOrdering o, std::vector<int32_t> *perm)
{
  PetscFunctionBegin;
  PetscCheck(o == LayoutOrdering::Rcm, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no ordering to compute");
  PetscCall(WithAIJArrays(A, [&](const AIJArrays &a) -> PetscErrorCode {
    Mat             T;
    IS              rows, cols;
    const PetscInt *p;

    PetscFunctionBegin;
    PetscCall(MatCreate(PETSC_COMM_SELF, &T));
    PetscCall(MatSetOptionsPrefix(T, "petscspmv_ordering_"));
    PetscCall(MatSetSizes(T, a.n, a.n, a.n, a.n));
    PetscCall(MatSetType(T, MATSEQAIJ));
    PetscErrorCode ierr = MatSeqAIJSetPreallocationCSR(T, a.ia, a.ja, nullptr);
    if (!ierr) ierr = MatGetOrdering(T, MATORDERINGRCM, &rows, &cols);
    PetscCall(MatDestroy(&T));
    PetscCall(ierr);
    PetscCall(ISGetIndices(rows, &p));
    PetscCallCXX(perm->assign(p, p + a.n));
    PetscCall(ISRestoreIndices(rows, &p));
    PetscCall(ISDestroy(&rows));
    PetscCall(ISDestroy(&cols));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

class OrderedShadow final : public Shadow {
public:
  OrderedShadow(std::unique_ptr<Shadow> inner, LayoutOrdering o, bool cuda) : inner_(std::move(inner)), ordering_(o), cuda_(cuda) { }
  ~OrderedShadow() override
  {
    /* best effort: Release() is the checked path */
    (void)VecDestroy(&xp_);
    (void)VecDestroy(&yp_);
  }

  PetscErrorCode Build(const BuildSource &src, const FormatOptions &opts) override
  {
    std::vector<int32_t> perm;
    PetscInt             n, nc;

    PetscFunctionBegin;
    PetscCall(MatGetLocalSize(src.A, &n, &nc));
    PetscCheck(n == nc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "an ordered layout of a %" PetscInt_FMT " x %" PetscInt_FMT " matrix: the caller wraps square ones only", n, nc);
    PetscCall(ComputeOrdering(src.A, ordering_, &perm));
    PetscCall(WithCsr(src.A, [&](const CsrView &A) -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCallCoreAt(src.global, PETSC_ERR_ARG_WRONG, B_ = PermutedCsr(A, perm));
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    PetscCall(inner_->Build(Permuted(src), opts));
    PetscCall(CreateWork(n));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode UpdateValues(const BuildSource &src, PetscBool *pattern_changed) override
  {
    bool same = false;

    PetscFunctionBegin;
    *pattern_changed = PETSC_TRUE; /* the caller rebuilds */
    PetscCall(WithCsr(src.A, [&](const CsrView &A) -> PetscErrorCode {
      PetscFunctionBegin;
      same = B_.same_source_pattern(A);
      if (same) B_.update_values(A.values);
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    if (same) PetscCall(inner_->UpdateValues(Permuted(src), pattern_changed));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Mult(Vec x, Vec y, PetscBool add) override
  {
    PetscFunctionBegin;
    PetscCall(permuter_->Gather(x, xp_));
    PetscCall(inner_->Mult(xp_, yp_, PETSC_FALSE));
    PetscCall(permuter_->Scatter(yp_, y, add));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode GetDiagonal(Vec d) override
  {
    PetscFunctionBegin;
    PetscCall(inner_->GetDiagonal(yp_));
    PetscCall(permuter_->Scatter(yp_, d, PETSC_FALSE));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Release() override
  {
    PetscFunctionBegin;
    PetscCall(inner_->Release());
    if (permuter_) PetscCall(permuter_->Release());
    PetscCall(VecDestroy(&xp_));
    PetscCall(VecDestroy(&yp_));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* the inner layout's, its rows counted as ordered; a product also reads the permutation twice
     (32-bit indices, gather and scatter) and writes and reads both work vectors */
  FormatStats Stats() const override
  {
    FormatStats s  = inner_->Stats();
    s.ordered_rows = s.rows;
    s.stored_bytes += s.rows * (int64_t)(2 * sizeof(int32_t) + 4 * sizeof(PetscScalar));
    return s;
  }
  /* the inner layout, the permutation and, for device work vectors, their 2 n doubles */
  PetscInt64  DeviceBytes() const override { return inner_->DeviceBytes() + (permuter_ ? permuter_->DeviceBytes() : 0) + (cuda_ ? (PetscInt64)sizeof(PetscScalar) * 2 * (PetscInt64)B_.view().rows : 0); }
  PetscInt    ScaleExponent() const override { return inner_->ScaleExponent(); }
  std::string Backend() const override { return inner_->Backend() + ", rows and columns in reverse Cuthill-McKee order"; }

private:
  BuildSource Permuted(const BuildSource &src)
  {
    BuildSource s = src;
    view_         = B_.view();
    s.csr         = &view_;
    s.global.perm = B_.perm().data();
    return s;
  }

  /* The permuter and the permuted work vectors (CUDA vectors for the CUDA backend). */
  PetscErrorCode CreateWork(PetscInt n)
  {
    PetscFunctionBegin;
#if defined(PETSCSPMV_HAVE_CUDA)
    if (cuda_) PetscCall(CreateCudaPermuter(B_.perm(), &permuter_));
#else
    PetscCheck(!cuda_, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a CUDA layout in a build without CUDA");
#endif
    if (!cuda_) PetscCallCXX(permuter_ = CreateHostPermuter(B_.perm()));
    PetscCall(VecCreate(PETSC_COMM_SELF, &xp_));
    PetscCall(VecSetSizes(xp_, n, n));
    PetscCall(VecSetType(xp_, cuda_ ? VECSEQCUDA : VECSEQ));
    PetscCall(VecDuplicate(xp_, &yp_));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  std::unique_ptr<Shadow>   inner_;
  LayoutOrdering            ordering_;
  bool                      cuda_;
  PermutedCsr               B_;
  std::unique_ptr<Permuter> permuter_; /* refers to B_'s permutation: declared after it */
  CsrView                   view_;
  Vec                       xp_ = nullptr, yp_ = nullptr;
};

} // namespace

std::unique_ptr<Shadow> CreateOrderedShadow(std::unique_ptr<Shadow> inner, LayoutOrdering ordering, bool cuda)
{
  return std::make_unique<OrderedShadow>(std::move(inner), ordering, cuda);
}

} // namespace glue
} // namespace pspmv
