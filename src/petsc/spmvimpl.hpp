// Private declarations of the PETSc glue: the type table, the state a matrix keeps in
// A->spptr, and the functions the files of src/petsc share.
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

static_assert(sizeof(PetscInt) == 4, "petscspmv needs PETSc with 32-bit indices");
static_assert(sizeof(PetscScalar) == sizeof(double), "petscspmv needs PETSc with real double scalars");

namespace pspmv {
namespace glue {

/* One family of types (rgcsr, packsell, rgcsrcuda, packsellcuda): names, backend, constructors. */
struct TypeInfo {
  Format      format;
  PetscBool   cuda;
  const char *root, *seq, *mpi;
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
   assemblies. Equal stamps: the layout holds the AIJ arrays' values and pattern. */
struct Stamp {
  PetscObjectState state = 0, nzstate = 0;
  PetscInt         num_ass = -1; /* never equal to a matrix's before the first sync */
  bool operator==(const Stamp &o) const { return state == o.state && nzstate == o.nzstate && num_ass == o.num_ass; }
};

/* State of a seq matrix of our types (A->spptr). The AIJ arrays stay the matrix; the shadow
   layout is kept equal to them: forced at every final assembly, and before every use brought up
   to date when A's stamp differs from the one the layout was synced at. */
struct SeqState {
  const TypeInfo         *type = nullptr;
  FormatOptions           opts;
  std::unique_ptr<Shadow> shadow; /* null until built */
  Stamp                   synced; /* A's stamp when the shadow equals the AIJ arrays */
  PetscBool               info_transpose = PETSC_FALSE; /* the host transpose fallback was reported */
  PetscErrorCode (*aij_retrieve)(Mat)   = nullptr;       /* SeqAIJ's MatRetrieveValues_C */
  GlobalIndices           global;                       /* an MPI block's global numbering (errors) */
  struct _MatOps          aijops;                       /* SeqAIJ operations (fallbacks; restored on conversion back) */
  PetscBool               aij_boundtocpu = PETSC_TRUE;  /* A->boundtocpu before it became ours (restored) */
  std::map<std::string, std::string> names;           /* strings returned by the getters, by option */
};

/* State of an MPI matrix of our types (A->spptr). Its blocks are seq matrices of the family. */
struct MPIState {
  const TypeInfo *type = nullptr;
  FormatOptions   opts;
  struct _MatOps  aijops; /* MPIAIJ operations */
  PetscBool       aij_boundtocpu = PETSC_TRUE; /* A->boundtocpu before it became ours (restored) */
  PetscErrorCode (*preallocate)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[]) = nullptr;
  PetscErrorCode (*preallocate_coo)(Mat, PetscCount, PetscInt[], PetscInt[])                  = nullptr;
  PetscBool placeholder_values = PETSC_FALSE; /* a product result before its first assembly */
  std::map<std::string, std::string> names;
};

/* Options inherited by matrices that PETSc creates from one of ours. AIJ's operations make their
   results with MatSetType(result, source's type name) (MatDuplicate, MatTranspose, MatAXPY,
   MatCreateSubMatrix, products...); such a result takes the source's options, not the options
   database's, for as long as a scope is alive (innermost scope wins). */
class InheritScope {
public:
  InheritScope(const TypeInfo *t, const FormatOptions &o);
  ~InheritScope();
  InheritScope(const InheritScope &)            = delete;
  InheritScope &operator=(const InheritScope &) = delete;

private:
  const TypeInfo     *type_;
  FormatOptions       opts_;
  const InheritScope *outer_;
  friend PetscErrorCode InitialOptions(Mat, const TypeInfo *, FormatOptions *);
};

/* The aijcusparse matrix (seq or mpi) a MatConvert() to one of our types starts from, while the
   conversion runs (innermost scope wins): the AIJ arrays of the result are a copy of its host
   arrays, and the CUDA layouts read its device CSR instead of uploading them (convert.cpp opens it;
   SetUpBlocks() narrows an MPI twin to the block; DeviceTwin() in seqspmv.cpp takes a block's twin
   only when its device copy is current and not bound to the CPU). */
class DeviceTwinScope {
public:
  explicit DeviceTwinScope(Mat twin);
  ~DeviceTwinScope();
  DeviceTwinScope(const DeviceTwinScope &)            = delete;
  DeviceTwinScope &operator=(const DeviceTwinScope &) = delete;
  /* the innermost scope's matrix, NULL when none is open */
  static Mat Current();

private:
  Mat                    twin_;
  const DeviceTwinScope *outer_;
};

/* The options a matrix B of family t starts with when it becomes ours: those of the innermost
   InheritScope of t's format, else those of an operand of the product B is the result of
   (B->product) of t's format, else the -mat_<format>_* options of the database (B's prefix). */
PetscErrorCode InitialOptions(Mat B, const TypeInfo *t, FormatOptions *o);
/* Composed as "MatAXPYGetPreallocation_C" on our matrices: the result of MatAXPY() with a new
   pattern is made with Y's options. */
PetscErrorCode MatAXPYGetPreallocation_SpMV(Mat Y, Mat X, Mat *B);

/* ops->op of a matrix of ours (State: SeqState or MPIState) that runs AIJ's op inside an
   InheritScope of the matrix's options: Inheriting<State, decltype(_MatOps::op), &_MatOps::op>::Call. */
template <class State, class F, F _MatOps::*M>
struct Inheriting;
template <class State, class... Args, PetscErrorCode (*_MatOps::*M)(Mat, Args...)>
struct Inheriting<State, PetscErrorCode (*)(Mat, Args...), M> {
  static PetscErrorCode Call(Mat A, Args... args)
  {
    State *st = static_cast<State *>(A->spptr);
    PetscErrorCode (*aijop)(Mat, Args...) = st->aijops.*M;

    PetscFunctionBegin;
    {
      /* st may be gone when the operation returns (in-place results replace A's header) */
      InheritScope scope(st->type, st->opts);
      PetscCall(aijop(A, args...));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
};
#define PSPMV_INHERITING(State, op) Inheriting<State, decltype(_MatOps::op), &_MatOps::op>::Call

/* seqspmv.cpp */
PetscErrorCode SeqCreate(Mat A, const TypeInfo *t);
/* MATSEQAIJ -> t->seq; opts NULL: read from the options database (A's prefix). In place it also
   works on unassembled (preallocated) matrices. */
PetscErrorCode SeqConvertFromAIJ(Mat A, const TypeInfo *t, const FormatOptions *opts, MatReuse reuse, Mat *B);
PetscErrorCode SeqConvertToAIJ(Mat A, MatType type, MatReuse reuse, Mat *B);
/* Brings the layout up to date with the AIJ data (force: also when the states say it is). */
PetscErrorCode SeqSync(Mat A, PetscBool force);
/* New options; a built layout is rebuilt with them (all or nothing). */
PetscErrorCode SeqSetOptions(Mat A, const FormatOptions &o);
/* Statistics of the (synced) layout and its PackSELL scale exponent (0 for RgCSR). */
PetscErrorCode SeqGetStats(Mat A, FormatStats *s, PetscInt *scale_exponent);
/* Statistics of the (synced) layout of the assembled matrix A (for the options the builder
   resolves). */
PetscErrorCode SeqLayoutStats(Mat A, FormatStats *s);
SeqState      *SeqGetState(Mat A); /* NULL if A is not a seq matrix of our types */

/* mpispmv.cpp */
PetscErrorCode MPICreate(Mat A, const TypeInfo *t);
PetscErrorCode MPIConvertFromAIJ(Mat A, const TypeInfo *t, MatReuse reuse, Mat *B);
PetscErrorCode MPIConvertToAIJ(Mat A, MatType type, MatReuse reuse, Mat *B);
PetscErrorCode RootCreate(Mat A, const TypeInfo *t);
MPIState      *MPIGetState(Mat A); /* NULL if A is not an MPI matrix of our types */
/* True when the seq matrix A is the diagonal or off-diagonal block of an MPI matrix of ours that
   is inside MPIAIJ's assemblyend (also a block MPIAIJ recreates there): that matrix brings the
   block's layout up to date once MPIAIJ's assembly returns, so A does not build at its own. */
PetscBool      MPIAssemblesBlock(Mat A);

/* options.cpp: reads the -mat_<format>_* options of A into *opts (of its format; validated as
   a set); with a PetscOptionItems (inside MatSetFromOptions()) they are also listed by -help. */
PetscErrorCode ReadOptions(Mat A, PetscSpMVOptionItems PetscOptionsObject, FormatOptions *opts);
/* The same for options named -<infix>mat_<format>_* under obj's prefix (PCMIXEDKRYLOV reads its
   PackSELL copy's options with infix "pc_mixedkrylov_"). */
PetscErrorCode ReadFormatOptions(PetscObject obj, const char infix[], PetscSpMVOptionItems PetscOptionsObject, FormatOptions *opts);
/* Applies one setter call (option `key`, e.g. "group_size") to *opts (unchanged on error);
   errors carry the class of the option: PETSC_ERR_ARG_OUTOFRANGE for integers,
   PETSC_ERR_ARG_WRONG for strings. */
PetscErrorCode SetOption(FormatOptions *opts, const char key[], PetscInt ivalue, const char svalue[]);
/* A getter call: integers in *ivalue, strings in *svalue (kept in (*names)[key]). */
PetscErrorCode GetOption(const FormatOptions &opts, std::map<std::string, std::string> *names, const char key[], PetscInt *ivalue, const char *svalue[]);
/* Names of the composed setter/getter functions of format f ("MatRgCSRSetOption_C"). */
const char *SetOptionName(Format f);
const char *GetOptionName(Format f);
typedef PetscErrorCode (*SetOptionFn)(Mat, const char[], PetscInt, const char[]);
typedef PetscErrorCode (*GetOptionFn)(Mat, const char[], PetscInt *, const char *[]);
typedef PetscErrorCode (*GetStatsFn)(Mat, MatSpMVStats *);
/* Composes (functions non-NULL) or removes the option setter/getter of format f, the
   statistics function and MatAXPYGetPreallocation_SpMV() on A. */
PetscErrorCode ComposeOptionFunctions(Mat A, Format f, SetOptionFn set, GetOptionFn get, GetStatsFn stats);

/* MatSetFromOptions and the composed setter/getter, one body for the seq and the mpi state:
   State is SeqState or MPIState (in A->spptr), Apply installs a new set of options on A,
   LayoutStats gives the statistics of A's (synced) layout, Agree(A, ierr) turns a setter's error
   on one rank into an error on every rank of A (identity for seq matrices). */
template <class State, PetscErrorCode (*Apply)(Mat, const FormatOptions &), PetscErrorCode (*LayoutStats)(Mat, FormatStats *), PetscErrorCode (*Agree)(Mat, PetscErrorCode)>
struct OptionOps {
  static PetscErrorCode SetFromOptions(Mat A, PetscSpMVOptionItems PetscOptionsObject)
  {
    State        *st = static_cast<State *>(A->spptr);
    FormatOptions o  = st->opts;

    PetscFunctionBegin;
    if (st->aijops.setfromoptions) PetscCall(st->aijops.setfromoptions(A, PetscOptionsObject));
    PetscCall(ReadOptions(A, PetscOptionsObject, &o));
    PetscCall(Apply(A, o));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  static PetscErrorCode Set(Mat A, const char key[], PetscInt iv, const char sv[])
  {
    State        *st = static_cast<State *>(A->spptr);
    FormatOptions o  = st->opts;

    PetscFunctionBegin;
    /* not PetscCall: a value refused on one rank only must not leave the others in Apply's
       collective check */
    PetscCall(Agree(A, SetOption(&o, key, iv, sv)));
    PetscCall(Apply(A, o));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  static PetscErrorCode Get(Mat A, const char key[], PetscInt *iv, const char *sv[])
  {
    State *st       = static_cast<State *>(A->spptr);
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

/* Sets the vector type MatCreateVecs() gives (VECCUDA for the CUDA types). */
PetscErrorCode SetDefaultVecType(Mat A, VecType type);

/* convert.cpp: the MatConvert_<from>_<to>_C functions of a matrix of family t (on: compose,
   off: remove). */
PetscErrorCode ComposeConverters(Mat A, const TypeInfo *t, PetscBool mpi, PetscBool on);

/* view.cpp */
/* True for an ASCII viewer in an INFO format: the one MatView prints the layout statistics in. */
PetscErrorCode ViewWantsFormatInfo(PetscViewer viewer, PetscBool *flg);
/* scale[0..1]: smallest and largest PackSELL scale exponent of the blocks with nonzeros
   (scale[0] > scale[1]: no block has any). */
PetscErrorCode ViewFormat(Mat A, PetscViewer viewer, const TypeInfo *t, const FormatOptions &o, const FormatStats &s, const PetscInt scale[2], const char *scope);
/* One PetscInfo() line on a layout just built for A with options o (format, sizes, options,
   hybrid width and tail, what the builder resolved, scale exponent, backend, bytes per
   nonzero). */
PetscErrorCode InfoLayout(Mat A, const TypeInfo *t, const FormatOptions &o, const Shadow &shadow);
void           AddStats(FormatStats *sum, const FormatStats &s);
void           ToPublicStats(const FormatStats &s, const PetscInt scale[2], MatSpMVStats *out);
/* The LOSSY line of the views that list a lossy matrix's entries (MatView_SeqSpMV/MPISpMV call it
   before the base type's view; it prints nothing in the other cases). */
PetscErrorCode ViewLossyNote(PetscViewer viewer, const FormatOptions &o);

/* register.cpp */
extern PetscLogEvent EventBuild, EventValues;
/* pc_mixedkrylov.cpp */
extern PetscLogEvent EventMixedSetUp;
PetscErrorCode       PCCreate_MixedKrylov(PC pc);

} // namespace glue
} // namespace pspmv

/* SeqAIJ and MPIAIJ constructors: exported by libpetsc, not declared in its public headers. */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ(Mat);
