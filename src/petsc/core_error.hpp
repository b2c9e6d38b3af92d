// The one place where errors of the PETSc-free core become PETSc errors: the builders'
// BuildError (the device builders return it) and the core's exceptions (the host API throws
// them), through one mapping (CheckBuildError), so a host and a device build refusing the same
// matrix raise the same PETSc error with the same message.
#pragma once
#include <petscsys.h>

#include "core/build_error.hpp"
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

  /* e's sentence in this numbering (a ValueRange error's entry renumbered). */
  std::string Message(const BuildError &e) const
  {
    if (e.kind != BuildError::Kind::ValueRange || (!row0 && !col0 && !cols)) return e.what();
    return "row " + std::to_string(row0 + e.row) + ", column " + std::to_string(cols ? (int64_t)cols[e.col] : col0 + e.col) + ": " + e.message;
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

} // namespace glue
} // namespace pspmv

/* PetscCallCoreAt(g, code, expr): runs C++ core code. A pspmv::FormatError or pspmv::ValueRangeError
   becomes the PETSc error CheckBuildError() makes of it (class `code`, or
   PETSC_ERR_ARG_OUTOFRANGE with the entry in the numbering g, a GlobalIndices), std::bad_alloc
   PETSC_ERR_MEM and any other std::exception PETSC_ERR_LIB, each with the exception's message.
   PetscCallCore(code, expr): the CSR's own numbering. PetscCallBuildAt(g, code, expr): expr
   returns a pspmv::BuildError (the device builders), turned into a PETSc error the same way. */
#define PetscCallCore(code, ...) PetscCallCoreAt(pspmv::glue::GlobalIndices{}, code, __VA_ARGS__)
#define PetscCallCoreAt(g, code, ...) \
  do { \
    pspmv::BuildError pspmv_be_; \
    PetscErrorCode    pspmv_code_ = PETSC_SUCCESS; \
    std::string       pspmv_msg_; \
    try { \
      __VA_ARGS__; \
    } catch (const pspmv::ValueRangeError &pspmv_e_) { \
      pspmv_be_ = pspmv::BuildError::value_range(pspmv_e_); \
    } catch (const pspmv::FormatError &pspmv_e_) { \
      pspmv_be_ = pspmv::BuildError::format(pspmv_e_.what()); \
    } catch (const std::bad_alloc &) { \
      pspmv_code_ = PETSC_ERR_MEM; \
      pspmv_msg_  = "out of host memory while building or updating a petscspmv layout"; \
    } catch (const std::exception &pspmv_e_) { \
      pspmv_code_ = PETSC_ERR_LIB; \
      pspmv_msg_  = pspmv_e_.what(); \
    } \
    PetscCall(pspmv::glue::CheckBuildError(g, code, pspmv_be_)); \
    PetscCheck(pspmv_code_ == PETSC_SUCCESS, PETSC_COMM_SELF, pspmv_code_, "%s", pspmv_msg_.c_str()); \
  } while (0)
#define PetscCallBuildAt(g, code, ...) \
  do { \
    pspmv::BuildError pspmv_result_; \
    PetscCallCoreAt(g, code, pspmv_result_ = (__VA_ARGS__)); \
    PetscCall(pspmv::glue::CheckBuildError(g, code, pspmv_result_)); \
  } while (0)
