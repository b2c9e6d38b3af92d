#!/usr/bin/env bash
# End-to-end benchmark: time to solution, assembly included, of PETSc's own unmodified
# tutorials with our Mat types loaded through -dll_append, against aijcusparse in the same run.
#
#   bash bench/end_to_end/end_to_end.sh OUTDIR [BUILD_DIR]
#
# Cases (one process per case and format, one rank):
#   ksp_ex45_<N>   ksp ex45, 3-D 7-point Laplacian on a DMDA, N^3 (default 200):
#                  -da_grid_x N -da_grid_y N -da_grid_z N -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8
#   snes_ex19_<N>  snes ex19, driven cavity on a 2-D DMDA with 4 fields, N^2 (default 512), Newton
#                  with the finite-difference (coloring) Jacobian re-assembled every step:
#                  -da_grid_x N -da_grid_y N -ksp_type bcgs -pc_type jacobi
# each with -dm_mat_type X -dm_vec_type cuda -log_view, X in aijcusparse rgcsrcuda packsellcuda.
# Every case and format runs twice: first with -log_trace as well (per-occurrence event times:
# which assembly is the first, which upload follows it; also the warm-up), then the timed run
# with -log_view alone. bench/tables/end_to_end_table.py turns the logs into OUTDIR/end-to-end.csv,
# end-to-end-detail.csv, end-to-end.md and end-to-end.png (bench/README.md: the columns).
# Raw files in OUTDIR/e2e/: <case>_<format>.log (stdout of the timed run with its -log_view),
# <case>_<format>.trace.log (the traced run's stdout and -log_view), <case>_<format>.trace.gz.
#
# BUILD_DIR (default build-gpu): the tree with src/petsc/libpetscspmv.so and bench/petsc_tutorials/petsc_ksp_ex45,
# petsc_snes_ex19 (built by CMake from PETSc's examples; a missing one skips its case).
# Environment:
#   E2E_HOST=1      the host types (aij rgcsr packsell, -dm_vec_type standard, baseline aij) on
#                   small grids (ex45 40^3, ex19 64^2): proves the runs and the parsing without a GPU
#   E2E_TYPES       the formats (first one = the baseline; default "aijcusparse rgcsrcuda packsellcuda")
#   E2E_EX45_N, E2E_EX19_N   the grids; E2E_CASES "ex45 ex19" (a subset); E2E_TRACE=0: no traced run
#   E2E_ARGS        more options for every run
set -uo pipefail
out=${1:?usage: end_to_end.sh OUTDIR [BUILD_DIR]}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$top/build-gpu}
mkdir -p "$out/e2e"
out=$(cd "$out" && pwd)
raw=$out/e2e
t_begin=$(date +%s)
say() { echo "== end_to_end $(date -u +%H:%M:%S) (+$(( $(date +%s) - t_begin ))s) $*"; }

export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
if [ "${E2E_HOST:-0}" = 1 ]; then
  types=${E2E_TYPES:-aij rgcsr packsell}; vec=standard
  n45=${E2E_EX45_N:-40}; n19=${E2E_EX19_N:-64}
else
  types=${E2E_TYPES:-aijcusparse rgcsrcuda packsellcuda}; vec=cuda
  n45=${E2E_EX45_N:-200}; n19=${E2E_EX19_N:-512}
fi
lib=""
for l in "$build/src/petsc/libpetscspmv.so" "$build"/lib/libpetscspmv.so "$build"/lib64/libpetscspmv.so; do
  [ -f "$l" ] && { lib=$l; break; }
done
[ -n "$lib" ] || { say "no libpetscspmv.so under $build (build it first: scripts/gpu_validate.sh OUTDIR build)"; exit 1; }
ex45=$build/bench/petsc_tutorials/petsc_ksp_ex45
ex19=$build/bench/petsc_tutorials/petsc_snes_ex19
say "library $lib; formats: $types; vectors $vec; ex45 ${n45}^3, ex19 ${n19}^2"
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/== GPU: /'

# run CASE FORMAT PROGRAM OPTIONS...: the traced run, then the timed run
rc_all=0
run() {
  local case=$1 fmt=$2 prog=$3; shift 3
  local base=$raw/${case}_${fmt} rc t0
  # shellcheck disable=SC2206
  local common=("$@" -dll_append "$lib" -dm_mat_type "$fmt" -dm_vec_type "$vec" -log_view ${E2E_ARGS:-})
  if [ "${E2E_TRACE:-1}" != 0 ]; then
    rm -f "$base.trace" "$base.trace".* "$base.trace.gz"
    t0=$(date +%s.%N)
    # -log_view_gpu_time: events wait for their kernels, so the traced durations are GPU times
    "$prog" "${common[@]}" -log_view_gpu_time -log_trace "$base.trace" > "$base.trace.log" 2>&1
    rc=$?
    # the trace handler appends the rank to the name
    for f in "$base.trace" "$base.trace.0"; do [ -f "$f" ] && gzip -c "$f" > "$base.trace.gz" && rm -f "$f"; done
    say "$case $fmt traced run rc=$rc $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f s", b-a}')"
    [ $rc -eq 0 ] || { rc_all=1; tail -5 "$base.trace.log"; }
  fi
  t0=$(date +%s.%N)
  "$prog" "${common[@]}" > "$base.log" 2>&1
  rc=$?
  say "$case $fmt timed run rc=$rc $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f s", b-a}'): $(grep -E 'solve converged|solve did not converge|Number of SNES|Residual norm' "$base.log" | tail -2 | tr -s ' ' | tr '\n' ';')"
  [ $rc -eq 0 ] || { rc_all=1; tail -5 "$base.log"; }
}

cases=${E2E_CASES:-ex45 ex19}
manifest=$raw/manifest.txt
: > "$manifest"
for c in $cases; do
  case $c in
    ex45)
      [ -x "$ex45" ] || { say "skipped ksp ex45: $ex45 not built (PETSc's ksp/ksp/tutorials/ex45.c missing?)"; continue; }
      for fmt in $types; do
        run "ksp_ex45_$n45" "$fmt" "$ex45" -da_grid_x "$n45" -da_grid_y "$n45" -da_grid_z "$n45" \
          -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8 -ksp_converged_reason
        echo "ksp_ex45_$n45 $fmt" >> "$manifest"
      done ;;
    ex19)
      [ -x "$ex19" ] || { say "skipped snes ex19: $ex19 not built (PETSc's snes/tutorials/ex19.c missing?)"; continue; }
      for fmt in $types; do
        run "snes_ex19_$n19" "$fmt" "$ex19" -da_grid_x "$n19" -da_grid_y "$n19" \
          -ksp_type bcgs -pc_type jacobi -snes_converged_reason -ksp_converged_reason
        echo "snes_ex19_$n19 $fmt" >> "$manifest"
      done ;;
    *) say "unknown case $c (ex45, ex19)" ;;
  esac
done

py=/usr/bin/python3; [ -x $py ] || py=python3
$py "$top/bench/tables/end_to_end_table.py" --raw "$raw" --out "$out" --baseline "${types%% *}"
prc=$?
[ $prc -eq 0 ] || rc_all=1
say "done (rc $rc_all): $out/end-to-end.csv, end-to-end-detail.csv, end-to-end.md, end-to-end.png; raw logs in $raw"
exit $rc_all
