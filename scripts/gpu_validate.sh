#!/usr/bin/env bash
# The one call the GPU machine runs (see docs/gpu-validation.md): installs PETSc from the
# carried archive, builds, runs the GPU tests, compute-sanitizer memcheck and racecheck, and
# the main job with both CUDA types at 1 and 2 ranks (and tutorials/ex2's mixed solvers on
# aijcusparse, rgcsrcuda and packsellcuda, true residual <= 1e-8). Results go to OUTDIR.
#
# Usage (repo root, with gpu-deps/ prepared as docs/gpu-validation.md says):
#   [PETSC_VERSION=3.25|3.25-int64] bash scripts/gpu_validate.sh OUTDIR [stage ...]
#   stages: build kernels gpu kernel-tests sanitize run bench mixed mixed-kernels e2e pcs scaling profile
# pcs: bench/preconditioners/pcs.sh (PETSc's ksp ex45 and snes ex19 with the preconditioners users run, our types
# against aijcusparse: docs/bench/pcs.csv; PCS_N, PCS_RANKS, PCS_COMBOS, PCS_REPEAT trim it).
# scaling: bench/scaling/scaling.sh (MatMult and CG/PCMIXEDKRYLOV time at 1 and 2 ranks on 1 and 2 GPUs,
# -use_gpu_aware_mpi 0; lap7 200^3, lap27 160^3, power-law 4M rows; SCALING_MATRICES etc. trim it).
# e2e: bench/end_to_end/end_to_end.sh (PETSc's ksp ex45 200^3 and snes ex19 512^2 with -dll_append, time to
# solution with assembly, aijcusparse rgcsrcuda packsellcuda; needs the build stage's tutorials).
# mixed: bench/mixed/mixed_bench.sh (PCMIXEDKRYLOV and KSPMIXEDCG against FP64 CG + Jacobi and GAMG; MIXED_CASES picks the cases).
# mixed-kernels: bench/mixed/inner_cg_bench (one device inner CG step against one FP32 PackSELL product).
# gpu: every GPU test (ctest -L gpu); kernel-tests: only the kernel tests (no PETSc-level ones).
# SANITIZE_TOOLS (default "memcheck racecheck") picks the tools for the kernel-test subset.
# kernels: bench/spmv/kernel_bench (kernel variants without PETSc) on the large Laplacians and the
# shared matrices with a COO tail (KERNEL_MATRICES, KERNEL_GEN, KERNEL_THREADS, KERNEL_WIDTHS,
# KERNEL_SIGMAS, KERNEL_FORMATS change that); profile: bench/spmv/profile.sh (Nsight Compute counters, SASS).
set -uo pipefail
out=${1:?usage: gpu_validate.sh OUTDIR [stage ...]}
shift
stages=${*:-build gpu sanitize run}
mkdir -p "$out"
top=$(pwd)
build=$top/build-gpu
summary=$out/summary.txt
# SHIP_TO=<dir> (the device tool's $OUT): after every summary line, summary.txt and a tarball of
# OUTDIR are copied there, so a call killed at its time limit still returns what had finished
# (the tool returns at most 8 files: keep OUTDIR outside $OUT; saved matrices, *.petsc, stay out).
note() {
  echo "== $(date -u +%H:%M:%S) $*" | tee -a "$summary"
  if [ -n "${SHIP_TO:-}" ]; then
    cp "$summary" "$SHIP_TO/summary.txt"
    tar czf "$SHIP_TO/gv.tgz.part" --exclude="*.petsc" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null && mv "$SHIP_TO/gv.tgz.part" "$SHIP_TO/gv.tgz"
  fi
}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
# One row per check in VALIDATION_CSV (default OUTDIR/gpu-validation.csv; SHIP_TO gets a copy):
# date, commit, GPU, PETSc version, check, command, result, notes, by scripts/validation_row.sh.
# Append a run's rows to the record with
#   bash scripts/validation_row.sh --merge OUTDIR/gpu-validation.csv docs/bench/gpu-validation.csv
csv=${VALIDATION_CSV:-$out/gpu-validation.csv}
# record CHECK COMMAND RC|RESULT [NOTES]: a number as the third argument is an exit status (0 pass)
record() {
  local result=$3
  case "$result" in
    0) result=pass ;;
    [0-9] | [0-9][0-9] | [0-9][0-9][0-9]) result="fail (rc=$result)" ;;
  esac
  bash "$top/scripts/validation_row.sh" "$csv" "$1" "$2" "$result" "${4:-}" || echo "gpu_validate: could not write a row to $csv" >&2
  [ -n "${SHIP_TO:-}" ] && cp "$csv" "$SHIP_TO/gpu-validation.csv" 2> /dev/null
  return 0
}

