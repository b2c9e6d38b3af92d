#!/usr/bin/env python3
"""docs/bench/mixed.csv, a markdown table and the convergence plot from bench/mixed/mixed_bench.sh's output.

Usage: python3 bench/tables/mixed_table.py MIXED_RAW MIXED_HISTORY OUTDIR [--keep OLD_CSV]
  MIXED_RAW      mixed_raw.txt (ex2 lines after "case=<c> mat_type=<t> value_format=<vf>" lines)
  MIXED_HISTORY  mixed_history.csv (matrix,mat_type,value_format,solver,iteration,time_s,relative_residual)
  OUTDIR         gets mixed.csv, mixed.md and mixed_convergence.png

--keep OLD_CSV: the rows of OLD_CSV (an earlier mixed.csv) whose matrix this run did not measure
come first, unchanged (columns it lacks left empty), so a run of a few cases updates the table.

Columns of mixed.csv: matrix,solver,value_format,setup_s,solve_s,outer_its,inner_its,true_residual,
speedup_vs_fp64_cg,speedup_vs_fp64_same_pc,commit (the environment's GIT_COMMIT for this run's rows). solver: cg_jacobi_<mat_type> (FP64 CG + Jacobi on that
matrix type), mixedkrylov_cg, mixedkrylov_f3r (PCMIXEDKRYLOV), mixedcg (KSPMIXEDCG), gamg (CG +
GAMG), mixedcg_gamg (KSPMIXEDCG + GAMG), cg_ilu, mixedcg_ilu (ILU(0), block Jacobi + ILU(0) on
several ranks), these on the main process's matrix type (aijcusparse unless MAT_TYPE was set).
setup_s: KSPSetUp + PCSetUp (KSPMIXEDCG: building its scaled copy).
outer_its: KSP iterations (mixedcg: all its CG steps, low precision and FP64).
inner_its: inner steps per outer iteration (PCMIXEDKRYLOV: CG steps, or F3R innermost Richardson
steps); mixedcg: its reliable updates (FP64 true residuals after the first), not steps.
speedup_vs_fp64_cg: solve_s of cg_jacobi_aijcusparse on the same matrix (the same ex2 process's
when it ran one, else the matrix's first) / this solve_s; without an aijcusparse run of the
matrix, cg_jacobi on the row's own matrix type in the same process (e.g. MAT_TYPE=aij).
speedup_vs_fp64_same_pc: for mixedcg_gamg and mixedcg_ilu, solve_s of FP64 CG with the same PC in
the same ex2 process (gamg, cg_ilu) / this solve_s; nan for the other rows.
true_residual: ||b - A x|| / ||b|| after the solve, with the exact FP64 matrix.
mixed.md also shows the value update time (ex2 -time_update: PCSetUp after a same-pattern value
change) when the raw file has "update solver=..." lines.
"""
import csv
import os
import re
import sys

import logview


