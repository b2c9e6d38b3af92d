// The command line of spmv_bench (PETSc options; -help prints help[]).
#pragma once
#include "bench_context.hpp"
#include "format_spec.hpp"

#include <petscsys.h>

#include <string>
#include <vector>

namespace bench
{

extern const char help[];

struct Source {
  std::string spec;
  bool        generated;
};

struct Options {
  std::vector<Source>     sources; // -f and -flist files first, then -gen specs
  std::vector<FormatSpec> formats;
  std::string             json, csv, progress, save_dir;
  PetscReal               time_limit = 0;
};

// Reads the options into o and the run settings (-cpu, -reps, -warmup, -flush_l2, -copy_bytes,
// -commit, -label) into b; an error for a bad value, a bad -formats token or no matrices.
PetscErrorCode ParseOptions(Bench &b, Options &o);

} // namespace bench
