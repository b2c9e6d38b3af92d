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
   block's rows start at row0, its columns at col0 or, for the off-diagonal block, are cols[c]
   (the default: the CSR's own numbering). */
struct GlobalIndices {
  int64_t         row0 = 0, col0 = 0;
  const PetscInt *cols = nullptr;

  /* e's sentence in this numbering. */
  std::string Message(const ValueRangeError &e) const
  {
    if (!row0 && !col0 && !cols) return e.what();
    return "row " + std::to_string(row0 + e.row) + ", column " + std::to_string(cols ? (int64_t)cols[e.col] : col0 + e.col) + ": " + e.message();
  }
};

} // namespace glue
} // namespace pspmv

/* PetscCallCoreAt(g, code, expr): runs C++ core code. A pspmv::FormatError becomes a PETSc error
   of class `code` (PETSC_ERR_ARG_WRONG for strings and layouts, PETSC_ERR_ARG_OUTOFRANGE for
   integers), a pspmv::ValueRangeError PETSC_ERR_ARG_OUTOFRANGE (its entry named in the numbering
   g, a GlobalIndices), std::bad_alloc PETSC_ERR_MEM and any other std::exception PETSC_ERR_LIB,
   each with the exception's message unchanged. PetscCallCore(code, expr): the CSR's own
   numbering. */
#define PetscCallCore(code, ...) PetscCallCoreAt(pspmv::glue::GlobalIndices{}, code, __VA_ARGS__)
#define PetscCallCoreAt(g, code, ...) \
  do { \
    PetscErrorCode pspmv_code_ = PETSC_SUCCESS; \
    std::string    pspmv_msg_; \
    try { \
      __VA_ARGS__; \
    } catch (const pspmv::ValueRangeError &pspmv_e_) { \
      pspmv_code_ = PETSC_ERR_ARG_OUTOFRANGE; \
      pspmv_msg_  = (g).Message(pspmv_e_); \
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
