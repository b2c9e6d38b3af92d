#!/usr/bin/env python3
"""Tables of bench/scaling/scaling.sh (standard library only, and logview.py beside it).

Reads RAW/manifest.txt ("op matrix ranks gpus label log rc=N" per run) and the logs beside it:
  matmult_bench lines   "matmult_bench key=value ..." (one per format: time_s, diag_time_s, ...)
  ex2 lines             "solver=<name> setup_s=.. solve_s=.. outer_its=.. true_residual=.. reason=.."
  device_report lines   per rank: cuda_device, pci_bus_id (tutorials/report_devices.h)
  -log_view             per stage ("--- Event Stage N: NAME"): the MatMult, VecScatterBegin and
                        KSPSolve lines (count, Mess, AvgLen, CpuToGpu/GpuToCpu count and size)
Writes OUT/scaling.csv (exactly matrix,format,operation,ranks,gpus,time_s,speedup_vs_1gpu),
OUT/scaling-detail.csv (every parsed number) and OUT/scaling.md (a markdown table).
"""
import argparse
import os
import re
import sys

import logview

MAIN_COLUMNS = ["matrix", "format", "operation", "ranks", "gpus", "time_s", "speedup_vs_1gpu"]
DETAIL_COLUMNS = MAIN_COLUMNS + [
    "mat_type", "ok", "rc", "rows", "nnz", "n_mult", "repeat", "time_min_s", "time_max_s",
    "diag_time_s", "diag_fraction", "halo_entries", "halo_msgs_per_mult", "halo_bytes_per_mult", "halo_bytes_exact",
    "cpu_to_gpu_per_mult", "cpu_to_gpu_bytes_per_mult", "gpu_to_cpu_per_mult", "gpu_to_cpu_bytes_per_mult",
    "matmult_events", "error_vs_aij", "setup_s", "outer_its", "inner_its", "true_residual", "reason",
    "solve_cpu_to_gpu_per_solve", "solve_gpu_to_cpu_per_solve", "solve_matmult_cpu_to_gpu_per_mult",
    "solve_matmult_gpu_to_cpu_per_mult", "devices", "distinct_pci_bus_ids", "log"]



def parse_kv(line):
    return dict(tok.split("=", 1) for tok in line.split() if "=" in tok)


def devices(text):
    rows = [parse_kv(l) for l in text.splitlines() if l.startswith("device_report ")]
    if not rows:
        return "", ""
    if any("host (no CUDA)" in l for l in text.splitlines() if l.startswith("device_report ")):
        return "host (no CUDA)", "0"
    desc = ";".join("r%s:dev%s:%s" % (r.get("rank"), r.get("cuda_device"), r.get("pci_bus_id")) for r in rows)
    return desc, str(len({r.get("pci_bus_id") for r in rows}))


def per(x, n):
    return "" if x is None or not n else "%.4g" % (x / n)


