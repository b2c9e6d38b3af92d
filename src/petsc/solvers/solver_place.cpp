// Where the rows of a solver's Pmat lie in the user's matrix (solver_place.hpp).
#include "solver_place.hpp"
#include "spmvimpl.hpp"

#include <cstring>

namespace pspmv {
namespace glue {

bool IsBlockSolver(PetscObject obj, PetscInt nestlevel, int *world_rank)
{
  int         size = 1, world = 1;
  const char *prefix = obj->prefix;

  (void)MPI_Comm_size(PetscObjectComm(obj), &size);
  (void)MPI_Comm_size(PETSC_COMM_WORLD, &world);
  (void)MPI_Comm_rank(PETSC_COMM_WORLD, world_rank);
  return size == 1 && (world > 1 || nestlevel > 0 || obj->tablevel > 0 || (prefix && std::strstr(prefix, "sub_")));
}

Place PlaceOf(PetscObject obj, PetscInt nestlevel, Mat P, int64_t r, int64_t c)
{
  int rank = 0;

  if (!IsBlockSolver(obj, nestlevel, &rank)) return Place{"Pmat row " + std::to_string(P->rmap->rstart + r), "column " + std::to_string(P->cmap->rstart + c), ""};
  const std::string on = " (a block solver on rank " + std::to_string(rank);
  if (const SeqState *sp = SeqGetState(P))
    if (sp->block) /* the diagonal block of an MPI matrix of ours: its numbering is the user's */
      return Place{"row " + std::to_string(sp->global.row0 + r) + " of the user's matrix", "column " + std::to_string(sp->global.col0 + c), on + ", e.g. of PCBJACOBI)"};
  return Place{"row " + std::to_string(r) + " of its block", "column " + std::to_string(c),
               on + ", e.g. of PCBJACOBI or PCASM: rows and columns are numbered from the block's first row; with PCBJACOBI's one block per rank, add the first row the rank owns in the user's matrix)"};
}

} // namespace glue
} // namespace pspmv
