"""What the table scripts of bench/tables share: PETSc's -log_view (its stages, their event
lines, the Main Stage's time), the formatting of numbers and the writing of CSV files.
Standard library only.

An event line of -log_view (PETSc 3.22-3.25, logdefault.c) has the tokens
    name count ratio time ratio flop ratio mess avglen reduct  %T %F %M %L %R  %T %F %M %L %R  Mflop/s
and, in a CUDA build, GPU Mflop/s, CpuToGpu count and size (MB), GpuToCpu count and size (MB),
GPU %F. Without -log_view_gpu_time the time (and its ratio) of an event that runs GPU work is
printed as "n/a": parse_event_line() gives NaN for it, and its %T of the whole run is kept.
"""
import csv
import math
import re

SUMMARY_MAIN_STAGE_RE = re.compile(r"^\s*0:\s+Main Stage:\s+(?P<time>\d\.\d+e[+-]\d+)")
STAGE_RE = re.compile(r"^--- Event Stage (?P<index>\d+): (?P<name>.*)$")


def _num(tok):
    """int for a count, float otherwise; NaN for PETSc's "n/a"."""
    if tok == "n/a":
        return float("nan")
    return int(tok) if tok.isdigit() else float(tok)


def parse_event_line(line):
    """The fields of an event line of -log_view, or None for any other line: name, count, time
    (seconds, max over ranks), time_pct (its %T of the whole run), mess, avglen and, in a CUDA
    build, ctg_count, ctg_mb (CpuToGpu copies and MB), gtc_count, gtc_mb (GpuToCpu)."""
    tok = line.split()
    if len(tok) < 21 or not re.match(r"^[A-Za-z]", line):
        return None
    try:
        ev = {"name": tok[0], "count": _num(tok[1]), "time": _num(tok[3]), "mess": _num(tok[7]),
              "avglen": _num(tok[8]), "time_pct": _num(tok[10])}
        if not isinstance(ev["count"], int):
            return None
        if len(tok) >= 27:  # tok[20] Total Mflop/s, then GPU Mflop/s, CpuToGpu count size, GpuToCpu count size, GPU %F
            ev.update(ctg_count=_num(tok[22]), ctg_mb=_num(tok[23]), gtc_count=_num(tok[24]), gtc_mb=_num(tok[25]))
        return ev
    except ValueError:
        return None


class LogView:
    """The first -log_view of a text: stages (name -> {event name -> fields}, the first line of
    each event), stage_names (index -> name) and main_stage_s (the Main Stage's time from the
    summary of stages; None without one)."""

    def __init__(self, text):
        self.stages, self.stage_names, self.main_stage_s = {}, {}, None
        cur = None
        for line in text.splitlines():
            m = SUMMARY_MAIN_STAGE_RE.match(line)
            if m and self.main_stage_s is None:
                self.main_stage_s = float(m.group("time"))
                continue
            m = STAGE_RE.match(line)
            if m:
                name = m.group("name").strip()
                self.stage_names.setdefault(int(m.group("index")), name)
                cur = self.stages.setdefault(name, {})
                continue
            if line.startswith("Memory usage is given in bytes"):  # the objects' part: no events, and the end
                break
            if cur is None:
                continue
            ev = parse_event_line(line)
            if ev and ev["name"] not in cur:
                cur[ev["name"]] = ev

    def stage(self, index):
        """The events of the stage of that index ({} when the log has none)."""
        return self.stages.get(self.stage_names.get(index), {})

    @property
    def main(self):
        """The events of stage 0, the Main Stage."""
        return self.stage(0)


def read_log(path):
    """(LogView, the lines) of a log file."""
    with open(path, errors="replace") as f:
        text = f.read()
    return LogView(text), text.splitlines()


def fmt_num(v, digits=4):
    """A number for a table: "" for None or NaN, %.<digits>g for a float, str() otherwise."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def write_csv(path, columns, rows, cell=lambda row, column: row.get(column, "")):
    """path: a header line of columns, then one line per row (cell(row, column) gives the text)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([cell(r, c) for c in columns])
