// The ordering option's layout (CreateOrderedShadow, shadow.hpp): the inner layout holds
// P A P^T, P from PETSc's MatGetOrdering() on the square matrix (or MPI diagonal block); products
// gather x into P's order and scatter y back with one PetscSF on the vectors' own memory (PETSc's
// pack/unpack kernels for device arrays). Value updates gather A's host values into the permuted
// CSR (PermutedCsr) and update the inner layout from it.
#include "block_csr.hpp"
#include "core/csr_permute.hpp"
#include "core_error.hpp"
#include "shadow.hpp"

#include <petscsf.h>

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
  OrderedShadow(std::unique_ptr<Shadow> inner, LayoutOrdering o, VecType vt) : inner_(std::move(inner)), ordering_(o), vec_type_(vt), device_vectors_(std::string(vt) != VECSEQ) { }
  ~OrderedShadow() override
  {
    /* best effort: Release() is the checked path */
    (void)PetscSFDestroy(&sf_);
    (void)VecDestroy(&xp_);
    (void)VecDestroy(&yp_);
  }

  PetscErrorCode Build(const BuildSource &src, const FormatOptions &opts) override
  {
    std::vector<int32_t> perm;
    PetscInt             n, nc;

    PetscFunctionBegin;
    PetscCall(MatGetLocalSize(src.A, &n, &nc));
    PetscCheck(n == nc, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "ordering %s needs a square matrix (or MPI diagonal block), not %" PetscInt_FMT " x %" PetscInt_FMT, layout_ordering_name(ordering_).c_str(), n, nc);
    PetscCall(ComputeOrdering(src.A, ordering_, &perm));
    PetscCall(WithCsr(src.A, [&](const CsrView &A) -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCallCoreAt(src.global, PETSC_ERR_ARG_WRONG, B_ = PermutedCsr(A, perm));
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    PetscCall(inner_->Build(Permuted(src), opts));
    PetscCall(CreateSF(n));
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
    PetscCall(Gather(x, xp_));
    PetscCall(inner_->Mult(xp_, yp_, PETSC_FALSE));
    PetscCall(Scatter(yp_, y, add ? MPI_SUM : MPI_REPLACE));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode GetDiagonal(Vec d) override
  {
    PetscFunctionBegin;
    PetscCall(inner_->GetDiagonal(yp_));
    PetscCall(Scatter(yp_, d, MPI_REPLACE));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  PetscErrorCode Release() override
  {
    PetscFunctionBegin;
    PetscCall(inner_->Release());
    PetscCall(PetscSFDestroy(&sf_));
    PetscCall(VecDestroy(&xp_));
    PetscCall(VecDestroy(&yp_));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* the inner layout's, its rows counted as ordered; a product also reads the permutation twice
     (the PetscSF's indices, gather and scatter) and writes and reads both work vectors */
  FormatStats Stats() const override
  {
    FormatStats s  = inner_->Stats();
    s.ordered_rows = s.rows;
    s.stored_bytes += s.rows * (int64_t)(2 * sizeof(PetscInt) + 4 * sizeof(PetscScalar));
    return s;
  }
  /* the inner layout and, for device work vectors, their 2 n doubles (the PetscSF's own index
     arrays not counted) */
  PetscInt64  DeviceBytes() const override { return inner_->DeviceBytes() + (device_vectors_ ? (PetscInt64)sizeof(PetscScalar) * 2 * (PetscInt64)B_.view().rows : 0); }
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

  /* The PetscSF from the user's vectors (roots) to the permuted ones (leaf i <- root perm[i]),
     and the permuted work vectors, of vec_type_. */
  PetscErrorCode CreateSF(PetscInt n)
  {
    PetscSFNode *remote;

    PetscFunctionBegin;
    PetscCall(PetscMalloc1(n, &remote));
    for (PetscInt i = 0; i < n; i++) {
      remote[i].rank  = 0;
      remote[i].index = B_.perm()[i];
    }
    PetscCall(PetscSFCreate(PETSC_COMM_SELF, &sf_));
    PetscCall(PetscSFSetGraph(sf_, n, n, nullptr, PETSC_OWN_POINTER, remote, PETSC_OWN_POINTER));
    PetscCall(PetscSFSetUp(sf_));
    PetscCall(VecCreate(PETSC_COMM_SELF, &xp_));
    PetscCall(VecSetSizes(xp_, n, n));
    PetscCall(VecSetType(xp_, vec_type_));
    PetscCall(VecDuplicate(xp_, &yp_));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* xp[i] = x[perm[i]] */
  PetscErrorCode Gather(Vec x, Vec xp)
  {
    const PetscScalar *xa;
    PetscScalar       *pa;
    PetscMemType       xm, pm;

    PetscFunctionBegin;
    PetscCall(VecGetArrayReadAndMemType(x, &xa, &xm));
    PetscCall(VecGetArrayWriteAndMemType(xp, &pa, &pm));
    PetscCall(PetscSFBcastWithMemTypeBegin(sf_, MPIU_SCALAR, xm, xa, pm, pa, MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf_, MPIU_SCALAR, xa, pa, MPI_REPLACE));
    PetscCall(VecRestoreArrayWriteAndMemType(xp, &pa));
    PetscCall(VecRestoreArrayReadAndMemType(x, &xa));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* y[perm[i]] = yp[i] (op MPI_REPLACE) or y[perm[i]] += yp[i] (MPI_SUM) */
  PetscErrorCode Scatter(Vec yp, Vec y, MPI_Op op)
  {
    const PetscScalar *pa;
    PetscScalar       *ya;
    PetscMemType       pm, ym;

    PetscFunctionBegin;
    PetscCall(VecGetArrayReadAndMemType(yp, &pa, &pm));
    if (op == MPI_SUM) PetscCall(VecGetArrayAndMemType(y, &ya, &ym));
    else PetscCall(VecGetArrayWriteAndMemType(y, &ya, &ym));
    PetscCall(PetscSFReduceWithMemTypeBegin(sf_, MPIU_SCALAR, pm, pa, ym, ya, op));
    PetscCall(PetscSFReduceEnd(sf_, MPIU_SCALAR, pa, ya, op));
    if (op == MPI_SUM) PetscCall(VecRestoreArrayAndMemType(y, &ya));
    else PetscCall(VecRestoreArrayWriteAndMemType(y, &ya));
    PetscCall(VecRestoreArrayReadAndMemType(yp, &pa));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  std::unique_ptr<Shadow> inner_;
  LayoutOrdering          ordering_;
  VecType                 vec_type_;
  bool                    device_vectors_ = false;
  PermutedCsr             B_;
  CsrView                 view_;
  PetscSF                 sf_ = nullptr;
  Vec                     xp_ = nullptr, yp_ = nullptr;
};

} // namespace

std::unique_ptr<Shadow> CreateOrderedShadow(std::unique_ptr<Shadow> inner, LayoutOrdering ordering, VecType vec_type)
{
  return std::make_unique<OrderedShadow>(std::move(inner), ordering, vec_type);
}

} // namespace glue
} // namespace pspmv