# PETSC_VERSION=3.25 builds and tests against PETSc 3.25.4, 3.25-int64 against it with 64-bit
# indices (its archive must be in gpu-deps too)
case "${PETSC_VERSION:=3.22}" in
  3.22) petsc_dir=/opt/petsc-cuda ;;
  3.25) petsc_dir=/opt/petsc-3.25-cuda; build=$top/build-gpu-3.25 ;;
  3.25-int64) petsc_dir=/opt/petsc-3.25-cuda-int64; build=$top/build-gpu-int64 ;;
  *) echo "PETSC_VERSION must be 3.22, 3.25 or 3.25-int64" >&2; exit 2 ;;
esac
sh gpu-deps/install.sh "$PETSC_VERSION" > "$out/install.log" 2>&1 || { note "PETSc $PETSC_VERSION install FAILED"; tail -20 "$out/install.log"; exit 1; }
export PETSC_DIR=$petsc_dir PETSC_OPTIONS="-use_gpu_aware_mpi 0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi="mpiexec --allow-run-as-root --oversubscribe"
# Matrices travel xz-compressed (gpu-deps/matrices-xz, made by bench/spmv/pack_matrices.sh) to fit the
# 64 MiB that a call carries; unpack them to plain .mtx once.
mdir=/tmp/matrices
if [ ! -f $mdir/.done ]; then
  mkdir -p $mdir
  python3 -c 'import lzma,sys,os,shutil
for f in sys.argv[2:]:
    with lzma.open(f) as i, open(os.path.join(sys.argv[1], os.path.basename(f)[:-3]), "wb") as o: shutil.copyfileobj(i, o)' $mdir gpu-deps/matrices-xz/*.mtx.xz && touch $mdir/.done
