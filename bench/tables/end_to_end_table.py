#!/usr/bin/env python3
"""Tables and plot of bench/end_to_end/end_to_end.sh (time to solution with assembly).

    /usr/bin/python3 bench/tables/end_to_end_table.py --raw OUTDIR/e2e --out OUTDIR [--baseline aijcusparse]

Reads, for each line "<case> <format>" of RAW/manifest.txt (or every RAW/<case>_<format>.log):
  <case>_<format>.log        the timed run: stdout and -log_view
  <case>_<format>.trace.gz   the traced run's -log_trace (per-occurrence event times), optional
and writes OUT/end-to-end.csv (the summary columns), OUT/end-to-end-detail.csv (every parsed
number), OUT/end-to-end.md (a table for docs/benchmarks.md) and OUT/end-to-end.png.
Standard library only (and logview.py beside it), plus matplotlib for the plot (skipped with a
message without it).

Definitions (bench/README.md, "End-to-end benchmark"): times are -log_view's max time column
(one rank: the time); from the traced run, the durations of single occurrences.
  build_s   the first MatAssemblyEnd of the operator (for our types it holds SpMVBuild: the CSR
            upload and the device layout build) + the first full upload that happens outside
            any MatAssemblyEnd (aijcusparse: its first MatCUSPARSCopyTo, lazily at the first
            use); from the traced run
  update_s  the mean, over the later assemblies of the operator (ex45: the one assembly of the
            values after the DM's assembly of the zero pattern; ex19: the Jacobians), of their
            MatAssemblyEnd plus the uploads outside an assembly until the next one (aijcusparse:
            the value copies MatCUSPARSCopyTo); from the traced run
  solve_s   KSPSolve minus KSPSetUp (ex45: KSPSolve(ksp, NULL, NULL) with
            KSPSetComputeOperators creates and assembles the matrix inside KSPSetUp) / SNESSolve
            (ex19: contains the Jacobian evaluations and their assemblies), timed run
  total_s   the Main Stage's time of the timed run: PetscInitialize to PetscFinalize (DM set-up,
            preallocation, assembly, layout builds, solve, the tutorial's residual check)
  build_over_matmult      build_s / the baseline's time of one MatMult of the same case (the
            mean over the traced run's MatMult occurrences that contain no upload; the traced run
            has -log_view_gpu_time, so an event ends when its kernels do, not when they launch)
  speedup_vs_aijcusparse  the baseline's total_s / this total_s (baseline: --baseline; aij in
            a host run, where the column keeps its name)
"""
import argparse
import gzip
import math
import os
import re
import sys

import logview
from logview import fmt_num

SUMMARY_COLUMNS = ["case", "format", "build_s", "update_s", "solve_s", "total_s",
                   "build_over_matmult", "speedup_vs_aijcusparse"]
UPLOADS = ("MatCUSPARSCopyTo", "SpMVBuild", "SpMVValues")
FULL_UPLOADS = ("MatCUSPARSCopyTo", "SpMVBuild")

TRACE_RE = re.compile(r"^\s*\[\d+\]\s+(?P<t>\S+)\s+Event (?P<what>begin|end): (?P<name>.*?)\s*$")


def parse_log_view(path):
    """Events of stage 0 (name -> count, time and, in a CUDA build, the copies), the Main Stage
    time, and the program's own lines. An event whose time -log_view prints as n/a (GPU work
    timed without -log_view_gpu_time) is left out: the traced run has -log_view_gpu_time."""
    lv, lines = logview.read_log(path)
    events = {}
    for name, ev in lv.main.items():
        if math.isnan(ev["time"]):
            continue
        events[name] = {"count": ev["count"], "time": ev["time"]}
        if "ctg_count" in ev:
            events[name].update(cpu2gpu_count=ev["ctg_count"], cpu2gpu_mb=ev["ctg_mb"],
                                gpu2cpu_count=ev["gtc_count"], gpu2cpu_mb=ev["gtc_mb"])
    return events, lv.main_stage_s, lines


