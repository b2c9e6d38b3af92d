static const char help[] = "Every PETSc Mat operation on the petscspmv types against the same operation on AIJ.\n\
For each family and format option (RgCSR group size 64; PackSELL value format exact and e8m14) the\n\
same matrices (nonsymmetric with an empty row, a long row with explicit zeros and missing diagonal\n\
entries; SPD; nonsymmetric nonsingular; rectangular) are built as AIJ and as the type (MatConvert,\n\
and MatSetType + MatSetValues), each operation is applied to both, results are compared, matrices\n\
created from ours must be ours with the source's options or AIJ, and after every value change\n\
MatMult on ours must equal AIJ's. One line per operation: op <name>: ok|FAIL|error|refused. The\n\
operations come in groups, one source each (matops_<group>_test.c).\n\
  -types <t1,t2,...>   families: rgcsr, packsell, rgcsrcuda, packsellcuda (required)\n\
  -op_groups <g1,...>  run only these groups: products, queries, assembly, values, structure,\n\
                       factor, view (default all)\n\
  -ops <o1,o2,...>     run only these operations (names as printed)\n\
  -skip_ops <o1,...>   skip these operations\n\
  -builds <b1,...>     convert, set (default both)\n\
  -configs <c1,...>    g64 (RgCSR), exact, e8m14 (PackSELL) (default all that apply)\n\
  -n <n>               rows (default 120)\n\
  -list                print the operation names (of the groups -op_groups selects) and exit\n\
  -traceback           print the traceback of an operation's error on stderr\n";

#include "matops_util.h"

#define MAXTYPES 8

/* Operations our types refuse with a clear PETSc error, documented in docs/mat-operations.md
   ("refused"). An operation listed here passes when it raises an error; it still fails when it
   gives a wrong result. Keep in sync with the table. */
static const char *const kRefused[] = {NULL};

/* The groups of operations in the order they run (matops_util.h). */
typedef struct {
  const char *name;
  const Op   *ops;
} Group;
static const Group kGroups[] = {
  {"products", kOpsProducts}, {"queries", kOpsQueries}, {"assembly", kOpsAssembly}, {"values", kOpsValues}, {"structure", kOpsStructure}, {"factor", kOpsFactor}, {"view", kOpsView},
};
#define NGROUPS (sizeof(kGroups) / sizeof(kGroups[0]))

static PetscBool InList(const char *name, char **list, PetscInt n)
{
  for (PetscInt i = 0; i < n; i++)
    if (!strcmp(name, list[i])) return PETSC_TRUE;
  return PETSC_FALSE;
}

