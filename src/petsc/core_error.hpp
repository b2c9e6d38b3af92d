// The one place where errors of the PETSc-free core become PETSc errors. The core reports its
// refusals as exceptions (the host API) or as a BuildError (the device builders); CatchCore()
// is the only catch ladder over them and RaiseCore() the only mapping to PETSc error classes, so
// a host and a device build refusing the same matrix raise the same PETSc error with the same
// message. Solvers that name their own subject in a message (the mixed solvers' refusals) read
// the CoreFailure's fields and build the sentence where they know the subject.
#pragma once
#include <petscsys.h>

#include "core/build_error.hpp"
#include "core/csr.hpp"
#include "mixed/scaled_copy.hpp"

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace pspmv
{
namespace glue
{

/* A PETSc error inside a hook that core code calls (the mixed solvers' products, reductions,
   convergence tests): thrown through the core by PetscCallThrow() and returned, as the code
   PETSc already reported, where the core was called (CatchCore()). */
struct PetscFailure {
  PetscErrorCode code;
};
#define PetscCallThrow(expr) \
  do { \
    const PetscErrorCode pspmv_throw_ierr_ = (expr); \
    if (pspmv_throw_ierr_) throw pspmv::glue::PetscFailure{pspmv_throw_ierr_}; \
  } while (0)

/* What core code threw, classified once. */
struct CoreFailure {
  enum class Kind : int {
    None = 0,   /* it returned */
    Petsc,      /* a PetscFailure: petsc_code, reported by PETSc where it happened */
    Diagonal,   /* mixed::DiagonalError: row, detail = the problem ("has the diagonal entry 0: ...") */
    ValueRange, /* ValueRangeError: row, col, detail = the message without the coordinates */
    Format,     /* FormatError (bad options or input): what */
    Memory,     /* std::bad_alloc */
    Other       /* any other exception: what */
  };
  Kind           kind       = Kind::None;
  PetscErrorCode petsc_code = PETSC_SUCCESS;
  int64_t        row = -1, col = -1; /* in the numbering of the CSR the core was given */
  std::string    what, detail;       /* what(): the full sentence, in the CSR's numbering */

  explicit operator bool() const { return kind != Kind::None; }
  /* a refusal of the matrix's data (a diagonal entry, a value out of range), not misuse */
  bool Refusal() const { return kind == Kind::Diagonal || kind == Kind::ValueRange; }
};

/* The exception being handled, classified (call inside a catch block only). */
inline CoreFailure CurrentCoreFailure() noexcept
{
  CoreFailure f;
  try {
    throw;
  } catch (const PetscFailure &e) {
    f.kind       = CoreFailure::Kind::Petsc;
    f.petsc_code = e.code;
  } catch (const mixed::DiagonalError &e) {
    f.kind = CoreFailure::Kind::Diagonal;
    f.row  = e.row;
    try {
      f.what   = e.what();
      f.detail = e.problem;
    } catch (...) {
    }
  } catch (const ValueRangeError &e) {
    f.kind = CoreFailure::Kind::ValueRange;
    f.row  = e.row;
    f.col  = e.col;
    try {
      f.what   = e.what();
      f.detail = e.message();
    } catch (...) {
    }
  } catch (const FormatError &e) {
    f.kind = CoreFailure::Kind::Format;
    try {
      f.what = e.what();
    } catch (...) {
    }
  } catch (const std::bad_alloc &) {
    f.kind = CoreFailure::Kind::Memory;
  } catch (const std::exception &e) {
    f.kind = CoreFailure::Kind::Other;
    try {
      f.what = e.what();
    } catch (...) {
    }
  } catch (...) {
    f.kind = CoreFailure::Kind::Other;
    try {
      f.what = "an unknown C++ exception";
    } catch (...) {
    }
  }
  return f;
}

/* Runs f() (core code, or glue code that calls hooks throwing PetscFailure) so that nothing it
   throws crosses into PETSc's C frames; returns what it threw (Kind::None when it returned). */
template <class F>
CoreFailure CatchCore(F &&f) noexcept
{
  try {
    f();
  } catch (...) {
    return CurrentCoreFailure();
  }
  return CoreFailure{};
}

/* How the rows and columns of the CSR a layout is built from are numbered globally: an MPI
   block's rows start at row0, its columns at col0 or, for the off-diagonal block, are cols[c]
   (the default: the CSR's own numbering). A layout in another order (the ordering option) is
   built from the block's rows and columns permuted: its index i is the block's perm[i].
   off_diagonal marks an MPI matrix's off-diagonal block (whose cols are NULL when it has no
   columns). */
struct GlobalIndices {
  int64_t         row0 = 0, col0 = 0;
  const PetscInt *cols         = nullptr;
  const int32_t  *perm         = nullptr;
  bool            off_diagonal = false;

  /* e's sentence in this numbering (a ValueRange error's entry renumbered). */
  std::string Message(const BuildError &e) const
  {
    if (e.kind != BuildError::Kind::ValueRange || (!row0 && !col0 && !cols && !perm)) return e.what();
    const int64_t r = perm ? perm[e.row] : e.row, c = perm ? perm[e.col] : e.col;
    return "row " + std::to_string(row0 + r) + ", column " + std::to_string(cols ? (int64_t)cols[c] : col0 + c) + ": " + e.message;
  }
  std::string Message(const ValueRangeError &e) const { return Message(BuildError::value_range(e)); }
};

/* e as one PETSc error: Format of class `code` (PETSC_ERR_ARG_WRONG for strings and layouts,
   PETSC_ERR_ARG_OUTOFRANGE for integers), ValueRange PETSC_ERR_ARG_OUTOFRANGE (its entry named
   in the numbering g), Device PETSC_ERR_GPU, each with e's message; nothing for None. */
inline PetscErrorCode CheckBuildError(const GlobalIndices &g, PetscErrorCode code, const BuildError &e)
{
  PetscErrorCode cls = code;

  PetscFunctionBegin;
  if (!e) PetscFunctionReturn(PETSC_SUCCESS);
  if (e.kind == BuildError::Kind::ValueRange) cls = PETSC_ERR_ARG_OUTOFRANGE;
  if (e.kind == BuildError::Kind::Device) cls = PETSC_ERR_GPU;
  SETERRQ(PETSC_COMM_SELF, cls, "%s", g.Message(e).c_str());
}

/* f as one PETSc error, as CheckBuildError() maps the core's BuildError (Format and Diagonal of
   class `code`, ValueRange PETSC_ERR_ARG_OUTOFRANGE in the numbering g), a PetscFailure its own
   code (already reported), std::bad_alloc PETSC_ERR_MEM, any other exception PETSC_ERR_LIB;
   subject (may be NULL) starts the message ("KSPMIXEDCG: ..."). Nothing for Kind::None. */
inline PetscErrorCode RaiseCore(const CoreFailure &f, const GlobalIndices &g, PetscErrorCode code, const char *subject = nullptr)
{
  const std::string pre = subject ? std::string(subject) + ": " : std::string();

  PetscFunctionBegin;
  switch (f.kind) {
  case CoreFailure::Kind::None:
    break;
  case CoreFailure::Kind::Petsc:
    PetscCall(f.petsc_code);
    break;
  case CoreFailure::Kind::ValueRange:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s%s", pre.c_str(), g.Message(BuildError::value_range(f.row, f.col, f.detail)).c_str());
  case CoreFailure::Kind::Diagonal:
  case CoreFailure::Kind::Format:
    SETERRQ(PETSC_COMM_SELF, code, "%s%s", pre.c_str(), f.what.c_str());
  case CoreFailure::Kind::Memory:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "%sout of host memory%s", pre.c_str(), subject ? "" : " while building or updating a petscspmv layout");
  case CoreFailure::Kind::Other:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s%s", pre.c_str(), f.what.c_str());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs f (C++ returning a PetscErrorCode, which may throw) as a PETSc call: what it throws
   becomes RaiseCore()'s error naming subject, a returned error is passed on. Callers that hold
   resources (placed arrays, array accesses) release them before PetscCall() on the result. */
template <class F>
PetscErrorCode CallCatching(const char *subject, F &&f)
{
  PetscErrorCode ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  const CoreFailure e = CatchCore([&] { ierr = f(); });
  PetscCall(RaiseCore(e, GlobalIndices{}, PETSC_ERR_ARG_WRONG, subject));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv

/* PetscCallCoreAt(g, code, expr): runs C++ core code; what it throws becomes RaiseCore()'s PETSc
   error (a FormatError of class `code`, a ValueRangeError PETSC_ERR_ARG_OUTOFRANGE with the entry
   in the numbering g, a GlobalIndices, std::bad_alloc PETSC_ERR_MEM, any other std::exception
   PETSC_ERR_LIB), with the exception's message. PetscCallCore(code, expr): the CSR's own
   numbering. PetscCallBuildAt(g, code, expr): expr returns a pspmv::BuildError (the device
   builders), turned into a PETSc error the same way. */
#define PetscCallCore(code, ...)      PetscCallCoreAt(pspmv::glue::GlobalIndices{}, code, __VA_ARGS__)
#define PetscCallCoreAt(g, code, ...) PetscCall(pspmv::glue::RaiseCore(pspmv::glue::CatchCore([&] { __VA_ARGS__; }), g, code))
#define PetscCallBuildAt(g, code, ...) \
  do { \
    pspmv::BuildError pspmv_result_; \
    PetscCallCoreAt(g, code, pspmv_result_ = (__VA_ARGS__)); \
    PetscCall(pspmv::glue::CheckBuildError(g, code, pspmv_result_)); \
  } while (0)