def copies(ev, key_count, key_mb, n):
    if not ev or key_count not in ev or not n:
        return "", ""
    return per(ev[key_count], n), per(ev[key_mb] * 1e6, n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    man = os.path.join(a.raw, "manifest.txt")
    if not os.path.isfile(man):
        print("scaling_table.py: no %s" % man, file=sys.stderr)
        return 1
    rows = []
    for line in open(man):
        f = line.split()
        if len(f) < 7:
            continue
        op, matrix, ranks, gpus, label, log, rc = f[0], f[1], f[2], f[3], f[4], f[5], f[6].split("=")[1]
        path = os.path.join(a.raw, log)
        text = open(path, errors="replace").read() if os.path.isfile(path) else ""
        stages = logview.LogView(text).stages
        dev, nbus = devices(text)
        base = {"matrix": matrix, "ranks": ranks, "gpus": gpus, "rc": rc, "devices": dev, "distinct_pci_bus_ids": nbus, "log": log}
        if op == "matmult":
            for l in text.splitlines():
                if not l.startswith("matmult_bench "):
                    continue
                kv = parse_kv(l)
                st = stages.get("Timed:" + kv["format"], {})
                mm, sc = st.get("MatMult"), st.get("VecScatterBegin")
                n = mm["count"] if mm else 0
                t, d = float(kv["time_s"]), float(kv["diag_time_s"])
                ctg, ctgb = copies(mm, "ctg_count", "ctg_mb", n)
                gtc, gtcb = copies(mm, "gtc_count", "gtc_mb", n)
                row = dict(base, format=kv["format"], operation="matmult", time_s="%.6e" % t, mat_type=kv["type"],
                           ok="yes" if rc == "0" else "no", rows=kv["rows"], nnz=kv["nnz"], n_mult=kv["n_mult"],
                           repeat=kv["repeat"], time_min_s=kv["time_min_s"], time_max_s=kv["time_max_s"],
                           diag_time_s=kv["diag_time_s"], diag_fraction="%.3f" % (d / t) if t > 0 else "",
                           halo_entries=kv["halo_entries"], halo_bytes_exact="%d" % (8 * int(kv["halo_entries"])), matmult_events="%d" % n if mm else "",
                           halo_msgs_per_mult=per(sc["mess"], n) if sc else ("0" if mm else ""),
                           halo_bytes_per_mult=per(sc["mess"] * sc["avglen"], n) if sc else ("0" if mm else ""),
                           cpu_to_gpu_per_mult=ctg, cpu_to_gpu_bytes_per_mult=ctgb,
                           gpu_to_cpu_per_mult=gtc, gpu_to_cpu_bytes_per_mult=gtcb, error_vs_aij=kv["error"])
                rows.append(row)
        else:  # cg / mixed: ex2
            main_st = stages.get("Main Stage", {})
            ksp, mm = main_st.get("KSPSolve"), main_st.get("MatMult")
            nsolve = ksp["count"] if ksp else 0
            nmm = mm["count"] if mm else 0
            mrows = re.search(r"^matrix .*: (\d+) rows, type (\S+),", text, re.M)
            for l in text.splitlines():
                if not l.startswith("solver="):
                    continue
                kv = parse_kv(l)
                name = kv["solver"]
                fmt = label if name == "cg_jacobi" else name
                ok = rc == "0" and kv["reason"].startswith("CONVERGED") and float(kv["true_residual"]) <= 1e-7
                ctg, _ = copies(ksp, "ctg_count", "ctg_mb", nsolve)
                gtc, _ = copies(ksp, "gtc_count", "gtc_mb", nsolve)
                mctg, _ = copies(mm, "ctg_count", "ctg_mb", nmm)
                mgtc, _ = copies(mm, "gtc_count", "gtc_mb", nmm)
                rows.append(dict(base, format=fmt, operation="cg_solve", time_s="%.6e" % float(kv["solve_s"]),
                                 mat_type=mrows.group(2) if mrows else label, rows=mrows.group(1) if mrows else "",
                                 ok="yes" if ok else "no", setup_s=kv["setup_s"], outer_its=kv["outer_its"],
                                 inner_its=kv["inner_its"], true_residual=kv["true_residual"], reason=kv["reason"],
                                 solve_cpu_to_gpu_per_solve=ctg, solve_gpu_to_cpu_per_solve=gtc,
                                 solve_matmult_cpu_to_gpu_per_mult=mctg, solve_matmult_gpu_to_cpu_per_mult=mgtc,
                                 halo_bytes_per_mult=per(main_st["VecScatterBegin"]["mess"] * main_st["VecScatterBegin"]["avglen"],
                                                         main_st["VecScatterBegin"]["count"]) if "VecScatterBegin" in main_st else ""))
            if not any(r["log"] == log for r in rows):  # a run that printed nothing (crash)
                rows.append(dict(base, format=label, operation="cg_solve" if op in ("cg", "mixed") else op, time_s="", ok="no"))
    # speedup against the same matrix, format and operation at 1 rank on 1 GPU
    ref = {(r["matrix"], r["format"], r["operation"]): float(r["time_s"]) for r in rows
           if r["ranks"] == "1" and r["gpus"] == "1" and r.get("time_s") and r.get("ok") == "yes"}
    for r in rows:
        b = ref.get((r["matrix"], r["format"], r["operation"]))
        r["speedup_vs_1gpu"] = "%.3f" % (b / float(r["time_s"])) if b and r.get("time_s") and r.get("ok") == "yes" else ""
    order = {"matmult": 0, "cg_solve": 1}
    rows.sort(key=lambda r: (r["matrix"], order.get(r["operation"], 2), r["format"], int(r["ranks"]), int(r["gpus"])))
    os.makedirs(a.out, exist_ok=True)
    logview.write_csv(os.path.join(a.out, "scaling.csv"), MAIN_COLUMNS, rows)
    logview.write_csv(os.path.join(a.out, "scaling-detail.csv"), DETAIL_COLUMNS, rows)
    with open(os.path.join(a.out, "scaling.md"), "w") as fh:
        fh.write("| matrix | format | operation | ranks | gpus | time (ms) | speedup vs 1 GPU | diag block / MatMult | halo KB / MatMult | H2D / D2H copies per MatMult | iterations | devices |\n")
        fh.write("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|\n")
        for r in rows:
            t = "%.3f" % (1e3 * float(r["time_s"])) if r.get("time_s") else "failed"
            if r.get("ok") != "yes" and r.get("time_s"):
                t += " (%s)" % (r.get("reason") or "rc %s" % r.get("rc"))
            halo = "%.1f" % (float(r["halo_bytes_per_mult"]) / 1024) if r.get("halo_bytes_per_mult") else ""
            cp = ""
            if r["operation"] == "matmult" and r.get("cpu_to_gpu_per_mult") != "":
                cp = "%s / %s" % (r.get("cpu_to_gpu_per_mult"), r.get("gpu_to_cpu_per_mult"))
            elif r.get("solve_matmult_cpu_to_gpu_per_mult"):
                cp = "%s / %s" % (r.get("solve_matmult_cpu_to_gpu_per_mult"), r.get("solve_matmult_gpu_to_cpu_per_mult"))
            its = r.get("outer_its", "")
            fh.write("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["matrix"], r["format"], r["operation"], r["ranks"], r["gpus"], t, r.get("speedup_vs_1gpu", ""),
                r.get("diag_fraction", ""), halo, cp, its, r.get("devices", "")))
    print("scaling_table.py: %d rows -> %s/scaling.csv, scaling-detail.csv, scaling.md" % (len(rows), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
