#!/usr/bin/env bash
# Recompresses Matrix Market files with xz for the trip to the GPU machine (the working tree that
# travels is at most 64 MiB). All 41 files of ../shared/matrices: 71 MB as shipped (gzip),
# 33 MB as .mtx.xz with -9e (G3_circuit 18.0 -> 5.5 MB, landmark 14.3 -> 8.1 MB).
# spmv_bench and bench/spmv/run_bench.sh read .mtx.xz directly (through xz -dc).
#
#   bash bench/spmv/pack_matrices.sh [SRC_DIR] [DST_DIR] [NAME ...]
#     SRC_DIR default ../shared/matrices, DST_DIR default gpu-deps/bench-matrices,
#     NAMEs (file stems, e.g. G3_circuit) default: every .mtx / .mtx.gz in SRC_DIR.
# Existing outputs newer than their source are kept. Then, for example:
#   bash bench/spmv/run_bench.sh OUT gpu-deps/matrices:gpu-deps/bench-matrices
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$top/../shared/matrices}
dst=${2:-$top/gpu-deps/bench-matrices}
shift $(( $# > 2 ? 2 : $# ))
mkdir -p "$dst"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$src"/*.mtx "$src"/*.mtx.gz; do
    [ -f "$f" ] || continue
    b=$(basename "$f"); b=${b%.gz}; names+=("${b%.mtx}")
  done
fi
jobs=()
for n in "${names[@]}"; do
  if [ -f "$src/$n.mtx.gz" ]; then in=$src/$n.mtx.gz; cat=(gzip -dc); elif [ -f "$src/$n.mtx" ]; then in=$src/$n.mtx; cat=(cat); else echo "pack_matrices: no $n.mtx[.gz] in $src" >&2; exit 1; fi
  out=$dst/$n.mtx.xz
  if [ -f "$out" ] && [ "$out" -nt "$in" ]; then continue; fi
  jobs+=("${cat[*]} '$in' | xz -9e -T1 > '$out.tmp' && mv '$out.tmp' '$out' && echo 'pack_matrices: $out'")
done
[ ${#jobs[@]} -gt 0 ] && printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} sh -c '{}'
du -ch "$dst"/*.mtx.xz | tail -1
