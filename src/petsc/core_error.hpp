// The one place where exceptions of the PETSc-free core become PETSc errors.
#pragma once
#include <petscsys.h>

#include "core/csr.hpp"

#include <new>
#include <stdexcept>
#include <string>

namespace pspmv {
namespace glue {

/* How the rows and columns of the CSR a layout is built from are numbered globally: an MPI
   block's rows start at row0, its columns at col0 or, for the off-diagonal block, are cols[c]. */
struct GlobalIndices {
  int64_t         row0 = 0, col0 = 0;
  const PetscInt *cols = nullptr;
};

/* While alive, range errors of the core name entries by `g`. */
class GlobalIndexScope {
public:
  explicit GlobalIndexScope(const GlobalIndices &g) : outer_(current_), g_(g) { current_ = this; }
  ~GlobalIndexScope() { current_ = outer_; }
  GlobalIndexScope(const GlobalIndexScope &)            = delete;
  GlobalIndexScope &operator=(const GlobalIndexScope &) = delete;

  /* e's sentence in the numbering of the innermost scope that is not the identity (a seq
     matrix's own scope leaves an enclosing MPI block's numbering in force). */
  static std::string Message(const ValueRangeError &e)
  {
    const GlobalIndexScope *s = current_;
    while (s && !s->g_.row0 && !s->g_.col0 && !s->g_.cols) s = s->outer_;
    if (!s) return e.what();
    const GlobalIndices &g = s->g_;
    return "row " + std::to_string(g.row0 + e.row) + ", column " + std::to_string(g.cols ? (int64_t)g.cols[e.col] : g.col0 + e.col) + ": " + e.message();
  }

private:
  static inline const GlobalIndexScope *current_ = nullptr;
  const GlobalIndexScope               *outer_;
  GlobalIndices                         g_;
};

} // namespace glue
} // namespace pspmv

/* PetscCallCore(code, expr): runs C++ core code. A pspmv::FormatError becomes a PETSc error of
   class `code` (PETSC_ERR_ARG_WRONG for strings and layouts, PETSC_ERR_ARG_OUTOFRANGE for
   integers), a pspmv::ValueRangeError PETSC_ERR_ARG_OUTOFRANGE (named in global coordinates
   inside a GlobalIndexScope), std::bad_alloc PETSC_ERR_MEM and
   any other std::exception PETSC_ERR_LIB, each with the exception's message unchanged. */
#define PetscCallCore(code, ...) \
  do { \
    PetscErrorCode pspmv_code_ = PETSC_SUCCESS; \
    std::string    pspmv_msg_; \
    try { \
      __VA_ARGS__; \
    } catch (const pspmv::ValueRangeError &pspmv_e_) { \
      pspmv_code_ = PETSC_ERR_ARG_OUTOFRANGE; \
      pspmv_msg_  = pspmv::glue::GlobalIndexScope::Message(pspmv_e_); \
    } catch (const pspmv::FormatError &pspmv_e_) { \
      pspmv_code_ = (code); \
      pspmv_msg_  = pspmv_e_.what(); \
    } catch (const std::bad_alloc &) { \
      pspmv_code_ = PETSC_ERR_MEM; \
      pspmv_msg_  = "out of host memory while building or updating a petscspmv layout"; \
    } catch (const std::exception &pspmv_e_) { \
      pspmv_code_ = PETSC_ERR_LIB; \
      pspmv_msg_  = pspmv_e_.what(); \
    } \
    PetscCheck(pspmv_code_ == PETSC_SUCCESS, PETSC_COMM_SELF, pspmv_code_, "%s", pspmv_msg_.c_str()); \
  } while (0)