def parse_trace(path):
    """Every event occurrence of the -log_trace file: dicts name, t0, t1, parents (names)."""
    opener = gzip.open if path.endswith(".gz") else open
    out, stack = [], []
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            m = TRACE_RE.match(line)
            if not m:
                continue
            t, name = float(m.group("t")), m.group("name")
            if m.group("what") == "begin":
                stack.append({"name": name, "t0": t, "parents": [e["name"] for e in stack]})
            else:
                # close the innermost open occurrence of that name
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i]["name"] == name:
                        e = stack.pop(i)
                        e["t1"] = t
                        out.append(e)
                        break
    out.sort(key=lambda e: e["t0"])
    return out


def trace_numbers(occ):
    """build, update, one MatMult and the pieces, from the occurrences of the traced run."""
    dur = lambda e: e["t1"] - e["t0"]
    asm = [e for e in occ if e["name"] == "MatAssemblyEnd" and "MatAssemblyEnd" not in e["parents"]]
    outside = [e for e in occ if e["name"] in UPLOADS and "MatAssemblyEnd" not in e["parents"]]
    r = {"trace_assemblies": len(asm)}
    if asm:
        first_full = next((e for e in outside if e["name"] in FULL_UPLOADS), None)
        r["first_assembly_s"] = dur(asm[0])
        r["first_upload_outside_s"] = dur(first_full) if first_full else 0.0
        r["build_s"] = r["first_assembly_s"] + r["first_upload_outside_s"]
        ups = []
        for k in range(1, len(asm)):
            end = asm[k + 1]["t0"] if k + 1 < len(asm) else math.inf
            extra = sum(dur(e) for e in outside if e is not first_full and asm[k]["t1"] <= e["t0"] < end)
            ups.append(dur(asm[k]) + extra)
        r["update_count"] = len(ups)
        r["update_s"] = sum(ups) / len(ups) if ups else None
    mm = [e for e in occ if e["name"] == "MatMult"]
    with_upload = set()
    for e in occ:
        if e["name"] in UPLOADS and "MatMult" in e["parents"]:
            for m in mm:
                if m["t0"] <= e["t0"] and e["t1"] <= m["t1"]:
                    with_upload.add(id(m))
    clean = [dur(m) for m in mm if id(m) not in with_upload]
    r["matmult_one_s"] = sum(clean) / len(clean) if clean else None
    r["matmult_with_upload"] = len(with_upload)
    return r


def iterations(lines):
    ksp = [int(m.group(1)) for l in lines for m in [re.search(r"Linear solve (?:converged|did not converge) due to \S+ iterations (\d+)", l)] if m]
    snes = [int(m.group(1)) for l in lines for m in [re.search(r"Number of SNES iterations = (\d+)", l)] if m]
    bad = any("did not converge" in l or "PETSC ERROR" in l for l in lines)
    return ksp, snes, not bad