fi
GIT_COMMIT=${GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export GIT_COMMIT PETSC_VERSION
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee -a "$summary"
note "commit $GIT_COMMIT PETSc $PETSC_VERSION ($PETSC_DIR) stages: $stages"

if has build; then
  # The image has no GoogleTest: build Debian's source tree that travels in gpu-deps/googletest.
  if [ ! -f /opt/gtest/lib/cmake/GTest/GTestConfig.cmake ]; then
    cmake -S gpu-deps/googletest -B /tmp/gtest-build -DCMAKE_INSTALL_PREFIX=/opt/gtest -DBUILD_GMOCK=OFF > "$out/gtest.log" 2>&1 &&
      cmake --build /tmp/gtest-build -j 16 >> "$out/gtest.log" 2>&1 && cmake --install /tmp/gtest-build >> "$out/gtest.log" 2>&1 ||
      note "googletest build FAILED"
  fi
  # bench/petsc_tutorials builds PETSc's snes ex19; PETSc 3.22.5 as packaged has no snes examples:
  # take the one file from the 3.25.4 archive when it travels in gpu-deps (bench/petsc_tutorials/CMakeLists.txt says how)
  # (or gpu-deps/ex19.c itself: `tar -xJf ../shared/petsc/petsc-3.25.4-cuda13-openmpi.tar.xz -O
  # petsc-3.25-cuda/share/petsc/examples/src/snes/tutorials/ex19.c > gpu-deps/ex19.c`, 40 KB)
  if [ ! -f "$PETSC_DIR/share/petsc/examples/src/snes/tutorials/ex19.c" ] && [ ! -f /opt/petsc-3.25-cuda/share/petsc/examples/src/snes/tutorials/ex19.c ]; then
    if [ -f gpu-deps/ex19.c ]; then
      mkdir -p /tmp/petsc-extra-examples/src/snes/tutorials && cp gpu-deps/ex19.c /tmp/petsc-extra-examples/src/snes/tutorials/ &&
        note "snes ex19.c taken from gpu-deps/ex19.c for bench/petsc_tutorials"
    fi
    ls gpu-deps/petsc-3.25*-cuda13-openmpi.tar.xz gpu-deps/ex19.c > /dev/null 2>&1 || note "no snes ex19.c (neither gpu-deps/ex19.c nor the 3.25 archive travels): bench/petsc_tutorials has ksp ex45 only"
    for a in gpu-deps/petsc-3.25*-cuda13-openmpi.tar.xz; do
      [ -f "$a" ] || continue
      mkdir -p /tmp/petsc-extra-examples && tar -xJf "$a" -C /tmp/petsc-extra-examples --strip-components=4 petsc-3.25-cuda/share/petsc/examples/src/snes/tutorials/ex19.c &&
        note "snes ex19.c taken from $a for bench/petsc_tutorials" || note "could not take snes ex19.c from $a"
    done
  fi
  cmake -S . -B "$build" -DPETSC_DIR=$PETSC_DIR -DCMAKE_PREFIX_PATH=/opt/gtest -DPETSCSPMV_MATRIX_DIR=$mdir > "$out/configure.log" 2>&1 &&
    cmake --build "$build" -j 16 -- -k > "$out/build.log" 2>&1   # -k: a broken target does not hide the others' results
  rc=$?
  grep -E "registers|spill" "$out/build.log" | grep -B1 -A0 "spill" | head -60 > "$out/ptxas.txt"
  note "build rc=$rc"
  record build "cmake -S . -B $(basename "$build") && cmake --build $(basename "$build")" $rc
  [ $rc -eq 0 ] || grep -E "error|Error" "$out/configure.log" "$out/build.log" | head -20
fi

if has kernels; then
  # KERNEL_MATRICES: shared matrix names ("all": every one), KERNEL_GEN: generated ones,
  # KERNEL_THREADS: threads per row to time besides upload's choice (e.g. 1,2,4,8);
  # KERNEL_WIDTHS: fixed hybrid widths K to time besides auto (e.g. 16,32,64);
  # KERNEL_SIGMAS: PackSELL sort windows (default 1; 0 = auto); KERNEL_REPS: timed products
  # (default 50); KERNEL_FORMATS: a subset of
  # csr (cuSPARSE, the reference),rgcsr,fp16,bf16,e8m14,exact.
  names=${KERNEL_MATRICES:-bundle1 Maragal_6 email-Enron astro-ph wiki-Vote rajat01 PGPgiantcompo watt_2 west0479 power}
  [ "$names" = all ] && names=$(cd $mdir && ls *.mtx | sed 's/\.mtx$//')
  files=$(for m in $names; do printf '%s,' $mdir/$m.mtx; done)
  "$build/bench/spmv/kernel_bench" -gen "${KERNEL_GEN-lap27:128,lap7:128,lap7:200,lap27:160}" -f "${files%,}" -reps "${KERNEL_REPS:-50}" \
    -threads "${KERNEL_THREADS:-}" -widths "${KERNEL_WIDTHS:-}" -sigmas "${KERNEL_SIGMAS:-1}" \
    -formats "${KERNEL_FORMATS:-csr,rgcsr,fp16,bf16,e8m14,exact}" -csv "$out/kernel_bench.csv" > "$out/kernel_bench.txt" 2>&1
  rc=$?
  note "kernel_bench rc=$rc (kernel_bench.txt)"
  record kernels "bench/spmv/kernel_bench (gpu_validate.sh kernels)" $rc "a measurement: kernel_bench.csv"
fi

if has gpu; then
  (cd "$build" && ctest -L gpu -j 8 --output-on-failure --timeout 300) > "$out/ctest-gpu.log" 2>&1
  rc=$?
  note "ctest -L gpu rc=$rc : $(grep -E 'tests passed|tests failed' "$out/ctest-gpu.log")"
  record ctest-gpu "ctest -L gpu" $rc "$(grep -E 'tests passed|tests failed' "$out/ctest-gpu.log") $(grep -E '^\s+[0-9]+ - .*(Failed|Timeout|Exception)' "$out/ctest-gpu.log" | head -5 | awk '{print $3}' | tr '\n' ' ')"
  grep -E "^\s+[0-9]+ - .*(Failed|Timeout|Exception)" "$out/ctest-gpu.log" | head -30 | tee -a "$summary"
fi

if has kernel-tests; then
  (cd "$build" && ctest -L gpu -E '^gpu_petsc' -j 16 --output-on-failure --timeout 300) > "$out/ctest-gpu-kernels.log" 2>&1
  rc=$?
  note "ctest -L gpu -E ^gpu_petsc rc=$rc : $(grep -E 'tests passed|tests failed' "$out/ctest-gpu-kernels.log")"
  record kernel-tests "ctest -L gpu -E ^gpu_petsc" $rc "$(grep -E 'tests passed|tests failed' "$out/ctest-gpu-kernels.log")"
  grep -E "^\s+[0-9]+ - .*(Failed|Timeout|Exception)" "$out/ctest-gpu-kernels.log" | head -30 | tee -a "$summary"
fi

if has sanitize; then
  filter=${SANITIZE_FILTER:-'*Small*:*Random*'}
  # SANITIZE_SHARDS=n runs the subset as n GoogleTest shards side by side; each shard's log is
  # sanitizer-<tool>-<i>.log. SANITIZE_EXCLUDE (e.g. kns=cub) leaves kernels whose name holds the
  # substring uninstrumented (compute-sanitizer --kernel-name-exclude), to keep racecheck of the
  # device builder within a call (docs/gpu-validation.md).
  shards=${SANITIZE_SHARDS:-1}
  [ "$shards" -ge 1 ] 2> /dev/null || { note "SANITIZE_SHARDS must be a positive integer (got $shards)"; exit 2; }
  exclude=()
  [ -n "${SANITIZE_EXCLUDE:-}" ] && exclude=(--kernel-name-exclude "$SANITIZE_EXCLUDE")
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    rm -f "$out"/sanitizer-$tool-*.log # an earlier run into OUTDIR with more shards must not count
    pids=()
    for i in $(seq 0 $((shards - 1))); do
      GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i compute-sanitizer --tool $tool --error-exitcode 86 ${exclude[@]+"${exclude[@]}"} \
        "$build/tests/gpu/gpu_kernel_tests" --gtest_filter="$filter" > "$out/sanitizer-$tool-$i.log" 2>&1 &
      pids+=($!)
    done
    fails=0
    for pid in "${pids[@]}"; do wait "$pid" || fails=$((fails + 1)); done
    summ=$(cat "$out"/sanitizer-$tool-*.log | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' | sort | uniq -c | tr '\n' ' ')
    note "compute-sanitizer $tool (gpu_kernel_tests $filter, $shards shard(s)${SANITIZE_EXCLUDE:+, not instrumented: $SANITIZE_EXCLUDE}): $fails shard(s) failed; $summ"
    record $tool "compute-sanitizer --tool $tool gpu_kernel_tests --gtest_filter='$filter'" $fails "$shards shard(s)${SANITIZE_EXCLUDE:+, not instrumented: $SANITIZE_EXCLUDE}; $summ"
  done
  # the Mat types end to end (conversion, upload, products, diagonal, value updates), one rank
  m=$build/tests/petsc/matrices/west0479.petsc
  [ -f "$m" ] || { mkdir -p "$(dirname "$m")" && python3 scripts/mtx2petsc.py $mdir/west0479.mtx "$m" > /dev/null; }
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 86 "$build/tests/petsc/spmv_ops" -f "$m" -types rgcsrcuda,packsellcuda > "$out/sanitizer-petsc-$tool.log" 2>&1
    rc=$?
    summ=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer-petsc-$tool.log" | tr '\n' ' ')
    note "compute-sanitizer $tool (spmv_ops west0479, CUDA Mat types) rc=$rc : $summ"
    record $tool "compute-sanitizer --tool $tool spmv_ops -f west0479.petsc -types rgcsrcuda,packsellcuda" $rc "$summ"
  done
  # PCMIXEDKRYLOV end to end on the device (inner CG and F3R, value updates, rebuilds, refusals)
  compute-sanitizer --tool memcheck --error-exitcode 86 "$build/tests/petsc/spmv_mixed" -mat_type aijcusparse -mk_pc_mixedkrylov_backend cuda -n 12 > "$out/sanitizer-mixed-memcheck.log" 2>&1
  rc=$?
  summ=$(grep -E "ERROR SUMMARY" "$out/sanitizer-mixed-memcheck.log" | tr '\n' ' ')
  note "compute-sanitizer memcheck (spmv_mixed, CUDA backend) rc=$rc : $summ"
  record memcheck "compute-sanitizer --tool memcheck spmv_mixed -mat_type aijcusparse -mk_pc_mixedkrylov_backend cuda -n 12" $rc "$summ"
  # the preconditioners on the CUDA types (AIJCUSPARSE's factorizations, GAMG, ASM) and COO from
  # device values, one rank
  compute-sanitizer --tool memcheck --error-exitcode 86 "$build/tests/petsc/spmv_pcs" -types rgcsrcuda,packsellcuda -n 12 > "$out/sanitizer-pcs-memcheck.log" 2>&1
  rc=$?
  summ=$(grep -E "ERROR SUMMARY" "$out/sanitizer-pcs-memcheck.log" | tr '\n' ' ')
  note "compute-sanitizer memcheck (spmv_pcs, CUDA Mat types) rc=$rc : $summ"
  record memcheck "compute-sanitizer --tool memcheck spmv_pcs -types rgcsrcuda,packsellcuda -n 12" $rc "$summ"
  # every Mat operation of spmv_matops (natively or through AIJ) on the CUDA types, one rank
  compute-sanitizer --tool memcheck --error-exitcode 86 "$build/tests/petsc/spmv_matops" -types rgcsrcuda,packsellcuda > "$out/sanitizer-matops-memcheck.log" 2>&1
  rc=$?
  summ=$(grep -E "ERROR SUMMARY" "$out/sanitizer-matops-memcheck.log" | tr '\n' ' ')
  note "compute-sanitizer memcheck (spmv_matops, CUDA Mat types) rc=$rc : $summ"
  record memcheck "compute-sanitizer --tool memcheck spmv_matops -types rgcsrcuda,packsellcuda" $rc "$summ"
fi

if has run; then
  python3 scripts/mtx2petsc.py $mdir/bcsstk16.mtx /tmp/main.petsc > /dev/null
  for np in 1 2; do
    # as make run: default options of each type, the true residual (exact AIJ matrix) checked
    for t in aijcusparse rgcsrcuda packsellcuda; do
      line=$($mpi -n $np "$build/tutorials/ex1" -f /tmp/main.petsc -mat_type $t -ksp_type cg -pc_type jacobi -ksp_norm_type unpreconditioned \
        -ksp_rtol 1e-8 -ksp_max_it 5000 -check_true_residual 1e-7 2>&1 | tail -1; echo "rc=${PIPESTATUS[0]}")
      note "main job bcsstk16 np=$np: $(echo $line)"
      record main-job "mpiexec -n $np tutorials/ex1 -f bcsstk16 -mat_type $t -ksp_type cg -pc_type jacobi -check_true_residual 1e-7" "${line##*rc=}" "$(echo $line | sed 's/ *rc=[0-9]*$//')"
    done
    # the mixed-precision tutorial: FP64 CG + Jacobi, PCMIXEDKRYLOV (cg, f3r) and KSPMIXEDCG
    # on each GPU type as the solves' matrix (PCMIXEDKRYLOV's Pmat); rtol 1e-8, each solver's true
    # residual (exact matrix) printed and checked
    for m in "-f /tmp/main.petsc" "-lap7 48 -var_coeff"; do
      for t in aijcusparse rgcsrcuda packsellcuda; do
        lines=$($mpi -n $np "$build/tutorials/ex2" $m -mat_type $t -solvers cg_jacobi,mixedkrylov_cg,mixedkrylov_f3r,mixedcg -rtol 1e-8 -check_true_residual 1e-8 2>&1 | grep -E "^solver=|FAILED|rror"; echo "rc=${PIPESTATUS[0]}")
        note "ex2 ${m%% *} $t np=$np: $(echo $lines | sed -E 's/setup_s=[^ ]+ //g; s/inner_its=[^ ]+ //g')"
        record main-job-mixed "mpiexec -n $np tutorials/ex2 ${m/\/tmp\/main.petsc/bcsstk16} -mat_type $t -solvers cg_jacobi,mixedkrylov_cg,mixedkrylov_f3r,mixedcg -rtol 1e-8 -check_true_residual 1e-8" "${lines##*rc=}" "$(echo $lines | sed -E 's/ *rc=[0-9]*$//; s/setup_s=[^ ]+ //g; s/inner_its=[^ ]+ //g')"
      done
    done
  done
fi

if has bench && [ -x bench/spmv/run_bench.sh ]; then
  bash bench/spmv/run_bench.sh "$out" $mdir > "$out/bench.log" 2>&1
  rc=$?
  note "bench rc=$rc (see bench.log)"
  record bench "bench/spmv/run_bench.sh" $rc "the SpMV table; a measurement"
fi
if has mixed-kernels; then
  # the device inner CG step against one FP32 PackSELL product (bench/mixed/inner_cg_bench.cu)
  for m in "-lap7 200" "-lap27 128"; do
    for f in e8m14 fp16; do
      "$build/bench/mixed/inner_cg_bench" $m -format $f -steps 20 -repeat 10 >> "$out/inner_cg_bench.txt" 2>&1
    done
  done
  note "inner_cg_bench: $(grep -c 'what=cg_step' "$out/inner_cg_bench.txt") cases (inner_cg_bench.txt)"
  grep 'what=cg_step\|what=spmv_f32' "$out/inner_cg_bench.txt" | tee -a "$summary"
  # Nsight Compute of one application's kernels (3 steps) on lap7 200^3: duration, DRAM
  # throughput, occupancy, launch shape of each (ncu-inner-cg.txt)
  ncu --clock-control none --kernel-name regex:'entry_|product_dot|update_kernel|direction_kernel|exit_kernel|lowp_spmv' \
    --launch-skip 0 --launch-count 24 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    "$build/bench/mixed/inner_cg_bench" -lap7 200 -format e8m14 -steps 3 -repeat 1 > "$out/ncu-inner-cg.txt" 2>&1
  rc=$?
  note "ncu inner cg rc=$rc (ncu-inner-cg.txt)"
  record mixed-kernels "ncu of bench/mixed/inner_cg_bench -lap7 200 -format e8m14" $rc "a measurement (see OUTDIR)"
  grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Achieved Occupancy|Grid Size" "$out/ncu-inner-cg.txt" | head -120 > "$out/ncu-inner-cg-summary.txt"
fi
if has mixed; then
  bash bench/mixed/mixed_bench.sh "$out" "$build" $mdir ${MIXED_CASES:-} > "$out/mixed.log" 2>&1
  rc=$?
  note "mixed bench rc=$rc : $(grep -c '^solver=' "$out/mixed_raw.txt") solver lines, $(grep -c 'rc=[1-9]' "$out/mixed_raw.txt") failed runs"
  record mixed "bench/mixed/mixed_bench.sh" $rc "a measurement (see OUTDIR)"
fi
if has e2e; then
  bash bench/end_to_end/end_to_end.sh "$out" "$build" > "$out/e2e.log" 2>&1
  rc=$?
  note "e2e rc=$rc : $(grep -c 'timed run rc=0' "$out/e2e.log") timed runs ok, $(grep -c 'run rc=[1-9]' "$out/e2e.log") failed (e2e.log, end-to-end.csv/.md/.png, e2e/)"
  record e2e "bench/end_to_end/end_to_end.sh" $rc "a measurement (see OUTDIR)"
  grep -E "^== end_to_end .*skipped" "$out/e2e.log" | tee -a "$summary"
fi
if has pcs; then
  bash bench/preconditioners/pcs.sh "$out" "$build" > "$out/pcs.log" 2>&1
  rc=$?
  note "pcs rc=$rc : $(grep -c ' rc=0 ' "$out/pcs.log") runs ok, $(grep -c ' rc=[1-9]' "$out/pcs.log") failed (pcs.log, pcs.csv, pcs.md, pcs/)"
  record pcs "bench/preconditioners/pcs.sh" $rc "a measurement (see OUTDIR)"
fi
if has scaling; then
  ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
  if [ "$ngpu" -lt 2 ]; then
    note "scaling: $ngpu GPU(s) on this machine: the 2-GPU runs (2 ranks, default binding) are SKIPPED; 1 rank and 2 ranks on GPU 0 run"
  else
    note "scaling: $ngpu GPUs: 1 rank, 2 ranks on GPU 0 (CUDA_VISIBLE_DEVICES=0), 2 ranks on 2 GPUs (PETSc's default binding)"
  fi
  SCALING_GPUS=$ngpu bash bench/scaling/scaling.sh "$out" "$build" > "$out/scaling.log" 2>&1
  rc=$?
  note "scaling rc=$rc : $(grep -c ' rc=0 ' "$out/scaling.log") runs ok, $(grep -c ' rc=[1-9]' "$out/scaling.log") failed (scaling.log, scaling.csv/-detail.csv/.md, scaling/)"
  record scaling "bench/scaling/scaling.sh" $rc "a measurement (see OUTDIR)"
  grep -E "^== scaling .*SKIPPED" "$out/scaling.log" | tee -a "$summary"
fi
if has profile; then
  bash bench/spmv/profile.sh "$out/profile" $mdir > "$out/profile.log" 2>&1
  rc=$?
  note "profile rc=$rc (profile/)"
  record profile "bench/spmv/profile.sh" $rc "a measurement (see OUTDIR)"
fi
note "done"
