"""What scripts/summarize.py and scripts/plot.py read alike from a day's result JSON
(results/<gpu>/dayNNN.json, written by a day's --json)."""


def best_version(doc):
    """The passing version with the highest rate, or None when no version passed with one."""
    timed = [v for v in doc.get("versions", []) if v.get("status") == "PASS" and v.get("rate")]
    return max(timed, key=lambda v: v["rate"]) if timed else None
