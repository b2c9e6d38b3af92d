#!/usr/bin/env python3
"""Table of bench/preconditioners/pcs.sh: one row per case, KSP, PC, rank count and format.

    /usr/bin/python3 bench/tables/pcs_table.py --manifest OUTDIR/pcs/manifest.txt --out OUTDIR [--baseline aijcusparse]

manifest lines: "<case> <ksp> <pc> <ranks> <format> <repeat> <log>". Writes OUT/pcs.csv with the
columns case,ksp,pc,format,ranks,setup_s,solve_s,iterations,true_residual,speedup_vs_aijcusparse
and OUT/pcs.md. Times are -log_view's max time column (stage 0), the median over the repeats:
  setup_s   PCSetUp + PCSetUpOnBlocks (the outer PC's setup and, for block Jacobi and ASM, the
            blocks' factorizations, which KSPSolve runs in PCSetUpOnBlocks)
  solve_s   KSPSolve - KSPSetUp - PCSetUpOnBlocks (ex45 assembles its matrix inside KSPSetUp)
  (setup_s + solve_s = PCSetUp + KSPSolve - KSPSetUp: the %T estimate of PCSetUpOnBlocks, below,
  moves time between the two columns but not into their sum, which the speedup compares)
  iterations  the sum of the "Linear solve converged ... iterations N" lines
  true_residual  ksp ex45: the last ||r(i)||/||b|| of -ksp_monitor_true_residual (r = b - A x with
            the operator, the user's matrix for exact formats); snes ex19: the last SNES function
            norm over the first
  speedup_vs_aijcusparse  (setup_s + solve_s) of the baseline / this row's, same case, KSP, PC, ranks
  solve_speedup_vs_cg_same_pc  KSPMIXEDCG rows (ksp mixedcg): solve_s of FP64 CG with the same PC on
            the baseline format, same case and ranks / this row's solve_s (KSPMIXEDCG builds its
            reduced-precision copies inside its first KSPSolve, so they count here); empty otherwise
A run that did not converge keeps its row with true_residual from its log and a note on stderr.
Standard library only (and logview.py beside it). Without -log_view_gpu_time PETSc prints n/a for
the time of events that run GPU work (PCSetUp of the CUDA types): their time is then their %T column times the Main
Stage's time, exact to 1% of the run.
"""
import argparse
import math
import os
import re
import statistics
import sys

import logview



def parse_log_view(path):
    """Stage 0's events: name -> (time in s); an event whose time -log_view prints as n/a (GPU
    work timed without -log_view_gpu_time) gets its %T of the Main Stage's time (to 1% of it)."""
    lv, lines = logview.read_log(path)
    events = {name: ev["time"] if not math.isnan(ev["time"]) else ev["time_pct"] / 100.0 * (lv.main_stage_s or 0.0)
              for name, ev in lv.main.items()}
    return events, lines


COLUMNS = ["case", "ksp", "pc", "format", "ranks", "setup_s", "solve_s", "iterations", "true_residual",
           "speedup_vs_aijcusparse", "solve_speedup_vs_cg_same_pc"]
LINEAR_RE = re.compile(r"Linear solve (converged|did not converge) due to (\S+) iterations (\d+)")
TRUE_RE = re.compile(r"\|\|r\(i\)\|\|/\|\|b\|\|\s+(\S+)")
SNES_RE = re.compile(r"^\s*\d+ SNES Function norm\s+(\S+)")


def parse_run(path):
    events, lines = parse_log_view(path)
    t = lambda name: events.get(name, 0.0)
    its, failed, true_rel, fnorms = 0, False, None, []
    for line in lines:
        m = LINEAR_RE.search(line)
        if m:
            its += int(m.group(3))
            failed = failed or m.group(1) != "converged"
        m = TRUE_RE.search(line)
        if m:
            true_rel = float(m.group(1))
        m = SNES_RE.match(line)
        if m:
            fnorms.append(float(m.group(1)))
    if true_rel is None and len(fnorms) >= 2 and fnorms[0] > 0:
        true_rel = fnorms[-1] / fnorms[0]
    if "KSPSolve" not in events:
        return None
    return {"setup_s": t("PCSetUp") + t("PCSetUpOnBlocks"), "solve_s": t("KSPSolve") - t("KSPSetUp") - t("PCSetUpOnBlocks"),
            "iterations": its, "true_residual": true_rel, "failed": failed}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--baseline", default="aijcusparse")
    a = ap.parse_args()
    runs = {}
    order = []
    with open(a.manifest) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 7:
                continue
            case, ksp, pc, ranks, fmt, _, log = parts
            key = (case, ksp, pc, ranks, fmt)
            if key not in runs:
                runs[key] = []
                order.append(key)
            r = parse_run(log) if os.path.exists(log) else None
            if r is None:
                print(f"pcs_table: {log}: no -log_view (the run failed)", file=sys.stderr)
                continue
            runs[key].append(r)
    rows = []
    for key in order:
        rs = runs[key]
        if not rs:
            continue
        case, ksp, pc, ranks, fmt = key
        row = {"case": case, "ksp": ksp, "pc": pc, "format": fmt, "ranks": int(ranks),
               "setup_s": statistics.median(r["setup_s"] for r in rs),
               "solve_s": statistics.median(r["solve_s"] for r in rs),
               "iterations": rs[0]["iterations"], "true_residual": rs[0]["true_residual"]}
        if any(r["failed"] for r in rs):
            print(f"pcs_table: {key}: a linear solve did not converge", file=sys.stderr)
        rows.append(row)
    base = {(r["case"], r["ksp"], r["pc"], r["ranks"]): r for r in rows if r["format"] == a.baseline}
    for r in rows:
        b = base.get((r["case"], r["ksp"], r["pc"], r["ranks"]))
        tot = r["setup_s"] + r["solve_s"]
        r["speedup_vs_aijcusparse"] = (b["setup_s"] + b["solve_s"]) / tot if b and tot > 0 else ""
        cg = base.get((r["case"], "cg", r["pc"], r["ranks"])) if r["ksp"] == "mixedcg" else None
        r["solve_speedup_vs_cg_same_pc"] = cg["solve_s"] / r["solve_s"] if cg and r["solve_s"] > 0 else ""
    os.makedirs(a.out, exist_ok=True)
    logview.write_csv(os.path.join(a.out, "pcs.csv"), COLUMNS, rows,
                      lambda r, k: f"{r[k]:.4g}" if isinstance(r[k], float) else ("" if r[k] is None else r[k]))
    with open(os.path.join(a.out, "pcs.md"), "w") as f:
        f.write("| case | KSP/PC | ranks | format | setup s | solve s | its | true residual | speedup |\n")
        f.write("|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            sp = r["speedup_vs_aijcusparse"]
            tr = r["true_residual"]
            f.write(f"| {r['case']} | {r['ksp']}/{r['pc']} | {r['ranks']} | {r['format']} | {r['setup_s']:.3f} | "
                    f"{r['solve_s']:.3f} | {r['iterations']} | {'' if tr is None else f'{tr:.1e}'} | "
                    f"{'' if sp == '' else f'{sp:.2f}x'} |\n")
    print(f"pcs_table: {len(rows)} rows -> {os.path.join(a.out, 'pcs.csv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
