// What the two mixed solvers (PCMIXEDKRYLOV, KSPMIXEDCG) share in the glue: the backend choice,
// the one runner of their copies' builds with its messages, and where the rows of a solver's Pmat
// lie in the user's matrix for those messages: a solver on the whole matrix names its global rows; a block
// solver (a solver on one rank's block, as PCBJACOBI's and PCASM's sub-solvers) names the user's
// row when the block belongs to an MPI matrix of ours (its numbering is known), else the block's
// own row with a sentence saying how to find the user's.
#pragma once
#include <petscmat.h>

#include "core_error.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace pspmv
{
namespace glue
{

/* How messages name local row r and column c of a solver's Pmat; `where` is empty for a solver on
   the whole matrix, else it says that the solver is a block solver on this rank. */
struct Place {
  std::string row, col, where;
};

/* Whether a solver (a PC or a KSP: obj, with its KSP nest level) is a block solver: a solver on
   one rank that solves with a block of a larger matrix. PETSc marks such a solver differently in
   different versions and solver types (a nest level > 0 for PCBJACOBI but not PCASM, a tab level
   > 0 in 3.22 but not 3.25, the options prefix "sub_" of both), so any of these marks it, and so
   does a one-rank solver in a parallel run. *world_rank: this rank in PETSC_COMM_WORLD. */
bool IsBlockSolver(PetscObject obj, PetscInt nestlevel, int *world_rank);

/* The place of local row r, column c of the Pmat P of solver obj (r, c counted from P's first
   local row and column). */
Place PlaceOf(PetscObject obj, PetscInt nestlevel, Mat P, int64_t r, int64_t c);

/* The values of -ksp_mixedcg_backend and -pc_mixedkrylov_backend (PetscOptionsEList), in order. */
enum BackendChoice : PetscInt {
  BackendAuto = 0,
  BackendHost = 1,
  BackendCuda = 2
};
extern const char *const BackendNames[3];

/* Whether a mixed solver runs on the CUDA backend: with choice auto, when the Pmat P's vectors are
   CUDA vectors. Errors: PETSC_ERR_SUP (on obj's communicator) for BackendCuda in a build without
   CUDA, naming option ("-ksp_mixedcg_backend"). */
PetscErrorCode UseCudaBackend(PetscObject obj, Mat P, PetscInt choice, const char *option, PetscBool *cuda);

/* How a mixed solver names itself, its copy and the copy's options in its messages. */
struct CopySubject {
  PetscObject     obj;             /* the solver */
  PetscInt        nestlevel;       /* its KSP nest level */
  Mat             P;               /* its Pmat */
  const char     *solver;          /* "KSPMIXEDCG" */
  const char     *copy;            /* "KSPMIXEDCG's low-precision copy" */
  const PetscInt *gcols = nullptr; /* the off-diagonal block's global columns (else P's columns) */
  std::string     range_remedy;    /* said after a value-range refusal */
};

/* What a build of a solver's copy refused or failed with: a PETSc error class and its message in
   the user's numbering and naming the solver's options. */
struct CopyFailure {
  PetscErrorCode code = PETSC_SUCCESS;
  std::string    message;
  bool           refusal = false; /* the Pmat's data refused (a diagonal entry, a value out of range) */
};

/* Runs f (a build or value update of the core's copy, which may throw). A refusal of the data
   (CoreFailure::Refusal()) fills *refused and is a PETSc error of its class only when raise_refusal
   (KSPMIXEDCG; PCMIXEDKRYLOV reports it through PCSetFailedReason()); anything else f throws is a
   PETSc error on this rank (a hook's PETSc error passed on as reported). */
PetscErrorCode RunCopyBuild(const CopySubject &s, const std::function<void()> &f, PetscBool raise_refusal, CopyFailure *refused);

} // namespace glue
} // namespace pspmv
