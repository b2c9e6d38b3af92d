// Private declarations of the PETSc glue: the type table, the state a matrix of ours keeps, and
// the functions the files of src/petsc share.
//
// A matrix of ours is a matrix of its family's base type (MATSEQAIJ/MATMPIAIJ for the host
// families, MATSEQAIJCUSPARSE/MATMPIAIJCUSPARSE for the CUDA ones) with a layout beside it: the
// base type's data stay the matrix, and every operation we do not replace is the base type's own
// code (for the CUDA families: AIJCUSPARSE's device code). The state lives in a container
// composed on the matrix (AIJCUSPARSE owns A->spptr).
#pragma once
#include <petscspmv.h>
#include <petsc/private/matimpl.h>
#include <petscpc.h>
#include "petsc_compat.h"

#include "core_error.hpp"
#include "format_options.hpp"
#include "shadow.hpp"

#include <map>
#include <memory>
#include <string>

static_assert(sizeof(PetscScalar) == sizeof(double), "petscspmv needs PETSc with real double scalars");

namespace pspmv
{
namespace glue
{

/* One family of types (rgcsr, packsell, rgcsrcuda, packsellcuda): names, base type, backend,
   constructors. */
struct TypeInfo {
  Format      format;
  PetscBool   cuda;
  const char *root, *seq, *mpi;
  const char *base_seq, *base_mpi;                  /* MATSEQAIJ(CUSPARSE), MATMPIAIJ(CUSPARSE) */
  PetscErrorCode (*create_base_seq)(Mat);           /* MatCreate_SeqAIJ(CUSPARSE) */
  PetscErrorCode (*create_base_mpi)(Mat);           /* MatCreate_MPIAIJ(CUSPARSE) */
  std::unique_ptr<Shadow> (*create_shadow)(Format); /* the backend: host or CUDA kernels */
  PetscErrorCode (*create_root)(Mat);
  PetscErrorCode (*create_seq)(Mat);
  PetscErrorCode (*create_mpi)(Mat);
  PetscErrorCode (*convert_seq)(Mat, MatType, MatReuse, Mat *); /* MATSEQAIJ -> seq */
  PetscErrorCode (*convert_mpi)(Mat, MatType, MatReuse, Mat *); /* MATMPIAIJ -> mpi */
};

/* The families built into this library (the CUDA ones only with PETSCSPMV_HAVE_CUDA). */
const TypeInfo *const *Types(PetscInt *n);

/* What a layout is compared with before it is used: the object state (PetscObjectStateIncrease()
   is what every value-changing PETSc operation calls), the nonzero state, and the number of final
   assemblies. Equal stamps: the layout holds the matrix's values and pattern. */
struct Stamp {
  PetscObjectState state = 0, nzstate = 0;
  PetscInt         num_ass = -1;      /* never equal to a matrix's before the first sync */
  const void      *data    = nullptr; /* A->data: MatHeaderMerge() gives A another matrix's data */
  bool             operator==(const Stamp &o) const { return state == o.state && nzstate == o.nzstate && num_ass == o.num_ass && data == o.data; }
};

/* State of a seq matrix of our types. The base type's data stay the matrix; the layout is kept
   equal to them: forced at every final assembly (not for an MPI block, whose MPI matrix does it),
   and before every use brought up to date when A's stamp differs from the one it was synced at. */
struct SeqState {
  const TypeInfo         *type = nullptr;
  FormatOptions           opts;
  std::unique_ptr<Shadow> shadow;                           /* null until built */
  Stamp                   synced;                           /* A's stamp when the shadow equals the matrix */
  PetscBool               block = PETSC_FALSE;              /* a block of an MPI matrix of ours (set by it) */
  GlobalIndices           global;                           /* an MPI block's global numbering (errors) */
  PetscBool               free_device_csr    = PETSC_FALSE; /* CUDA: builds do not keep AIJCUSPARSE's device CSR */
  PetscBool               info_transpose     = PETSC_FALSE; /* the host transpose was reported (-info) */
  PetscBool               warned_lossy       = PETSC_FALSE; /* WarnLossyOperator() ran */
  PetscBool               bind_after_hash    = PETSC_FALSE; /* CUDA: MatBindToCPU(A, A->boundtocpu) is owed, from
                                                           a call during PETSc's hash assembly or an
                                                           adoption while bound during it (Adopt()) */
  PetscInt                defer_value_check  = 0;           /* inside a value-changing operation (ops.cpp's Checking): its
                                                           assemblies leave the lossy value check to
                                                           the operation's end */
  PetscBool               restoring_diagonal = PETSC_FALSE; /* ops.cpp's Checking puts a refused operation's diagonal back */
  PetscErrorCode (*base_retrieve)(Mat)       = nullptr;     /* the base type's MatRetrieveValues_C */
  struct _MatOps                     baseops;               /* the base type's operations */
  std::map<std::string, std::string> names;                 /* strings returned by the getters, by option */
};

/* State of an MPI matrix of our types. Its blocks are seq matrices of the family. */
struct MPIState {
  const TypeInfo *type = nullptr;
  FormatOptions   opts;
  PetscBool       free_device_csr = PETSC_FALSE;
  struct _MatOps  baseops; /* the base type's operations */
  PetscErrorCode (*preallocate)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[]) = nullptr;
  PetscErrorCode (*preallocate_coo)(Mat, PetscCount, PetscInt[], PetscInt[])                 = nullptr;
  PetscBool placeholder_values                                                               = PETSC_FALSE; /* a product result before its first assembly */
  PetscInt  defer_value_check                                                                = 0;           /* as SeqState's */
  PetscBool restoring_diagonal                                                               = PETSC_FALSE; /* as SeqState's */
  PetscBool warned_lossy                                                                     = PETSC_FALSE;
  /* the last collective sync of the blocks (MPISyncBlocks()) failed on some rank, the same on
     every rank: the products sync collectively until one succeeds */
  PetscBool                          values_refused = PETSC_FALSE;
  std::map<std::string, std::string> names;
};

/* The state of A, NULL when A is not a seq (MPI) matrix of our types. */
SeqState *SeqGetState(Mat A);
MPIState *MPIGetState(Mat A);

/* Base-type presentation. Code of the base type that checks exact type names (AIJCUSPARSE's
   products and, in debugging builds, its device accessors and factorizations), or that makes
   results with MatSetType(result, source's type name), runs while A carries its base type's
   name: PresentAsBase() names A (an MPI matrix: also its blocks) as the base type, keeping the
   string of its own name (a pointer from MatGetType() stays valid), and records in *bn what it
   renamed (a matrix already presented, inside another presentation, is not);
   RestoreTypeNames() gives back their own names to those that still carry the presented one and
   are still ours (a result that replaced A's header leaves A a plain base matrix: the caller
   adopts it again; a block the operation destroyed is not touched). */
struct BaseNames {
  Mat         renamed[3]   = {nullptr, nullptr, nullptr};
  char       *own[3]       = {nullptr, nullptr, nullptr}; /* the strings of their own names */
  const char *presented[3] = {nullptr, nullptr, nullptr}; /* the strings given to them */
  int         n            = 0;
};
PetscErrorCode PresentAsBase(Mat A, BaseNames *bn);
/* "A matrix or its MPI blocks", the one helper for it. SeqParts(): the seq matrices that hold A's
   entries: A itself, or for an MPI matrix of the AIJ kind (ours or PETSc's, by type name) its
   diagonal and off-diagonal blocks (parts[1] NULL for a seq matrix; both NULL before an MPI
   matrix's preallocation). WithBlocks(): A and, for an MPI matrix of the AIJ kind, its blocks
   (mats[1..2] NULL otherwise). ForEachSeqPart(): f(X) for each non-NULL part of SeqParts(). */
PetscErrorCode SeqParts(Mat A, Mat parts[2]);
PetscErrorCode WithBlocks(Mat A, Mat mats[3]);
template <class F>
PetscErrorCode ForEachSeqPart(Mat A, F &&f)
{
  Mat parts[2];

  PetscFunctionBegin;
  PetscCall(SeqParts(A, parts));
  for (Mat X : parts)
    if (X) PetscCall(f(X));
  PetscFunctionReturn(PETSC_SUCCESS);
}
PetscErrorCode RestoreTypeNames(Mat A, BaseNames &bn);

/* The base-type matrix B (a result PETSc made from one of ours) becomes one of family t with
   options o, at its current stage. A lossy layout is built at once (a value out of the format's
   range is an error of the operation that made B; B is left as it was), a lossless one at its
   first use or next final assembly. */
PetscErrorCode AdoptAs(Mat B, const TypeInfo *t, const FormatOptions &o);

/* The options a matrix B of family t starts with when PETSc creates it by type name: those of an
   operand of the product B is the result of (B->product) of t's format, else the -mat_<format>_*
   options of the database (B's prefix). */
PetscErrorCode InitialOptions(Mat B, const TypeInfo *t, FormatOptions *o);
/* Composed as "MatAXPYGetPreallocation_C" on our matrices: the result of MatAXPY() with a new
   pattern, which PETSc merges into Y, is a matrix of Y's family with Y's options. */
PetscErrorCode MatAXPYGetPreallocation_SpMV(Mat Y, Mat X, Mat *B);

/* The state composed on A under key (T: SeqState or MPIState), NULL when there is none. */
template <class T>
T *ComposedState(Mat A, const char key[])
{
  void *p = nullptr;
  if (!A || PetscObjectContainerQuery((PetscObject)A, key, &p)) return nullptr;
  return static_cast<T *>(p);
}

/* ops.cpp: the steps SeqConvertFromBase() and MPIConvertFromBase() share. BeginConversion():
   before anything changes, CUDA usable (a CUDA family) and the options (opts, else
   InitialOptions()) in *o; then *B := *newmat (A's duplicate for MAT_INITIAL_MATRIX, else A), of
   the base type (a CUDA family from AIJ: PETSc's converter first, *fromaij set). UndoConversion():
   after a failed build (ierr, returned), B left as it was: a new matrix destroyed; in place,
   strip(B) and, from AIJ, AIJ again. mpi: the MPI types. */
PetscErrorCode BeginConversion(Mat A, const TypeInfo *t, PetscBool mpi, const FormatOptions *opts, MatReuse reuse, Mat *newmat, FormatOptions *o, Mat *B, PetscBool *fromaij);
PetscErrorCode UndoConversion(Mat B, PetscBool mpi, MatReuse reuse, Mat *newmat, PetscBool fromaij, PetscErrorCode (*strip)(Mat), PetscErrorCode ierr);

/* seqspmv.cpp */
PetscErrorCode SeqCreate(Mat A, const TypeInfo *t);
/* base type -> t->seq (MATSEQAIJ for the host families, MATSEQAIJ or MATSEQAIJCUSPARSE for the
   CUDA ones); opts NULL: read from the options database (A's prefix). In place it also works on
   unassembled (preallocated) matrices. build: an assembled result gets its layout now (else at
   its first use). */
PetscErrorCode SeqConvertFromBase(Mat A, const TypeInfo *t, const FormatOptions *opts, MatReuse reuse, Mat *B, PetscBool build = PETSC_TRUE);
/* Makes the base-type matrix B (unassembled or assembled) the block of an MPI matrix of family t,
   numbered by g, with options o; builds nothing. An existing block of ours takes the new options
   and numbering. */
PetscErrorCode SeqSetUpBlock(Mat B, const TypeInfo *t, const FormatOptions &o, const GlobalIndices &g);
/* A plain matrix of the base type again (the layout freed): MatConvert() to the base type in place. */
PetscErrorCode SeqStrip(Mat A);
/* Brings the layout up to date with the matrix (force: also when the stamps say it is). */
PetscErrorCode SeqSync(Mat A, PetscBool force);
/* New options; a built layout is rebuilt with them (all or nothing). */
PetscErrorCode SeqSetOptions(Mat A, const FormatOptions &o);
/* Statistics of the (synced) layout and its PackSELL scale exponent (0 for RgCSR). */
PetscErrorCode SeqGetStats(Mat A, FormatStats *s, PetscInt *scale_exponent);
PetscErrorCode SeqLayoutStats(Mat A, FormatStats *s);
/* Whether the assembled A has a layout after SeqSync(): false only for a CUDA matrix bound to the
   CPU before its first build (PETSc's DMDA preallocation assembles its matrices bound to the CPU). */
PetscErrorCode SeqHasLayout(Mat A, PetscBool *has);
/* Device bytes of the layout and of AIJCUSPARSE's device CSR when it is resident (0 for the host
   families). */
PetscErrorCode SeqDeviceBytes(Mat A, PetscInt64 *layout, PetscInt64 *csr);

/* mpispmv.cpp */
PetscErrorCode MPICreate(Mat A, const TypeInfo *t);
PetscErrorCode MPIConvertFromBase(Mat A, const TypeInfo *t, const FormatOptions *opts, MatReuse reuse, Mat *B, PetscBool build = PETSC_TRUE);
PetscErrorCode MPIStrip(Mat A);
/* After an operation that gave A new blocks (MatHeaderMerge()): blocks of the base type adopted,
   all brought up to date (collective). */
PetscErrorCode MPIAdoptBlocks(Mat A);
PetscErrorCode RootCreate(Mat A, const TypeInfo *t);

/* Every rank returns an error when one rank has one (data-dependent errors of the layouts live
   on one rank): the worst code on all ranks, and this rank's error or a sentence pointing at the
   other rank's. */
PetscErrorCode CollectiveError(MPI_Comm comm, const char *what, PetscErrorCode ierr);

/* options.cpp: reads the -mat_<format>_* options of A into *opts (of its format; validated as
   a set); with a PetscOptionItems (inside MatSetFromOptions()) they are also listed by -help. */
PetscErrorCode ReadOptions(Mat A, PetscSpMVOptionItems PetscOptionsObject, FormatOptions *opts);
/* The same for options named -<infix>mat_<format>_* under obj's prefix (PCMIXEDKRYLOV reads its
   PackSELL copy's options with infix "pc_mixedkrylov_"). */
PetscErrorCode ReadFormatOptions(PetscObject obj, const char infix[], PetscSpMVOptionItems PetscOptionsObject, FormatOptions *opts);
/* Spells *opts's options as -<obj's prefix><infix>mat_<format>_* in the core's messages (a range
   error's remedy "-sub_mat_packsell_scaling auto"); ReadFormatOptions() does it too. */
PetscErrorCode NameFormatOptions(PetscObject obj, const char infix[], FormatOptions *opts);
/* -mat_spmv_free_device_csr of a CUDA matrix (listed by -help inside MatSetFromOptions()). */
PetscErrorCode ReadFreeDeviceCsr(Mat A, PetscSpMVOptionItems PetscOptionsObject, PetscBool *flg);
/* Applies one setter call (option `key`, e.g. "group_size") to *opts (unchanged on error);
   errors carry the class of the option: PETSC_ERR_ARG_OUTOFRANGE for integers,
   PETSC_ERR_ARG_WRONG for strings. */
PetscErrorCode SetOption(FormatOptions *opts, const char key[], PetscInt ivalue, const char svalue[]);
/* A getter call: integers in *ivalue, strings in *svalue (kept in (*names)[key]). */
PetscErrorCode GetOption(const FormatOptions &opts, std::map<std::string, std::string> *names, const char key[], PetscInt *ivalue, const char *svalue[]);
/* Names of the composed setter/getter functions of format f ("MatRgCSRSetOption_C"), by value. */
struct OptionFnName {
  char s[64];
};
OptionFnName SetOptionName(Format f);
OptionFnName GetOptionName(Format f);
typedef PetscErrorCode (*SetOptionFn)(Mat, const char[], PetscInt, const char[]);
typedef PetscErrorCode (*GetOptionFn)(Mat, const char[], PetscInt *, const char *[]);
typedef PetscErrorCode (*GetStatsFn)(Mat, MatSpMVStats *);
typedef PetscErrorCode (*SetFreeCsrFn)(Mat, PetscBool);
/* Composes (functions non-NULL) or removes the option setter/getter of format f, the
   statistics function, the free-device-CSR setter (CUDA families) and
   MatAXPYGetPreallocation_SpMV() on A. */
PetscErrorCode ComposeOptionFunctions(Mat A, const TypeInfo *t, SetOptionFn set, GetOptionFn get, GetStatsFn stats, SetFreeCsrFn freecsr);

/* MatSetFromOptions and the composed setter/getter, one body for the seq and the mpi state:
   State is SeqState or MPIState, Apply installs a new set of options on A, LayoutStats gives the
   statistics of A's (synced) layout, Agree(A, ierr) turns a setter's error on one rank into an
   error on every rank of A (identity for seq matrices), SetFree the free-device-CSR flag. */
template <class State, State *(*Get)(Mat), PetscErrorCode (*Apply)(Mat, const FormatOptions &), PetscErrorCode (*LayoutStats)(Mat, FormatStats *), PetscErrorCode (*Agree)(Mat, PetscErrorCode), PetscErrorCode (*SetFree)(Mat, PetscBool)>
struct OptionOps {
  static PetscErrorCode SetFromOptions(Mat A, PetscSpMVOptionItems PetscOptionsObject)
  {
    State        *st = Get(A);
    FormatOptions o  = st->opts;

    PetscFunctionBegin;
    if (st->baseops.setfromoptions) PetscCall(st->baseops.setfromoptions(A, PetscOptionsObject));
    PetscCall(ReadOptions(A, PetscOptionsObject, &o));
    if (st->type->cuda) {
      PetscBool flg = st->free_device_csr;
      PetscCall(ReadFreeDeviceCsr(A, PetscOptionsObject, &flg));
      PetscCall(SetFree(A, flg));
    }
    PetscCall(Apply(A, o));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  static PetscErrorCode Set(Mat A, const char key[], PetscInt iv, const char sv[])
  {
    FormatOptions o = Get(A)->opts;

    PetscFunctionBegin;
    /* not PetscCall: a value refused on one rank only must not leave the others in Apply's
       collective check */
    PetscCall(Agree(A, SetOption(&o, key, iv, sv)));
    PetscCall(Apply(A, o));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  static PetscErrorCode GetOpt(Mat A, const char key[], PetscInt *iv, const char *sv[])
  {
    State *st       = Get(A);
    bool   resolved = false;

    PetscFunctionBegin;
    PetscCall(GetOption(st->opts, &st->names, key, iv, sv));
    /* once assembled, the value the layout was built with (PackSELL: PETSC_DECIDE's sigma) */
    PetscCallCore(PETSC_ERR_PLIB, resolved = st->opts.ResolvedByBuild(key));
    if (resolved && A->assembled && iv) {
      FormatStats s;
      PetscCall(LayoutStats(A, &s));
      PetscCallCore(PETSC_ERR_PLIB, *iv = (PetscInt)st->opts.BuiltValue(key, s));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
};

/* convert.cpp: the MatConvert_<from>_<to>_C functions of a matrix of family t (on: compose,
   off: remove). */
PetscErrorCode ComposeConverters(Mat A, const TypeInfo *t, PetscBool mpi, PetscBool on);

/* ops.cpp: the base type's operations that our types wrap (results adopted with the source's
   options, values checked where they change), installed (ours) or restored from base by the seq
   and MPI files. */
void InstallSeqWrapped(Mat A, const struct _MatOps &base, PetscBool ours);
void InstallMPIWrapped(Mat A, const struct _MatOps &base, PetscBool ours);
/* A lossy layout refuses values it cannot hold: such matrices are synced right where their
   values change (seq: predicting the state the calling interface leaves), not at a later product. */
PetscErrorCode SeqCheckValues(Mat A);
PetscErrorCode MPICheckValues(Mat A);
/* Both blocks of the MPI matrix A brought up to date (force: rebuilt or re-encoded even when
   their stamps say they are current), the error agreed on all ranks. */
PetscErrorCode MPISyncBlocks(Mat A, PetscBool force);

/* cuda/aijcusparse_ops.cpp (CUDA families): the operations that reach AIJCUSPARSE's device
   code by type name. */
#if defined(PETSCSPMV_HAVE_CUDA)
/* MatProductSetFromOptions of our CUDA matrices: AIJCUSPARSE's (sparse and dense CUDA operands
   on the device; results are AIJCUSPARSE or dense CUDA matrices) with our operands presented as
   the base type through the symbolic and numeric phases. */
PetscErrorCode MatProductSetFromOptions_SpMVCUDA(Mat C);
/* Composes (on) or removes the MatProductSetFromOptions_<A>_<B>_C functions of A (family t)
   for the operand types AIJCUSPARSE, dense CUDA and our other CUDA families. */
PetscErrorCode ComposeProductFunctions(Mat A, const TypeInfo *t, PetscBool on);
/* B's values := A's, both seq AIJCUSPARSE matrices on the device (ours or not) with nz values
   each: device to device, B's device copy marked newer and its object state increased. */
PetscErrorCode CopyAIJCusparseValues(Mat A, Mat B, PetscInt nz);
/* The distinct operands of product p that are matrices of ours, in ours[]; returns their number. */
int ProductOperandsOfOurs(const Mat_Product *p, Mat ours[3]);
/* Registers MATSOLVERCUSPARSE's LU, ILU, Cholesky and ICC for the seq CUDA type t->seq (the
   default solver type of those factorizations, as for aijcusparse). */
PetscErrorCode RegisterCusparseFactors(const TypeInfo *t);
/* Errors when CUDA cannot be used (no GPU, CUDA's stub driver): "the CUDA types need a GPU". */
PetscErrorCode CheckCudaUsable(const char *type);
#endif

/* view.cpp */
/* True for an ASCII viewer in an INFO format: the one MatView prints the layout statistics in. */
PetscErrorCode ViewWantsFormatInfo(PetscViewer viewer, PetscBool *flg);
/* scale[0..1]: smallest and largest PackSELL scale exponent of the blocks with nonzeros
   (scale[0] > scale[1]: no block has any); device[0..1]: device bytes of the layouts and of
   AIJCUSPARSE's resident device CSR (CUDA families). */
PetscErrorCode ViewFormat(Mat A, PetscViewer viewer, const TypeInfo *t, const FormatOptions &o, const FormatStats &s, const PetscInt scale[2], const PetscInt64 device[2], PetscBool free_device_csr, const char *scope);
/* The INFO view of a matrix without a layout yet (SeqHasLayout() false on some block): one line
   that says so and when it is built, in place of ViewFormat()'s statistics. */
PetscErrorCode ViewNoLayout(Mat A, PetscViewer viewer, const TypeInfo *t);
/* One PetscInfo() line on a layout just built for A with options o (format, sizes, options,
   hybrid width and tail, what the builder resolved, scale exponent, backend, bytes per
   nonzero). */
PetscErrorCode InfoLayout(Mat A, const TypeInfo *t, const FormatOptions &o, const Shadow &shadow);
void           AddStats(FormatStats *sum, const FormatStats &s);
void           ToPublicStats(const FormatStats &s, const PetscInt scale[2], MatSpMVStats *out);
/* The line "  petscspmv <version> (PETSc ..., CUDA)" of the solvers' ASCII views. */
PetscErrorCode ViewVersion(PetscViewer viewer);
/* Once per matrix (*warned), at its first product with a lossy layout (o): a warning on stderr
   (A's communicator) that its products, and so the residuals of a KSP with A as its operator,
   are those of the rounded values, and how to keep the exact operator (-mat_packsell_lossy_warning
   false under A's prefix: none). PETSc gives a matrix type no hook at KSPSolve(): a KSP operator's
   first product is in its first KSPSolve(). */
PetscErrorCode WarnLossyOperator(Mat A, const FormatOptions &o, PetscBool *warned);
/* The LOSSY line of the views that list a lossy matrix's entries (MatView_SeqSpMV/MPISpMV call it
   before the base type's view; it prints nothing in the other cases). */
PetscErrorCode ViewLossyNote(PetscViewer viewer, const FormatOptions &o);

/* register.cpp */
extern PetscLogEvent EventBuild, EventValues;
/* solvers/pc_mixedkrylov.cpp */
extern PetscLogEvent EventMixedSetUp;
PetscErrorCode       PCCreate_MixedKrylov(PC pc);
/* solvers/ksp_mixedcg.cpp: the copy's builds (KSPMixedCGCopy) and the low-precision steps of a
   solve (KSPMixedCGFP32, the solve without its exact products and builds) */
extern PetscLogEvent EventMixedCGCopy, EventMixedCGFP32;
PetscErrorCode       KSPCreate_MixedCG(KSP ksp);

/* A composed container's deleter of a T allocated with new (PetscObjectContainerCompose()): its
   argument is the pointer (3.22), the address of the pointer (3.23, 3.24), the same as a PetscCtxRt
   (3.25). */
#if PETSC_VERSION_LT(3, 23, 0)
template <class T>
PetscErrorCode DeleteComposed(void *p)
{
  delete static_cast<T *>(p);
  return PETSC_SUCCESS;
}
#else
  #if PETSC_VERSION_LT(3, 25, 0)
typedef void **PetscSpMVCtxRt;
  #else
typedef PetscCtxRt PetscSpMVCtxRt;
  #endif
template <class T>
PetscErrorCode DeleteComposed(PetscSpMVCtxRt ctx)
{
  T **p = static_cast<T **>(ctx);
  delete *p;
  *p = nullptr;
  return PETSC_SUCCESS;
}
#endif

} // namespace glue
} // namespace pspmv

/* The base types' constructors: exported by libpetsc, not declared in its public headers. */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ(Mat);
#if defined(PETSCSPMV_HAVE_CUDA)
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJCUSPARSE(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJCUSPARSE(Mat);
#endif
