// An FP32 multigrid V-cycle on PackSELL copies (PETSc-free host twin): the reduced-precision
// preconditioner of the mixed CG (mixed_cg.hpp, MixedCgOperators::precondition_lowp) with a
// multigrid hierarchy such as PCGAMG's, which the PETSc glue extracts and passes level by level.
// Every level's operator is a PackSELL copy of its Jacobi-scaled matrix (e8m14 by default), the
// interpolation a PackSELL copy of its scaled counterpart, the smoother Chebyshev in FP32 and the
// coarse solve the caller's, in FP64. The steps below are the ones a device twin runs: plain loops
// over a level's rows, the FP32 PackSELL product (packsell_spmv_f32), no host-only shortcut.
// Design notes: ../shared/MIXED.md ("Reduced precision inside the preconditioner").
//
// The hierarchy: levels l = 0 (coarsest) .. L-1 (finest, the Pmat); A_l square, SPD, with a
// positive diagonal D_l; P_l interpolates from level l-1 to level l (A_l.rows x A_{l-1}.rows);
// the restriction is P_l^T. The cycle is PCMG's V(m, m) cycle with Chebyshev/Jacobi smoothing of
// degree m (PETSc GAMG's default smoother, Adams, Brezina, Hu, Tuminaro 2003, "Parallel multigrid
// smoothing: polynomial versus Gauss-Seidel"; PETSc's KSPCHEBYSHEV with PCJACOBI):
//   V_l(b):  l == c: return A_c^-1 b                         (the coarse solve, c = coarse_level())
//            x = K_l(b, 0)                                   (pre-smoothing from 0)
//            x = x + P_l V_{l-1}(P_l^T (b - A_l x))          (coarse-grid correction)
//            return K_l(b, x)                                (post-smoothing)
//   M^-1 = V_{L-1}.
// K_l(b, y_0) is m steps of Chebyshev on D_l^-1 A_l over [lo, hi] = [eig_lo emax_l, eig_hi emax_l],
// emax_l the largest eigenvalue of D_l^-1 A_l: its error is y_m - A^-1 b = q(D^-1 A) (y_0 - A^-1 b)
// with the same polynomial q (q(0) = 1) for any y_0, so pre- and post-smoothing are one operator
// and its adjoint in the A-inner product, and with R = P^T the cycle's error propagation
// E = q (I - P V_{l-1} P^T A) q is A-self-adjoint: M^-1 = (I - E) A^-1 is symmetric (and positive
// definite where |q| < 1 on the spectrum and the coarse solve is SPD), as CG needs.
//
// Scaled space. With s_l = D_l^-1/2 and S_l = diag(s_l) each level runs on A_hat_l = S_l A_l S_l
// (unit diagonal, entries in [-1, 1]: the value formats hold them) with solution-like vectors
// (x, corrections) as x_hat = S^-1 x and residual-like vectors (b, r) as r_hat = S r:
//   A_l x = b            <=>  A_hat_l x_hat = b_hat              (S A S S^-1 x = S b)
//   Jacobi z = D^-1 r     <=>  z_hat = S^-1 S^2 r = r_hat        (the identity on A_hat: Chebyshev
//                                                                 without a preconditioner)
//   D^-1 A = S A_hat S^-1: the same eigenvalues as A_hat (one emax for both)
//   restriction  b_{l-1} = P^T r_l      =>  b_hat_{l-1} = S_{l-1} P^T S_l^-1 r_hat_l = P_hat_l^T r_hat_l
//   prolongation x_l += P e_{l-1}       =>  x_hat_l += S_l^-1 P S_{l-1} e_hat_{l-1} = P_hat_l e_hat_{l-1}
//   with P_hat_l = S_l^-1 P_l S_{l-1}, entries p_ij sqrt(a^l_ii) s^{l-1}_j = p_ij sqrt(a^l_ii / a^{l-1}_jj)
//   (a Galerkin A_{l-1} = P^T A_l P gives A_hat_{l-1} = P_hat^T A_hat_l P_hat: the same relation)
//   coarse level c: b = S_c^-1 b_hat (the unscaled residual), x = A_c^-1 b, x_hat = S_c^-1 x;
//   with the level's dense inverse given (MgLevelInput::inverse) in one product with
//   B = S_c^-1 A_c^-1 S_c^-1 (formed in FP64 at the build): x_hat_i = float(v_n), v_0 = 0,
//   v_{j+1} = fma(B_ji, double(b_hat_j), v_j) (B symmetric: the device reads its columns,
//   coalesced, in the same order)
//   finest level: z_hat = S^-1 M^-1 S^-1 r_hat, i.e. M_hat^-1 = D^1/2 M^-1 D^1/2, the scaled
//   preconditioner of mixed_cg.hpp; s_{L-1} is build_scaled_copy()'s s, the mixed CG's own.
// So the scaled cycle is the unscaled one in exact arithmetic; only the copies' rounding and the
// FP32 arithmetic differ.
//
// One apply(r, z) (FP32 vectors; A_lp, P_lp, R_lp the copies of A_hat_l, P_hat_l, P_hat_l^T; every
// product packsell_spmv_f32, FP32 sums):
//   b_{L-1} = r
//   down, l = L-1 .. c+1:  x_l = K_l(b_l, 0);  t = b_l - A_lp x_l;  b_{l-1} = R_lp t
//   coarse:                bc = double(b_c) ./ s_c;  coarse(bc, xc);  x_c = float(xc ./ s_c)
//   up, l = c+1 .. L-1:    x_l = x_l + P_lp x_{l-1};  x_l = K_l(b_l, x_l)
//   z = x_{L-1}
// K_l is PETSc's three-term Chebyshev recurrence (KSPSolve_Chebyshev) on A_lp, its coefficients
// formed in FP64 when the level is built and rounded to FP32 where they multiply vectors:
//   scale = 2 / (hi + lo), alpha = 1 - scale lo, mu = 1 / alpha, c_0 = 1, c_1 = mu
//   r = b - A_lp y_0 (r = b from y_0 = 0);  y_1 = y_0 + scale r
//   k = 1 .. m-1:  c_{k+1} = 2 mu c_k - c_{k-1},  omega_k = (2 / alpha) c_k / c_{k+1}
//                  r = b - A_lp y_k;  y_{k+1} = (1 - omega_k) y_{k-1} + omega_k y_k + (omega_k scale) r
//   (FP32: y_{k+1} = fma(1 - omega_k, y_{k-1}, fma(omega_k, y_k, (omega_k scale) r)))
//   result y_m.
// The restriction is a product with an explicit copy R_lp of P_hat^T (built from the transpose of
// P_hat's CSR with the same values and options), not a scatter over P_lp's entries: it is then a
// row-parallel gather product like every other one, deterministic (a device scatter needs FP32
// atomics, whose order, and so the restricted residual's rounding, changes from run to run) and
// the device twin reuses the FP32 PackSELL kernel; the price is P's words stored twice (P has a
// few nonzeros per fine row, little beside A_l's). Both copies encode the same doubles with the
// same format and scale exponent, so R_lp = P_lp^T value for value: the cycle stays symmetric up
// to FP32's summation order.
//
// emax_l when MgLevelInput::emax is 0: eig_steps steps of Lanczos on A_lp (FP32 vectors, FP64 dot
// products and norms, no reorthogonalisation) from the start vector u_i = pair_hash01(i, 2^40) -
// 1/2 (scaling.hpp: deterministic, the same on host and device), normalised; emax_l = the largest
// eigenvalue of the Lanczos tridiagonal (bisection on Sturm counts, FP64), a Ritz value just below
// A_lp's largest eigenvalue for the spectra of PDE levels (eig_hi = 1.1 is the margin, as PETSc's
// -ksp_chebyshev_esteig 0,0.1,0,1.1 with its CG/Lanczos estimate). The iteration stops early when
// the next Lanczos vector's norm falls below 1e-6 times the largest |T| entry so far (an invariant
// subspace: the Ritz values are exact).
#pragma once
#include "core/csr.hpp"
#include "formats/packsell/packsell.hpp"
#include "scaled_copy.hpp"
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pspmv
{
namespace mixed
{

// Level l of a hierarchy of L levels (0 = coarsest, L-1 = finest, the Pmat).
struct MgLevelInput {
  CsrView A;        // the level's operator, FP64 CSR, square, SPD with a positive diagonal (one rank)
  CsrView P;        // interpolation from level l-1 to level l: A.rows x (level l-1's rows); ignored for level 0 (rows == 0 there)
  double  emax = 0; // largest eigenvalue of D^-1 A when the caller knows it (PETSc's estimate); 0: estimated on the copy
  // A^-1 of the level, dense (rows x rows doubles, row-major, symmetric up to rounding), or null: read
  // only for the coarse level c, whose solve it then is (apply()'s coarse hook is not called)
  const double *inverse = nullptr;
};

// The copies' layout and value format: e8m14 (KSPMIXEDCG's default) unless the caller sets another.
PackSellOptions mg_default_level_options();

struct MgCycleOptions {
  PackSellOptions level_options = mg_default_level_options(); // the copies' layout and value format
  int             smooth_steps  = 2;                          // Chebyshev degree m, pre and post (GAMG's -mg_levels_ksp_max_it 2)
  double          eig_lo = 0.1, eig_hi = 1.1;                 // Chebyshev interval [eig_lo emax, eig_hi emax] (-mg_levels_ksp_chebyshev_esteig 0,0.1,0,1.1)
  int             eig_steps     = 10;                         // Lanczos steps of the estimate when MgLevelInput::emax is 0
  int64_t         fp32_min_rows = 0;                          // levels with fewer rows, and all below them, are the coarse solve's
};

struct MgLevelInfo {
  int64_t     rows = 0, nnz = 0;       // A_l's
  std::string value_format;            // the copy's format name; "fp64" for levels of the coarse solve
  double      bytes_per_nnz   = 0;     // the copy's stored bytes (PackSellMatrix::stats()) per nonzero of A_l; 0: not copied
  double      emax            = 0;     // the emax the smoother uses (the input's or the estimate; the input's below the FP32 levels)
  bool        lowp            = false; // the level runs in FP32 (above coarse_level())
  int64_t     p_nnz           = 0;     // P_l's nonzeros (FP32 levels)
  double      p_bytes_per_nnz = 0;     // stored bytes of the copies of P_hat_l and P_hat_l^T per nonzero of P_l
  bool        dense_inverse   = false; // the coarse level, solved by its dense inverse (MgLevelInput::inverse)
};

namespace detail
{
// What the host twin (mg_cycle.cpp) and the device twin (mg_cycle_device.cu) share.

// " (multigrid level l of L, 0 the coarsest: what)": appended to the messages of a level's errors.
std::string mg_where(int l, size_t L, const char *what);

// Runs f, re-throwing the library's errors with the level named in their message (same types,
// same rows and columns).
template <class F>
void at_level(int l, size_t L, const char *what, F &&f)
{
  try {
    f();
  } catch (const DiagonalError &e) {
    throw DiagonalError(e.row, e.value, e.problem + mg_where(l, L, what));
  } catch (const ValueRangeError &e) {
    throw ValueRangeError(e.row, e.col, e.message() + mg_where(l, L, what));
  } catch (const FormatError &e) {
    throw FormatError(std::string(e.what()) + mg_where(l, L, what));
  }
}

/* check_given_emax - FormatError naming level l unless a caller's emax is finite and >= 0. */
void check_given_emax(double emax, int l, size_t L);

/* check_levels - build()'s checks of the options (with check_packsell_options) and of the
   levels' rows and given emax (rows[l] > 0, emax[l] finite and >= 0); returns coarse_level().
   Throws FormatError as build() says. */
int check_levels(const std::vector<int64_t> &rows, const std::vector<double> &emax, const MgCycleOptions &opt);

// The copies' options of P_hat and P_hat^T (MgCycle::build()).
PackSellOptions interpolation_options(const PackSellOptions &o);

/* interpolation_shape_check - FormatError unless P (p_rows x p_cols) is A_l.rows x A_{l-1}.rows. */
void interpolation_shape_check(int64_t p_rows, int64_t p_cols, int64_t rows, int64_t rows_below, int l, size_t L);

/* interpolation_value_error - the error of P's entry p at (r, c) of level l: not finite, or its
   scaled value v = p * factor (factor = sqrt(a_rr / a^{l-1}_cc)) beyond double's range or 0. */
ValueRangeError interpolation_value_error(int32_t r, int32_t c, double p, double v, double factor, int l, size_t L);

// Chebyshev of degree m: y_1 = y_0 + scale r; step k (1 .. m-1): y_{k+1} = ca_k y_{k-1} +
// cb_k y_k + cc_k r (the header comment's recurrence, coefficients in FP64 rounded to FP32).
struct Chebyshev {
  float              scale = 0;
  std::vector<float> ca, cb, cc;
};
Chebyshev chebyshev_coefficients(double emax, const MgCycleOptions &o);

// The start vector of the Lanczos estimate, u_i = pair_hash01(i, kLanczosSeed) - 1/2.
constexpr int64_t kLanczosSeed = int64_t(1) << 40;

/* The vector steps of the Lanczos estimate (FP32 vectors v, vp, w of a level's rows; FP64 sums),
   each twin's own: start(): v = u / ||u|| (u the start vector), vp = 0; product_dot(): w = A_lp v,
   returns (w, v); orthogonalise(fa, fb): w = fma(-fa, v, fma(-fb, vp, w)) (FP32), returns ||w||;
   advance(nw): vp = v, v = float(double(w) / nw). */
struct LanczosSteps {
  std::function<void()>               start;
  std::function<double()>             product_dot;
  std::function<double(float, float)> orthogonalise;
  std::function<void(double)>         advance;
};
// emax_l by at most steps Lanczos steps (the header comment's estimate); NaN on a non-finite sum.
double lanczos_emax(int steps, const LanczosSteps &s);

/* check_emax - FormatError naming level l unless emax is positive and finite (the estimate of a
   copy that is not positive definite). */
void check_emax(double emax, int l, size_t L);

// One level's MgLevelInfo from what either twin holds: vf the copy's value format, a_bytes the
// stored bytes of A_hat's copy, p_bytes those of P_hat's and P_hat^T's (read where lowp only).
MgLevelInfo level_info(int64_t rows, int64_t nnz, bool lowp, double emax, bool dense_inverse, const ValueFormat &vf, int64_t a_bytes, int64_t p_nnz, int64_t p_bytes);

// The projection of a null space out of the finest level's z (MgCycle::set_null_space()), in
// the scaled units: w = s .* n_k and q = n_k ./ s of each basis vector n_k (k vectors of n
// entries each, stored one after the other).
struct NullSpaceWeights {
  int                 k = 0;
  std::vector<double> w, q;
};
/* null_space_weights - w and q of basis (k vectors) with the finest level's s (n entries).
   FormatError for a vector of another length than n or with an entry that is not finite. */
NullSpaceWeights null_space_weights(const std::vector<std::vector<double>> &basis, const std::vector<double> &s);

/* scaled_inverse - B = S^-1 A^-1 S^-1 (s = D^-1/2 of the level, n entries; inv = A^-1, n x n):
   b_ij = inv_ij / (s_i s_j), symmetrised (the mean of b_ij and b_ji, which a factorisation gives
   equal up to rounding). FormatError naming level l for an entry that is not finite. */
std::vector<double> scaled_inverse(const double *inv, const std::vector<double> &s, int l, size_t L);
} // namespace detail

// The V-cycle of the header comment. Copyable; apply() uses work vectors of the object, so one
// object serves one apply() at a time.
class MgCycle {
public:
  /* MgCycle::build - copies a hierarchy for the FP32 V-cycle: coarse_level() c = the highest level
     with fewer than opt.fp32_min_rows rows (0 when none), s_c = D_c^-1/2, and for every level
     l > c the scaled copy of A_l (build_scaled_copy() with opt.level_options), the copies of P_hat_l
     and P_hat_l^T (the same options, with scaling auto where the value format's exponent range is
     FP16's: P_hat's entries are not bounded by 1), emax_l (the input's, or the Lanczos estimate),
     and the Chebyshev coefficients.

     levels: L >= 1 levels as MgLevelInput says; only rows and nnz are read of levels below c, and
     of level c its diagonal. opt: smooth_steps >= 1, 0 < eig_lo < eig_hi finite, eig_steps >= 1,
     fp32_min_rows >= 0, level_options as build_packsell takes them.
     Errors: FormatError for bad options, no levels, a level without rows, a P whose shape is not
     (A_l.rows x A_{l-1}.rows), a negative or non-finite input emax, an estimate that is not
     positive and finite (A_l is not SPD), and build_scaled_copy()'s; DiagonalError and
     ValueRangeError as build_scaled_copy() (row and column in level l's A_l or P_l; the message
     names the level), ValueRangeError for an entry of P that is not finite or whose scaled value
     is beyond double's or the value format's range. O(sum of nnz) plus the PackSELL builds and
     eig_steps products per estimated level. */
  static MgCycle build(const std::vector<MgLevelInput> &levels, const MgCycleOptions &opt);

  /* update_values - the same hierarchy with new values (the same patterns): re-scales and
     re-encodes every copy (update_scaled_copy(), update_packsell_values()), re-estimates emax_l
     where the input's is 0, recomputes the Chebyshev coefficients. levels as in build(), with the
     same number of levels and rows. Errors: build()'s, and FormatError when a pattern or a size
     differs; on an error the cycle is unchanged. */
  void update_values(const std::vector<MgLevelInput> &levels);

  /* apply - z = M_hat^-1 r, one V-cycle in FP32 in the finest level's scaled units (header
     comment): r, z finest-level rows floats (they may be the same array). coarse(b, x): x = A_c^-1 b
     in FP64 on the unscaled system of level c = coarse_level() (b, x: level c's rows doubles; b
     must not be written), e.g. PETSc's coarse KSP, or an FP64 V-cycle of the levels below c; it
     is called once per apply and may throw (apply then throws it; z is undefined); not called
     (and may be empty) when the coarse level was given its inverse. */
  void apply(const float *r, float *z, const std::function<void(const double *b, double *x)> &coarse = {}) const;

  /* set_null_space - the finest level's null space, removed from every apply()'s z as KSP
     removes the operator's null space from every PCApply() result (PETSc's MatNullSpaceRemove):
     basis holds k vectors of the finest level's rows, orthonormal in the unscaled space (PETSc's
     MatNullSpace vectors, its constant given as the vector 1/sqrt(n)); apply() then ends with
     u = S z, u -= sum_k (n_k, u) n_k, z = S^-1 u, in FP64 from the FP32 z: c_k = sum_i (s_i n_ki)
     z_i for every k first, then z_i = float(z_i - sum_k c_k (n_ki / s_i)). Empty: none (the
     default). Kept by update_values() (with the new s). Errors: null_space_weights()'s; the
     cycle is then unchanged. */
  void set_null_space(const std::vector<std::vector<double>> &basis);

  // Per level, 0 = coarsest.
  std::vector<MgLevelInfo> info() const;
  // c: the level whose system coarse() solves (levels below it are the caller's alone).
  int coarse_level() const { return coarse_; }
  int num_levels() const { return int(levels_.size()); }
  // s_l = D_l^-1/2 of level l >= coarse_level() (empty below it); s_{L-1} is the mixed CG's s.
  // Throws std::out_of_range for l outside [0, L).
  const std::vector<double> &scaling(int level) const;

private:
  struct Level {
    int64_t             rows = 0, nnz = 0, p_nnz = 0;
    bool                lowp = false; // above the coarse level: copied, run in FP32
    double              emax = 0;     // the one in use
    std::vector<double> s;            // D^-1/2 of the coarse level (lowp levels: A.s)
    std::vector<double> B;            // the coarse level's S^-1 A^-1 S^-1 when its inverse was given (rows x rows)
    ScaledCopy          A;            // A_hat (lowp)
    PackSellMatrix      P, R;         // P_hat and P_hat^T (lowp)
    detail::Chebyshev   cheb;
    // work vectors (rows floats): right-hand side, solution, two Chebyshev iterates, residual
    mutable std::vector<float> b, x, y1, y2, t;
  };

  void                smooth(const Level &L, const float *b, float *x, bool zero) const;
  void                setup_level(Level &L, int l, const std::vector<MgLevelInput> &in, const Level *below, bool fresh);
  double              estimate_emax(const Level &L) const;
  std::vector<double> scaled_interpolation(const CsrView &P, const std::vector<double> &sf, const std::vector<double> &sc, int l) const;

  MgCycleOptions                   opt_;
  detail::NullSpaceWeights         null_;       // set_null_space()'s, from the finest level's s
  std::vector<std::vector<double>> null_basis_; // its basis (update_values() forms null_ with the new s)
  int                              coarse_ = 0;
  std::vector<Level>               levels_;
  mutable std::vector<double>      cb_, cx_; // the coarse solve's b and x
};

} // namespace mixed
} // namespace pspmv
