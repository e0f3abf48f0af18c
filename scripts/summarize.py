#!/usr/bin/env python3
"""Writes results/<gpu>/summary.md from the dayNNN.json files of one GPU.

A day counts as verified on that GPU only while the source hash its JSON recorded equals the
current `git hash-object` of the day's source and its status is PASS. A result from the emulator
("emulated": true) never counts: its times are CPU times.

Usage: scripts/summarize.py results/<gpu> [--check]   (--check: exit 1 if a day is not verified)
"""
import json
import pathlib
import subprocess
import sys

from day_results import best_version

ROOT = pathlib.Path(__file__).resolve().parent.parent


def current_hash(day: str) -> str:
    sources = sorted((ROOT / day).glob("*.cu"))
    if not sources:
        return "missing"
    try:
        return subprocess.run(["git", "hash-object", str(sources[0])], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    out = pathlib.Path(argv[1])
    rows, not_verified = [], []
    device = None
    days = sorted(p.name for p in ROOT.glob("day[0-9][0-9][0-9]") if p.is_dir())
    for day in days:
        path = out / f"{day}.json"
        if not path.exists():
            not_verified.append(day)
            rows.append(f"| {day} | - | no result | - | - | - | - | - | - | - | no |")
            continue
        doc = json.loads(path.read_text())
        device = device or doc.get("device")
        best = best_version(doc)
        emulated = doc.get("emulated") is True
        verified = (doc["status"] == "PASS" and not emulated
                    and doc.get("source_hash") == current_hash(day))
        if not verified:
            not_verified.append(day)
        base = doc.get("baseline") or {}
        rows.append("| {} | {} | {} | {} | {} | {} {} | {} | {} | {} | `{}` | {} |".format(
            day, doc["topic"], doc["status"] + (" (emulated)" if emulated else ""),
            len(doc.get("versions", [])),
            best["name"] if best else "-", fmt(best["rate"] if best else None), doc.get("unit", ""),
            fmt(best.get("pct_of_limit") if best else None),
            fmt(best.get("x_baseline") if best else None, 2), base.get("name", "-"),
            (doc.get("source_hash") or "")[:10], "yes" if verified else "no"))
    lines = ["# Results", ""]
    if device:
        lines.append(f"Device: {device.get('name')} (cc {device.get('cc')}, driver "
                     f"{device.get('driver')}, runtime {device.get('runtime')})")
        lines.append("")
    lines += ["Best passing version of each day at its full size: rate, % of the day's "
              "theoretical limit, and x the baseline measured in the same run. 'current' says "
              "whether the result still matches the day's source (git hash-object).", "",
              "| day | topic | status | versions | best | rate | % of limit | x baseline | "
              "baseline | source | current |",
              "|---|---|---|---|---|---|---|---|---|---|---|"] + rows
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / 'summary.md'} ({len(rows)} days, {len(not_verified)} not verified)")
    if "--check" in argv and not_verified:
        print("not verified: " + " ".join(not_verified))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
