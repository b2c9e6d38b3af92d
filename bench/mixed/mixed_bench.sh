#!/usr/bin/env bash
# The mixed-precision solver benchmark (docs/benchmarks.md, "Mixed precision"): tutorials/ex2 on
# each case, FP64 CG + Jacobi (aijcusparse, rgcsrcuda, sellcuda), PCMIXEDKRYLOV cg (e8m14, fp16)
# and f3r, and GAMG, in one process per matrix type, each solve judged by its true residual.
# Raw ex2 lines go to OUTDIR/mixed_raw.txt (each preceded by a "case=... mat_type=... value_format=..."
# line), the residual histories of the timed solves to OUTDIR/mixed_history.csv;
# bench/tables/mixed_table.py turns them into docs/bench/mixed.csv, the table and the convergence plot.
#
# Usage: bash bench/mixed/mixed_bench.sh OUTDIR BUILD MATRIXDIR [case ...]
#   cases: lap27_128 lap27_160 lap7_200 varcoef27_128 varcoef7_200 G3_circuit bcsstk16 ... (a
#   shared matrix by name: converted to PETSc binary first); REPEAT (default 5) timed solves each;
#   MIXED_QUICK=1: only FP64 CG + Jacobi and the two mixed solvers on aijcusparse, no -log_view;
#   MIXED_RUNS (default "main fp16 rgcsr sell"): which processes run per case: main = aijcusparse
#   with FP64 CG, the mixed solvers (e8m14) and GAMG; fp16 = the mixed solvers with fp16 copies;
#   rgcsr / sell = FP64 CG + Jacobi with rgcsrcuda / sellcuda. The main process also times
#   2 MIXED_UPDATES (default 2) value updates of FP64 CG + Jacobi and the mixed solvers (ex2
#   -<solver>_time_update: "update ..." lines; not GAMG, whose update is a whole new setup);
#   MIXED_GAMG=0 leaves GAMG out of the main process.
set -uo pipefail
out=${1:?usage: mixed_bench.sh OUTDIR BUILD MATRIXDIR [case ...]}
build=${2:?}
mdir=${3:?}
shift 3
cases=${*:-lap27_128 lap27_160 lap7_200 varcoef27_128 varcoef7_200 G3_circuit bcsstk16}
repeat=${REPEAT:-5}
mpi="mpiexec --allow-run-as-root --oversubscribe"
ex2=$build/tutorials/ex2
raw=$out/mixed_raw.txt
mkdir -p "$out"
: > "$raw"
echo "matrix,mat_type,value_format,solver,iteration,time_s,relative_residual" > "$out/mixed_history.csv"

matrix_args() {
  case $1 in
    lap27_*) echo "-lap27 ${1#lap27_}" ;;
    lap7_*) echo "-lap7 ${1#lap7_}" ;;
    varcoef27_*) echo "-lap27 ${1#varcoef27_} -var_coeff" ;;
    varcoef7_*) echo "-lap7 ${1#varcoef7_} -var_coeff" ;;
    *) local f=/tmp/mixed_$1.petsc
       [ -s "$f" ] || python3 scripts/mtx2petsc.py "$mdir/$1.mtx" "$f" > /dev/null || return 1
       echo "-f $f" ;;
  esac
}

run() { # case mat_type value_format solvers [extra options]
  local c=$1 t=$2 vf=$3 s=$4
  shift 4
  echo "case=$c mat_type=$t value_format=$vf" >> "$raw"
  rm -f /tmp/mixed_hist.csv
  $mpi -n ${NP:-1} "$ex2" $(matrix_args $c) -mat_type $t -solvers $s -repeat $repeat -rtol 1e-8 -use_gpu_aware_mpi 0 \
    -residual_history /tmp/mixed_hist.csv "$@" >> "$raw" 2>&1
  echo "rc=$?" >> "$raw"
  [ -f /tmp/mixed_hist.csv ] && sed "s/^/$c,$t,$vf,/" /tmp/mixed_hist.csv >> "$out/mixed_history.csv"
}

for c in $cases; do
  if [ "${MIXED_QUICK:-0}" = 1 ]; then # the solvers of the goals only
    run $c aijcusparse e8m14 cg_jacobi,mixedkrylov_cg,mixedkrylov_f3r
    continue
  fi
  for r in ${MIXED_RUNS:-main fp16 rgcsr sell}; do
    case $r in
      main) u=${MIXED_UPDATES:-2}
        g=,gamg
        [ "${MIXED_GAMG:-1}" = 0 ] && g=
        run $c aijcusparse e8m14 cg_jacobi,mixedkrylov_cg,mixedkrylov_f3r$g -cg_jacobi_time_update $u -mixedkrylov_cg_time_update $u \
          -mixedkrylov_f3r_time_update $u ;;
      fp16) run $c aijcusparse fp16 mixedkrylov_cg,mixedkrylov_f3r -mixedkrylov_cg_pc_mixedkrylov_mat_packsell_value_format fp16 \
        -mixedkrylov_f3r_pc_mixedkrylov_mat_packsell_value_format fp16 -mixedkrylov_cg_pc_mixedkrylov_mat_packsell_scaling auto \
        -mixedkrylov_f3r_pc_mixedkrylov_mat_packsell_scaling auto ;;
      rgcsr) run $c rgcsrcuda exact cg_jacobi ;;
      sell) run $c sellcuda exact cg_jacobi ;;
      *) echo "unknown MIXED_RUNS entry $r (main fp16 rgcsr sell)" >&2 ;;
    esac
  done
done
# where the time goes: one -log_view of each mixed solver on the first case
[ "${MIXED_QUICK:-0}" = 1 ] && exit 0
c=${cases%% *}
$mpi -n 1 "$ex2" $(matrix_args $c) -mat_type aijcusparse -solvers cg_jacobi,mixedkrylov_cg,mixedkrylov_f3r -rtol 1e-8 -use_gpu_aware_mpi 0 -log_view \
  -mixedkrylov_cg_ksp_view > "$out/mixed_logview_$c.txt" 2>&1
echo "log_view rc=$?" >> "$raw"
