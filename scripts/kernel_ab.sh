#!/usr/bin/env bash
# Kernel A/B in one GPU call: bench/spmv/kernel_bench of this tree (new) against an older tree (old,
# a `git archive` tarball), built side by side and run alternately (old, new, new, old, ...) on
# the same matrices, so clocks and thermal state are shared. Prints new/old per matrix, format
# and variant (median over the rounds), with cuSPARSE CSR as the control.
#
# Usage (repo root on the GPU machine, after `gpu_validate.sh OUTDIR build`, which installs
# PETSc and GoogleTest and unpacks the matrices into /tmp/matrices):
#   bash scripts/kernel_ab.sh OLD.tar.gz OUTDIR [ROUNDS]
#   OLD.tar.gz: git archive --format=tar.gz -o .deps/ab-old.tar.gz <commit> -- . ':(exclude)docs'
# AB_MATRICES / AB_GEN / AB_REPS / AB_FORMATS change what is timed.
# AB_SETUP=1 also builds bench/spmv/spmv_bench on both sides and compares, per matrix and CUDA
# type, the setup (MatConvert from AIJ with the upload, the layout built on the GPU, and the
# first MatMult: setup_s) and the MatMult median (AB_SETUP_FORMATS, AB_SETUP_GEN, AB_SETUP_MATRICES).
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
    cmake --build /tmp/ab-build-$side --target kernel_bench $([ "${AB_SETUP:-0}" = 1 ] && echo spmv_bench) -j 16 > "$out/build-$side.log" 2>&1 ||
    { echo "kernel_ab: $side build FAILED ($out/build-$side.log)"; exit 1; }
  # kernel_bench is in BUILD/bench/spmv (in BUILD/bench in trees before bench/ had a folder per benchmark)
  kb=/tmp/ab-build-$side/bench/spmv/kernel_bench
  [ -x "$kb" ] || kb=/tmp/ab-build-$side/bench/kernel_bench
  ln -sf "$kb" /tmp/ab-kernel-bench-$side
  ln -sf /tmp/ab-build-$side/bench/spmv/spmv_bench /tmp/ab-spmv-bench-$side
  # register use of every kernel, to see whether the allocation moved
  cuobjdump -res-usage /tmp/ab-kernel-bench-$side 2>/dev/null | grep -E "Function|REG" > "$out/res-usage-$side.txt"
done
names=${AB_MATRICES:-bundle1 Maragal_6 email-Enron astro-ph rajat01 PGPgiantcompo west0479 power}
files=$(for m in $names; do printf '%s,' "$mdir/$m.mtx"; done)
for r in $(seq 1 "$rounds"); do
  order="old new"
  [ $((r % 2)) = 0 ] && order="new old" # alternate which side runs first
  for side in $order; do
    /tmp/ab-kernel-bench-$side -gen "${AB_GEN:-lap27:128,lap7:200}" -f "${files%,}" -reps "${AB_REPS:-100}" \
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

[ "${AB_SETUP:-0}" = 1 ] || exit 0
# setup A/B: spmv_bench of both sides, alternately, same matrices
snames=${AB_SETUP_MATRICES:-bundle1 Maragal_6 email-Enron PGPgiantcompo power}
sfiles=$(for m in $snames; do printf '%s,' "$mdir/$m.mtx"; done)
for r in $(seq 1 "$rounds"); do
  order="old new"
  [ $((r % 2)) = 0 ] && order="new old"
  for side in $order; do
    /tmp/ab-spmv-bench-$side -gen "${AB_SETUP_GEN:-lap27:128,lap7:200}" -f "${sfiles%,}" -reps 30 -warmup 5 \
      -formats "${AB_SETUP_FORMATS:-aijcusparse,rgcsrcuda,packsellcuda,packsellcuda:fp16}" -json "$out/setup-$side-$r.json" \
      > "$out/setup-$side-$r.txt" 2>&1 || echo "kernel_ab: setup $side round $r rc=$? ($out/setup-$side-$r.txt)"
  done
done
python3 - "$out" "$rounds" << 'EOF' | tee "$out/ab-setup.txt"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
t = {}
for side in ("old", "new"):
    for r in range(1, rounds + 1):
        try:
            runs = json.load(open(f"{out}/setup-{side}-{r}.json"))
        except (OSError, ValueError):
            continue
        for m in runs:
            for f, res in m.get("spmv", {}).items():
                if res.get("completed") and res.get("setup_s") is not None:
                    d = t.setdefault((m["name"], f), {})
                    d.setdefault((side, "setup"), []).append(res["setup_s"])
                    d.setdefault((side, "mult"), []).append(res["time_us_median"])
print(f"{'matrix':22s} {'format':22s} {'setup old s':>11s} {'new s':>8s} {'new/old':>8s} {'mult old us':>11s} {'new us':>8s} {'new/old':>8s}")
for (m, f), d in sorted(t.items()):
    if ("old", "setup") not in d or ("new", "setup") not in d:
        continue
    so, sn = statistics.median(d[("old", "setup")]), statistics.median(d[("new", "setup")])
    mo, mn = statistics.median(d[("old", "mult")]), statistics.median(d[("new", "mult")])
    print(f"{m:22s} {f:22s} {so:11.4f} {sn:8.4f} {sn / so:8.3f} {mo:11.2f} {mn:8.2f} {mn / mo:8.3f}")
EOF
