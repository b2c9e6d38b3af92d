#!/usr/bin/env bash
# The one command the GPU machine runs for the SpMV benchmark (bench/spmv/spmv_bench):
#
#   bash bench/spmv/run_bench.sh OUTDIR [MATRIX_DIR]
#
# MATRIX_DIR may be several folders separated by ':' (the first file of a name wins).
# OUTDIR gets bench.json (bench-2.json, ... if a run had to be restarted) and bench.csv (the rows
# of docs/bench/latest.csv), nothing else unless PETSc or spmv_bench had to be installed/built
# (their logs); the table goes to stdout. MATRIX_DIR (default
# gpu-deps/matrices) holds the real matrices as .mtx, .mtx.gz, .mtx.xz (bench/spmv/pack_matrices.sh makes
# those) or PETSc binary .petsc files: spmv_bench reads all of them itself, no scipy needed.
# After the real matrices it runs the generated large ones: 3-D 7-point Laplacians 128^3 and
# 200^3, 27-point 128^3 and 160^3, and a power-law matrix with 4M rows.
#
# It uses build-gpu/bench/spmv/spmv_bench (what scripts/gpu_validate.sh builds) or any build*/ that
# has one, else configures and builds it into build-gpu. PETSc: installed from gpu-deps/install.sh
# when /opt/petsc-cuda is missing. Environment knobs:
#   BENCH_FORMATS      -formats list (default: spmv_bench's, 14 formats)
#   BENCH_GEN          generated matrices (default below; empty: none)
#   BENCH_REPS         timed products per format (default 100), BENCH_WARMUP (default 10)
#   BENCH_TIME_LIMIT   seconds after which remaining matrices are skipped (default 330)
#   BENCH_ONLY         a regex: only matrix files whose name matches
#   BENCH_COMMIT, BENCH_LABEL   recorded in the JSON header
#   BENCH_BIN          the spmv_bench to use
#   BENCH_ARGS         more spmv_bench options (e.g. "-flush_l2 0"; "-cpu" tries it all without a GPU)
set -uo pipefail
out=${1:?usage: run_bench.sh OUTDIR [MATRIX_DIR]}
top=$(cd "$(dirname "$0")/../.." && pwd)
mdir=${2:-$top/gpu-deps/matrices}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$top"
t_begin=$(date +%s)
say() { echo "== run_bench $(date -u +%H:%M:%S) $*"; }

# ---------------------------------------------------------------- PETSc
if [ ! -f /opt/petsc-cuda/lib/libpetsc.so ] && [ -f gpu-deps/install.sh ]; then
  say "installing PETSc from gpu-deps"
  sh gpu-deps/install.sh > "$out/petsc-install.log" 2>&1 || { say "PETSc install FAILED"; tail -20 "$out/petsc-install.log"; exit 1; }
fi
export PETSC_DIR=${PETSC_DIR:-/opt/petsc-cuda}
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ncpu=$(nproc 2>/dev/null || echo 8)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$ncpu}

# ---------------------------------------------------------------- the program
bin=${BENCH_BIN:-}
[ -n "$bin" ] || for b in build-gpu/bench/spmv/spmv_bench build-bench/bench/spmv/spmv_bench build/bench/spmv/spmv_bench build*/bench/spmv/spmv_bench; do
  if [ -x "$b" ]; then bin=$b; break; fi
done
if [ -z "$bin" ]; then
  say "building spmv_bench in build-gpu"
  cmake -S . -B build-gpu -DPETSCSPMV_ENABLE_TESTS=OFF > "$out/bench-configure.log" 2>&1 &&
    cmake --build build-gpu -j "$ncpu" --target spmv_bench >> "$out/bench-configure.log" 2>&1
  [ -x build-gpu/bench/spmv/spmv_bench ] && bin=build-gpu/bench/spmv/spmv_bench
  [ -n "$bin" ] || { say "building spmv_bench FAILED"; tail -30 "$out/bench-configure.log"; exit 1; }
fi
say "using $bin"

