#!/usr/bin/env bash
# Why a kernel runs at the speed it does: Nsight Compute counters and the SASS of our kernels,
# on the GPU machine, after scripts/gpu_validate.sh built build-gpu (docs/benchmarks.md reads
# the results).
#
#   bash bench/spmv/profile.sh OUTDIR [MATRIX_DIR]
#
# OUTDIR gets sass.txt (cuobjdump of the SpMV kernels), ncu-<matrix>.txt (per kernel: duration,
# DRAM throughput, achieved occupancy, warp stall reasons, issue activity, L1/L2 hit rates) and
# ncu-summary.txt (a few key lines per kernel); ncu-<matrix>-raw.csv has every metric collected
# and ncu-<matrix>.ncu-rep the report itself. Clocks are left alone (--clock-control none).
# Knobs: PROFILE_FORMATS (spmv_bench -formats), PROFILE_GEN (generated matrices, default
# lap27:128,lap7:128), PROFILE_FILES (names in MATRIX_DIR, default bcsstk16 power west0479).
set -uo pipefail
out=${1:?usage: profile.sh OUTDIR [MATRIX_DIR]}
mdir=${2:-/tmp/matrices}
mkdir -p "$out"
bin=build-gpu/bench/spmv/spmv_bench
lib=$(ls build-gpu/src/cuda/libpetscspmv_cuda.a 2>/dev/null)
export PETSC_DIR=${PETSC_DIR:-/opt/petsc-cuda}
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
formats=${PROFILE_FORMATS:-aijcusparse,sellcuda,rgcsrcuda:g64,packsellcuda:fp16,packsellcuda:bf16,packsellcuda:exact,cusparse_sell:fp64,cusparse_sell:fp16}
gens=${PROFILE_GEN-lap27:128,lap7:128}
files=${PROFILE_FILES-bcsstk16 power west0479}

[ -n "$lib" ] && cuobjdump -sass "$lib" 2>&1 | awk '/Function :/{keep = ($0 ~ /packsell|rgcsr|coo_tail/)} keep' > "$out/sass.txt"

ncu_run() { # name, spmv_bench matrix arguments...
  local name=$1
  shift
  ncu --clock-control none --target-processes all \
    --kernel-name regex:'packsell|rgcsr|coo_tail|matmult|csrmv|spmv|SpMV|sell|Sell|ell' \
    --launch-skip 0 --launch-count 40 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section SchedulerStats --section LaunchStats \
    -f -o "$out/ncu-$name" "$bin" "$@" -formats "$formats" -reps 1 -warmup 1 -flush_l2 1 > "$out/ncu-$name.log" 2>&1
  echo "ncu $name rc=$?"
  ncu -i "$out/ncu-$name.ncu-rep" > "$out/ncu-$name.txt" 2>&1
  ncu -i "$out/ncu-$name.ncu-rep" --page raw --csv > "$out/ncu-$name-raw.csv" 2>&1
}
for g in ${gens//,/ }; do ncu_run "${g//:/_}" -gen "$g"; done
for f in $files; do ncu_run "$f" -f "$mdir/$f.mtx"; done

# the lines that say where the time goes, per kernel
for f in "$out"/ncu-*.txt; do
  echo "#### $(basename "$f")"
  grep -E "^  [A-Za-z_].*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Stall|stall" "$f" |
    grep -v -E "^\s*$" | sed -E 's/ +/ /g'
done > "$out/ncu-summary.txt"
echo "profile done: $(ls "$out")"
