#!/usr/bin/env python3
"""Plots of the SpMV benchmark CSV (bench/spmv/spmv_bench, docs/bench/latest.csv).

Usage:
  bench/tables/spmv_plot.py [--csv docs/bench/latest.csv] [--out docs/bench] [--large-nnz 10000000]

Writes into --out:
  speedup_vs_aijcusparse.png  speedup over aijcusparse of every format on every matrix (heat
                              map, matrices sorted by nonzeros, a geometric-mean row at the
                              bottom; linear colour scale centred at 1 and clipped to
                              [1/--clip, --clip], every cell labelled with its value)
  speedup_large.png           the same as bars for the matrices with >= --large-nnz nonzeros,
                              coloured by format family, p10/p90 bars of the format's times
                              (CSV columns time_us_p10/p90, when the CSV has them)
  copy_bw_fraction.png        share of the device copy bandwidth each format reaches
                              (box over all matrices, dots for the large ones)
and prints the geometric-mean speedup of each format (all matrices, large ones).
Needs matplotlib (Debian: python3-matplotlib); the CSV is read with the standard library.
"""
import argparse
import csv
import math
import os
import sys
from collections import OrderedDict, defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm
except ImportError as exc:  # pragma: no cover
    sys.exit(f"plot.py: matplotlib is missing ({exc}): apt-get install python3-matplotlib and run it with /usr/bin/python3")

COLUMNS = ["matrix", "rows", "nnz", "format", "time_us", "gbytes_per_s", "gflops", "copy_bw_fraction", "speedup_vs_aijcusparse"]


def num(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def read(path):
    with open(path, newline="") as fh:
        rd = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (rd.fieldnames or [])]
        if missing:
            sys.exit(f"plot.py: {path} lacks the columns {missing}")
        rows = list(rd)
    mats = OrderedDict()  # name -> nnz
    fmts = OrderedDict()
    data = defaultdict(dict)  # (matrix, format) -> row
    for r in rows:
        mats[r["matrix"]] = int(float(r["nnz"]))
        fmts[r["format"]] = True
        data[r["matrix"]][r["format"]] = r
    order = sorted(mats, key=lambda m: (mats[m], m))
    return order, list(fmts), data, mats


