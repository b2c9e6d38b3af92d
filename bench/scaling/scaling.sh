#!/usr/bin/env bash
# Multi-GPU scaling benchmark: MatMult time and time to solution (CG + Jacobi to 1e-8,
# PCMIXEDKRYLOV) at 1 and 2 ranks, on one GPU (both ranks CUDA_VISIBLE_DEVICES=0) and on two
# GPUs (PETSc's default binding: rank % visible devices), always with -use_gpu_aware_mpi 0.
#
#   bash bench/scaling/scaling.sh OUTDIR [BUILD_DIR]
#
# Configurations (ranks:gpus): 1:1, 2:1, 2:2; 2:2 is skipped with a line when fewer than 2 GPUs.
# Per matrix and configuration (one process each):
#   matmult   BUILD/bench/scaling/matmult_bench -formats aijcusparse,rgcsrcuda,packsellcuda,packsellcuda:e8m14
#             -n_mult N -repeat R -report_devices -log_view (a -log_view stage per format)
#   cg        BUILD/tutorials/ex2 -mat_type X -solvers cg_jacobi -rtol 1e-8 (X = aijcusparse,
#             rgcsrcuda, packsellcuda exact; the lossy e8m14 operator is timed for MatMult only)
#   mixed     BUILD/tutorials/ex2 -mat_type aijcusparse -solvers mixedkrylov_cg,mixedkrylov_f3r
# each ex2 run with -report_devices -log_view. Matrices: lap7_<n> (-lap7 n), lap27_<n> (-lap27 n),
# powerlaw_<rows> (made once by matmult_bench -powerlaw <rows> -save, then -f for every run).
# bench/tables/scaling_table.py turns OUTDIR/scaling/*.log into OUTDIR/scaling.csv (matrix,format,
# operation,ranks,gpus,time_s,speedup_vs_1gpu), scaling-detail.csv and scaling.md.
#
# Environment:
#   SCALING_HOST=1       host types (aij rgcsr packsell packsell:e8m14; mixed on aij), small
#                        matrices (lap7_24 lap27_16 powerlaw_20000), no CUDA: proves the runs, the
#                        parsing and the CSV; the gpus column is then the configuration's label only
#   SCALING_MATRICES     the matrices (default lap7_200 lap27_160 powerlaw_4000000)
#   SCALING_GPUS         the number of GPUs (default: nvidia-smi -L; host mode: 2)
#   SCALING_CONFIGS      default "1:1 2:1 2:2"
#   SCALING_OPS          default "matmult cg mixed"
#   SCALING_N_MULT, SCALING_REPEAT   matmult_bench -n_mult (default 100) -repeat (default 5)
#   SCALING_CG_REPEAT    ex2 -repeat (timed solves after the warm-up, default 1)
#   SCALING_TIME_LIMIT   seconds (default 480): matrices not started by then are skipped (listed)
#   SCALING_ARGS         more options for every run
set -uo pipefail
out=${1:?usage: scaling.sh OUTDIR [BUILD_DIR]}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$top/build-gpu}
mkdir -p "$out/scaling"
out=$(cd "$out" && pwd)
raw=$out/scaling
t_begin=$(date +%s)
say() { echo "== scaling $(date -u +%H:%M:%S) (+$(( $(date +%s) - t_begin ))s) $*"; }
mpi="mpiexec --allow-run-as-root --oversubscribe"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common=(-use_gpu_aware_mpi 0 -report_devices -log_view)

if [ "${SCALING_HOST:-0}" = 1 ]; then
  mm_formats=${SCALING_FORMATS:-aij,rgcsr,packsell,packsell:e8m14}
  cg_types=${SCALING_CG_TYPES:-aij rgcsr packsell}
  mixed_type=aij
  matrices=${SCALING_MATRICES:-lap7_24 lap27_16 powerlaw_20000}
  ngpu=${SCALING_GPUS:-2}
  gpu_note="host mode: no GPU; the gpus column is the configuration's label"
else
  mm_formats=${SCALING_FORMATS:-aijcusparse,rgcsrcuda,packsellcuda,packsellcuda:e8m14}
  cg_types=${SCALING_CG_TYPES:-aijcusparse rgcsrcuda packsellcuda}
  mixed_type=aijcusparse
  matrices=${SCALING_MATRICES:-lap7_200 lap27_160 powerlaw_4000000}
  if [ -n "${SCALING_GPUS:-}" ]; then ngpu=$SCALING_GPUS
  elif command -v nvidia-smi > /dev/null; then ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
  else ngpu=0; fi
  gpu_note="$ngpu GPU(s) (nvidia-smi -L)"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv,noheader | sed 's/^/== GPU: /'
