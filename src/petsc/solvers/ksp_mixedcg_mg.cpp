// KSPMIXEDCG's FP32 V-cycle from a PCMG/PCGAMG hierarchy: ksp_mixedcg_mg.hpp.
#include <petsc/private/matimpl.h>
#include <petsc/private/pcmgimpl.h>
#include <petscblaslapack.h>

#include "ksp_mixedcg_mg.hpp"

#include "block_csr.hpp"
#include "core_error.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace pspmv
{
namespace glue
{

namespace
{

/* The hierarchy's matrices: each level's operator (its smoother's Pmat) and interpolation. */
PetscErrorCode LevelMats(PC pc, MgLevels *mats)
{
  PetscInt levels;

  PetscFunctionBegin;
  PetscCall(PCMGGetLevels(pc, &levels));
  mats->A.assign((size_t)levels, nullptr);
  mats->P.assign((size_t)levels, nullptr);
  for (PetscInt l = 0; l < levels; l++) {
    KSP smoother;
    PetscCall(PCMGGetSmoother(pc, l, &smoother));
    PetscCall(KSPGetOperators(smoother, nullptr, &mats->A[(size_t)l]));
    if (l > 0) PetscCall(PCMGGetInterpolation(pc, l, &mats->P[(size_t)l]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The smoothing steps of level l's smoother, or *why. */
PetscErrorCode LevelSmoother(PC pc, PetscInt l, PetscInt *steps, std::string *why)
{
  KSP          down, up;
  PC           spc;
  PetscBool    cheb, jac;
  PetscInt     maxits;
  Mat          A, P;
  PCJacobiType jt;

  PetscFunctionBegin;
  *steps = 0;
  /* the level's fields, not PCMGGetSmootherUp(), which creates a distinct post-smoother */
  const PC_MG *m = static_cast<const PC_MG *>(pc->data);
  down           = m->levels[l]->smoothd;
  up             = m->levels[l]->smoothu;
  PetscCall(KSPGetPC(down, &spc));
  PetscCall(PetscObjectTypeCompare((PetscObject)down, KSPCHEBYSHEV, &cheb));
  PetscCall(PetscObjectTypeCompare((PetscObject)spc, PCJACOBI, &jac));
  if (jac) PetscCall(PCJacobiGetType(spc, &jt));
  const std::string level = "the smoother of level " + std::to_string((long long)l);
  if (down != up) *why = level + " differs before and after the coarse correction (the FP32 cycle is symmetric)";
  else if (!cheb || !jac) *why = level + " is " + ((PetscObject)down)->type_name + " + " + (((PetscObject)spc)->type_name ? ((PetscObject)spc)->type_name : "(unset)") + ", not chebyshev + jacobi";
  else if (jt != PC_JACOBI_DIAGONAL) *why = level + " is Jacobi on another diagonal than the matrix's";
  else {
    KSPChebyshevKind kind;
    PetscCall(KSPChebyshevGetKind(down, &kind));
    PetscCall(KSPGetOperators(down, &A, &P));
    PetscCall(KSPGetTolerances(down, nullptr, nullptr, nullptr, &maxits));
    if (kind != KSP_CHEBYSHEV_FIRST) *why = level + " is a Chebyshev smoother of another kind than the first";
    else if (A != P) *why = level + " smooths with an Amat other than its Pmat";
    else *steps = maxits;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* X = A^-1 (n x n, dense) for DenseInverse(): PETSc's LU of the host copy Ah (KSPPREONLY + PCLU,
   KSPMatSolve() with the identity); *ok false when the factorisation fails (a zero pivot: PCSetUp
   records it as the PC's failed reason, no error) or when A X - I exceeds 1e-6 in the max norm
   (a numerically singular level, e.g. a Neumann problem's, whose pivots rounding kept nonzero). */
PetscErrorCode InvertInto(Mat Ah, KSP k, Mat I, Mat X, Mat *AX, bool *ok)
{
  PC             pc;
  PCFailedReason failed;
  PetscReal      err;

  PetscFunctionBegin;
  *ok = false;
  PetscCall(KSPSetOperators(k, Ah, Ah));
  PetscCall(KSPSetType(k, KSPPREONLY));
  PetscCall(KSPGetPC(k, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscCall(KSPSetUp(k));
  PetscCall(PCGetFailedReason(pc, &failed));
  if (failed != PC_NOERROR) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatShift(I, 1.0));
  PetscCall(KSPMatSolve(k, I, X));
  PetscCall(MatMatMult(Ah, X, MAT_INITIAL_MATRIX, PETSC_DETERMINE, AX));
  PetscCall(MatAXPY(*AX, -1.0, I, SAME_NONZERO_PATTERN));
  PetscCall(MatNorm(*AX, NORM_INFINITY, &err));
  *ok = err <= 1e-6;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The dense inverse of the small symmetric level matrix A (rows x rows, row-major: symmetric up to
   rounding) on the host, or *ok false (InvertInto()'s refusals): every object destroyed on every
   path. */
PetscErrorCode DenseInverse(Mat A, std::vector<double> *inv, bool *ok)
{
  Mat      Ah = nullptr, I = nullptr, X = nullptr, AX = nullptr;
  KSP      k = nullptr;
  PetscInt n;

  PetscFunctionBegin;
  *ok = false;
  PetscCall(MatGetSize(A, &n, nullptr));
  PetscCall(MatConvert(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &Ah));
  PetscErrorCode ierr = MatCreateSeqDense(PETSC_COMM_SELF, n, n, nullptr, &I);
  if (!ierr) ierr = MatCreateSeqDense(PETSC_COMM_SELF, n, n, nullptr, &X);
  if (!ierr) ierr = MatAssemblyBegin(I, MAT_FINAL_ASSEMBLY);
  if (!ierr) ierr = MatAssemblyEnd(I, MAT_FINAL_ASSEMBLY);
  if (!ierr) ierr = KSPCreate(PETSC_COMM_SELF, &k);
  if (!ierr) ierr = InvertInto(Ah, k, I, X, &AX, ok);
  if (!ierr && *ok) {
    const PetscScalar *x;
    PetscInt           lda;
    ierr = MatDenseGetLDA(X, &lda);
    if (!ierr) ierr = MatDenseGetArrayRead(X, &x);
    if (!ierr) {
      inv->assign((size_t)n * (size_t)n, 0.0);
      for (PetscInt j = 0; j < n; j++) /* column j of X: row j of the (symmetric) inverse */
        for (PetscInt i = 0; i < n; i++) (*inv)[(size_t)j * (size_t)n + (size_t)i] = x[(size_t)j * (size_t)lda + (size_t)i];
      ierr = MatDenseRestoreArrayRead(X, &x);
    }
  }
  PetscCall(KSPDestroy(&k));
  PetscCall(MatDestroy(&AX));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&I));
  PetscCall(MatDestroy(&Ah));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The basis of the null space ns (of A's layout, one rank) as MgCycle::set_null_space() takes it:
   its vectors, and its constant as 1/sqrt(n) first (PETSc's MatNullSpaceRemove() order). None:
   empty. */
PetscErrorCode NullSpaceBasis(MatNullSpace ns, Mat A, std::vector<std::vector<double>> *basis)
{
  PetscBool  cnst;
  PetscInt   k, n, N;
  const Vec *vecs;

  PetscFunctionBegin;
  basis->clear();
  if (!ns) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetLocalSize(A, &n, nullptr));
  PetscCall(MatGetSize(A, &N, nullptr));
  PetscCall(MatNullSpaceGetVecs(ns, &cnst, &k, &vecs));
  if (cnst) basis->emplace_back((size_t)n, 1.0 / std::sqrt((double)N));
  for (PetscInt j = 0; j < k; j++) {
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(vecs[j], &a));
    basis->emplace_back(a, a + n);
    PetscCall(VecRestoreArrayRead(vecs[j], &a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The pseudo-inverse X = A^+ (n x n, row-major, symmetric) of the small symmetric positive
   semidefinite level matrix A whose null space has dimension k >= 1 (the operator's, which a
   Galerkin hierarchy keeps on every level): A = V diag(w) V^T by LAPACK's syev, X = sum over the
   n - k largest w_i of v_i v_i^T / w_i. *ok false (the FP32 cycle is then refused) unless k < n,
   the k smallest eigenvalues are null (|w_i| <= 1e-8 w_max), the others positive beyond it, and
   A X A v = A v to 1e-6 (max norm) for two fixed vectors v. O(n^3): syev and one gemm. Its output has no component in the null space, so an
   inconsistent right-hand side (the FP32 restriction's rounding) is not amplified, as the PC's
   LU of the singular level would amplify it (by the inverse of a pivot near rounding: beyond
   FP32's range of useful digits). */
PetscErrorCode DensePseudoInverse(Mat A, PetscInt k, std::vector<double> *inv, bool *ok)
{
  Mat                 Ad;
  PetscInt            n, lda;
  const PetscScalar  *a;
  PetscBLASInt        bn, lwork, info = 0;
  std::vector<double> M, w, work, VD, X;

  PetscFunctionBegin;
  *ok = false;
  PetscCall(MatGetSize(A, &n, nullptr));
  if (k < 1 || k >= n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscBLASIntCast(n, &bn));
  PetscCallCXX(M.resize((size_t)n * (size_t)n));
  PetscCall(MatConvert(A, MATSEQDENSE, MAT_INITIAL_MATRIX, &Ad));
  PetscErrorCode ierr = MatDenseGetLDA(Ad, &lda);
  if (!ierr) ierr = MatDenseGetArrayRead(Ad, &a);
  if (!ierr) {
    for (PetscInt j = 0; j < n; j++)
      for (PetscInt i = 0; i < n; i++) M[(size_t)j * (size_t)n + (size_t)i] = a[(size_t)j * (size_t)lda + (size_t)i];
    ierr = MatDenseRestoreArrayRead(Ad, &a);
  }
  PetscCall(MatDestroy(&Ad)); /* on every path */
  PetscCall(ierr);
  const std::vector<double> A0 = M; /* column-major, for the check */
  PetscCall(PetscBLASIntCast(4 * n, &lwork));
  PetscCallCXX(w.resize((size_t)n));
  PetscCallCXX(work.resize((size_t)lwork));
  PetscCallBLAS("LAPACKsyev", LAPACKsyev_("V", "U", &bn, M.data(), &bn, w.data(), work.data(), &lwork, &info));
  if (info != 0) PetscFunctionReturn(PETSC_SUCCESS);
  const double wmax = w[(size_t)n - 1], tol = 1e-8 * wmax;
  if (!(wmax > 0) || !(std::fabs(w[(size_t)k - 1]) <= tol) || !(std::fabs(w[0]) <= tol) || !(w[(size_t)k] > tol)) PetscFunctionReturn(PETSC_SUCCESS);
  /* X = (V_r D_r^-1) V_r^T over the columns r >= k of V */
  const PetscBLASInt r   = bn - (PetscBLASInt)k;
  const double       one = 1.0, zero = 0.0;
  PetscCallCXX(VD.assign(M.begin() + (std::ptrdiff_t)k * n, M.end()));
  for (PetscBLASInt j = 0; j < r; j++)
    for (PetscInt i = 0; i < n; i++) VD[(size_t)j * (size_t)n + (size_t)i] /= w[(size_t)k + (size_t)j];
  PetscCallCXX(X.resize((size_t)n * (size_t)n));
  PetscCallBLAS("BLASgemm", BLASgemm_("N", "T", &bn, &bn, &r, &one, VD.data(), &bn, M.data() + (size_t)k * (size_t)n, &bn, &zero, X.data(), &bn));
  for (PetscInt i = 0; i < n; i++) /* exactly symmetric */
    for (PetscInt j = 0; j < i; j++) X[(size_t)j * (size_t)n + (size_t)i] = X[(size_t)i * (size_t)n + (size_t)j] = 0.5 * (X[(size_t)j * (size_t)n + (size_t)i] + X[(size_t)i * (size_t)n + (size_t)j]);
  /* A X A v = A v for two fixed vectors v (O(n^2): the n^3 of a full product would double the
     build): u = A v, t = X u, A t against u */
  const PetscBLASInt  inc = 1;
  std::vector<double> v((size_t)n), u((size_t)n), t((size_t)n), at((size_t)n);
  for (int trial = 0; trial < 2; trial++) {
    for (PetscInt i = 0; i < n; i++) v[(size_t)i] = std::sin(0.7 * (double)(i + 1) * (trial + 1)) + (trial ? 0.5 : 0.0);
    PetscCallBLAS("BLASgemv", BLASgemv_("N", &bn, &bn, &one, A0.data(), &bn, v.data(), &inc, &zero, u.data(), &inc));
    PetscCallBLAS("BLASgemv", BLASgemv_("N", &bn, &bn, &one, X.data(), &bn, u.data(), &inc, &zero, t.data(), &inc));
    PetscCallBLAS("BLASgemv", BLASgemv_("N", &bn, &bn, &one, A0.data(), &bn, t.data(), &inc, &zero, at.data(), &inc));
    double umax = 0.0, err = 0.0;
    for (PetscInt i = 0; i < n; i++) {
      umax = std::max(umax, std::fabs(u[(size_t)i]));
      err  = std::max(err, std::fabs(at[(size_t)i] - u[(size_t)i]));
    }
    if (!(err <= 1e-6 * umax)) PetscFunctionReturn(PETSC_SUCCESS);
  }
  *inv = std::move(X); /* symmetric: row-major is column-major */
  *ok  = true;
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode PcNullSpace(PC pc, MatNullSpace *ns)
{
  Mat A;

  PetscFunctionBegin;
  *ns = nullptr;
  PetscCall(PCGetOperators(pc, &A, nullptr));
  if (A) PetscCall(MatGetNullSpace(A, ns));
  PetscFunctionReturn(PETSC_SUCCESS);
}

MgFp32::~MgFp32()
{
  (void)VecDestroy(&cb_);
  (void)VecDestroy(&cx_);
  (void)KSPDestroy(&coarse_);
}

PetscErrorCode MgFp32::Check(KSP ksp, PC pc, std::string *why)
{
  PetscMPIInt size;
  PetscBool   mg;
  PetscInt    levels, steps = -1;
  PCMGType    type;

  PetscFunctionBegin;
  why->clear();
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &mg, PCMG, PCGAMG, ""));
  {
    MatNullSpace ns;
    PetscCall(PcNullSpace(pc, &ns));
    if (ns && ns->remove) *why = "the operator's null space has its own removal function (MatNullSpaceSetFunction()), which the FP32 V-cycle cannot apply";
  }
  if (!why->empty()) PetscFunctionReturn(PETSC_SUCCESS);
  if (!mg) *why = std::string("the PC is ") + ((PetscObject)pc)->type_name + ", not PCMG or PCGAMG";
  else if (size > 1) *why = "several ranks (the FP32 V-cycle runs on one rank)";
  if (!why->empty()) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PCMGGetLevels(pc, &levels));
  PetscCall(PCMGGetType(pc, &type));
  const PC_MG *m = static_cast<const PC_MG *>(pc->data);
  if (levels < 2) *why = "a single level";
  else if (type != PC_MG_MULTIPLICATIVE) *why = std::string("PCMG type ") + PCMGTypes[type] + ", not multiplicative";
  else if (m->cyclesperpcapply != 1) *why = "several cycles per PCApply()";
  MgLevels mats;
  if (why->empty()) PetscCall(LevelMats(pc, &mats));
  for (PetscInt l = 0; l < levels && why->empty(); l++) { /* the CSR of every level's matrices is read */
    const Mat A = mats.A[(size_t)l], P = mats.P[(size_t)l];
    PetscBool aij, paij                = PETSC_TRUE;
    PetscCall(PetscStrbeginswith(((PetscObject)A)->type_name, MATSEQAIJ, &aij));
    if (P) PetscCall(PetscStrbeginswith(((PetscObject)P)->type_name, MATSEQAIJ, &paij));
    if (!aij || !paij) *why = "level " + std::to_string((long long)l) + "'s " + (aij ? "interpolation" : "operator") + " is " + ((PetscObject)(aij ? P : A))->type_name + ", not SeqAIJ-based";
  }
  for (PetscInt l = 1; l < levels && why->empty(); l++) {
    PetscInt s;
    if (m->levels[l]->cycles != PC_MG_CYCLE_V) *why = "not a V-cycle";
    else PetscCall(LevelSmoother(pc, l, &s, why));
    if (why->empty() && steps >= 0 && s != steps) *why = "levels smoothed with different numbers of steps";
    steps = s;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode RefuseOrRaise(const CoreFailure &e, std::string *why)
{
  PetscFunctionBegin;
  if (e && e.kind != CoreFailure::Kind::Petsc && e.kind != CoreFailure::Kind::Memory) *why = e.what;
  else PetscCall(RaiseCore(e, GlobalIndices{}, PETSC_ERR_ARG_WRONG, "KSPMIXEDCG's FP32 V-cycle"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MgFp32::Key(PC pc, std::string *key)
{
  PetscInt levels;

  PetscFunctionBegin;
  PetscCall(PCMGGetLevels(pc, &levels));
  *key = std::string(((PetscObject)pc)->type_name) + " " + std::to_string((long long)levels);
  {
    MatNullSpace  ns;
    PetscObjectId id = 0;
    PetscCall(PcNullSpace(pc, &ns));
    if (ns) PetscCall(PetscObjectGetId((PetscObject)ns, &id));
    *key += " null space " + std::to_string((long long)id) + (ns && ns->remove ? " with a function" : "");
  }
  const PC_MG *m = static_cast<const PC_MG *>(pc->data);
  for (PetscInt l = 1; l < levels; l++)
    for (KSP k : {m->levels[l]->smoothd, m->levels[l]->smoothu}) {
      PC       kpc;
      PetscInt maxits;
      PetscCall(KSPGetPC(k, &kpc));
      PetscCall(KSPGetTolerances(k, nullptr, nullptr, nullptr, &maxits));
      *key += std::string(" ") + (((PetscObject)k)->type_name ? ((PetscObject)k)->type_name : "-") + "/" + (((PetscObject)kpc)->type_name ? ((PetscObject)kpc)->type_name : "-") + "/" + std::to_string((long long)maxits);
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MgFp32::Create(KSP ksp, PC pc, const PackSellOptions &opt, bool device, PetscInt dense_coarse_rows, std::unique_ptr<MgFp32> *out, std::string *refused_why)
{
  PetscInt              levels, steps = 0;
  MgLevels              mats;
  std::string           why;
  mixed::MgCycleOptions o;

  PetscFunctionBegin;
  out->reset();
  refused_why->clear();
  PetscCall(LevelMats(pc, &mats));
  levels = (PetscInt)mats.A.size();
  PetscCall(LevelSmoother(pc, 1, &steps, &why)); /* Check(): every level smooths with the same steps */
  PetscCheck(why.empty(), PETSC_COMM_SELF, PETSC_ERR_PLIB, "FP32 V-cycle of a hierarchy that Check() refuses: %s", why.c_str());
  o.level_options = opt;
  o.smooth_steps  = (int)steps;
  /* the exactly solved coarse level: the highest with at most dense_coarse_rows rows (the core's
     rule for fp32_min_rows = dense_coarse_rows + 1) */
  std::vector<double> inverse;
  PetscInt            dense = -1;
  for (PetscInt l = 0; l < levels; l++) {
    PetscInt rows;
    PetscCall(MatGetSize(mats.A[(size_t)l], &rows, nullptr));
    if (rows <= dense_coarse_rows) dense = l;
  }
  MatNullSpace                     ns;
  std::vector<std::vector<double>> basis; /* the null space KSP removes from every PCApply() result */
  PetscCall(PcNullSpace(pc, &ns));
  PetscCall(NullSpaceBasis(ns, mats.A.back(), &basis));
  const PetscInt null_dim = (PetscInt)basis.size();
  if (dense >= 0) {
    bool ok;
    if (null_dim) PetscCall(DensePseudoInverse(mats.A[(size_t)dense], null_dim, &inverse, &ok));
    else PetscCall(DenseInverse(mats.A[(size_t)dense], &inverse, &ok));
    /* the PC's coarse LU of a singular level amplifies the part of its right-hand side in the null
       space by the inverse of a pivot near rounding: from the FP32 restriction, beyond FP32's
       digits (the cycle stagnated) */
    if (!ok) {
      PetscInt rows;
      PetscCall(MatGetSize(mats.A[(size_t)dense], &rows, nullptr));
      if (null_dim >= rows)
        *refused_why = "level " + std::to_string((long long)dense) + " (" + std::to_string((long long)rows) + " rows) is no larger than the null space (" + std::to_string((long long)null_dim) + " vectors): give -ksp_mixedcg_mg_dense_coarse a size that picks a larger level";
      else
        *refused_why = "level " + std::to_string((long long)dense) + " (" + std::to_string((long long)rows) + " rows) has no dense " + (null_dim ? "pseudo-inverse (the operator's null space is not the level's)" : "inverse (its LU fails or misses A X = I by more than 1e-6: singular? a singular problem needs MatSetNullSpace())");
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    o.fp32_min_rows = (int64_t)dense_coarse_rows + 1;
  } else if (null_dim) {
    *refused_why = "the operator has a null space and no level has at most -ksp_mixedcg_mg_dense_coarse rows, whose dense pseudo-inverse the FP32 cycle needs";
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  std::unique_ptr<MgFp32> mg(new MgFp32());
  mg->device_ = device;
  mg->steps_  = steps;
  if (device) {
#if defined(PETSCSPMV_HAVE_CUDA)
    PetscCall(CreateMgDeviceCycle(mats, o, dense, dense >= 0 ? inverse.data() : nullptr, &mg->dcycle_, refused_why));
    if (refused_why->empty()) mg->info_ = mg->dcycle_->Info();
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "FP32 V-cycle on the device without CUDA");
#endif
  } else {
    std::vector<mixed::MgLevelInput> in((size_t)levels);
    if (dense >= 0) in[(size_t)dense].inverse = inverse.data();
    const auto with  = [](Mat M, const std::function<PetscErrorCode(const CsrView &)> &g) { return M ? WithCsr(M, g) : g(CsrView{}); };
    const auto store = [&in](size_t l, bool p, const CsrView &v) { (p ? in[l].P : in[l].A) = v; };
    PetscCall(WithLevelViews<CsrView>(mats, with, store, [&]() -> PetscErrorCode {
      PetscFunctionBegin;
      PetscCall(RefuseOrRaise(CatchCore([&] { mg->cycle_ = mixed::MgCycle::build(in, o); }), refused_why));
      PetscFunctionReturn(PETSC_SUCCESS);
    }));
    if (refused_why->empty()) mg->info_ = mg->cycle_.info();
  }
  if (!refused_why->empty()) PetscFunctionReturn(PETSC_SUCCESS);
  { /* the cycle removes the null space from its results too */
    if (device) {
#if defined(PETSCSPMV_HAVE_CUDA)
      PetscCallCore(PETSC_ERR_ARG_WRONG, mg->dcycle_->SetNullSpace(basis));
#endif
    } else PetscCallCore(PETSC_ERR_ARG_WRONG, mg->cycle_.set_null_space(basis));
    mg->null_vectors_ = (PetscInt)basis.size();
  }
  /* the products of one cycle: 2 m with A_l (m - 1 pre-smoothing from zero, the residual, m
     post-smoothing), one each with P_l and P_l^T */
  for (const mixed::MgLevelInfo &v : mg->info_) {
    if (v.lowp) mg->flops_ += 2.0 * (2.0 * (PetscLogDouble)steps * (PetscLogDouble)v.nnz + 2.0 * (PetscLogDouble)v.p_nnz);
    if (v.dense_inverse) mg->flops_ += 2.0 * (PetscLogDouble)v.rows * (PetscLogDouble)v.rows;
  }
  if (dense >= 0) { /* the dense inverse is the coarse solve: no coarse KSP */
    *out = std::move(mg);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PCMGGetCoarseSolve(pc, &mg->coarse_));
  PetscCall(PetscObjectReference((PetscObject)mg->coarse_));
  {
    const PetscInt nc = (PetscInt)mg->info_[0].rows;
    if (device) {
#if defined(PETSCSPMV_HAVE_CUDA)
      PetscCall(VecCreateSeqCUDAWithArrays(PETSC_COMM_SELF, 1, nc, nullptr, nullptr, &mg->cb_));
      PetscCall(VecCreateSeqCUDAWithArrays(PETSC_COMM_SELF, 1, nc, nullptr, nullptr, &mg->cx_));
#endif
    } else PetscCall(MatCreateVecs(mats.A[0], &mg->cx_, &mg->cb_));
  }
  *out = std::move(mg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

void MgFp32::Coarse(const double *b, double *x) const
{
  auto place = [this](Vec v, const double *a) {
#if defined(PETSCSPMV_HAVE_CUDA)
    if (device_) return VecCUDAPlaceArray(v, a);
#endif
    return VecPlaceArray(v, a);
  };
  auto reset = [this](Vec v) {
#if defined(PETSCSPMV_HAVE_CUDA)
    if (device_) return VecCUDAResetArray(v);
#endif
    return VecResetArray(v);
  };
  PetscErrorCode ierr;
  PetscBool      nonzero;
  PetscCallThrow(place(cb_, b));
  ierr = place(cx_, x);
  /* from a zero guess, as in PCMG's cycle (a DM's initial-guess callback, which the coarse KSP
     inherits, would mark the guess nonzero, which its KSPPREONLY refuses) */
  if (!ierr) ierr = KSPGetInitialGuessNonzero(coarse_, &nonzero);
  if (!ierr && nonzero) ierr = KSPSetInitialGuessNonzero(coarse_, PETSC_FALSE);
  if (!ierr) {
    ierr                       = KSPSolve(coarse_, cb_, cx_);
    const PetscErrorCode ierr2 = reset(cx_);
    if (!ierr) ierr = ierr2;
  }
  const PetscErrorCode ierr3 = reset(cb_);
  if (!ierr) ierr = ierr3;
  PetscCallThrow(ierr);
}

void MgFp32::Apply(const float *r, float *z) const
{
  const auto coarse = [this](const double *b, double *x) { Coarse(b, x); };
  if (!device_) {
    cycle_.apply(r, z, coarse);
    PetscCallThrow(PetscLogFlops(flops_));
    return;
  }
#if defined(PETSCSPMV_HAVE_CUDA)
  /* the cycle's kernels timed as GPU work of the current event; the coarse KSPSolve times itself */
  bool timing = false;
  auto start  = [&timing] {
    PetscCallThrow(PetscLogGpuTimeBegin());
    timing = true;
  };
  auto stop = [&timing] {
    timing = false;
    PetscCallThrow(PetscLogGpuTimeEnd());
  };
  try {
    start();
    dcycle_->Apply(r, z, [&](const double *b, double *x) {
      stop();
      Coarse(b, x);
      start();
    });
    stop();
  } catch (...) {
    if (timing) (void)PetscLogGpuTimeEnd();
    throw;
  }
  PetscCallThrow(PetscLogGpuFlops(flops_));
#endif
}

PetscErrorCode MgFp32::View(PetscViewer viewer) const
{
  PetscFunctionBegin;
  const std::vector<mixed::MgLevelInfo> &info = info_;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  FP32 V-cycle on PackSELL copies of the PC's levels (D^-1/2 A_l D^-1/2; interpolation D_l^1/2 P D_l-1^-1/2), Chebyshev + Jacobi smoothing of degree %d in FP32 (%s); the FP64 phase and the reliable updates apply the PC itself:\n", (int)steps_, device_ ? "copies built and run on the GPU" : "host"));
  for (size_t l = info.size(); l-- > 0;) {
    const mixed::MgLevelInfo &v = info[l];
    if (v.lowp)
      PetscCall(PetscViewerASCIIPrintf(viewer, "    level %d: %" PetscInt64_FMT " rows, %" PetscInt64_FMT " nonzeros, LOSSY %s, %.2f bytes per nonzero, emax %.4g; interpolation %" PetscInt64_FMT " nonzeros, %.2f bytes per nonzero (P and P^T)\n", (int)l,
                                       (PetscInt64)v.rows, (PetscInt64)v.nnz, v.value_format.c_str(), v.bytes_per_nnz, v.emax, (PetscInt64)v.p_nnz, v.p_bytes_per_nnz));
    else if (v.dense_inverse && null_vectors_)
      PetscCall(PetscViewerASCIIPrintf(viewer, "    level %d: %" PetscInt64_FMT " rows, singular: solved by its dense FP64 pseudo-inverse (no component in its null space; the levels below it unused)\n", (int)l, (PetscInt64)v.rows));
    else if (v.dense_inverse) PetscCall(PetscViewerASCIIPrintf(viewer, "    level %d: %" PetscInt64_FMT " rows, solved exactly by its dense FP64 inverse (the levels below it unused)\n", (int)l, (PetscInt64)v.rows));
    else if (l + 1 == info.size() || info[l + 1].lowp) PetscCall(PetscViewerASCIIPrintf(viewer, "    level %d: %" PetscInt64_FMT " rows, the PC's coarse solver in FP64\n", (int)l, (PetscInt64)v.rows));
  }
  if (null_vectors_) PetscCall(PetscViewerASCIIPrintf(viewer, "    the operator's null space (%" PetscInt_FMT " vector%s) removed from each cycle's result, as KSP removes it from PCApply()'s\n", null_vectors_, null_vectors_ > 1 ? "s" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
