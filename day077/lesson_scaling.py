#!/usr/bin/env python3
"""Part VIII's lesson, counted: what each attention path moves through global memory as seq grows.

    lesson_scaling.py PROGRAM [--dim D] [--seqs 256,512,1024]

Runs PROGRAM (day077, under the emulator: ctest puts its libcudart.so.13 first) once per sequence
length, one head, non-causal, both versions, and checks the emulated global sector counts against
what the kernels' code implies. With seq a multiple of every tile and d of 8 (rows of whole,
aligned sectors) every request is coalesced, so the counts are exact:

  stores, materialized: S and P (seq^2 floats each; 4 sectors per 32 floats), one sector per
                        row's logsumexp (one lane writes it), O (seq d floats):
                        seq^2 / 4 + seq + seq d / 8
  stores, flash:        O and the logsumexp only: seq (d + 1) / 8          -- linear in seq
  loads, flash:         Q once, K and V once per query tile of R rows:
                        seq d / 8 * (1 + 2 seq / R)

So the ratio of stored sectors, materialized / flash = (2 seq + 8 + d) / (d + 1), nearly doubles
with each doubling of seq: the materialized path creates seq^2 data, flash only seq d. Flash's
loads are quadratic too (every query tile reads all of K and V), but they re-read inputs that
all the query tiles of a head read at about the same time (an L2 hit on a GPU), and their
coefficient 2 d / R falls with a taller query tile; the S and P traffic is seq^2 at any tiling.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(program, seq, dim):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        args = [program, "--batch", "1", "--heads", "1", "--seq", str(seq), "--dim", str(dim),
                "--kernel", "materialized,flash", "--iters", "1", "--warmup", "0", "--json", out]
        done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            sys.stdout.write(done.stdout)
            sys.exit(f"lesson_scaling: {' '.join(args)} exited with {done.returncode}")
        with open(out) as f:
            report = json.load(f)
    if not report.get("emulated"):
        sys.exit("lesson_scaling: the run was not emulated, so it has no sector counts")
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("program")
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--seqs", default="256,512,1024")
    a = parser.parse_args()
    d = a.dim
    seqs = [int(s) for s in a.seqs.split(",")]

    failures = []

    def expect(ok, what):
        print(f"  {'ok  ' if ok else 'FAIL'}  {what}")
        if not ok:
            failures.append(what)

    rows = []
    for s in seqs:
        report = run(a.program, s, d)
        versions = {v["name"]: v["metrics"] for v in report["versions"]}
        tile = int(report["problem"]["flash_rows_per_block"])
        if s % tile or s % 32 or d % 8:
            sys.exit(f"lesson_scaling: seq {s} and dim {d} must be multiples of {tile}, 32 and 8")
        mat, fl = versions["materialized"], versions["flash"]
        print(f"seq {s}, d {d}, one head (flash query tile: {tile} rows):")
        expect(mat["global_store_sectors"] == s * s // 4 + s + s * d // 8,
               f"materialized stores {mat['global_store_sectors']} == seq^2/4 + seq + seq d/8")
        expect(fl["global_store_sectors"] == s * (d + 1) // 8,
               f"flash stores {fl['global_store_sectors']} == seq (d + 1)/8")
        expect(fl["global_load_sectors"] == s * d // 8 * (1 + 2 * s // tile),
               f"flash loads {fl['global_load_sectors']} == seq d/8 (1 + 2 seq/{tile})")
        expect(mat["global_load_sectors"] > fl["global_load_sectors"],
               f"materialized loads {mat['global_load_sectors']} > flash loads")
        rows.append((s, mat, fl))

    print("\nseq | stores: materialized  flash  ratio | loads: materialized  flash | ratio / previous")
    previous = None
    for s, mat, fl in rows:
        ratio = mat["global_store_sectors"] / fl["global_store_sectors"]
        growth = ratio / previous[1] if previous else float("nan")
        print(f"{s:4} | {mat['global_store_sectors']:20} {fl['global_store_sectors']:6} {ratio:6.1f} |"
              f" {mat['global_load_sectors']:19} {fl['global_load_sectors']:6} | {growth:.3f}")
        if previous:
            # Doubling seq: (4 seq + 8 + d) / (2 seq + 8 + d), above 1.9 once 2 seq >= 8 (8 + d).
            want = (2 * s + 8 + d) / (s + 8 + d)
            expect(abs(growth - want) < 1e-12 and growth > 1.9 * (s / previous[0]) / 2,
                   f"store ratio grows x{growth:.3f} from seq {previous[0]} to {s} "
                   f"(formula x{want:.3f}, > 1.9 per doubling)")
        previous = (s, ratio)
    print(f"lesson_scaling: {'FAIL' if failures else 'PASS'} ({len(failures)} failed)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
