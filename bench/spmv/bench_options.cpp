#include "bench_options.hpp"
#include "matrix_source.hpp"

#include <cstdio>
#include <exception>

namespace bench
{

const char help[] = "spmv_bench: SpMV (MatMult) of aijcusparse, sellcuda, rgcsrcuda, packsellcuda and cuSPARSE.\n"
                    "  -f a.mtx[.gz|.xz],b.petsc,...  matrix files (Matrix Market or PETSc binary); -flist FILE: one path a line\n"
                    "  -gen lap7:N,lap27:N,powerlaw:ROWS:AVG:ALPHA:SEED  generated matrices\n"
                    "  -formats LIST     default: aijcusparse,sellcuda,rgcsrcuda:g32,rgcsrcuda:g64,rgcsrcuda:g128,rgcsrcuda:g256,\n"
                    "                    packsellcuda:fp16,packsellcuda:bf16,packsellcuda:e8m14,packsellcuda:e8m22,packsellcuda:exact,\n"
                    "                    cusparse_csr:fp64,cusparse_sell:fp64,cusparse_sell:fp16\n"
                    "                    rgcsrcuda[:g<G>][:hyb=auto|none|K]  packsellcuda[:<value format>][:hyb=..][:scaling=auto][:C=..][:sigma=..]\n"
                    "                    cusparse_csr:fp64|fp16  cusparse_sell:fp64|fp16; any token mat_x=v sets -mat_x v for that format\n"
                    "  -reps 100 -warmup 10 -flush_l2 1 -copy_bytes 1073741824 -time_limit 0 (s; skip matrices after it)\n"
                    "  -json out.json -csv out.csv -commit SHA -label TEXT -progress FILE (a line per matrix started/done)\n"
                    "  -save_binary DIR  also write each matrix as DIR/<name>.petsc (PETSc binary, read back with -f)\n"
                    "  -cpu  host types (aij, seqsell, rgcsr, packsell) and host timers: checks the program without a GPU\n";

namespace
{

PetscErrorCode GetStringList(const char *name, std::vector<std::string> &out)
{
  char      buf[PETSC_MAX_PATH_LEN * 64];
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(nullptr, nullptr, name, buf, sizeof(buf), &set));
  if (set)
    for (auto &s : split(buf, ','))
      if (!s.empty()) out.push_back(s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode ParseOptions(Bench &b, Options &o)
{
  PetscFunctionBegin;
  PetscBool flg = PETSC_FALSE;
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-cpu", &flg, nullptr));
  b.cpu = flg;
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &b.reps, nullptr));
  PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-warmup", &b.warmup, nullptr));
  PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-flush_l2", &b.flush, nullptr));
  PetscReal cb = PetscReal(b.copy_bytes);
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-copy_bytes", &cb, nullptr));
  PetscCheck(cb >= 1 << 20, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-copy_bytes must be at least 1 MiB");
  b.copy_bytes = size_t(cb);
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-time_limit", &o.time_limit, nullptr));
  PetscCheck(b.reps >= 1 && b.warmup >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be >= 1 and -warmup >= 0");
  char      buf[PETSC_MAX_PATH_LEN];
  PetscBool set;
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-json", buf, sizeof(buf), &set));
  if (set) o.json = buf;
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-csv", buf, sizeof(buf), &set));
  if (set) o.csv = buf;
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-progress", buf, sizeof(buf), &set));
  if (set) o.progress = buf;
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-commit", buf, sizeof(buf), &set));
  if (set) b.commit = buf;
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-label", buf, sizeof(buf), &set));
  if (set) b.label = buf;
  std::vector<std::string> files, gens, fmts;
  PetscCall(GetStringList("-f", files));
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-flist", buf, sizeof(buf), &set));
  if (set) {
    FILE *fl = std::fopen(buf, "r");
    PetscCheck(fl, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open the -flist file %s", buf);
    char line[PETSC_MAX_PATH_LEN];
    while (std::fgets(line, sizeof(line), fl)) {
      std::string s(line);
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
      if (!s.empty() && s[0] != '#') files.push_back(s);
    }
    std::fclose(fl);
  }
  PetscCall(PetscOptionsGetString(nullptr, nullptr, "-save_binary", buf, sizeof(buf), &set));
  if (set) o.save_dir = buf;
  PetscCall(GetStringList("-gen", gens));
  PetscCall(GetStringList("-formats", fmts));
  if (fmts.empty())
    fmts = split("aijcusparse,sellcuda,rgcsrcuda:g32,rgcsrcuda:g64,rgcsrcuda:g128,rgcsrcuda:g256,packsellcuda:fp16,packsellcuda:bf16,packsellcuda:e8m14,packsellcuda:e8m22,packsellcuda:exact,cusparse_csr:fp64,cusparse_sell:fp64,cusparse_sell:fp16", ',');
  for (auto &f : files) o.sources.push_back({f, false});
  for (auto &g : gens) o.sources.push_back({g, true});
  try {
    for (auto &f : fmts) o.formats.push_back(parse_format(f, b.cpu));
  } catch (const std::exception &e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s", e.what());
  }
  PetscCheck(!o.sources.empty(), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "no matrices: give -f FILES, -flist FILE and/or -gen SPECS (see -help)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace bench
