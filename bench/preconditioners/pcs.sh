#!/usr/bin/env bash
# Preconditioner benchmark: PETSc's unmodified ksp ex45 (3-D 7-point Laplacian on a DMDA) and snes
# ex19 (driven cavity, its default solver) with our Mat types loaded through -dll_append, against
# aijcusparse in the same run, for the preconditioners users run: setup and solve times, iterations
# and the true residual, one row per case, KSP, PC, format and rank count in OUTDIR/pcs.csv.
#
#   bash bench/preconditioners/pcs.sh OUTDIR [BUILD_DIR]
#
# Combinations (KSP/PC; "ranks" 1 or 2 selects the PETSc default that goes with the rank count):
#   cg/jacobi, cg/ilu (1 rank; 2 ranks: cg/bjacobi with ILU blocks), gmres/icc (1 rank; 2 ranks:
#   bjacobi with ICC blocks; ex45's boundary rows make the matrix nonsymmetric, so not CG), gmres/asm, cg/gamg, cg/sor (symmetric, local sweeps), gmres/jacobi,
#   bicg/jacobi (transpose products), mixedcg/gamg (KSPMIXEDCG: FP32 steps and, at one rank, the FP32
#   V-cycle on packed copies of GAMG's levels; it reports the true residual at its reliable updates,
#   the last one exact)
# Cases: ksp_ex45_N for N in PCS_N (default "128 200"; at 200 only jacobi, ilu/bjacobi, gamg and mixedcg/gamg),
# at PCS_RANKS ranks (default "1 2": two processes share the GPU), and snes_ex19_512 (PCS_EX19_N)
# with its defaults (GMRES + ILU at 1 rank, block Jacobi at 2), formats PCS_TYPES (default
# "aijcusparse rgcsrcuda packsellcuda"; the first is the baseline), each run PCS_REPEAT times
# (default 1; the table takes the median; repetition k runs the formats rotated by k - 1); PCS_COMBOS (e.g. "jacobi ilu gamg") keeps those
# combinations only (none: snes ex19 alone), PCS_EX19=0 skips snes ex19, PCS_APPEND=1 adds to the runs of an earlier call
# into OUTDIR (the table covers all). Every run: -ksp_rtol 1e-8 -dm_vec_type cuda -log_view
# -ksp_converged_reason -ksp_monitor_true_residual (ex45: the last line's ||r||/||b|| is the true
# relative residual of the operator, which the exact formats make the user's matrix).
# Raw logs in OUTDIR/pcs/<case>_<ksp>_<pc>_np<ranks>_<format>_<k>.log; bench/tables/pcs_table.py makes
# OUTDIR/pcs.csv and OUTDIR/pcs.md (bench/README.md: the columns).
# PCS_HOST=1: the host types (aij rgcsr packsell, standard vectors) on small grids: proves the runs
# and the parsing without a GPU.
set -uo pipefail
out=${1:?usage: pcs.sh OUTDIR [BUILD_DIR]}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$top/build-gpu}
mkdir -p "$out/pcs"
out=$(cd "$out" && pwd)
raw=$out/pcs
t_begin=$(date +%s)
say() { echo "== pcs $(date -u +%H:%M:%S) (+$(( $(date +%s) - t_begin ))s) $*"; }

export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "${PCS_HOST:-0}" = 1 ]; then
  types=${PCS_TYPES:-aij rgcsr packsell}; vec=standard; sizes=${PCS_N:-16}; n19=${PCS_EX19_N:-32}
else
  types=${PCS_TYPES:-aijcusparse rgcsrcuda packsellcuda}; vec=cuda; sizes=${PCS_N:-128 200}; n19=${PCS_EX19_N:-512}
fi
ranks_list=${PCS_RANKS:-1 2}
repeat=${PCS_REPEAT:-1}
lib=$build/src/petsc/libpetscspmv.so
ex45=$build/bench/petsc_tutorials/petsc_ksp_ex45
ex19=$build/bench/petsc_tutorials/petsc_snes_ex19
[ -f "$lib" ] || { say "no $lib (build first)"; exit 1; }
mpi="mpiexec --allow-run-as-root --oversubscribe"
manifest=$raw/manifest.txt
[ "${PCS_APPEND:-0}" = 1 ] || : > "$manifest"
rc_all=0

