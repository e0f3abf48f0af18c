#!/usr/bin/env python3
"""Runs a day under the emulator and checks its lesson against the emulated metrics.

    check_metrics.py --assert EXPR [--assert EXPR ...] -- PROGRAM [ARGS...]

PROGRAM runs with ARGS plus --json FILE (the emulator's libcudart.so.13 must come first on the
library path: the ctest environment sets it). Each EXPR is a Python expression over the versions
of the report, each a name with the version's metrics as attributes (emu/include/
gpu100_emu_metrics.h lists them), e.g.

    float4.global_load_requests * 4 == naive.global_load_requests

A version name that is not an identifier is written with '_' for each other character
("coarsened uniform" -> coarsened_uniform). Each version also has shared_load_conflicts,
shared_store_conflicts (wavefronts beyond the ideal) and bank_conflicts (both). The report's
tables are there too: column("stride sweep", "stride (words)") is the list of numbers in the
column of that name of the first table whose title starts with "stride sweep", and
cell("wavefronts", "all, per warp per k-tile", "linear") the number in that column of the row
whose first cell is that text. problem.n is the report's problem size n (any key of "problem").
gcd, all, any, zip, sum, min, max, len, abs, range and list are available.

Every expression is evaluated, and for each one that is false the values it read are printed.
The exit code is 0 only if the program passed, ran emulated, and every expression is true.
"""
import argparse
import ast
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from types import SimpleNamespace


def identifier(name):
    s = re.sub(r"\W", "_", name)
    return "_" + s if s[:1].isdigit() else s


def version_namespace(v):
    m = dict(v["metrics"])
    m["shared_load_conflicts"] = m["shared_load_wavefronts"] - m["shared_load_ideal_wavefronts"]
    m["shared_store_conflicts"] = m["shared_store_wavefronts"] - m["shared_store_ideal_wavefronts"]
    m["bank_conflicts"] = m["shared_load_conflicts"] + m["shared_store_conflicts"]
    return SimpleNamespace(**m)


def referenced(expr):
    """The name.attribute pairs an expression reads, in order, once each."""
    seen = []
    for node in ast.walk(ast.parse(expr, mode="eval")):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            pair = (node.value.id, node.attr)
            if pair not in seen:
                seen.append(pair)
    return seen


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--assert", dest="asserts", action="append", required=True,
                        metavar="EXPR", help="a claim about the versions' metrics")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- PROGRAM [ARGS...]")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no program to run")

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        run = subprocess.run(command + ["--json", out], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(run.stdout)
        if run.returncode != 0:
            print(f"check_metrics: {command[0]} exited with {run.returncode}")
            return 1
        with open(out) as f:
            report = json.load(f)

    if not report.get("emulated"):
        print("check_metrics: the run was not emulated, so it has no metrics to check")
        return 1
    names = {}
    for v in report["versions"]:
        if "metrics" in v:
            names[identifier(v["name"])] = version_namespace(v)

    def table(title):
        for t in report.get("tables", []):
            # Under emulation a table's title starts with a bracketed "[emulated: ...]" mark.
            if t["title"].startswith(title) or t["title"].split("] ", 1)[-1].startswith(title):
                return t
        raise KeyError(f"no table titled {title!r}")

    def whole(x):  # the JSON keeps table numbers as doubles; counts read back as ints
        return int(x) if isinstance(x, float) and x.is_integer() else x

    def column(title, name):
        t = table(title)
        i = t["columns"].index(name)
        return [whole(row[i]) for row in t["rows"]]

    def cell(title, row_label, name):
        t = table(title)
        i = t["columns"].index(name)
        for row in t["rows"]:
            if whole(row[0]) == row_label:
                return whole(row[i])
        raise KeyError(f"no row {row_label!r} in {t['title']!r}")

    scope = {"__builtins__": {}}
    scope.update(names)
    problem = SimpleNamespace(**{identifier(k): v for k, v in report.get("problem", {}).items()})
    scope.update(column=column, cell=cell, problem=problem, gcd=math.gcd, all=all, any=any,
                 zip=zip, sum=sum, min=min, max=max, len=len, abs=abs, range=range, list=list)
    failures = 0
    print(f"\nlesson checks on the emulated metrics ({', '.join(sorted(names))}):")
    for expr in args.asserts:
        try:
            ok = bool(eval(expr, scope))
            error = None
        except Exception as e:  # a missing version or metric is a failed check
            ok, error = False, f"{type(e).__name__}: {e}"
        print(f"  {'ok  ' if ok else 'FAIL'}  {expr}")
        if not ok:
            failures += 1
            if error:
                print(f"        {error}")
            for name, attr in referenced(expr):
                value = getattr(names[name], attr, "?") if name in names else "no such version"
                print(f"        {name}.{attr} = {value}")
    print(f"check_metrics: {len(args.asserts) - failures} of {len(args.asserts)} lesson checks hold")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