# ---------------------------------------------------------------- matrices
# One file per matrix name: a .petsc file wins over Matrix Market; compressed files are
# decompressed in parallel first (the program would otherwise read them through a pipe, serially).
work=${TMPDIR:-/tmp}/spmv_bench_mtx
rm -rf "$work"; mkdir -p "$work"
list=$work/matrices.txt
: > "$list"
IFS=: read -r -a mdirs <<< "$mdir"
found=""
for d in "${mdirs[@]}"; do [ -d "$d" ] && found=yes; done
if [ -n "$found" ]; then
  declare -A seen=()
  for f in $(for d in "${mdirs[@]}"; do ls -d "$d"/*.petsc "$d"/*.mtx "$d"/*.mtx.gz "$d"/*.mtx.xz "$d"/*.mtx.bz2 2>/dev/null; done); do
    [ -f "$f" ] || continue
    name=$(basename "$f"); name=${name%.gz}; name=${name%.xz}; name=${name%.bz2}; name=${name%.mtx}; name=${name%.petsc}
    [ -n "${seen[$name]:-}" ] && continue
    if [ -n "${BENCH_ONLY:-}" ] && ! [[ $name =~ $BENCH_ONLY ]]; then continue; fi
    seen[$name]=1
    case "$f" in
      *.gz)  echo "gzip -dc '$f' > '$work/$name.mtx'" ;;
      *.xz)  echo "xz -dc '$f' > '$work/$name.mtx'" ;;
      *.bz2) echo "bzip2 -dc '$f' > '$work/$name.mtx'" ;;
      *)     echo "ln -sf '$(cd "$(dirname "$f")" && pwd)/$(basename "$f")' '$work/$name.${f##*.}'" ;;
    esac
  done > "$work/jobs.sh"
  xargs -P "$ncpu" -I{} sh -c '{}' < "$work/jobs.sh" || say "warning: some matrices could not be decompressed"
  # smallest first: a time limit then skips the big ones last
  for f in "$work"/*.petsc "$work"/*.mtx; do [ -e "$f" ] && echo "$(stat -L -c %s "$f") $f"; done | sort -n | cut -d' ' -f2- > "$list"
else
  say "warning: no matrix folder $mdir: only generated matrices"
fi
say "$(wc -l < "$list") matrix files from $mdir (decompressed in $(( $(date +%s) - t_begin )) s)"

gen=${BENCH_GEN-lap7:128,lap27:128,lap7:200,lap27:160,powerlaw:4000000:16:2.5:7}
commit=${BENCH_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
label=${BENCH_LABEL:-$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)}
limit=${BENCH_TIME_LIMIT:-330}
fmt_opt=()
[ -n "${BENCH_FORMATS:-}" ] && fmt_opt=(-formats "$BENCH_FORMATS")

# ---------------------------------------------------------------- run (restart after a lost CUDA context)
progress=$work/progress.txt
: > "$progress"
rm -f "$out/bench.csv" "$out"/bench*.json
todo_files=$(cat "$list")
todo_gen=$gen
rc=0
for run in 1 2 3; do
  json=$out/bench.json
  [ $run -gt 1 ] && json=$out/bench-$run.json
  flist=$work/flist-$run.txt
  printf '%s\n' $todo_files > "$flist"
  args=(-json "$json" -csv "$out/bench.csv" -progress "$progress" -commit "$commit" -label "$label"
        -reps "${BENCH_REPS:-100}" -warmup "${BENCH_WARMUP:-10}" "${fmt_opt[@]}")
  [ -s "$flist" ] && args+=(-flist "$flist")
  [ -n "$todo_gen" ] && args+=(-gen "$todo_gen")
  elapsed=$(( $(date +%s) - t_begin ))
  left=$(( limit - elapsed )); [ $left -lt 30 ] && left=30
  args+=(-time_limit "$left")
  # shellcheck disable=SC2206
  [ -n "${BENCH_ARGS:-}" ] && args+=(${BENCH_ARGS})
  say "run $run: $(wc -w <<< "$todo_files") files + generated '$todo_gen', time limit ${left}s"
  "$bin" "${args[@]}"
  rc=$?
  [ $rc -eq 0 ] && break
  say "spmv_bench exited with $rc"
  # matrices with a 'start' and no 'done' line crashed: skip them; rerun the rest
  started=$(awk '$1=="start"{print $2}' "$progress")
  finished=$(awk '$1=="done"||$1=="aborted"{print $2}' "$progress")
  crashed=$(comm -23 <(echo "$started" | sort -u) <(echo "$finished" | sort -u))
  [ -n "$crashed" ] && say "crashed on: $crashed (skipped in the next run)"
  remaining() { for s in $1; do grep -qxF "$s" <(echo "$started") || echo "$s"; done; }
  todo_files=$(remaining "$todo_files")
  todo_gen=$(remaining "$(tr ',' ' ' <<< "$todo_gen")" | paste -sd, -)
  if [ -z "$todo_files" ] && [ -z "$todo_gen" ]; then break; fi
done
say "done in $(( $(date +%s) - t_begin )) s (rc $rc): $(ls "$out"/bench*.json 2>/dev/null | tr '\n' ' ') $out/bench.csv"
exit $rc
