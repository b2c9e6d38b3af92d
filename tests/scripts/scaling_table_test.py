#!/usr/bin/env python3
"""bench/tables/scaling_table.py's -log_view event parser on lines laid out as PETSc 3.22-3.25 prints them
(logdefault.c, CUDA build): timed, and a GPU run without -log_view_gpu_time ("n/a" times and rates)."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "tables"))
import scaling_table  # noqa: E402

# name count ratio time ratio flop ratio mess avglen reduct (5 global %) (5 stage %) Mflop/s,
# then GPU Mflop/s, CpuToGpu count, size (MB), GpuToCpu count, size (MB), GPU %F
TIMED = ("MatMult               86 1.0 1.8627e-03 1.2 2.16e+06 1.0 1.7e+02 2.0e+03 0.0e+00  6 49 96 99  0"
         "   6 49 96 99  0  2317    4100      3 1.25e+00    7 2.50e+00 100")
NA = ("MatMult              100 1.0  n/a     n/a   1.12e+10 1.0 2.0e+02 6.4e+05 0.0e+00 50 60 40 50  0"
      "  99 100 100 100  0  n/a    n/a       200 1.28e+02  200 1.28e+02 100")
HOST = ("VecScatterBegin       86 1.0 2.0056e-04 1.1 0.00e+00 0.0 1.7e+02 2.0e+03 0.0e+00  1  0 96 99  0"
        "   1  0 96 99  0     0       0      0 0.00e+00    0 0.00e+00  0")


class EventLine(unittest.TestCase):
    def test_timed(self):
        ev = scaling_table.parse_event_line(TIMED)
        self.assertEqual(ev["name"], "MatMult")
        self.assertEqual((ev["count"], ev["time"], ev["mess"], ev["avglen"]), (86, 1.8627e-03, 170, 2000))
        self.assertEqual((ev["ctg_count"], ev["ctg_mb"], ev["gtc_count"], ev["gtc_mb"]), (3, 1.25, 7, 2.5))

    def test_gpu_without_gpu_time(self):
        ev = scaling_table.parse_event_line(NA)
        self.assertTrue(math.isnan(ev["time"]))
        self.assertEqual((ev["count"], ev["mess"], ev["avglen"]), (100, 200, 6.4e5))
        self.assertEqual((ev["ctg_count"], ev["ctg_mb"], ev["gtc_count"], ev["gtc_mb"]), (200, 128, 200, 128))

    def test_host_zero_copies(self):
        ev = scaling_table.parse_event_line(HOST)
        self.assertEqual((ev["ctg_count"], ev["gtc_count"]), (0, 0))

    def test_not_an_event(self):
        self.assertIsNone(scaling_table.parse_event_line("Summary of Stages:   ----- Time ------"))


if __name__ == "__main__":
    unittest.main()
