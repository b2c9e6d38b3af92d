static const char help[] = "Times MatMult of one matrix in several Mat types, at any number of ranks (bench/scaling/scaling.sh).\n\
Matrix (one of), assembled once as AIJ and converted to every format:\n\
  -f <file>              PETSc binary matrix\n\
  -lap7 <n>              3-D 7-point Laplacian on an n^3 grid (Dirichlet; as tutorials/ex2)\n\
  -lap27 <n>             3-D 27-point Laplacian on an n^3 grid\n\
  -powerlaw <rows>       irregular SPD matrix: B with power-law row lengths (Pareto, -powerlaw_alpha <2.5>,\n\
                         mean -powerlaw_avg <8> per row, random columns, seed -powerlaw_seed <7>), A = B + B^T\n\
                         with values -[0.5, 1.5] and the diagonal sum|row| + 1 (strictly diagonally dominant)\n\
  -name <name>           the matrix name in the output (default: the file name or lap7_<n>, lap27_<n>, powerlaw_<rows>)\n\
  -save <file>           write the assembled AIJ matrix to a PETSc binary file (then exit unless -formats is given)\n\
Formats:\n\
  -formats <list>        comma-separated TYPE or TYPE:VALUEFORMAT (packsell/packsellcuda), e.g.\n\
                         aijcusparse,rgcsrcuda,packsellcuda,packsellcuda:e8m14 (default: -mat_type, else aij)\n\
Conversion (per format): -convert_from <type> converts the source to <type> first (e.g. aijcusparse: one MatMult\n\
  brings its device copy up to date) and every format from that matrix; -convert_repeat <3> timed conversions\n\
  after an untimed one, each MatConvert() plus the first MatMult into CUDA or host vectors of the format and a\n\
  VecNorm of y (lazy types build or upload at their first product), minus the format's median product time:\n\
  convert_s (median), convert_min_s; each timed conversion runs in the -log_view stage \"Convert:<format>\".\n\
Timing (per format): -warmup <10> untimed products, then -repeat <5> timings of -n_mult <100> products each,\n\
  between a barrier and a VecNorm of y (a reduction: waits for the device); the per-product time is the\n\
  max over ranks; the median over the repeats is reported. The same loop on the rank's diagonal block\n\
  (MatMPIAIJGetSeqAIJ, seq vectors; 1 rank: the whole matrix, not timed again) gives diag_time_s.\n\
  Each timed loop runs in its own -log_view stage, \"Timed:<format>\" and \"Diag:<format>\".\n\
  -report_devices        print per rank its host and CUDA device (tutorials/report_devices.h)\n\
One machine-readable line per format:\n\
  matmult_bench matrix=<name> format=<token> type=<MatType> ranks=<p> rows=<m> nnz=<nnz> n_mult=<N> repeat=<R>\n\
  time_s=<median> time_min_s=<min> time_max_s=<max> diag_time_s=<median> halo_entries=<sum over ranks of the\n\
  off-diagonal block's columns> max_local_rows=<rows> error=<||y - y_aij||_inf / ||y_aij||_inf>\n\
  convert_from=<type> convert_s=<median> convert_min_s=<min>\n\n";

#include <petscmat.h>
#include <petscspmv.h>
#include <petsctime.h>
#include "laplacian3d.h"
#include "report_devices.h"

#include <stdint.h>

#define MAX_FORMATS 16

