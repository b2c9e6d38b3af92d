// What the two mixed solvers share in the glue (solver_common.hpp).
#include "solver_common.hpp"
#include "spmvimpl.hpp"

#include <cstring>

namespace pspmv
{
namespace glue
{

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
  return Place{"row " + std::to_string(r) + " of its block", "column " + std::to_string(c), on + ", e.g. of PCBJACOBI or PCASM: rows and columns are numbered from the block's first row; with PCBJACOBI's one block per rank, add the first row the rank owns in the user's matrix)"};
}

const char *const BackendNames[3] = {"auto", "host", "cuda"};

PetscErrorCode UseCudaBackend(PetscObject obj, Mat P, PetscInt choice, const char *option, PetscBool *cuda)
{
  VecType   vt     = nullptr;
  PetscBool iscuda = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatGetVecType(P, &vt));
  if (vt) {
    char *found = nullptr;
    PetscCall(PetscStrstr(vt, "cuda", &found));
    iscuda = found ? PETSC_TRUE : PETSC_FALSE;
  }
  if (choice == BackendHost) iscuda = PETSC_FALSE;
  else if (choice == BackendCuda) iscuda = PETSC_TRUE;
#if !defined(PETSCSPMV_HAVE_CUDA)
  PetscCheck(choice != BackendCuda, PetscObjectComm(obj), PETSC_ERR_SUP, "%s cuda: this petscspmv was built without CUDA", option);
  iscuda = PETSC_FALSE;
#endif
  *cuda = iscuda;
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace
{

CopyFailure DescribeCopyFailure(const CoreFailure &e, const CopySubject &s)
{
  CopyFailure c;
  c.refusal = e.Refusal();
  switch (e.kind) {
  case CoreFailure::Kind::Diagonal: {
    const Place at = PlaceOf(s.obj, s.nestlevel, s.P, e.row, e.row);
    c.code         = PETSC_ERR_ARG_WRONG;
    c.message      = std::string(s.solver) + at.where + ": " + at.row + " " + e.detail;
  } break;
  case CoreFailure::Kind::ValueRange: {
    const Place at = PlaceOf(s.obj, s.nestlevel, s.P, e.row, e.col);
    c.code         = PETSC_ERR_ARG_OUTOFRANGE;
    c.message      = std::string(s.copy) + " of D^-1/2 A D^-1/2 (entry a_ij / sqrt(a_ii a_jj)), " + at.row + ", " + (s.gcols ? "column " + std::to_string((long long)s.gcols[e.col]) : at.col) + ": " + e.detail + s.range_remedy + at.where;
  } break;
  case CoreFailure::Kind::Format:
    c.code    = PETSC_ERR_ARG_WRONG;
    c.message = e.what;
    break;
  case CoreFailure::Kind::Memory:
    c.code    = PETSC_ERR_MEM;
    c.message = std::string("out of host memory while building the ") + s.solver + " copy";
    break;
  default:
    c.code    = PETSC_ERR_LIB;
    c.message = std::string(s.solver) + ": " + e.what;
    break;
  }
  return c;
}

} // namespace

PetscErrorCode RunCopyBuild(const CopySubject &s, const std::function<void()> &f, PetscBool raise_refusal, CopyFailure *refused)
{
  PetscFunctionBegin;
  *refused            = CopyFailure{};
  const CoreFailure e = CatchCore(f);
  if (!e) PetscFunctionReturn(PETSC_SUCCESS);
  if (e.kind == CoreFailure::Kind::Petsc) PetscCall(e.petsc_code); /* reported where it happened */
  CopyFailure c;
  PetscCallCXX(c = DescribeCopyFailure(e, s));
  if (c.refusal) *refused = c;
  PetscCheck(c.refusal && !raise_refusal, PETSC_COMM_SELF, c.code, "%s", c.message.c_str());
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace glue
} // namespace pspmv