def parse_raw(path):
    rows, ctx, block = [], None, 0
    for line in open(path):
        m = re.match(r"case=(\S+) mat_type=(\S+) value_format=(\S+)", line)
        if m:
            ctx = m.groups()
            block += 1  # one ex2 process
            continue
        if line.startswith("solver=") and ctx:
            f = dict(kv.split("=", 1) for kv in line.split())
            c, t, vf = ctx
            name = f["solver"]
            if name == "cg_jacobi":
                name, vf_out = "cg_jacobi_" + t, "fp64"
            elif name in ("gamg", "cg_ilu"):
                vf_out = "fp64"
            else:
                vf_out = vf
            rows.append(dict(matrix=c, solver=name, value_format=vf_out, setup_s=float(f["setup_s"]),
                             solve_s=float(f["solve_s"]), outer_its=int(f["outer_its"]),
                             inner_its=float(f["inner_its"]), true_residual=float(f["true_residual"]),
                             reason=f["reason"], mat_type=t, update_s=None, block=block))
        elif line.startswith("update solver=") and ctx and rows:
            # ex2 -time_update: the value update of the solver printed just before
            f = dict(kv.split("=", 1) for kv in line.split()[1:3])
            if rows[-1]["matrix"] == ctx[0] and f["solver"] in (rows[-1]["solver"], rows[-1]["solver"].replace("cg_jacobi_" + ctx[1], "cg_jacobi")):
                rows[-1]["update_s"] = float(f["update_s"])
    return rows


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    raw, hist, out = sys.argv[1:4]
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv[4:] else None
    rows = parse_raw(raw)
    # the FP64 CG + Jacobi time each row is compared with: on aijcusparse in the same process, else
    # on aijcusparse in the matrix's first process that ran it, else on the row's own matrix type
    # in the same process (a host run: MAT_TYPE=aij)
    same = {(r["block"], r["solver"]): r["solve_s"] for r in rows if r["solver"].startswith("cg_jacobi_")}
    first = {}
    for r in rows:
        if r["solver"] == "cg_jacobi_aijcusparse":
            first.setdefault(r["matrix"], r["solve_s"])
    os.makedirs(out, exist_ok=True)
    cols = ["matrix", "solver", "value_format", "setup_s", "solve_s", "outer_its", "inner_its", "true_residual", "speedup_vs_fp64_cg", "speedup_vs_fp64_same_pc", "commit"]
    # KSPMIXEDCG with a PC against FP64 CG with that PC in the same process
    fp64_same_pc = {"mixedcg_gamg": "gamg", "mixedcg_ilu": "cg_ilu"}
    by_block = {(r["block"], r["solver"]): r["solve_s"] for r in rows}
    for r in rows:
        b = same.get((r["block"], "cg_jacobi_aijcusparse"), first.get(r["matrix"], same.get((r["block"], "cg_jacobi_" + r["mat_type"]))))
        r["speedup"] = b / r["solve_s"] if b is not None and r["solve_s"] > 0 else float("nan")
        p = by_block.get((r["block"], fp64_same_pc.get(r["solver"], "")))
        r["speedup_pc"] = p / r["solve_s"] if p is not None and r["solve_s"] > 0 else float("nan")
    fmt = {"setup_s": "%.6f", "solve_s": "%.6f", "inner_its": "%.2f", "true_residual": "%.3e", "speedup_vs_fp64_cg": "%.3f", "speedup_vs_fp64_same_pc": "%.3f"}
    key = {"speedup_vs_fp64_cg": "speedup", "speedup_vs_fp64_same_pc": "speedup_pc"}
    commit = os.environ.get("GIT_COMMIT", "")
    for r in rows:
        r["commit"] = commit
    kept = []
    if keep:
        measured = {r["matrix"] for r in rows}
        kept = [dict(k, kept=True) for k in csv.DictReader(open(keep)) if k["matrix"] not in measured]
    cell = lambda r, c: r.get(c, "") if r.get("kept") else (fmt[c] % r[key.get(c, c)] if c in fmt else r[c])
    logview.write_csv(os.path.join(out, "mixed.csv"), cols, kept + rows, cell)
    with open(os.path.join(out, "mixed.md"), "w") as f:
        upd = any(r["update_s"] is not None for r in rows)
        f.write("| matrix | solver | values | setup s |%s solve s | outer its | inner/outer (mixedcg: reliable updates) | true residual | speedup vs FP64 CG |\n" % (" value update s |" if upd else ""))
        f.write("|---|---|---|---:|%s---:|---:|---:|---:|---:|\n" % ("---:|" if upd else ""))
        for r in rows:
            flag = "" if r["reason"].startswith("CONVERGED") else " (%s)" % r["reason"]
            u = ("" if not upd else " - |" if r["update_s"] is None else " %.4f |" % r["update_s"])
            f.write("| %s | %s | %s | %.4f |%s %.4f | %d | %.1f | %.2e%s | %.2fx |\n" % (r["matrix"], r["solver"], r["value_format"], r["setup_s"], u, r["solve_s"],
                                                                                     r["outer_its"], r["inner_its"], r["true_residual"], flag, r["speedup"]))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    series = {}
    for h in csv.DictReader(open(hist)):
        key = (h["matrix"], h["solver"] if h["solver"] not in ("cg_jacobi",) else "cg_jacobi_" + h["mat_type"], h["value_format"] if h["solver"].startswith("mixed") else "fp64")
        series.setdefault(key, []).append((float(h["time_s"]), float(h["relative_residual"])))
    matrices = sorted({k[0] for k in series})
    if not matrices:
        return
    fig, axes = plt.subplots(1, len(matrices), figsize=(5 * len(matrices), 4), squeeze=False)
    for ax, m in zip(axes[0], matrices):
        for (mm, s, vf), pts in sorted(series.items()):
            if mm != m:
                continue
            ax.semilogy([p[0] for p in pts], [p[1] for p in pts], label=s if vf == "fp64" else "%s (%s)" % (s, vf))
        ax.axhline(1e-8, color="gray", lw=0.5, ls="--")
        ax.set_title(m)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("||b - A x|| / ||b||")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "mixed_convergence.png"), dpi=110)


if __name__ == "__main__":
    main()