def collect(raw, baseline):
    manifest = os.path.join(raw, "manifest.txt")
    runs = []
    if os.path.exists(manifest):
        with open(manifest) as f:
            runs = [tuple(l.split()[:2]) for l in f if len(l.split()) >= 2]
    else:
        for n in sorted(os.listdir(raw)):
            m = re.match(r"^(ksp_ex45_\d+|snes_ex19_\d+)_(\w+)\.log$", n)
            if m and not n.endswith(".trace.log"):
                runs.append((m.group(1), m.group(2)))
    rows = []
    for case, fmt in runs:
        base = os.path.join(raw, f"{case}_{fmt}")
        if not os.path.exists(base + ".log"):
            print(f"end_to_end_table: {base}.log missing, skipped", file=sys.stderr)
            continue
        ev, main_stage, lines = parse_log_view(base + ".log")
        ksp_its, snes_its, ok = iterations(lines)
        g = lambda name, key="time": ev.get(name, {}).get(key)
        d = {"case": case, "format": fmt, "converged": ok and main_stage is not None,
             "ksp_iterations": "+".join(map(str, ksp_its)), "snes_iterations": snes_its[-1] if snes_its else None,
             "main_stage_s": main_stage, "ksp_solve_s": g("KSPSolve"), "ksp_solve_count": g("KSPSolve", "count"),
             "snes_solve_s": g("SNESSolve"), "snes_jacobian_s": g("SNESJacobianEval"),
             "snes_jacobian_count": g("SNESJacobianEval", "count"), "pcsetup_s": g("PCSetUp"),
             "matmult_count": g("MatMult", "count"), "matmult_s": g("MatMult"),
             "mat_assembly_count": g("MatAssemblyEnd", "count"), "mat_assembly_s": g("MatAssemblyEnd"),
             "spmvbuild_count": g("SpMVBuild", "count"), "spmvbuild_s": g("SpMVBuild"),
             "spmvvalues_count": g("SpMVValues", "count"), "spmvvalues_s": g("SpMVValues"),
             "cusparse_copyto_count": g("MatCUSPARSCopyTo", "count"), "cusparse_copyto_s": g("MatCUSPARSCopyTo")}
        solve_event = "SNESSolve" if case.startswith("snes") else "KSPSolve"
        d["solve_s"] = g(solve_event)
        if solve_event == "KSPSolve" and g("KSPSetUp") is not None and d["solve_s"] is not None:
            # ex45 solves with KSPSolve(ksp, NULL, NULL) and KSPSetComputeOperators: KSPSetUp,
            # inside KSPSolve, creates and assembles the matrix; the solve is the rest
            d["solve_s"] = d["solve_s"] - g("KSPSetUp")
        for ename, tag in ((solve_event, "solve"), ("MatMult", "matmult"), ("MatAssemblyEnd", "assembly")):
            for k in ("cpu2gpu_count", "cpu2gpu_mb", "gpu2cpu_count", "gpu2cpu_mb"):
                d[f"{tag}_{k}"] = g(ename, k)
        d["total_s"] = main_stage
        tr = base + ".trace.gz"
        if os.path.exists(tr):
            d.update(trace_numbers(parse_trace(tr)))
            d["build_from"] = "trace"
        else:
            # no traced run: totals only (the first assembly cannot be told from the others)
            n = d["mat_assembly_count"] or 1
            d["build_s"] = (d["mat_assembly_s"] or 0) / n + (d["cusparse_copyto_s"] or 0) / max(d["cusparse_copyto_count"] or 1, 1)
            d["update_s"] = None
            d["matmult_one_s"] = (d["matmult_s"] - (d["cusparse_copyto_s"] or 0)) / d["matmult_count"] if d["matmult_count"] else None
            d["build_from"] = "log_view totals (approximate)"
        rows.append(d)
    base_rows = {r["case"]: r for r in rows if r["format"] == baseline}
    for r in rows:
        b = base_rows.get(r["case"])
        mm = b.get("matmult_one_s") if b else None
        r["build_over_matmult"] = r["build_s"] / mm if (mm and r.get("build_s") is not None) else None
        r["speedup_vs_aijcusparse"] = b["total_s"] / r["total_s"] if (b and b["total_s"] and r["total_s"]) else None
    return rows


DETAIL_COLUMNS = SUMMARY_COLUMNS + [
    "converged", "ksp_iterations", "snes_iterations", "main_stage_s", "ksp_solve_s", "ksp_solve_count",
    "snes_solve_s", "snes_jacobian_s", "snes_jacobian_count", "pcsetup_s", "matmult_count", "matmult_s",
    "matmult_one_s", "matmult_with_upload", "mat_assembly_count", "mat_assembly_s", "trace_assemblies",
    "first_assembly_s", "first_upload_outside_s", "update_count", "spmvbuild_count", "spmvbuild_s",
    "spmvvalues_count", "spmvvalues_s", "cusparse_copyto_count", "cusparse_copyto_s",
    "solve_cpu2gpu_count", "solve_cpu2gpu_mb", "solve_gpu2cpu_count", "solve_gpu2cpu_mb",
    "matmult_cpu2gpu_count", "matmult_cpu2gpu_mb", "matmult_gpu2cpu_count", "matmult_gpu2cpu_mb",
    "assembly_cpu2gpu_count", "assembly_cpu2gpu_mb", "assembly_gpu2cpu_count", "assembly_gpu2cpu_mb", "build_from"]


def csv_cell(row, column):
    v = row.get(column)
    return str(v).lower() if isinstance(v, bool) else fmt_num(v, 6)