# combos: name ksp pc options-at-1-rank options-at-2-ranks
combos() {
  local n=$1
  echo "jacobi cg jacobi|-ksp_type cg -pc_type jacobi|-ksp_type cg -pc_type jacobi"
  echo "ilu cg ilu|-ksp_type cg -pc_type ilu|-ksp_type cg -pc_type bjacobi -sub_pc_type ilu"
  [ "$n" -ge 200 ] || echo "icc gmres icc|-ksp_type gmres -pc_type icc|-ksp_type gmres -pc_type bjacobi -sub_pc_type icc"
  [ "$n" -ge 200 ] || echo "asm gmres asm|-ksp_type gmres -pc_type asm|-ksp_type gmres -pc_type asm"
  echo "gamg cg gamg|-ksp_type cg -pc_type gamg|-ksp_type cg -pc_type gamg"
  echo "mixedcg_gamg mixedcg gamg|-ksp_type mixedcg -pc_type gamg|-ksp_type mixedcg -pc_type gamg"
  [ "$n" -ge 200 ] || echo "sor cg sor|-ksp_type cg -pc_type sor -pc_sor_local_symmetric|-ksp_type cg -pc_type sor -pc_sor_local_symmetric"
  [ "$n" -ge 200 ] || echo "gmres_jacobi gmres jacobi|-ksp_type gmres -pc_type jacobi|-ksp_type gmres -pc_type jacobi"
  [ "$n" -ge 200 ] || echo "bicg_jacobi bicg jacobi|-ksp_type bicg -pc_type jacobi|-ksp_type bicg -pc_type jacobi"
}

# The formats in the order of repetition k: rotated by k - 1, so that each format runs first,
# second, ... in turn (equally often when PCS_REPEAT is a multiple of the number of formats),
# rather than always in the same place.
rotated() {
  local k=$1
  shift
  local fmts=("$@") i
  for ((i = 0; i < ${#fmts[@]}; i++)); do echo "${fmts[(i + k - 1) % ${#fmts[@]}]}"; done
}

for np in $ranks_list; do
  for n in $sizes; do
    [ -x "$ex45" ] || { say "skipped ksp ex45: $ex45 not built"; break; }
    while IFS='|' read -r head o1 o2; do
      read -r name ksp pc <<< "$head"
      case " ${PCS_COMBOS:-$name} " in *" $name "*) ;; *) continue ;; esac
      opts=$o1; [ "$np" -gt 1 ] && opts=$o2
      [ "$np" -gt 1 ] && [ "$pc" = ilu ] && pc=bjacobi_ilu
      [ "$np" -gt 1 ] && [ "$pc" = icc ] && pc=bjacobi_icc
      for k in $(seq 1 "$repeat"); do
        for fmt in $(rotated "$k" $types); do
          log=$raw/ksp_ex45_${n}_${ksp}_${pc}_np${np}_${fmt}_${k}.log
          # shellcheck disable=SC2086
          $mpi -n "$np" "$ex45" -da_grid_x "$n" -da_grid_y "$n" -da_grid_z "$n" $opts -ksp_rtol 1e-8 -ksp_max_it 5000 \
            -dll_append "$lib" -dm_mat_type "$fmt" -dm_vec_type "$vec" -ksp_converged_reason -ksp_monitor_true_residual -log_view < /dev/null > "$log" 2>&1
          rc=$?
          [ $rc -eq 0 ] || { rc_all=1; tail -3 "$log"; }
          echo "ksp_ex45_$n $ksp $pc $np $fmt $k $log" >> "$manifest"
          [ "$k" = "$repeat" ] && say "ksp_ex45_$n $ksp/$pc np$np $fmt rc=$rc $(grep -E 'Linear solve' "$log" | tail -1)"
        done
      done
    done < <(combos "$n")
  done
  if [ -x "$ex19" ] && [ "${PCS_EX19:-1}" != 0 ]; then
    pc=ilu; [ "$np" -gt 1 ] && pc=bjacobi_ilu
    for k in $(seq 1 "$repeat"); do
      for fmt in $(rotated "$k" $types); do
        log=$raw/snes_ex19_${n19}_gmres_${pc}_np${np}_${fmt}_${k}.log
        $mpi -n "$np" "$ex19" -da_grid_x "$n19" -da_grid_y "$n19" -ksp_rtol 1e-8 -dll_append "$lib" -dm_mat_type "$fmt" -dm_vec_type "$vec" \
          -snes_converged_reason -ksp_converged_reason -snes_monitor -log_view < /dev/null > "$log" 2>&1
        rc=$?
        [ $rc -eq 0 ] || { rc_all=1; tail -3 "$log"; }
        echo "snes_ex19_$n19 gmres $pc $np $fmt $k $log" >> "$manifest"
        [ "$k" = "$repeat" ] && say "snes_ex19_$n19 np$np $fmt rc=$rc $(grep -E 'Nonlinear solve' "$log" | tail -1)"
      done
    done
  fi
done

py=/usr/bin/python3; [ -x $py ] || py=python3
$py "$top/bench/tables/pcs_table.py" --manifest "$manifest" --out "$out" --baseline "${types%% *}" || rc_all=1
say "done (rc $rc_all): $out/pcs.csv, $out/pcs.md; raw logs in $raw"
exit $rc_all
