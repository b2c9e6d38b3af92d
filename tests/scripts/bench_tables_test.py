#!/usr/bin/env python3
"""bench/tables: the -log_view parser they share (logview.py) on lines laid out as PETSc 3.22-3.25
prints them (logdefault.c, CUDA build: timed, and a GPU run without -log_view_gpu_time, "n/a"
times and rates), and each table script run on a small log of that layout."""
import math
import os
import subprocess
import sys
import tempfile
import unittest

TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "tables")
sys.path.insert(0, TABLES)
import logview  # noqa: E402

# name count ratio time ratio flop ratio mess avglen reduct (5 global %) (5 stage %) Mflop/s,
# then GPU Mflop/s, CpuToGpu count, size (MB), GpuToCpu count, size (MB), GPU %F
TIMED = ("MatMult               86 1.0 1.8627e-03 1.2 2.16e+06 1.0 1.7e+02 2.0e+03 0.0e+00  6 49 96 99  0"
         "   6 49 96 99  0  2317    4100      3 1.25e+00    7 2.50e+00 100")
NA = ("MatMult              100 1.0  n/a     n/a   1.12e+10 1.0 2.0e+02 6.4e+05 0.0e+00 50 60 40 50  0"
      "  99 100 100 100  0  n/a    n/a       200 1.28e+02  200 1.28e+02 100")
HOST = ("VecScatterBegin       86 1.0 2.0056e-04 1.1 0.00e+00 0.0 1.7e+02 2.0e+03 0.0e+00  1  0 96 99  0"
        "   1  0 96 99  0     0       0      0 0.00e+00    0 0.00e+00  0")


def event(name, count, time, pct):
    """An event line of a CUDA build (time "n/a" as PETSc prints it without -log_view_gpu_time)."""
    t = time if time == "n/a" else f"{time:.4e}"
    return (f"{name:<22s}{count:>3d} 1.0 {t} 1.0 0.00e+00 0.0 0.0e+00 0.0e+00 0.0e+00 {pct:2d}  0  0  0  0"
            f" {pct:3d}  0  0  0  0     0       0      2 1.00e+00    1 5.00e-01  0")


def log_view(main_stage_s, events, stages=()):
    """A -log_view text: the summary of stages, then stage 0 and the other stages' events."""
    out = ["Summary of Stages:   ----- Time ------  ----- Flop ------  --- Messages ---",
           f" 0:      Main Stage: {main_stage_s:.4e} 100.0%  0.0000e+00   0.0%  0.000e+00   0.0%",
           "------------------------------------------------------------------------------------------------------------------------",
           "Event                Count      Time (sec)     Flop                              --- Global ---  --- Stage ----  Total   GPU    - CpuToGpu -   - GpuToCpu - GPU",
           "", "--- Event Stage 0: Main Stage", ""] + events
    for i, (name, evs) in enumerate(stages, 1):
        out += ["", f"--- Event Stage {i}: {name}", ""] + evs
    out += ["", "Memory usage is given in bytes:", "", "--- Event Stage 0: Main Stage", "",
            event("MatMult", 999, 9.0, 99)]  # the objects' part: no events are read here
    return "\n".join(out) + "\n"


class EventLine(unittest.TestCase):
    def test_timed(self):
        ev = logview.parse_event_line(TIMED)
        self.assertEqual(ev["name"], "MatMult")
        self.assertEqual((ev["count"], ev["time"], ev["mess"], ev["avglen"], ev["time_pct"]), (86, 1.8627e-03, 170, 2000, 6))
        self.assertEqual((ev["ctg_count"], ev["ctg_mb"], ev["gtc_count"], ev["gtc_mb"]), (3, 1.25, 7, 2.5))

    def test_gpu_without_gpu_time(self):
        ev = logview.parse_event_line(NA)
        self.assertTrue(math.isnan(ev["time"]))
        self.assertEqual((ev["count"], ev["mess"], ev["avglen"], ev["time_pct"]), (100, 200, 6.4e5, 50))
        self.assertEqual((ev["ctg_count"], ev["ctg_mb"], ev["gtc_count"], ev["gtc_mb"]), (200, 128, 200, 128))

    def test_host_zero_copies(self):
        ev = logview.parse_event_line(HOST)
        self.assertEqual((ev["ctg_count"], ev["gtc_count"]), (0, 0))

    def test_not_an_event(self):
        self.assertIsNone(logview.parse_event_line("Summary of Stages:   ----- Time ------"))
        self.assertIsNone(logview.parse_event_line("------------------------------------------------------------------------"))


