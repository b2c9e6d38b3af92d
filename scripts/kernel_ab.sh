#!/usr/bin/env bash
# Kernel A/B in one GPU call: bench/spmv/kernel_bench of this tree (new) against an older tree (old,
# a `git archive` tarball), built side by side and run alternately (old, new, new, old, ...) on
# the same matrices, so clocks and thermal state are shared. Prints new/old per matrix, format
# and variant (median over the rounds), with cuSPARSE CSR as the control.
#
# Usage (repo root on the GPU machine, after `gpu_validate.sh OUTDIR build`, which installs
# PETSc and GoogleTest and unpacks the matrices into /tmp/matrices):
#   bash scripts/kernel_ab.sh OLD.tar.gz OUTDIR [ROUNDS]
#   OLD.tar.gz: git archive --format=tar.gz -o gpu-deps/ab-old.tar.gz <commit> -- . ':(exclude)docs'
# AB_MATRICES / AB_GEN / AB_REPS / AB_FORMATS change what is timed.
set -uo pipefail
old_tgz=${1:?usage: kernel_ab.sh OLD.tar.gz OUTDIR [ROUNDS]}
out=${2:?usage: kernel_ab.sh OLD.tar.gz OUTDIR [ROUNDS]}
rounds=${3:-2}
mdir=${AB_MATRIX_DIR:-/tmp/matrices}
: "${PETSC_DIR:=/opt/petsc-cuda}"
export PETSC_DIR
# a fresh old tree and build: git archive keeps the commit's mtimes, so an extraction over an
# earlier one (or its build) could leave stale files or objects that make thinks are newer
rm -rf /tmp/ab-old /tmp/ab-build-old
mkdir -p "$out" /tmp/ab-old
tar -xzf "$old_tgz" -C /tmp/ab-old || { echo "kernel_ab: cannot unpack $old_tgz"; exit 1; }
for side in old new; do
  src=$PWD
  [ $side = old ] && src=/tmp/ab-old
  cmake -S "$src" -B /tmp/ab-build-$side -DPETSC_DIR=$PETSC_DIR -DCMAKE_PREFIX_PATH=/opt/gtest \
    -DPETSCSPMV_MATRIX_DIR=$mdir > "$out/configure-$side.log" 2>&1 &&
    cmake --build /tmp/ab-build-$side --target kernel_bench -j 16 > "$out/build-$side.log" 2>&1 ||
    { echo "kernel_ab: $side build FAILED ($out/build-$side.log)"; exit 1; }
  # kernel_bench is in BUILD/bench/spmv (in BUILD/bench in trees before bench/ had a folder per benchmark)
  kb=/tmp/ab-build-$side/bench/spmv/kernel_bench
  [ -x "$kb" ] || kb=/tmp/ab-build-$side/bench/kernel_bench
  ln -sf "$kb" /tmp/ab-kernel-bench-$side
  # register use of every kernel, to see whether the allocation moved
  cuobjdump -res-usage /tmp/ab-kernel-bench-$side 2>/dev/null | grep -E "Function|REG" > "$out/res-usage-$side.txt"
done
names=${AB_MATRICES:-bundle1 Maragal_6 email-Enron astro-ph rajat01 PGPgiantcompo west0479 power}
# matrices missing from MATRIX_DIR are left out (named in OUTDIR/missing.txt), not fatal
missing=$(for m in $names; do [ -f "$mdir/$m.mtx" ] || printf '%s ' "$m"; done)
files=$(for m in $names; do [ -f "$mdir/$m.mtx" ] && printf '%s,' "$mdir/$m.mtx"; done)
[ -n "$missing" ] && echo "kernel_ab: not in $mdir, left out: $missing" | tee "$out/missing.txt"
for r in $(seq 1 "$rounds"); do
  order="old new"
  [ $((r % 2)) = 0 ] && order="new old" # alternate which side runs first
  for side in $order; do
    /tmp/ab-kernel-bench-$side -gen "${AB_GEN:-lap27:128,lap7:200}" ${files:+-f "${files%,}"} -reps "${AB_REPS:-100}" \
      -formats "${AB_FORMATS:-csr,rgcsr,fp16,bf16,exact}" -csv "$out/$side-$r.csv" > "$out/$side-$r.txt" 2>&1 ||
      echo "kernel_ab: $side round $r rc=$? ($out/$side-$r.txt)"
  done
done
python3 - "$out" "$rounds" << 'EOF' | tee "$out/ab.txt"
import csv, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
t = {}
for side in ("old", "new"):
    for r in range(1, rounds + 1):
        try:
            rows = list(csv.DictReader(open(f"{out}/{side}-{r}.csv")))
        except OSError:
            continue
        for row in rows:
            t.setdefault((row["matrix"], row["format"], row["variant"]), {}).setdefault(side, []).append(float(row["time_us"]))
print(f"{'matrix':28s} {'format':10s} {'variant':22s} {'old us':>9s} {'new us':>9s} {'new/old':>8s}")
for (m, f, v), s in sorted(t.items()):
    if "old" not in s or "new" not in s:
        print(f"{m:28s} {f:10s} {v:22s} only in {'old' if 'old' in s else 'new'}")
        continue
    o, n = statistics.median(s["old"]), statistics.median(s["new"])
    print(f"{m:28s} {f:10s} {v:22s} {o:9.2f} {n:9.2f} {n / o:8.3f}")
EOF