def geomean(vals):
    vals = [v for v in vals if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


# Colours by format family: PETSc's own types grey, RgCSR blues, PackSELL oranges/reds,
# cuSPARSE direct greens; shades within a family by order of appearance.
FAMILIES = [("rgcsr", "Blues"), ("packsell", "Oranges"), ("cusparse", "Greens"), ("", "Greys")]


def family_colours(fmts):
    groups = {}
    for f in fmts:
        fam = next(c for key, c in FAMILIES if key in f)
        groups.setdefault(fam, []).append(f)
    colours = {}
    for cmap_name, members in groups.items():
        cmap = plt.get_cmap(cmap_name)
        for i, f in enumerate(members):
            colours[f] = cmap(0.45 + 0.5 * (i + 1) / (len(members) + 1))
    return colours


def save_png(fig, path, dpi=130):
    """Writes fig as PNG; with Pillow (Debian's python3-pil) as an 8-bit palette PNG: the plots
    hold few colours, and the palette file is a third of the RGB one (docs/ stays under 1 MB)."""
    try:
        from PIL import Image
    except ImportError:
        fig.savefig(path, dpi=dpi)
        return
    import io
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    buf.seek(0)
    Image.open(buf).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def heatmap(order, fmts, data, mats, clip, path):
    shown = [f for f in fmts if f != "aijcusparse"]
    grid = [[num(data[m].get(f, {}).get("speedup_vs_aijcusparse")) for f in shown] for m in order]
    if not any(v for row in grid for v in row):
        print("spmv_plot.py: no speedups to plot (aijcusparse missing or failed everywhere)")
        return
    grid.append([geomean([row[j] for row in grid]) for j in range(len(shown))])
    labels = [f"{m} ({mats[m] / 1e6:.2f}M)" for m in order] + ["geometric mean"]
    fig_h = max(4.0, 0.28 * len(labels) + 2.0)
    fig_w = max(8.0, 0.75 * len(shown) + 4.0)
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    clipped = [[min(max(v, 1.0 / clip), clip) if v else float("nan") for v in row] for row in grid]
    norm = TwoSlopeNorm(vmin=1.0 / clip, vcenter=1.0, vmax=clip)
    im = ax.imshow(clipped, aspect="auto", cmap="RdBu", norm=norm, interpolation="nearest")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            txt = "fail" if v is None else (f"{v:.2f}" if v < 10 else f"{v:.0f}")
            dark = v is not None and abs(norm(min(max(v, 1.0 / clip), clip)) - 0.5) > 0.3
            ax.text(j, i, txt, ha="center", va="center", fontsize=6, color="white" if dark else "black",
                    fontweight="bold" if i == len(grid) - 1 else "normal")
    ax.axhline(len(grid) - 1.5, color="black", lw=1.2)
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels(shown, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_title("SpMV speedup over aijcusparse (median time; >1 faster; rows: matrix (nonzeros))")
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.02, label=f"speedup (linear, centred at 1, clipped to [{1 / clip:.2g}, {clip:g}])")
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def bars_large(order, fmts, data, mats, large, path):
    big = [m for m in order if mats[m] >= large]
    shown = [f for f in fmts if f != "aijcusparse"]
    if not big:
        print(f"plot.py: no matrix with >= {large} nonzeros: {path} not written")
        return
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(big) + 3), 5.5))
    width = 0.8 / max(1, len(shown))
    colours = family_colours(shown)
    for j, f in enumerate(shown):
        ys = [num(data[m].get(f, {}).get("speedup_vs_aijcusparse")) or 0.0 for m in big]
        # p10/p90 of this format's times, as speedups against aijcusparse's median
        lo, hi = [], []
        for m, y in zip(big, ys):
            r = data[m].get(f, {})
            t, p10, p90 = num(r.get("time_us")), num(r.get("time_us_p10")), num(r.get("time_us_p90"))
            lo.append(y - y * t / p90 if y and t and p90 else 0.0)
            hi.append(y * t / p10 - y if y and t and p10 else 0.0)
        ax.bar([i + (j - (len(shown) - 1) / 2) * width for i in range(len(big))], ys, width, label=f, color=colours[f],
               yerr=[lo, hi] if any(lo) or any(hi) else None, error_kw={"elinewidth": 0.6, "capsize": 1.5})
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks(range(len(big)))
    ax.set_xticklabels([f"{m}\n{mats[m] / 1e6:.0f}M nnz" for m in big], fontsize=8)
    ax.set_ylabel("speedup over aijcusparse")
    ax.set_title(f"SpMV speedup over aijcusparse, matrices with >= {large / 1e6:g}M nonzeros")
    ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def copy_share(order, fmts, data, mats, large, path):
    series, dots = [], []
    for f in fmts:
        series.append([num(data[m].get(f, {}).get("copy_bw_fraction")) for m in order])
        dots.append([num(data[m].get(f, {}).get("copy_bw_fraction")) for m in order if mats[m] >= large])
    if not any(v for s in series for v in s):
        print("plot.py: no copy_bw_fraction values: copy_bw_fraction.png not written")
        return
    fig, ax = plt.subplots(figsize=(max(8.0, 0.7 * len(fmts) + 3), 5.5))
    ax.boxplot([[v for v in s if v is not None] or [float("nan")] for s in series], labels=fmts, showfliers=True, whis=(5, 95))
    first = True
    for j, d in enumerate(dots):
        d = [v for v in d if v is not None]
        if d:
            ax.scatter([j + 1] * len(d), d, s=14, color="tab:red", zorder=3, label=f"matrices >= {large / 1e6:g}M nonzeros" if first else None)
            first = False
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_ylabel("GB/s over the measured copy bandwidth")
    ax.set_title("Share of the device copy bandwidth (stored matrix bytes + x + y per product)")
    plt.setp(ax.get_xticklabels(), rotation=60, ha="right", fontsize=8)
    if not first:
        ax.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def summary(order, fmts, data, mats, large):
    print(f"{'format':28s} {'geomean speedup':>16s} {'(large)':>9s} {'median copy share':>18s} {'(large)':>9s} {'done':>6s}")
    for f in fmts:
        sp = [num(data[m].get(f, {}).get("speedup_vs_aijcusparse")) for m in order]
        sl = [num(data[m].get(f, {}).get("speedup_vs_aijcusparse")) for m in order if mats[m] >= large]
        cb = sorted(v for v in (num(data[m].get(f, {}).get("copy_bw_fraction")) for m in order) if v is not None)
        cl = sorted(v for v in (num(data[m].get(f, {}).get("copy_bw_fraction")) for m in order if mats[m] >= large) if v is not None)
        done = sum(1 for m in order if num(data[m].get(f, {}).get("time_us")) is not None)
        g, gl = geomean(sp), geomean(sl)
        med = cb[len(cb) // 2] if cb else None
        medl = cl[len(cl) // 2] if cl else None
        fmt = lambda v, p: "-" if v is None else f"{v:.{p}f}"  # noqa: E731
        print(f"{f:28s} {fmt(g, 3):>16s} {fmt(gl, 3):>9s} {fmt(med, 3):>18s} {fmt(medl, 3):>9s} {done:>3d}/{len(order)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--csv", default=os.path.join(here, "..", "..", "docs", "bench", "latest.csv"))
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "docs", "bench"))
    ap.add_argument("--large-nnz", type=float, default=1e7, help="nonzeros from which a matrix counts as large (default 1e7)")
    ap.add_argument("--clip", type=float, default=3.0, help="the heat map's colours saturate below 1/clip and above clip (default 3)")
    a = ap.parse_args()
    order, fmts, data, mats = read(a.csv)
    os.makedirs(a.out, exist_ok=True)
    heatmap(order, fmts, data, mats, a.clip, os.path.join(a.out, "speedup_vs_aijcusparse.png"))
    bars_large(order, fmts, data, mats, a.large_nnz, os.path.join(a.out, "speedup_large.png"))
    copy_share(order, fmts, data, mats, a.large_nnz, os.path.join(a.out, "copy_bw_fraction.png"))
    summary(order, fmts, data, mats, a.large_nnz)


if __name__ == "__main__":
    main()
