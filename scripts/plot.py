#!/usr/bin/env python3
"""Draws the plots of one GPU's results from results/<gpu>/dayNNN.json.

  limits.png    each day's best passing version as % of its theoretical limit
  roofline.png  achieved GFLOP/s against arithmetic intensity (days that report one), under the
                roofline of the device's DRAM bandwidth and FP32 peak
  dayNNN-<table>.png  every table a day saved whose first column is numeric (sweeps): one line
                per numeric column against the first, one panel per unit
  gemm_sweep.png the GEMM days' --sweep curves: best version as % of cuBLAS by size

Needs matplotlib (pip install matplotlib). Usage: scripts/plot.py results/<gpu>
"""
import json
import pathlib
import re
import sys

from day_results import best_version

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: pip install matplotlib", file=sys.stderr)
    sys.exit(1)


def unit_of(column):
    """The unit a column is in: '%' for percentages, else its last word outside parentheses
    ('warptile TFLOP/s' -> 'TFLOP/s', 'cycles (.ca)' -> 'cycles')."""
    if column.startswith("%"):
        return "%"
    words = re.sub(r"\([^)]*\)", "", column).split()
    return words[-1] if words else column


def gflops(doc, version):
    """Achieved GFLOP/s of a version: from TFLOP/s directly, from GB/s via the intensity."""
    unit = doc.get("unit", "")
    ai = doc.get("arithmetic_intensity")
    if unit == "TFLOP/s":
        return version["rate"] * 1e3
    if unit == "GB/s" and ai:
        return version["rate"] * ai
    return None


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    out = pathlib.Path(argv[1])
    docs = [json.loads(p.read_text()) for p in sorted(out.glob("day[0-9][0-9][0-9].json"))]
    if not docs:
        print(f"no dayNNN.json in {out}", file=sys.stderr)
        return 1
    device = docs[0].get("device", {})

    labels, pct = [], []
    for d in docs:
        b = best_version(d)
        if b and b.get("pct_of_limit") is not None:
            labels.append(f"{d['day'][3:]} {d['topic']}")
            pct.append(b["pct_of_limit"])
    if pct:
        fig, ax = plt.subplots(figsize=(8, 0.3 * len(pct) + 1.5))
        ax.barh(labels, pct, color="tab:blue")
        ax.invert_yaxis()
        ax.set_xlabel("best version, % of theoretical limit")
        ax.set_xlim(0, 100)
        ax.set_title(device.get("name", ""))
        fig.tight_layout()
        fig.savefig(out / "limits.png", dpi=120)
        plt.close(fig)

    points = []
    for d in docs:
        b = best_version(d)
        ai = d.get("arithmetic_intensity")
        if b and ai:
            g = gflops(d, b)
            if g:
                points.append((ai, g, d["day"][3:]))
    bw, peak = device.get("dram_gbps"), device.get("fp32_tflops")
    if points and bw and peak:
        fig, ax = plt.subplots(figsize=(7, 5))
        xs = [2 ** (i / 4) for i in range(-40, 60)]
        ax.plot(xs, [min(x * bw, peak * 1e3) for x in xs], "k-", label="roofline (DRAM, FP32)")
        for ai, g, name in points:
            ax.plot(ai, g, "o", color="tab:red")
            ax.annotate(name, (ai, g), textcoords="offset points", xytext=(4, 4), fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"roofline: {device.get('name', '')}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "roofline.png", dpi=120)
        plt.close(fig)

    sweeps = []  # (day, version, sizes, % of baseline) from the GEMM days' --sweep tables
    for d in docs:
        for t in d.get("tables", []):
            rows = t.get("rows", [])
            if len(rows) < 2 or not all(isinstance(r[0], (int, float)) for r in rows):
                continue
            cols = [c for c in range(1, len(t["columns"]))
                    if all(c < len(r) and isinstance(r[c], (int, float)) for r in rows)]
            if not cols:
                continue
            xs = [r[0] for r in rows]
            if t["title"].endswith("by size"):
                pc = [c for c in cols if t["columns"][c].startswith("% of")]
                if pc:
                    sweeps.append((d["day"], t["title"].split(" vs ")[0], xs,
                                   [r[pc[0]] for r in rows]))
            # One panel per unit, so that ms, TFLOP/s and % never share an axis.
            groups = {}
            for c in cols:
                groups.setdefault(unit_of(t["columns"][c]), []).append(c)
            fig, axes = plt.subplots(len(groups), 1, figsize=(7, 3.2 * len(groups) + 0.8),
                                     sharex=True, squeeze=False)
            for ax, (unit, cs) in zip(axes[:, 0], groups.items()):
                for c in cs:
                    ax.plot(xs, [r[c] for r in rows], marker="o", label=t["columns"][c])
                ax.set_ylabel(unit if len(cs) > 1 else t["columns"][cs[0]])
                if len(cs) > 1:
                    ax.legend(fontsize=8)
                ax.grid(True, alpha=0.3)
            bottom = axes[-1, 0]
            if min(xs) > 0 and max(xs) / min(xs) >= 16:
                bottom.set_xscale("log", base=2)
            bottom.set_xlabel(t["columns"][0])
            axes[0, 0].set_title(f"{d['day']} {t['title']}")
            fig.tight_layout()
            slug = re.sub(r"[^a-z0-9]+", "-", t["title"].lower()).strip("-")[:40] or "table"
            fig.savefig(out / f"{d['day']}-{slug}.png", dpi=120)
            plt.close(fig)

    if sweeps:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for day, version, xs, pct in sweeps:
            ax.plot(xs, pct, marker="o", label=f"{day[3:]} {version}")
        ax.axhline(100, color="k", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("square size m = n = k")
        ax.set_ylabel("% of cuBLAS (same run)")
        ax.set_title(f"GEMM days, best version vs cuBLAS: {device.get('name', '')}")
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / "gemm_sweep.png", dpi=120)
        plt.close(fig)
    print(f"plots written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