fi
mmb=$build/bench/scaling/matmult_bench
ex2=$build/tutorials/ex2
for p in "$mmb" "$ex2"; do [ -x "$p" ] || { say "missing $p (build the matmult_bench and ex2 targets)"; exit 1; }; done
configs=${SCALING_CONFIGS:-1:1 2:1 2:2}
ops=${SCALING_OPS:-matmult cg mixed}
nmult=${SCALING_N_MULT:-100}; rep=${SCALING_REPEAT:-5}; cgrep=${SCALING_CG_REPEAT:-1}
limit=${SCALING_TIME_LIMIT:-480}
say "matrices: $matrices; configs: $configs; ops: $ops; matmult formats $mm_formats; cg types $cg_types; $gpu_note"
if [ "${SCALING_HOST:-0}" != 1 ] && [ "$ngpu" -lt 1 ]; then say "no GPU found: nothing to run (SCALING_HOST=1 for the host types)"; exit 1; fi

matrix_args() { # name -> matrix options (powerlaw: the saved file, made here once)
  case $1 in
    lap7_*) echo "-lap7 ${1#lap7_} -name $1" ;;
    lap27_*) echo "-lap27 ${1#lap27_} -name $1" ;;
    powerlaw_*)
      local f=$raw/$1.petsc
      if [ ! -s "$f" ]; then
        $mpi -n 1 "$mmb" -powerlaw "${1#powerlaw_}" -save "$f" > "$raw/$1.gen.log" 2>&1 || { say "generating $1 FAILED"; tail -3 "$raw/$1.gen.log" >&2; return 1; }
      fi
      echo "-f $f -name $1" ;;
    *) say "unknown matrix $1 (lap7_<n>, lap27_<n>, powerlaw_<rows>)" >&2; return 1 ;;
  esac
}

manifest=$raw/manifest.txt
: > "$manifest"
rc_all=0
run() { # op matrix ranks gpus label log program options...
  local op=$1 m=$2 r=$3 g=$4 label=$5 log=$6 prog=$7 t0 rc; shift 7
  t0=$(date +%s.%N)
  if [ "$g" = 1 ] && [ "${SCALING_HOST:-0}" != 1 ]; then
    # shellcheck disable=SC2086
    CUDA_VISIBLE_DEVICES=0 $mpi -n "$r" "$prog" "$@" "${common[@]}" ${SCALING_ARGS:-} > "$log" 2>&1
  else
    # shellcheck disable=SC2086
    env -u CUDA_VISIBLE_DEVICES $mpi -n "$r" "$prog" "$@" "${common[@]}" ${SCALING_ARGS:-} > "$log" 2>&1
  fi
  rc=$?
  echo "$op $m $r $g $label $(basename "$log") rc=$rc" >> "$manifest"
  say "$op $m ranks=$r gpus=$g $label rc=$rc $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f s", b-a}'): $(grep -E '^(device_report|solver=|matmult_bench)' "$log" | sed -E 's/^device_report.*(cuda_device=[^ ]+).*(pci_bus_id=[^ ]+).*/\1 \2/; s/^device_report.*host \(no CUDA\).*/host/; s/^solver=([^ ]+).* solve_s=([^ ]+).*reason=([^ ]+).*/\1 \2 s \3/; s/^matmult_bench.* format=([^ ]+).* time_s=([^ ]+).*/\1 \2 s/' | tr '\n' ';')"
  [ $rc -eq 0 ] || { rc_all=1; tail -5 "$log"; }
}

for m in $matrices; do
  if [ $(( $(date +%s) - t_begin )) -gt "$limit" ]; then say "SKIPPED $m: past SCALING_TIME_LIMIT=${limit}s (run it with SCALING_MATRICES=$m)"; continue; fi
  margs=$(matrix_args "$m") || { rc_all=1; continue; }
  for c in $configs; do
    r=${c%%:*}; g=${c##*:}
    if [ "$g" -gt "$ngpu" ]; then
      say "SKIPPED $m ranks=$r gpus=$g: this machine has $ngpu GPU(s); the 2-GPU runs need 2"
      continue
    fi
    tag=${m}_r${r}g${g}
    for op in $ops; do
      case $op in
        matmult)
          # shellcheck disable=SC2086
          run matmult "$m" "$r" "$g" "$mm_formats" "$raw/matmult_$tag.log" "$mmb" $margs -formats "$mm_formats" -n_mult "$nmult" -repeat "$rep" ;;
        cg)
          for t in $cg_types; do
            # shellcheck disable=SC2086
            run cg "$m" "$r" "$g" "$t" "$raw/cg_${tag}_$t.log" "$ex2" ${margs/-name $m/} -mat_type "$t" -solvers cg_jacobi -rtol 1e-8 -repeat "$cgrep"
          done ;;
        mixed)
          # shellcheck disable=SC2086
          run mixed "$m" "$r" "$g" "$mixed_type" "$raw/mixed_$tag.log" "$ex2" ${margs/-name $m/} -mat_type "$mixed_type" -solvers mixedkrylov_cg,mixedkrylov_f3r -rtol 1e-8 -repeat "$cgrep" ;;
        *) say "unknown op $op (matmult cg mixed)" ;;
      esac
    done
  done
done

py=/usr/bin/python3; [ -x $py ] || py=python3
$py "$top/bench/tables/scaling_table.py" --raw "$raw" --out "$out" || rc_all=1
say "done (rc $rc_all): $out/scaling.csv, scaling-detail.csv, scaling.md; raw logs in $raw"
exit $rc_all