class LogView(unittest.TestCase):
    def test_stages(self):
        text = log_view(2.0, [event("KSPSolve", 1, 1.5, 75), event("MatMult", 10, "n/a", 20)],
                        [("Timed:aij", [event("MatMult", 100, 0.25, 12)])])
        lv = logview.LogView(text)
        self.assertEqual(lv.main_stage_s, 2.0)
        self.assertEqual(lv.stage_names, {0: "Main Stage", 1: "Timed:aij"})
        self.assertEqual(lv.main["KSPSolve"]["time"], 1.5)
        self.assertTrue(math.isnan(lv.main["MatMult"]["time"]))
        self.assertEqual(lv.main["MatMult"]["count"], 10)  # not the objects' part after "Memory usage"
        self.assertEqual(lv.stages["Timed:aij"]["MatMult"]["count"], 100)

    def test_fmt_num(self):
        self.assertEqual([logview.fmt_num(v) for v in (None, float("nan"), 1.23456, 12345.0, 7)], ["", "", "1.235", "1.234e+04", "7"])


class Tables(unittest.TestCase):
    """The table scripts on a GPU run without -log_view_gpu_time: pcs_table.py takes an n/a
    event's time as its %T of the Main Stage, end_to_end_table.py reads the copy columns."""

    def run_table(self, args):
        r = subprocess.run([sys.executable] + args, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_pcs_table(self):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "run.log")
            with open(log, "w") as f:
                f.write("  Linear solve converged due to CONVERGED_RTOL iterations 12\n"
                        "  12 KSP unpreconditioned resid norm 1.0e-09 true resid norm 1.0e-09 ||r(i)||/||b|| 5.0e-09\n")
                f.write(log_view(4.0, [event("KSPSolve", 1, 2.0, 50), event("KSPSetUp", 1, 0.5, 12),
                                       event("PCSetUp", 1, "n/a", 25)]))
            with open(os.path.join(d, "manifest.txt"), "w") as f:
                f.write(f"ksp_ex45_16 cg jacobi 1 aijcusparse 1 {log}\n")
            # block Jacobi: the blocks' factorization (PCSetUpOnBlocks, inside KSPSolve) is setup
            blog = os.path.join(d, "bjacobi.log")
            with open(blog, "w") as f:
                f.write("  Linear solve converged due to CONVERGED_RTOL iterations 12\n")
                f.write(log_view(4.0, [event("KSPSolve", 1, 2.0, 50), event("KSPSetUp", 1, 0.5, 12),
                                       event("PCSetUp", 1, "n/a", 0), event("PCSetUpOnBlocks", 1, "n/a", 10)]))
            with open(os.path.join(d, "manifest.txt"), "a") as f:
                f.write(f"ksp_ex45_16 cg bjacobi_ilu 2 aijcusparse 1 {blog}\n")
            # KSPMIXEDCG + Jacobi against FP64 CG + Jacobi on the baseline format: its solve time
            mlog = os.path.join(d, "mixedcg.log")
            with open(mlog, "w") as f:
                f.write("  Linear solve converged due to CONVERGED_RTOL iterations 13\n")
                f.write(log_view(4.0, [event("KSPSolve", 1, 1.25, 30), event("KSPSetUp", 1, 0.5, 12),
                                       event("PCSetUp", 1, "n/a", 25)]))
            with open(os.path.join(d, "manifest.txt"), "a") as f:
                f.write(f"ksp_ex45_16 mixedcg jacobi 1 aijcusparse 1 {mlog}\n")
            self.run_table([os.path.join(TABLES, "pcs_table.py"), "--manifest", os.path.join(d, "manifest.txt"), "--out", d])
            with open(os.path.join(d, "pcs.csv")) as f:
                rows = f.read().splitlines()
            self.assertEqual(rows[0], "case,ksp,pc,format,ranks,setup_s,solve_s,iterations,true_residual,speedup_vs_aijcusparse,"
                             "solve_speedup_vs_cg_same_pc")
            self.assertEqual(rows[1], "ksp_ex45_16,cg,jacobi,aijcusparse,1,1,1.5,12,5e-09,1,")
            self.assertIn("ksp_ex45_16,mixedcg,jacobi,aijcusparse,1,1,0.75,13,,1,2\n", "\n".join(rows) + "\n")
            self.assertIn("ksp_ex45_16,cg,bjacobi_ilu,aijcusparse,2,0.4,1.1,12,", "\n".join(rows))

    def test_mixed_table(self):
        with tempfile.TemporaryDirectory() as d:
            raw, hist = os.path.join(d, "mixed_raw.txt"), os.path.join(d, "mixed_history.csv")
            with open(raw, "w") as f:
                f.write("case=lap7_16 mat_type=aijcusparse value_format=e8m14\n"
                        "solver=cg_jacobi setup_s=0.010000 solve_s=0.040000 outer_its=40 inner_its=0.00 true_residual=9.000e-09 reason=CONVERGED_RTOL\n"
                        "update solver=cg_jacobi update_s=0.001000 updates=4\n"
                        "solver=mixedkrylov_cg setup_s=0.020000 solve_s=0.020000 outer_its=5 inner_its=12.00 true_residual=8.000e-09 reason=CONVERGED_RTOL\n"
                        "solver=mixedcg setup_s=0.030000 solve_s=0.010000 outer_its=41 inner_its=8.00 true_residual=7.000e-09 reason=CONVERGED_RTOL\n"
                        "solver=gamg setup_s=0.100000 solve_s=0.008000 outer_its=9 inner_its=0.00 true_residual=4.000e-09 reason=CONVERGED_RTOL\n"
                        "solver=mixedcg_gamg setup_s=0.100000 solve_s=0.004000 outer_its=9 inner_its=5.00 true_residual=4.000e-09 reason=CONVERGED_RTOL\n"
                        "rc=0\n"
                        "case=lap7_16 mat_type=aij value_format=e8m14\n"
                        "solver=cg_jacobi setup_s=0.001000 solve_s=0.200000 outer_its=40 inner_its=0.00 true_residual=9.000e-09 reason=CONVERGED_RTOL\n"
                        "solver=mixedcg setup_s=0.003000 solve_s=0.400000 outer_its=41 inner_its=8.00 true_residual=7.000e-09 reason=CONVERGED_RTOL\n"
                        "rc=0\n"
                        "case=bcsstk14 mat_type=aij value_format=e8m14\n"
                        "solver=cg_jacobi setup_s=0.001000 solve_s=0.300000 outer_its=333 inner_its=0.00 true_residual=9.000e-09 reason=CONVERGED_RTOL\n"
                        "solver=mixedcg setup_s=0.003000 solve_s=0.600000 outer_its=335 inner_its=9.00 true_residual=9.000e-09 reason=CONVERGED_RTOL\n"
                        "rc=0\n")
            with open(hist, "w") as f:
                f.write("matrix,mat_type,value_format,solver,iteration,time_s,relative_residual\n")
            # an earlier table: its lap7_16 rows give way to this run's, its G3_circuit row stays
            old = os.path.join(d, "old.csv")
            with open(old, "w") as f:
                f.write("matrix,solver,value_format,setup_s,solve_s,outer_its,inner_its,true_residual,speedup_vs_fp64_cg\n"
                        "lap7_16,mixedcg,e8m14,1,1,1,1,1,1\n"
                        "G3_circuit,mixedcg,e8m14,0.5,0.25,700,9.00,9.0e-09,2.5\n")
            r = subprocess.run([sys.executable, os.path.join(TABLES, "mixed_table.py"), raw, hist, d, "--keep", old], capture_output=True, text=True,
                               env=dict(os.environ, GIT_COMMIT="abc1234"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(d, "mixed.csv")) as f:
                rows = f.read().splitlines()
            self.assertEqual(rows[0], "matrix,solver,value_format,setup_s,solve_s,outer_its,inner_its,true_residual,speedup_vs_fp64_cg,speedup_vs_fp64_same_pc,commit")
            self.assertEqual(rows[1], "G3_circuit,mixedcg,e8m14,0.5,0.25,700,9.00,9.0e-09,2.5,,")
            self.assertEqual(sum(r.startswith("lap7_16,") for r in rows), 7)
            self.assertTrue(all(r.endswith(",abc1234") for r in rows[2:]))
            rows = [rows[0][: -len(",commit")]] + [r[: -len(",abc1234")] for r in rows[2:]]
            got = {(r.split(",")[0], r.split(",")[1]): r.split(",") for r in rows[1:]}
            # mixedcg: outer_its the CG steps, inner_its the reliable updates, against aijcusparse's CG
            self.assertIn(("lap7_16", "mixedcg"), got)
            mc = [r.split(",") for r in rows[1:] if r.startswith("lap7_16,mixedcg,")]
            self.assertEqual(len(mc), 2)
            self.assertEqual(mc[0][2:], ["e8m14", "0.030000", "0.010000", "41", "8.00", "7.000e-09", "4.000", "nan"])
            # KSPMIXEDCG + GAMG against CG + GAMG of the same process; GAMG itself in FP64
            self.assertEqual(got[("lap7_16", "mixedcg_gamg")][8:], ["10.000", "2.000"])
            self.assertEqual(got[("lap7_16", "gamg")][2], "fp64")
            self.assertEqual(mc[1][8], "0.100")  # the aij row against aijcusparse's CG too (0.04 / 0.4)
            # a matrix without an aijcusparse run: against cg_jacobi on its own matrix type
            self.assertEqual(got[("bcsstk14", "mixedcg")][5:], ["335", "9.00", "9.000e-09", "0.500", "nan"])
            self.assertEqual(got[("bcsstk14", "cg_jacobi_aij")][2], "fp64")
            with open(os.path.join(d, "mixed.md")) as f:
                self.assertIn("mixedcg: reliable updates", f.read())

    def test_end_to_end_table(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "ksp_ex45_16_aijcusparse.log"), "w") as f:
                f.write("  Linear solve converged due to CONVERGED_RTOL iterations 30\n")
                f.write(log_view(3.0, [event("KSPSolve", 1, 2.0, 66), event("KSPSetUp", 1, 0.5, 16),
                                       event("MatMult", 31, 0.62, 20), event("MatAssemblyEnd", 2, 0.2, 6),
                                       event("MatCUSPARSCopyTo", 2, 0.1, 3)]))
            self.run_table([os.path.join(TABLES, "end_to_end_table.py"), "--raw", d, "--out", d])
            with open(os.path.join(d, "end-to-end-detail.csv")) as f:
                head, row = f.read().splitlines()[:2]
            got = dict(zip(head.split(","), row.split(",")))
            self.assertEqual((got["solve_s"], got["total_s"], got["matmult_count"], got["solve_cpu2gpu_count"], got["solve_gpu2cpu_mb"]),
                             ("1.5", "3", "31", "2", "0.5"))
            self.assertEqual(got["build_from"], "log_view totals (approximate)")


if __name__ == "__main__":
    unittest.main()