static uint64_t SplitMix64(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
static double Unit(uint64_t h)
{
  return (double)(h >> 11) * (1.0 / 9007199254740992.0);
} /* [0, 1) */

/* Row r of B: its length (Pareto, scaled so that the mean is avg) and its k-th column and value. */
typedef struct {
  PetscInt rows;
  double   scale, alpha;
  uint64_t seed;
} PowerLaw;

static double PowerLawRaw(const PowerLaw *p, PetscInt r)
{
  const double u = 1.0 - Unit(SplitMix64(p->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)r)); /* (0, 1] */
  return pow(u, -1.0 / (p->alpha - 1.0));
}
static PetscInt PowerLawLength(const PowerLaw *p, PetscInt r)
{
  double l = PetscFloorReal(p->scale * PowerLawRaw(p, r) + 0.5);
  if (l < 1) l = 1;
  if (l > (double)(p->rows - 1)) l = (double)(p->rows - 1);
  return (PetscInt)l;
}
static void PowerLawEntry(const PowerLaw *p, PetscInt r, PetscInt k, PetscInt *col, PetscScalar *val)
{
  const uint64_t h = SplitMix64((p->seed + 0x632be59bd9b4e019ULL) ^ SplitMix64(((uint64_t)r << 24) ^ (uint64_t)k));
  PetscInt       c = (PetscInt)(h % (uint64_t)(p->rows - 1));
  if (c >= r) c++; /* no self loop */
  *col = c;
  *val = -(0.5 + Unit(SplitMix64(h)));
}

static int CompareEntry(const void *a, const void *b)
{
  const PetscInt x = ((const PetscInt *)a)[0], y = ((const PetscInt *)b)[0];
  return x < y ? -1 : x > y;
}

/* A = B + B^T + D. Every rank walks all of B (deterministic in (seed, row, k)), keeps the entries
   that land in its rows (B's own rows and B's transposed entries), so the matrix is the same at any
   number of ranks and the assembly needs no off-process values. */
