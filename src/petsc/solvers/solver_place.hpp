// Where the rows of a solver's Pmat lie in the user's matrix, for the messages of the two mixed
// solvers (PCMIXEDKRYLOV, KSPMIXEDCG): a solver on the whole matrix names its global rows; a block
// solver (a solver on one rank's block, as PCBJACOBI's and PCASM's sub-solvers) names the user's
// row when the block belongs to an MPI matrix of ours (its numbering is known), else the block's
// own row with a sentence saying how to find the user's.
#pragma once
#include <petscmat.h>

#include <cstdint>
#include <string>

namespace pspmv {
namespace glue {

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

} // namespace glue
} // namespace pspmv
