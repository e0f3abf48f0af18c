#!/usr/bin/env python3
"""Draws the access map the emulator wrote for one block (scripts/emulate --access-map).

    scripts/access_map.py MAP.txt [OUT.png] [--text] [--only global|shared]

For each allocation the block touched, and for shared memory, a grid of its elements: shared
memory as 32 columns, one per bank (4-byte words), global memory as 32 elements a row (a row of
4-byte elements is one 128-byte line, four 32-byte sectors). A cell is coloured by the warp of
the thread that touched it first and labelled with that thread's lane. Below, for the first
instructions of warp 0 (the text lists all of them): which lane touched which
element, with the 32-byte sectors (global) or the wavefronts (shared: the most distinct words
one bank is asked for) that one execution needs. Without matplotlib, or with --text, the same
grids are printed as text (each cell: warp letter, lane number). --only keeps the regions of
one state space.
"""
import os
import sys
from collections import defaultdict

ROWS_SHOWN = 32  # rows of a grid at most (the first ones touched)


def read_map(path):
    m = {"regions": {}, "insts": {}, "accesses": []}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            word = line.split()
            if word[0] == "kernel":
                m["kernel"] = word[1]
            elif word[0] == "launch":
                m["launch"] = int(word[1])
                m["block"] = tuple(int(v) for v in word[3:6])
                m["blockdim"] = tuple(int(v) for v in word[7:10])
            elif word[0] == "region":
                rid, space, base, size = int(word[1]), word[2], word[3], int(word[4])
                m["regions"][rid] = {"space": space, "base": base, "bytes": size,
                                     "what": " ".join(word[5:])}
            elif word[0] == "inst":
                m["insts"][int(word[1])] = (word[2], " ".join(word[3:]))
            elif word[0] == "access":
                pc, kind, rid, off, size, warp, lane = word[1:8]
                m["accesses"].append((int(pc), kind, int(rid), int(off), int(size), int(warp), int(lane)))
    return m


def unit_of(region, accesses):
    """Element size: 4-byte words for shared memory (banks), else the smallest access."""
    if region["space"] == "shared":
        return 4
    return max(1, min(a[4] for a in accesses))