static PetscErrorCode PowerLawMatrix(PetscInt rows, double avg, double alpha, PetscInt seed, Mat A)
{
  PowerLaw     p = {rows, 1.0, alpha, (uint64_t)seed};
  PetscInt     lo, hi, nloc, *cnt, *ptr, *dnz, *onz, maxlen = 0;
  PetscInt    *pairs; /* (column, index into vals) per entry, sorted per row */
  PetscScalar *vals;
  double       sum = 0;

  PetscFunctionBeginUser;
  PetscCheck(rows >= 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-powerlaw needs at least 2 rows");
  PetscCheck(avg >= 1 && alpha > 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-powerlaw_avg must be >= 1 and -powerlaw_alpha > 1");
  for (PetscInt r = 0; r < rows; r++) sum += PowerLawRaw(&p, r);
  p.scale = avg * (double)rows / sum;
  { /* PETSc's default split (the one MatLoad of a saved copy uses too) */
    PetscInt N = rows;
    nloc       = PETSC_DECIDE;
    PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &nloc, &N));
    PetscCallMPI(MPI_Scan(&nloc, &hi, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    lo = hi - nloc;
  }
  PetscCall(MatSetSizes(A, nloc, nloc, rows, rows));
  PetscCall(PetscCalloc2(nloc + 1, &cnt, nloc + 1, &ptr));
  for (PetscInt r = 0; r < rows; r++) { /* pass 1: counts */
    const PetscInt len = PowerLawLength(&p, r);
    for (PetscInt k = 0; k < len; k++) {
      PetscInt    c;
      PetscScalar v;
      PowerLawEntry(&p, r, k, &c, &v);
      if (r >= lo && r < hi) cnt[r - lo]++;
      if (c >= lo && c < hi) cnt[c - lo]++;
    }
  }
  for (PetscInt i = 0; i < nloc; i++) ptr[i + 1] = ptr[i] + cnt[i] + 1; /* + the diagonal */
  PetscCall(PetscMalloc2(2 * ptr[nloc], &pairs, ptr[nloc], &vals));
  for (PetscInt i = 0; i < nloc; i++) cnt[i] = ptr[i];
  for (PetscInt r = 0; r < rows; r++) { /* pass 2: entries */
    const PetscInt len = PowerLawLength(&p, r);
    for (PetscInt k = 0; k < len; k++) {
      PetscInt    c;
      PetscScalar v;
      PowerLawEntry(&p, r, k, &c, &v);
      if (r >= lo && r < hi) {
        PetscInt e       = cnt[r - lo]++;
        pairs[2 * e]     = c;
        pairs[2 * e + 1] = e;
        vals[e]          = v;
      }
      if (c >= lo && c < hi) {
        PetscInt e       = cnt[c - lo]++;
        pairs[2 * e]     = r;
        pairs[2 * e + 1] = e;
        vals[e]          = v;
      }
    }
  }
  PetscCall(PetscMalloc2(nloc, &dnz, nloc, &onz));
  { /* per row: sort, merge duplicates (sum), insert the diagonal sum|row| + 1; the merged row goes
       back to pairs/vals from slot ptr[i] on (it has at most the row's ptr[i+1] - ptr[i] slots; that
       range is free: it lies in this row's or earlier rows' already read (column, index) pairs) */
    PetscInt    *cols;
    PetscScalar *rv;
    PetscCall(PetscMalloc2(rows, &cols, rows, &rv)); /* a row has at most rows entries */
    for (PetscInt i = 0; i < nloc; i++) {
      const PetscInt b = ptr[i], len = cnt[i] - ptr[i], row = lo + i;
      PetscInt       mm = 0, d = 0, o = 0, pos;
      PetscReal      asum = 0;
      qsort(pairs + 2 * b, (size_t)len, 2 * sizeof(PetscInt), CompareEntry);
      for (PetscInt k = 0; k < len; k++) {
        const PetscInt    c = pairs[2 * (b + k)];
        const PetscScalar v = vals[pairs[2 * (b + k) + 1]];
        if (mm && cols[mm - 1] == c) rv[mm - 1] += v;
        else {
          cols[mm] = c;
          rv[mm++] = v;
        }
      }
      for (PetscInt k = 0; k < mm; k++) asum += PetscAbsScalar(rv[k]);
      for (pos = mm; pos > 0 && cols[pos - 1] > row; pos--) { /* no self loops: row is not in cols */
        cols[pos] = cols[pos - 1];
        rv[pos]   = rv[pos - 1];
      }
      cols[pos] = row;
      rv[pos]   = asum + 1.0;
      mm++;
      for (PetscInt k = 0; k < mm; k++) {
        if (cols[k] >= lo && cols[k] < hi) d++;
        else o++;
        pairs[b + k] = cols[k];
        vals[b + k]  = rv[k];
      }
      dnz[i] = d;
      onz[i] = o;
      maxlen = PetscMax(maxlen, mm);
      cnt[i] = mm;
    }
    PetscCall(PetscFree2(cols, rv));
  }
  PetscCall(MatSeqAIJSetPreallocation(A, 0, dnz));
  PetscCall(MatMPIAIJSetPreallocation(A, 0, dnz, 0, onz));
  for (PetscInt i = 0; i < nloc; i++) {
    const PetscInt row = lo + i;
    PetscCall(MatSetValues(A, 1, &row, cnt[i], pairs + ptr[i], vals + ptr[i], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(PetscFree2(pairs, vals));
  PetscCall(PetscFree2(cnt, ptr));
  PetscCall(PetscInfo(A, "power-law matrix: longest local row %" PetscInt_FMT "\n", maxlen));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int CompareDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* times[k] = per-product time of repeat k: n products of M x -> y between a barrier (of comm)
   and VecNorm(y) (waits for the device), the max over the ranks of comm_max. */
static PetscErrorCode TimeLoop(Mat M, Vec x, Vec y, PetscInt warmup, PetscInt repeat, PetscInt n, MPI_Comm comm_max, double *times)
{
  PetscReal nrm;

  PetscFunctionBeginUser;
  for (PetscInt k = 0; k < warmup; k++) PetscCall(MatMult(M, x, y));
  PetscCall(VecNorm(y, NORM_2, &nrm));
  for (PetscInt r = 0; r < repeat; r++) {
    PetscLogDouble t0, t1;
    double         t, tmax;
    PetscCallMPI(MPI_Barrier(comm_max));
    PetscCall(PetscTime(&t0));
    for (PetscInt k = 0; k < n; k++) PetscCall(MatMult(M, x, y));
    PetscCall(VecNorm(y, NORM_2, &nrm));
    PetscCall(PetscTime(&t1));
    t = (double)(t1 - t0) / (double)n;
    PetscCallMPI(MPIU_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm_max));
    times[r] = tmax;
  }
  qsort(times, (size_t)repeat, sizeof(double), CompareDouble);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FillX(Vec x)
{
  PetscScalar *xa;
  PetscInt     lo, hi;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(x, &lo, &hi));
  PetscCall(VecGetArrayWrite(x, &xa));
  for (PetscInt i = lo; i < hi; i++) {
    const uint64_t h = SplitMix64(0xd1b54a32d192ed03ULL * 7 + (uint64_t)i);
    xa[i - lo]       = (0.25 + 0.75 * Unit(h)) * ((h & 1) ? -1.0 : 1.0);
  }
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B = A converted to the format token "TYPE[:VALUEFORMAT]"; the options go through a per-format
   prefix (as bench/spmv/petsc_formats.cpp does), so a command-line -mat_packsell_value_format does not
   leak into the other formats; packsell without a value format is "exact". */
static PetscErrorCode ConvertTo(Mat A, const char *token, PetscInt k, Mat *B)
{
  char      type[64], vf[32] = "", prefix[32], name[96];
  char     *colon;
  PetscBool packsell;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(type, token, sizeof(type)));
  PetscCall(PetscStrchr(type, ':', &colon));
  if (colon) {
    *colon = 0;
    PetscCall(PetscStrncpy(vf, colon + 1, sizeof(vf)));
  }
  PetscCall(PetscStrbeginswith(type, "packsell", &packsell));
  PetscCheck(packsell || !vf[0], PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "format %s: a value format is only for packsell and packsellcuda", token);
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "mmb%" PetscInt_FMT "_", k));
  PetscCall(PetscSNPrintf(name, sizeof(name), "-%smat_packsell_value_format", prefix));
  if (packsell) PetscCall(PetscOptionsSetValue(NULL, name, vf[0] ? vf : "exact"));
  PetscCall(MatSetOptionsPrefix(A, prefix));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, B));
  PetscCall(MatSetOptionsPrefix(A, NULL));
  PetscCall(MatSetOptionsPrefix(*B, prefix));
  PetscCall(MatSetFromOptions(*B));
  if (packsell) PetscCall(PetscOptionsClearValue(NULL, name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* times[k] = the time of MatConvert(S -> token) plus one MatMult(B, x, y) and VecNorm(y), max over
   the ranks, for k < repeat (sorted), after one untimed conversion; *B: the last conversion, x and
   y: vectors of B (x a copy of x0). */
static PetscErrorCode TimeConvert(Mat S, const char *token, PetscInt k, PetscInt repeat, Vec x0, double *times, Mat *B, Vec *x, Vec *y)
{
  PetscLogStage stage;
  char          sname[128];
  PetscReal     nrm;

  PetscFunctionBeginUser;
  PetscCall(ConvertTo(S, token, k, B));
  PetscCall(MatCreateVecs(*B, x, y));
  PetscCall(VecCopy(x0, *x));
  PetscCall(MatMult(*B, *x, *y));
  PetscCall(VecNorm(*y, NORM_2, &nrm));
  PetscCall(PetscSNPrintf(sname, sizeof(sname), "Convert:%s", token));
  PetscCall(PetscLogStageRegister(sname, &stage));
  for (PetscInt r = 0; r < repeat; r++) {
    PetscLogDouble t0, t1;
    double         t;
    PetscCall(MatDestroy(B));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscLogStagePush(stage));
    PetscCall(PetscTime(&t0));
    PetscCall(ConvertTo(S, token, k, B));
    PetscCall(MatMult(*B, *x, *y));
    PetscCall(VecNorm(*y, NORM_2, &nrm));
    PetscCall(PetscTime(&t1));
    PetscCall(PetscLogStagePop());
    t = (double)(t1 - t0);
    PetscCallMPI(MPIU_Allreduce(&t, &times[r], 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  }
  qsort(times, (size_t)repeat, sizeof(double), CompareDouble);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        file[PETSC_MAX_PATH_LEN] = "", save[PETSC_MAX_PATH_LEN] = "", mname[128] = "", mattype[64] = "aij", from[64] = "aij", *formats[MAX_FORMATS];
  PetscInt    nformats = MAX_FORMATS, n = 0, plrows = 0, plseed = 7, nmult = 100, repeat = 5, warmup = 10, crepeat = 3;
  PetscReal   plavg = 8, plalpha = 2.5;
  PetscBool   hasfile, lap7, lap27, pl, hassave, hasformats, report = PETSC_FALSE;
  PetscMPIInt size;
  Mat         A, S;
  Vec         x, yref;
  PetscInt    m;
  MatInfo     info;
  double     *times, *dtimes, *ctimes;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-lap7", &n, &lap7));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-lap27", &n, &lap27));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-powerlaw", &plrows, &pl));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-powerlaw_avg", &plavg, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-powerlaw_alpha", &plalpha, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-powerlaw_seed", &plseed, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-save", save, sizeof(save), &hassave));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n_mult", &nmult, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-repeat", &repeat, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-warmup", &warmup, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-convert_repeat", &crepeat, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-convert_from", from, sizeof(from), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-report_devices", &report, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", mattype, sizeof(mattype), NULL));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-formats", formats, &nformats, &hasformats));
  PetscCheck(hasfile + lap7 + lap27 + pl == 1, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "Give exactly one matrix: -f <file>, -lap7 <n>, -lap27 <n> or -powerlaw <rows>");
  PetscCheck(hasfile || pl || n >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "The grid size n must be at least 1");
  PetscCheck(nmult >= 1 && repeat >= 1 && warmup >= 0 && crepeat >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n_mult, -repeat and -convert_repeat must be at least 1, -warmup at least 0");
  if (!hasformats) {
    nformats = (hassave) ? 0 : 1;
    if (nformats) PetscCall(PetscStrallocpy(mattype, &formats[0]));
  }

  /* the source: plain AIJ (no MatSetFromOptions: -mat_type names a format, not the source) */
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetType(A, MATAIJ));
  if (hasfile) {
    PetscViewer viewer;
    const char *base;
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, file, FILE_MODE_READ, &viewer));
    PetscCall(MatLoad(A, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
    PetscCall(PetscStrrchr(file, '/', (char **)&base));
    PetscCall(PetscStrncpy(mname, base, sizeof(mname)));
  } else if (pl) {
    PetscCall(PowerLawMatrix(plrows, (double)plavg, (double)plalpha, plseed, A));
    PetscCall(PetscSNPrintf(mname, sizeof(mname), "powerlaw_%" PetscInt_FMT, plrows));
  } else {
    PetscCall(Laplacian(n, lap27, PETSC_FALSE, A)); /* tutorials/laplacian3d.h */
    PetscCall(PetscSNPrintf(mname, sizeof(mname), "%s_%" PetscInt_FMT, lap27 ? "lap27" : "lap7", n));
  }
  PetscCall(PetscOptionsGetString(NULL, NULL, "-name", mname, sizeof(mname), NULL));
  PetscCall(MatGetSize(A, &m, NULL));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matrix %s: %" PetscInt_FMT " rows, %.0f nonzeros, %d ranks\n", mname, m, info.nz_used, size));
  if (hassave) {
    PetscViewer viewer;
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, save, FILE_MODE_WRITE, &viewer));
    PetscCall(MatView(A, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "saved %s\n", save));
  }
  PetscCall(MatCreateVecs(A, &x, &yref));
  PetscCall(FillX(x));
  PetscCall(MatMult(A, x, yref));
  PetscCall(PetscMalloc3(repeat, &times, repeat, &dtimes, crepeat, &ctimes));
  { /* the matrix every format is converted from */
    PetscBool aij;
    PetscCall(PetscStrcmp(from, MATAIJ, &aij));
    if (aij) PetscCall(PetscObjectReference((PetscObject)A));
    if (aij) S = A;
    else {
      Vec xs, ys;
      PetscCall(MatConvert(A, from, MAT_INITIAL_MATRIX, &S));
      PetscCall(MatCreateVecs(S, &xs, &ys));
      PetscCall(VecCopy(x, xs));
      PetscCall(MatMult(S, xs, ys)); /* its device copy (where it has one) up to date */
      PetscCall(VecDestroy(&xs));
      PetscCall(VecDestroy(&ys));
    }
  }

  for (PetscInt f = 0; f < nformats; f++) {
    Mat           B, Bd = NULL;
    Vec           xb, yb;
    MatType       bt;
    PetscLogStage stage, dstage;
    char          sname[128];
    PetscReal     err, ynorm;
    PetscInt      halo = 0, nloc, maxloc;
    double        dmed;

    PetscCall(TimeConvert(S, formats[f], f, crepeat, x, ctimes, &B, &xb, &yb)); /* B's first product done */
    PetscCall(MatGetType(B, &bt));
    if (report && f == 0) PetscCall(ReportDevices(xb));
    PetscCall(VecAXPY(yb, -1.0, yref));
    PetscCall(VecNorm(yb, NORM_INFINITY, &err));
    PetscCall(VecNorm(yref, NORM_INFINITY, &ynorm));
    err = ynorm > 0 ? err / ynorm : err;

    PetscCall(PetscSNPrintf(sname, sizeof(sname), "Timed:%s", formats[f]));
    PetscCall(PetscLogStageRegister(sname, &stage));
    PetscCall(PetscLogStagePush(stage));
    PetscCall(TimeLoop(B, xb, yb, warmup, repeat, nmult, PETSC_COMM_WORLD, times));
    PetscCall(PetscLogStagePop());

    PetscCall(MatGetLocalSize(B, &nloc, NULL));
    PetscCallMPI(MPIU_Allreduce(&nloc, &maxloc, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
    if (size > 1) {
      Mat      Ao;
      Vec      xd, yd;
      PetscInt ncols;
      PetscCall(MatMPIAIJGetSeqAIJ(B, &Bd, &Ao, NULL));
      PetscCall(MatGetSize(Ao, NULL, &ncols));
      PetscCallMPI(MPIU_Allreduce(&ncols, &halo, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
      PetscCall(MatCreateVecs(Bd, &xd, &yd));
      PetscCall(VecSet(xd, 1.0));
      PetscCall(PetscSNPrintf(sname, sizeof(sname), "Diag:%s", formats[f]));
      PetscCall(PetscLogStageRegister(sname, &dstage));
      PetscCall(PetscLogStagePush(dstage));
      PetscCall(TimeLoop(Bd, xd, yd, warmup, repeat, nmult, PETSC_COMM_WORLD, dtimes));
      PetscCall(PetscLogStagePop());
      dmed = dtimes[repeat / 2];
      PetscCall(VecDestroy(&xd));
      PetscCall(VecDestroy(&yd));
    } else dmed = times[repeat / 2];

    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matmult_bench matrix=%s format=%s type=%s ranks=%d rows=%" PetscInt_FMT " nnz=%.0f n_mult=%" PetscInt_FMT " repeat=%" PetscInt_FMT " time_s=%.6e time_min_s=%.6e time_max_s=%.6e diag_time_s=%.6e halo_entries=%" PetscInt_FMT " max_local_rows=%" PetscInt_FMT " error=%.3e convert_from=%s convert_s=%.6e convert_min_s=%.6e\n", mname, formats[f], bt, size, m,
                          info.nz_used, nmult, repeat, times[repeat / 2], times[0], times[repeat - 1], dmed, halo, maxloc, (double)err, from, ctimes[crepeat / 2] - times[repeat / 2], ctimes[0] - times[repeat / 2]));
    PetscCall(VecDestroy(&xb));
    PetscCall(VecDestroy(&yb));
    PetscCall(MatDestroy(&B));
  }

  for (PetscInt f = 0; f < nformats; f++) PetscCall(PetscFree(formats[f]));
  PetscCall(PetscFree3(times, dtimes, ctimes));
  PetscCall(MatDestroy(&S));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&yref));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