def write_md(path, rows, baseline):
    out = [f"| case | format | iterations | build s | update s | solve s | total s | build / one {baseline} MatMult | "
           f"speedup vs {baseline} | CpuToGpu in solve (n, MB) | GpuToCpu in solve (n, MB) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        its = r["ksp_iterations"] if r["snes_iterations"] is None else f"{r['snes_iterations']} Newton ({r['ksp_iterations']})"
        if not r["converged"]:
            its += " **not converged**"
        c2g = f"{fmt_num(r.get('solve_cpu2gpu_count'))}, {fmt_num(r.get('solve_cpu2gpu_mb'), 3)}"
        g2c = f"{fmt_num(r.get('solve_gpu2cpu_count'))}, {fmt_num(r.get('solve_gpu2cpu_mb'), 3)}"
        sp = r.get("speedup_vs_aijcusparse")
        bom = r.get("build_over_matmult")
        out.append(f"| {r['case']} | {r['format']} | {its} | {fmt_num(r.get('build_s'), 3)} | {fmt_num(r.get('update_s'), 3)} | "
                   f"{fmt_num(r.get('solve_s'), 3)} | {fmt_num(r.get('total_s'), 3)} | {'' if bom is None else f'{bom:.1f}'} | "
                   f"{'' if sp is None else f'{sp:.2f}x'} | {c2g} | {g2c} |")
    out.append("")
    out.append("build: first MatAssemblyEnd + first upload outside it; update: mean later assembly + its uploads "
               "(ex45: the one value assembly after the DM's zero-pattern assembly; ex19: per Jacobian); solve: "
               "KSPSolve minus KSPSetUp (ex45) / SNESSolve (ex19, Jacobians included); total: Main Stage; bench/README.md defines them.")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def plot(path, rows, baseline):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("end_to_end_table: no matplotlib, no plot", file=sys.stderr)
        return
    cases = list(dict.fromkeys(r["case"] for r in rows))
    fig, axes = plt.subplots(1, len(cases), figsize=(5.5 * len(cases), 4.2), squeeze=False)
    for ax, case in zip(axes[0], cases):
        rs = [r for r in rows if r["case"] == case]
        names = [r["format"] for r in rs]
        build = [r.get("build_s") or 0 for r in rs]
        solve = [r.get("solve_s") or 0 for r in rs]
        total = [r.get("total_s") or 0 for r in rs]
        other = [max(t - b - s, 0) for t, b, s in zip(total, build, solve)]
        x = range(len(rs))
        ax.bar(x, build, color="#d95f02", label="build (first assembly + upload)")
        ax.bar(x, solve, bottom=build, color="#1b9e77",
               label="solve (SNESSolve, Jacobians incl.)" if case.startswith("snes") else "solve (KSPSolve)")
        ax.bar(x, other, bottom=[b + s for b, s in zip(build, solve)], color="#bbbbbb", label="rest of the Main Stage")
        for i, r in enumerate(rs):
            sp = r.get("speedup_vs_aijcusparse")
            ax.text(i, total[i], f"{total[i]:.3g} s" + (f"\n{sp:.2f}x" if sp else ""), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(x))
        ax.set_xticklabels(names)
        ax.set_title(case)
        ax.set_ylabel("seconds")
        ax.set_ylim(0, max(total + [1e-9]) * 1.6)
        ax.legend(fontsize=7, loc="upper center", ncol=2)
    fig.suptitle(f"Time to solution (Main Stage) and its parts; labels: total, speedup vs {baseline}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True, help="folder of the logs (OUTDIR/e2e)")
    ap.add_argument("--out", required=True, help="where end-to-end.{csv,md,png} and end-to-end-detail.csv go")
    ap.add_argument("--baseline", default="aijcusparse", help="format of speedup and MatMult reference (aij in a host run)")
    a = ap.parse_args()
    rows = collect(a.raw, a.baseline)
    if not rows:
        print("end_to_end_table: no runs found in " + a.raw, file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    logview.write_csv(os.path.join(a.out, "end-to-end.csv"), SUMMARY_COLUMNS, rows, csv_cell)
    logview.write_csv(os.path.join(a.out, "end-to-end-detail.csv"), DETAIL_COLUMNS, rows, csv_cell)
    write_md(os.path.join(a.out, "end-to-end.md"), rows, a.baseline)
    plot(os.path.join(a.out, "end-to-end.png"), rows, a.baseline)
    with open(os.path.join(a.out, "end-to-end.md")) as f:
        print(f.read())
    return 0 if all(r["converged"] for r in rows) else 2


if __name__ == "__main__":
    sys.exit(main())
