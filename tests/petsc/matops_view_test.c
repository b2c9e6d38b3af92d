/* spmv_matops, view: MatView in the ASCII formats (AIJ's text but for the type names and the
   LOSSY line), ASCII_INFO naming the layout, and a binary MatView loaded back with MatLoad into
   ours and into AIJ. */
#include "matops_util.h"

/* ASCII views are compared line by line with AIJ's but for the lines naming the type (and the
   LOSSY line of a lossy layout's view). */
static PetscErrorCode ViewToFile(Mat M, const char *file, PetscViewerFormat fmt)
{
  PetscViewer v;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIOpen(PetscObjectComm((PetscObject)M), file, &v));
  PetscCall(PetscViewerPushFormat(v, fmt));
  PetscCall(MatView(M, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(PetscViewerDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode OpMatView(Ctx *c)
{
  Mat  A, B, C;
  char fa[PETSC_MAX_PATH_LEN], fb[PETSC_MAX_PATH_LEN], fbin[PETSC_MAX_PATH_LEN];
  int  same = 1, found = 0;

  PetscFunctionBegin;
  PetscCall(Pair(c, KN, &A, &B));
  PetscCall(PetscSNPrintf(fa, sizeof(fa), "spmv_matops_%s_%s_np%d_aij.txt", c->family, c->config, (int)c->size));
  PetscCall(PetscSNPrintf(fb, sizeof(fb), "spmv_matops_%s_%s_np%d.txt", c->family, c->config, (int)c->size));
  PetscCall(PetscSNPrintf(fbin, sizeof(fbin), "spmv_matops_%s_%s_np%d.petsc", c->family, c->config, (int)c->size));
  /* default ASCII format and ASCII_COMMON / MATLAB: AIJ's text */
  {
    PetscViewerFormat fmts[] = {PETSC_VIEWER_DEFAULT, PETSC_VIEWER_ASCII_COMMON, PETSC_VIEWER_ASCII_MATLAB};
    for (int f = 0; f < 3; f++) {
      PetscCall(ViewToFile(A, fa, fmts[f]));
      PetscCall(ViewToFile(B, fb, fmts[f]));
      if (c->rank == 0) {
        FILE *a = fopen(fa, "r"), *b = fopen(fb, "r");
        char  la[4096], lb[4096];
        while (a && b && same) {
          char *ra = fgets(la, sizeof(la), a), *rb = fgets(lb, sizeof(lb), b);
          if (ra && rb && strstr(lb, "values: LOSSY") && !strstr(la, "values: LOSSY")) rb = fgets(lb, sizeof(lb), b); /* a lossy layout's LOSSY line (ViewLossyNote()): the one line AIJ's view lacks */
          if (!ra || !rb) {
            same = !ra && !rb;
            break;
          }
          if (strstr(la, "type") && strstr(lb, "type")) continue;
          if (strstr(la, "Mat_0x") && strstr(lb, "Mat_0x")) continue; /* MATLAB names carry the object id */
          same = !strcmp(la, lb);
        }
        if (!a || !b) same = 0;
        if (a) fclose(a);
        if (b) fclose(b);
      }
      CHK(c, same, "ASCII MatView format %s differs from AIJ's (%s against %s)", PetscViewerFormats[fmts[f]], fb, fa);
    }
  }
  /* ASCII_INFO: names our layout */
  PetscCall(ViewToFile(B, fb, PETSC_VIEWER_ASCII_INFO));
  if (c->rank == 0) {
    FILE *b = fopen(fb, "r");
    char  lb[4096];
    while (b && fgets(lb, sizeof(lb), b))
      if (strstr(lb, "layout")) found = 1;
    if (b) fclose(b);
  }
  CHK(c, c->rank != 0 || found, "ASCII_INFO MatView does not describe the layout (%s)", fb);
  /* binary: MatLoad into ours (options set before the load) and into AIJ */
  {
    PetscViewer v;
    PetscCall(PetscViewerBinaryOpen(c->comm, fbin, FILE_MODE_WRITE, &v));
    PetscCall(MatView(B, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatCreate(c->comm, &C));
    PetscCall(MatSetType(C, c->family));
    PetscCall(ApplyOpts(c, C));
    PetscCall(PetscViewerBinaryOpen(c->comm, fbin, FILE_MODE_READ, &v));
    PetscCall(MatLoad(C, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(CheckStillOurs(c, C, "MatLoad"));
    PetscCall(Post(c, A, C, "binary MatView + MatLoad into the type"));
    PetscCall(MatDestroy(&C));
    PetscCall(MatCreate(c->comm, &C));
    PetscCall(MatSetType(C, MATAIJ));
    PetscCall(PetscViewerBinaryOpen(c->comm, fbin, FILE_MODE_READ, &v));
    PetscCall(MatLoad(C, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(CmpMat(c, C, A, 0, "MatLoad into AIJ"));
    PetscCall(MatDestroy(&C));
  }
  PetscCall(Destroy4(&A, &B, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the text file (rank 0) holds the string. */
static PetscBool FileHas(const char *file, const char *what)
{
  FILE     *f = fopen(file, "r");
  char      line[4096];
  PetscBool found = PETSC_FALSE;

  while (f && !found && fgets(line, sizeof(line), f))
    if (strstr(line, what)) found = PETSC_TRUE;
  if (f) fclose(f);
  return found;
}

/* ASCII_INFO of a matrix assembled while bound to the CPU (PETSc's DMDA preallocation does that,
   so -mat_view ::ascii_info meets it at DMCreateMatrix()): a CUDA matrix says its layout is not
   built yet, a host one describes it; after MatBindToCPU(M, PETSC_FALSE) and a product the view
   describes the layout and the product is AIJ's. */
static PetscErrorCode OpMatViewBoundToCPU(Ctx *c)
{
  Mat         A, M;
  char        fb[PETSC_MAX_PATH_LEN];
  const char *notbuilt = "not built yet";
  PetscBool   cuda     = strstr(c->family, "cuda") ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(Generate(c, KN, NULL, &A));
  PetscCall(PetscSNPrintf(fb, sizeof(fb), "spmv_matops_%s_%s_np%d_bound.txt", c->family, c->config, (int)c->size));
  PetscCall(CreateUnpreallocated(c, A, &M));
  PetscCall(MatSetOption(M, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatBindToCPU(M, PETSC_TRUE));
  PetscCall(SetRowsOf(A, M));
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  /* the view is written by rank 0; CHK is collective */
  PetscCall(ViewToFile(M, fb, PETSC_VIEWER_ASCII_INFO));
  if (cuda) CHK(c, c->rank != 0 || FileHas(fb, notbuilt), "ASCII_INFO MatView of a CUDA matrix assembled bound to the CPU does not say its layout is not built yet (%s)", fb);
  else CHK(c, c->rank != 0 || (FileHas(fb, "layout (") && !FileHas(fb, notbuilt)), "ASCII_INFO MatView of a host matrix assembled under MatBindToCPU() does not describe its layout (%s)", fb);
  PetscCall(MatBindToCPU(M, PETSC_FALSE));
  PetscCall(Post(c, A, M, "assembled bound to the CPU, then unbound"));
  PetscCall(ViewToFile(M, fb, PETSC_VIEWER_ASCII_INFO));
  CHK(c, c->rank != 0 || (FileHas(fb, "layout (") && !FileHas(fb, notbuilt) && (!cuda || FileHas(fb, "device_bytes"))), "ASCII_INFO MatView after MatBindToCPU(M, PETSC_FALSE) and a product does not describe the layout (%s)", fb);
  PetscCall(Destroy4(&A, &M, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const Op kOpsView[] = {
  {"MatView", OpMatView},
  {"MatViewBoundToCPU", OpMatViewBoundToCPU},
  {NULL, NULL},
};
