#!/usr/bin/env python3
"""Stands in for a day under the emulator: writes a report like a day's --json (two versions with
metrics, a table) and exits 0. --not-emulated and --exit N change what a day would do."""
import argparse
import json

parser = argparse.ArgumentParser()
parser.add_argument("--json", required=True)
parser.add_argument("--not-emulated", action="store_true")
parser.add_argument("--exit", type=int, default=0)
parser.add_argument("--iters")
parser.add_argument("--warmup")
args = parser.parse_args()


def metrics(requests, sectors, wavefronts):
    return {"global_load_requests": requests, "global_load_sectors": sectors,
            "shared_load_requests": requests, "shared_load_wavefronts": wavefronts,
            "shared_load_ideal_wavefronts": requests, "shared_store_wavefronts": 0,
            "shared_store_ideal_wavefronts": 0}


report = {
    "emulated": not args.not_emulated, "problem": {"n": 4096},
    "versions": [{"name": "naive", "metrics": metrics(128, 512, 4096)},
                 {"name": "float4 uniform", "metrics": metrics(32, 512, 32)}],
    "tables": [{"title": "stride sweep", "columns": ["stride", "wavefronts"],
                "rows": [[1, 1], [2, 2], [6, 2], [32, 32]]}],
}
with open(args.json, "w") as f:
    json.dump(report, f)
raise SystemExit(args.exit)