def cells(region, accesses):
    """Element index -> list of (warp, lane), in access order; one access may span elements."""
    unit = unit_of(region, accesses)
    touched = defaultdict(list)
    for (_, _, _, off, size, warp, lane) in accesses:
        for e in range(off // unit, (off + size - 1) // unit + 1):
            if (warp, lane) not in touched[e]:
                touched[e].append((warp, lane))
    return unit, touched


def window(touched, cols):
    rows = sorted({e // cols for e in touched})
    return rows[:ROWS_SHOWN], len(rows) > ROWS_SHOWN


def per_instruction(region, accesses, warp=0):
    """For warp 0: pc -> list of (lane, element), and the cost of one execution of it."""
    unit = unit_of(region, accesses)
    out = {}
    by_pc = defaultdict(list)
    for a in accesses:
        if a[5] == warp:
            by_pc[a[0]].append(a)
    for pc, acc in sorted(by_pc.items()):
        # One execution: the first access of each lane (a loop runs an instruction again).
        first = {}
        for a in acc:
            first.setdefault(a[6], a)
        if region["space"] == "shared":
            # 128-byte phases: the whole warp for up to 4 bytes a lane, half-warps for 8, quarter-
            # warps for 16; a phase takes as many wavefronts as the most distinct words one bank
            # is asked for (emu/README.md, Metrics).
            width = max(a[4] for a in first.values())
            phase = 32 if width <= 4 else 16 if width <= 8 else 8
            waves = 0
            for p0 in range(0, 32, phase):
                per_bank = defaultdict(set)
                for lane, a in first.items():
                    if p0 <= lane < p0 + phase:
                        for w in range(a[3] // 4, (a[3] + a[4] - 1) // 4 + 1):
                            per_bank[w % 32].add(w)
                waves += max((len(v) for v in per_bank.values()), default=0)
            cost = "%d wavefront(s) for %d lanes" % (waves, len(first))
        else:
            sectors = {s for a in first.values() for s in range(a[3] // 32, (a[3] + a[4] - 1) // 32 + 1)}
            nbytes = len({b for a in first.values() for b in range(a[3], a[3] + a[4])})
            cost = "%d sector(s), ideal %d" % (len(sectors), -(-nbytes // 32))
        out[pc] = ([(lane, a[3] // unit) for lane, a in sorted(first.items())], cost)
    return out


def title_of(m, rid):
    r = m["regions"][rid]
    return "shared memory (32 banks a row)" if r["space"] == "shared" else \
        "%s at %s (32 elements a row)" % (r["what"], r["base"])


def text_report(m):
    lines = ["access map of %s, launch %d, block %s, blockDim %s" %
             (m["kernel"], m["launch"], m["block"], m["blockdim"])]
    by_region = defaultdict(list)
    for a in m["accesses"]:
        by_region[a[2]].append(a)
    for rid, acc in sorted(by_region.items()):
        unit, touched = cells(m["regions"][rid], acc)
        rows, cut = window(touched, 32)
        lines.append("")
        lines.append("%s: %d-byte elements; cell = the first access: warp letter + lane" %
                     (title_of(m, rid), unit))
        for r in rows:
            row = []
            for c in range(32):
                who = touched.get(r * 32 + c)
                if not who:
                    row.append("  ..")
                else:
                    w, lane = who[0]
                    row.append(" %s%2d" % (chr(ord("a") + w % 26), lane))
            lines.append("%6d |%s" % (r * 32, "".join(row)))
        if cut:
            lines.append("       (first %d rows shown)" % ROWS_SHOWN)
        for pc, (lanes, cost) in per_instruction(m["regions"][rid], acc).items():
            where, text = m["insts"].get(pc, ("?", "?"))
            lines.append("  warp 0, %s at %s: %s" % (text.strip(), where, cost))
    return "\n".join(lines) + "\n"


def draw(m, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    by_region = defaultdict(list)
    for a in m["accesses"]:
        by_region[a[2]].append(a)
    regions = sorted(by_region)
    panels = []
    for rid in regions:
        panels.append(("all", rid, None))
        for pc in list(per_instruction(m["regions"][rid], by_region[rid]))[:2]:
            panels.append(("warp0", rid, pc))
    heights = []
    for kind, rid, pc in panels:
        unit, touched = cells(m["regions"][rid], by_region[rid])
        if kind == "warp0":
            lanes, _ = per_instruction(m["regions"][rid], by_region[rid])[pc]
            touched = {e: [(0, l)] for l, e in lanes}
        rows, _ = window(touched, 32)
        heights.append(max(2, len(rows)))
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 0.9 + sum(0.22 * h + 0.6 for h in heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    palette = ListedColormap(["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860",
                              "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"])
    for ax, (kind, rid, pc) in zip(axes[:, 0], panels):
        region = m["regions"][rid]
        unit, touched = cells(region, by_region[rid])
        cost = ""
        if kind == "warp0":
            lanes, cost = per_instruction(region, by_region[rid])[pc]
            touched = {}
            for l, e in lanes:
                touched.setdefault(e, []).append((0, l))
        rows, cut = window(touched, 32)
        for y, r in enumerate(rows):
            for c in range(32):
                who = touched.get(r * 32 + c)
                if not who:
                    ax.add_patch(plt.Rectangle((c, y), 1, 1, facecolor="#f4f4f4", edgecolor="white"))
                    continue
                ax.add_patch(plt.Rectangle((c, y), 1, 1, facecolor=palette(who[0][0] % 10), edgecolor="white"))
                ax.text(c + 0.5, y + 0.5, "%d" % who[0][1], ha="center", va="center", fontsize=5.5, color="white")
        ax.set_xlim(0, 32)
        ax.set_ylim(len(rows), 0)
        ax.set_yticks([y + 0.5 for y in range(len(rows))])
        ax.set_yticklabels([str(r * 32) for r in rows], fontsize=5)
        ax.set_xticks([c + 0.5 for c in range(0, 32, 4)])
        ax.set_xticklabels([str(c) for c in range(0, 32, 4)], fontsize=6)
        ax.set_xlabel("bank" if region["space"] == "shared" else "element within the row (%d bytes each)" % unit,
                      fontsize=7)
        ax.set_aspect("equal")
        if kind == "all":
            title = "%s: the block's first access of each element, colour = warp, number = lane" % title_of(m, rid)
        else:
            where, text = m["insts"].get(pc, ("?", "?"))
            title = "warp 0, '%s' at %s: %s" % (text.strip().rstrip(";"), where, cost)
        if cut:
            title += " (first %d rows)" % ROWS_SHOWN
        ax.set_title(title, fontsize=8, loc="left")
    fig.suptitle("%s, launch %d, block %s (blockDim %s)" % (m["kernel"], m["launch"], m["block"], m["blockdim"]),
                 fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(out, dpi=130)


def main():
    argv = sys.argv[1:]
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        if i + 1 >= len(argv) or argv[i + 1] not in ("global", "shared"):
            print("access_map: --only needs global or shared", file=sys.stderr)
            return 2
        only = argv[i + 1]
        del argv[i:i + 2]
    args = [a for a in argv if a != "--text"]
    if not args or len(args) > 2 or any(a.startswith("--") for a in args):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    m = read_map(args[0])
    if only:
        m["accesses"] = [a for a in m["accesses"] if m["regions"][a[2]]["space"] == only]
    if not m["accesses"]:
        print("access_map: %s holds no access of global or shared memory" % args[0])
        return 0
    out = args[1] if len(args) > 1 else os.path.splitext(args[0])[0] + ".png"
    if "--text" not in argv:
        try:
            draw(m, out)
            print("access_map: drew %s" % out)
            return 0
        except ImportError:
            print("access_map: no matplotlib; the map as text:")
    sys.stdout.write(text_report(m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