static PetscBool Refused(const char *name)
{
  for (int i = 0; kRefused[i]; i++)
    if (!strcmp(kRefused[i], name)) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Runs one operation with errors returned instead of aborting; prints its line. */
static PetscErrorCode RunOp(Ctx *c, const Op *op, PetscInt *nfail, PetscInt *nerr, PetscInt *nref)
{
  PetscErrorCode ierr;
  int            code, maxcode, who, root;
  char           msg[1024] = "";

  PetscFunctionBegin;
  c->failmsg[0] = 0;
  c->note[0]    = 0;
  PetscCall(PetscPushErrorHandler(c->traceback ? PetscTraceBackErrorHandler : PetscReturnErrorHandler, NULL));
  ierr = op->fn(c);
  PetscCall(PetscPopErrorHandler());
  code = (int)ierr;
  PetscCallMPI(MPIU_Allreduce(&code, &maxcode, 1, MPI_INT, MPI_MAX, c->comm));
  /* the message of the lowest rank with a failure or an error */
  who = code ? (int)c->rank : (int)c->size;
  PetscCallMPI(MPIU_Allreduce(&who, &root, 1, MPI_INT, MPI_MIN, c->comm));
  if (root < c->size) {
    if ((int)c->rank == root) {
      if (code == (int)TEST_FAIL) PetscCall(PetscStrncpy(msg, c->failmsg, sizeof(msg)));
      else {
        PetscSpMVErrorText s = NULL;
        PetscCall(PetscErrorMessage(ierr, NULL, &s));
        PetscCall(PetscStrncpy(msg, s ? s : "", sizeof(msg)));
      }
      for (char *p = msg; *p; p++)
        if (*p == '\n') *p = ' ';
    }
    PetscCallMPI(MPI_Bcast(msg, sizeof(msg), MPI_CHAR, root, c->comm));
    PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, root, c->comm));
  }
  if (!maxcode) PetscCall(PetscPrintf(c->comm, "op %s: ok%s%s%s\n", op->name, c->note[0] ? " (" : "", c->note, c->note[0] ? ")" : ""));
  else if (code == (int)TEST_FAIL) {
    (*nfail)++;
    PetscCall(PetscPrintf(c->comm, "op %s: FAIL (%s)\n", op->name, msg));
  } else if (Refused(op->name)) {
    (*nref)++;
    PetscCall(PetscPrintf(c->comm, "op %s: refused (documented) error %d (%s)\n", op->name, code, msg));
  } else {
    (*nerr)++;
    PetscCall(PetscPrintf(c->comm, "op %s: error %d (%s)\n", op->name, code, msg));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     *types[MAXTYPES], *ops[128], *skip[128], *builds[4], *configs[8], *groups[NGROUPS];
  PetscInt  ntypes = MAXTYPES, nops = 128, nskip = 128, nbuilds = 4, nconfigs = 8, ngroups = NGROUPS, n = 120;
  PetscInt  nfail = 0, nerr = 0, nref = 0, nrun = 0;
  PetscBool flg, hasops, hasskip, hasbuilds, hasconfigs, hasgroups, list = PETSC_FALSE;
  Ctx       c;
  char      failed[4096] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscSpMVInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-op_groups", groups, &ngroups, &hasgroups));
  if (!hasgroups) ngroups = 0;
  for (PetscInt k = 0; k < ngroups; k++) {
    PetscBool known = PETSC_FALSE;
    for (size_t g = 0; g < NGROUPS; g++) known = (PetscBool)(known || !strcmp(kGroups[g].name, groups[k]));
    PetscCheck(known, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown operation group %s: use products, queries, assembly, values, structure, factor or view", groups[k]);
  }
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-list", &list, NULL));
  if (list) {
    for (size_t g = 0; g < NGROUPS; g++)
      if (!ngroups || InList(kGroups[g].name, groups, ngroups))
        for (const Op *op = kGroups[g].ops; op->name; op++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", op->name));
    for (PetscInt k = 0; k < ngroups; k++) PetscCall(PetscFree(groups[k]));
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  PetscCheck(flg && ntypes > 0, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "give the families with -types rgcsr,packsell,...");
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-ops", ops, &nops, &hasops));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-skip_ops", skip, &nskip, &hasskip));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-builds", builds, &nbuilds, &hasbuilds));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-configs", configs, &nconfigs, &hasconfigs));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  if (!hasops) nops = 0;
  if (!hasskip) nskip = 0;
  for (PetscInt k = 0; k < nops; k++) {
    PetscBool known = PETSC_FALSE;
    for (size_t g = 0; g < NGROUPS; g++)
      for (const Op *op = kGroups[g].ops; op->name; op++) known = (PetscBool)(known || !strcmp(op->name, ops[k]));
    PetscCheck(known, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "unknown operation %s (see -list)", ops[k]);
  }
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.comm = PETSC_COMM_WORLD;
  c.n    = n;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-traceback", &c.traceback, NULL));
  PetscCallMPI(MPI_Comm_size(c.comm, &c.size));
  PetscCallMPI(MPI_Comm_rank(c.comm, &c.rank));
  for (PetscInt t = 0; t < ntypes; t++) {
    const char *cfgs[2];
    int         ncfg = 0;
    c.family         = types[t];
    c.rgcsr          = strstr(types[t], "rgcsr") ? PETSC_TRUE : PETSC_FALSE;
    c.packsell       = strstr(types[t], "packsell") ? PETSC_TRUE : PETSC_FALSE;
    PetscCheck(c.rgcsr || c.packsell, c.comm, PETSC_ERR_USER_INPUT, "unknown family %s", types[t]);
    {
      /* the seq and mpi type names, as the library gives them */
      Mat     M;
      MatType tn;
      PetscCall(MatCreate(PETSC_COMM_SELF, &M));
      PetscCall(MatSetType(M, types[t]));
      PetscCall(MatGetType(M, &tn));
      PetscCall(PetscStrncpy(c.seqname, tn, sizeof(c.seqname)));
      PetscCall(MatDestroy(&M));
      c.mpiname[0] = 0;
      if (c.size > 1) {
        PetscCall(MatCreate(c.comm, &M));
        PetscCall(MatSetType(M, types[t]));
        PetscCall(MatGetType(M, &tn));
        PetscCall(PetscStrncpy(c.mpiname, tn, sizeof(c.mpiname)));
        PetscCall(MatDestroy(&M));
      }
    }
    if (c.rgcsr) cfgs[ncfg++] = "g64";
    else {
      cfgs[ncfg++] = "exact";
      cfgs[ncfg++] = "e8m14";
    }
    for (int f = 0; f < ncfg; f++) {
      if (hasconfigs && !InList(cfgs[f], configs, nconfigs)) continue;
      c.config     = cfgs[f];
      c.lossy      = (PetscBool)(c.packsell && strcmp(cfgs[f], "exact"));
      c.tol_shadow = c.lossy ? 1e-3 : 1e-13;
      for (int b = 0; b < 2; b++) {
        const char *bname = b ? "set" : "convert";
        if (hasbuilds && !InList(bname, builds, nbuilds)) continue;
        c.viaset = (PetscBool)b;
        PetscCall(PetscPrintf(c.comm, "== %s, %s %s, built by %s, %d rank(s)\n", c.family, c.rgcsr ? "group size" : "value format", c.rgcsr ? "64" : c.config, b ? "MatSetType + MatSetValues" : "MatConvert", (int)c.size));
        for (size_t g = 0; g < NGROUPS; g++) {
          if (ngroups && !InList(kGroups[g].name, groups, ngroups)) continue;
          for (const Op *op = kGroups[g].ops; op->name; op++) {
            PetscInt before = nfail + nerr;
            if (nops && !InList(op->name, ops, nops)) continue;
            if (InList(op->name, skip, nskip)) continue;
            PetscCall(RunOp(&c, op, &nfail, &nerr, &nref));
            nrun++;
            if (nfail + nerr > before && strlen(failed) + 200 < sizeof(failed)) {
              char item[200];
              PetscCall(PetscSNPrintf(item, sizeof(item), " %s[%s %s %s]", op->name, c.family, c.config, bname));
              PetscCall(PetscStrlcat(failed, item, sizeof(failed)));
            }
          }
        }
      }
    }
  }
  PetscCall(PetscPrintf(c.comm, "summary: %" PetscInt_FMT " operation runs, %" PetscInt_FMT " FAIL, %" PetscInt_FMT " unexpected errors, %" PetscInt_FMT " documented refusals%s%s\n", nrun, nfail, nerr, nref, failed[0] ? "; failing:" : "", failed));
  if (!nfail && !nerr) PetscCall(PetscPrintf(c.comm, "PASS\n"));
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  for (PetscInt k = 0; k < nops; k++) PetscCall(PetscFree(ops[k]));
  for (PetscInt k = 0; k < nskip; k++) PetscCall(PetscFree(skip[k]));
  for (PetscInt k = 0; k < ngroups; k++) PetscCall(PetscFree(groups[k]));
  if (hasbuilds)
    for (PetscInt k = 0; k < nbuilds; k++) PetscCall(PetscFree(builds[k]));
  if (hasconfigs)
    for (PetscInt k = 0; k < nconfigs; k++) PetscCall(PetscFree(configs[k]));
  PetscCall(PetscFinalize());
  return (nfail || nerr) ? 1 : 0;
}
