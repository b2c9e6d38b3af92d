// The one place where exceptions of the PETSc-free core become PETSc errors.
#pragma once
#include <petscsys.h>

#include "core/csr.hpp"

#include <new>
#include <stdexcept>
#include <string>

/* PetscCallCore(code, expr): runs C++ core code. A pspmv::FormatError becomes a PETSc error of
   class `code` (PETSC_ERR_ARG_WRONG for strings and layouts, PETSC_ERR_ARG_OUTOFRANGE for
   integers), a pspmv::ValueRangeError PETSC_ERR_ARG_OUTOFRANGE, std::bad_alloc PETSC_ERR_MEM and
   any other std::exception PETSC_ERR_LIB, each with the exception's message unchanged. */
#define PetscCallCore(code, ...) \
  do { \
    PetscErrorCode pspmv_code_ = PETSC_SUCCESS; \
    std::string    pspmv_msg_; \
    try { \
      __VA_ARGS__; \
    } catch (const pspmv::ValueRangeError &pspmv_e_) { \
      pspmv_code_ = PETSC_ERR_ARG_OUTOFRANGE; \
      pspmv_msg_  = pspmv_e_.what(); \
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
