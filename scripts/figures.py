#!/usr/bin/env python3
"""Draws the figures of docs/figures/ from small models of the machine, and checks the models.

    scripts/figures.py [--out DIR]                  draw every figure into DIR (docs/figures)
    scripts/figures.py --check [--out DIR]          also check the models (exit 1 on a mismatch)
    scripts/figures.py --check --emulator BIN_DIR   and compare them with emulated runs of
                                                    BIN_DIR/day001, day007, day025 and day026

Every figure is drawn from a model computed here, never from numbers typed into the picture:
addresses -> 32-byte sectors, word index -> bank -> wavefronts, lanes -> branch paths,
registers -> resident warps, FLOPs and bytes -> roofline. Where the emulator counts the same
thing, --check holds the model to the lessons' claims: it reads the ASSERT expressions of
gpu100_emu_lesson() in dayNNN/CMakeLists.txt (the claims the emulator's counts must satisfy in
ctest -R emu.lesson) and evaluates them over the model's counts for the same run (the same
ARGS). With --emulator it also runs the days under the emulator (GPU100_EMU_METRICS) and
compares the counts launch by launch.

H100 SXM limits are NVIDIA's published figures (H100 Tensor Core GPU datasheet; the CUDA C++
Programming Guide's table of compute capability 9.0 limits for the SM).
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---- the machine -------------------------------------------------------------------------------
WARP = 32
SECTOR_BYTES = 32          # the unit a global memory request is served in
BANKS, BANK_BYTES = 32, 4  # shared memory: bank of byte address a is (a // 4) % 32
PHASE_BYTES = BANKS * BANK_BYTES  # one wavefront serves at most one 128-byte phase

# H100 SXM5: datasheet (memory bandwidth, FP32, dense FP16 tensor) and compute capability 9.0
# limits per SM (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability").
H100 = SimpleNamespace(
    hbm_bytes_per_s=3.35e12, fp32_flops=66.9e12, fp16_tensor_flops=989e12,
    regs_per_sm=65536, warps_per_sm=64, blocks_per_sm=32, reg_alloc_unit=256,
    max_regs_per_thread=255, max_threads_per_block=1024)


# ---- models ------------------------------------------------------------------------------------
def global_request(lane_bytes):
    """One warp's global request: lane_bytes is [(address, size)] for the active lanes.
    Returns (distinct 32-byte sectors touched, ideal sectors = ceil(distinct bytes / 32))."""
    sectors, data = set(), set()
    for addr, size in lane_bytes:
        data.update(range(addr, addr + size))
        sectors.update(range(addr // SECTOR_BYTES, (addr + size - 1) // SECTOR_BYTES + 1))
    return len(sectors), -(-len(data) // SECTOR_BYTES)


def bank_of_word(word):
    return word % BANKS


def shared_request(lane_bytes):
    """One warp's shared request: [(address, size)] per active lane -> (wavefronts, ideal).
    The warp is split into phases of 128 bytes (32 lanes of 4 bytes, 16 of 8, 8 of 16); a phase
    takes as many wavefronts as the most distinct words one bank is asked for (lanes asking for
    the same word share it)."""
    if not lane_bytes:
        return 0, 0
    size = max(s for _, s in lane_bytes)
    lanes_per_phase = WARP if size <= 4 else PHASE_BYTES // size
    wavefronts = ideal = 0
    for p in range(0, len(lane_bytes), lanes_per_phase):
        words_in_bank = {}
        for addr, s in lane_bytes[p:p + lanes_per_phase]:
            for w in range(addr // BANK_BYTES, (addr + s - 1) // BANK_BYTES + 1):
                words_in_bank.setdefault(bank_of_word(w), set()).add(w)
        wavefronts += max(len(v) for v in words_in_bank.values())
        ideal += 1
    return wavefronts, ideal


def words(word_list, size=4):
    return [(w * 4, size) for w in word_list]


def branch_divergent(taken):
    """A warp's branch over its active lanes: taken[k] for each; divergent when both paths run."""
    return 0 < sum(taken) < len(taken)


def regs_per_warp(regs_per_thread):
    unit = H100.reg_alloc_unit
    return -(-regs_per_thread * WARP // unit) * unit


def resident_warps(regs_per_thread, block_threads):
    """Warps resident on one H100 SM for a kernel of that many registers and that block size,
    from the register file, the warp slots and the block slots (shared memory left out)."""
    warps_per_block = -(-block_threads // WARP)
    if regs_per_thread > H100.max_regs_per_thread or block_threads > H100.max_threads_per_block:
        return 0
    by_regs = (H100.regs_per_sm // regs_per_warp(max(regs_per_thread, 1))) // warps_per_block
    by_warps = H100.warps_per_sm // warps_per_block
    blocks = min(by_regs, by_warps, H100.blocks_per_sm)
    return blocks * warps_per_block


def ridge(flops_per_s, bytes_per_s):
    return flops_per_s / bytes_per_s


# ---- the days' runs under the models -----------------------------------------------------------
class Counts:
    """A version's counts, named as the emulator names its metrics."""

    def __init__(self):
        for k in ("global_load_requests", "global_load_sectors", "global_load_ideal_sectors",
                  "global_store_requests", "global_store_sectors", "global_store_ideal_sectors",
                  "shared_load_requests", "shared_load_wavefronts", "shared_load_ideal_wavefronts",
                  "shared_store_requests", "shared_store_wavefronts",
                  "shared_store_ideal_wavefronts", "branches", "divergent_branches"):
            setattr(self, k, 0)

    def glob(self, kind, lane_bytes):
        if not lane_bytes:
            return
        s, ideal = global_request(lane_bytes)
        setattr(self, f"global_{kind}_requests", getattr(self, f"global_{kind}_requests") + 1)
        setattr(self, f"global_{kind}_sectors", getattr(self, f"global_{kind}_sectors") + s)
        setattr(self, f"global_{kind}_ideal_sectors",
                getattr(self, f"global_{kind}_ideal_sectors") + ideal)

    def shared(self, kind, lane_bytes):
        if not lane_bytes:
            return
        w, ideal = shared_request(lane_bytes)
        setattr(self, f"shared_{kind}_requests", getattr(self, f"shared_{kind}_requests") + 1)
        setattr(self, f"shared_{kind}_wavefronts", getattr(self, f"shared_{kind}_wavefronts") + w)
        setattr(self, f"shared_{kind}_ideal_wavefronts",
                getattr(self, f"shared_{kind}_ideal_wavefronts") + ideal)

    def namespace(self):
        m = dict(vars(self))
        m["shared_load_conflicts"] = m["shared_load_wavefronts"] - m["shared_load_ideal_wavefronts"]
        m["shared_store_conflicts"] = (m["shared_store_wavefronts"]
                                       - m["shared_store_ideal_wavefronts"])
        m["bank_conflicts"] = m["shared_load_conflicts"] + m["shared_store_conflicts"]
        return SimpleNamespace(**m)


def source_constant(path, name):
    """A day's `constexpr ... name = <integer>;`: the model uses the day's own block sizes."""
    text = open(os.path.join(ROOT, path)).read()
    m = re.search(r"constexpr\s+[\w\s]*\b" + name + r"\s*=\s*(\d+)\s*;", text)
    if not m:
        raise RuntimeError(f"{path}: no constexpr {name}")
    return int(m.group(1))


def chunks(count):
    """The warps of a one-element-per-thread sweep over count elements: lists of element ids."""
    return [list(range(b, min(b + WARP, count))) for b in range(0, count, WARP)]


def day001(args):
    """c[i] = a[i] + b[i] over n floats: naive (a thread per element) and float4 (a thread per
    16 bytes, the n % 4 tail as floats). Buffers start on sector boundaries."""
    n = args["n"]
    naive = Counts()
    block = source_constant("day001/vector_add.cu", "kBlock")
    launched = -(-n // block) * block
    for w in chunks(launched):  # every warp of the grid branches on i < n
        naive.branches += 1
        naive.divergent_branches += branch_divergent([i < n for i in w])
    for w in chunks(n):
        naive.glob("load", words(w)); naive.glob("load", words(w)); naive.glob("store", words(w))
    vec = Counts()
    for w in chunks(n // 4):
        for kind in ("load", "load", "store"):
            vec.glob(kind, [(16 * i, 16) for i in w])
    for w in chunks(n % 4):
        for kind in ("load", "load", "store"):
            vec.glob(kind, words([4 * (n // 4) + i for i in w]))
    return {"naive": naive, "float4": vec}


DAY025_PATTERNS = {  # version: (first word, stride in words), from day025's version table
    "coalesced": (0, 1), "misaligned": (1, 1), "stride2": (0, 2), "stride32": (0, 32)}


def day025_pattern(n, first, stride):
    """Element t < count is word first + t * stride; the lanes of a request are 32 consecutive t."""
    c = Counts()
    count = (n - first + stride - 1) // stride
    for w in chunks(count):
        c.glob("load", words([first + t * stride for t in w]))
    return c


def day025(args):
    n = args["n"]
    out = {k: day025_pattern(n, f, s) for k, (f, s) in DAY025_PATTERNS.items()}
    vec = Counts()
    for w in chunks(n // 4):
        vec.glob("load", [(16 * i, 16) for i in w])
    for w in chunks(n % 4):
        vec.glob("load", words([4 * (n // 4) + i for i in w]))
    out["vector4"] = vec
    return out


def day025_columns(args):
    n = args["n"]
    strides = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256]
    per_request = []
    for s in strides:
        c = day025_pattern(n, 0, s)
        per_request.append(c.global_load_sectors / c.global_load_requests)
    offsets = list(range(33))
    off = []
    for o in offsets:
        c = Counts()
        for w in chunks(n - 32):
            c.glob("load", words([o + t for t in w]))
        off.append(c.global_load_sectors / c.global_load_requests)
    return {("stride sweep", "stride (words)"): strides,
            ("stride sweep", "emulated sectors/request"): per_request,
            ("offset sweep", "offset (words)"): offsets,
            ("offset sweep", "emulated sectors/request"): off}


def tile_column_words(fixed, row_words):
    return [k * row_words + fixed for k in range(WARP)]


def tile_column_swizzled_words(fixed):
    return [k * 32 + (fixed ^ k) for k in range(WARP)]


# day026's layouts of logical word w in 32-word rows
LAYOUTS = {"row-major": lambda w: w, "padded": lambda w: w + w // 32,
           "swizzled": lambda w: w ^ (w // 32 % 32)}


def day026(args):
    """The probe: per warp, kUnroll loads per trip at the pattern + 32 u words (a whole row
    further: the same banks). Counted for one warp of one trip; the claims are per request."""
    fixed = source_constant("day026/shared_memory_banks.cu", "kFixed")
    unroll = source_constant("day026/shared_memory_banks.cu", "kUnroll")
    patterns = {"tile_row": [fixed * 32 + k for k in range(WARP)],
                "tile_column": tile_column_words(fixed, 32),
                "tile_column_padded": tile_column_words(fixed, 33),
                "tile_column_swizzled": tile_column_swizzled_words(fixed)}
    out = {}
    for name, ws in patterns.items():
        c = Counts()
        for u in range(unroll * args["trips"]):
            c.shared("load", words([w + 32 * u for w in ws]))
        out[name] = c
    return out


def day026_columns(args):
    sweep = list(range(1, 33))
    cols = {("stride sweep", "stride (words)"): sweep}
    for name, layout in LAYOUTS.items():
        cols[("stride sweep", f"{name} emulated wavefronts/access")] = [
            shared_request(words([layout(k * s) for k in range(WARP)]))[0] for s in sweep]
    return cols


def day010(args):
    """Transpose of rows x cols floats. naive: block 32 x 8, a warp reads 32 consecutive
    columns of one row and writes them down a column of out. Tiled: a 32 x (32 + pad) tile,
    written by rows, read by columns; block 32 x block_rows threads."""
    rows, cols = args["rows"], args["cols"]
    out = {}
    naive = Counts()
    for r in range(rows):
        for c0 in range(0, cols, WARP):
            cs = range(c0, min(c0 + WARP, cols))
            naive.glob("load", words([r * cols + c for c in cs]))
            naive.glob("store", words([c * rows + r for c in cs]))
    out["naive"] = naive
    for name, pad, block_rows in (("shared_tiled", 0, 32), ("padded", 1, 32),
                                  ("coarsened", 1, 8), ("coarsened8", 1, 4)):
        c = Counts()
        pitch = 32 + pad
        for tr in range(0, rows, 32):
            for tc in range(0, cols, 32):
                for ty in range(block_rows):
                    for j in range(0, 32, block_rows):
                        lanes = [tx for tx in range(32)
                                 if tr + ty + j < rows and tc + tx < cols]
                        c.glob("load", words([(tr + ty + j) * cols + tc + tx for tx in lanes]))
                        c.shared("store", words([(ty + j) * pitch + tx for tx in lanes]))
                for ty in range(block_rows):
                    for j in range(0, 32, block_rows):
                        lanes = [tx for tx in range(32)
                                 if tc + ty + j < cols and tr + tx < rows]
                        c.shared("load", words([tx * pitch + ty + j for tx in lanes]))
                        c.glob("store", words([(tc + ty + j) * rows + tr + tx for tx in lanes]))
        out[name] = c
    return out


def reduction_steps(kind, block):
    """The steps of day007's shared-memory tree over one block: for each step, the threads that
    add (and the words they read and write)."""
    steps = []
    if kind == "divergent":
        s = 1
        while s < block:
            act = [t for t in range(block) if t % (2 * s) == 0]
            steps.append((s, act, {t: t for t in act}))
            s *= 2
    elif kind == "strided_index":
        s = 1
        while s < block:
            act = [t for t in range(block) if 2 * s * t < block]
            steps.append((s, act, {t: 2 * s * t for t in act}))
            s *= 2
    else:
        s = block // 2
        while s > 0:
            act = list(range(s))
            steps.append((s, act, {t: t for t in act}))
            s //= 2
    return steps


def day007(args):
    """One block of day007's first three kernels: the condition of each step's `if` decides the
    divergent branches (and which warps skip the step); the shared accesses are s[tid] stored,
    then per step s[index] and s[index + stride] loaded and s[index] stored, then s[0] loaded by
    thread 0; then the `if (tid == 0)` store of the result (divergent in warp 0)."""
    block = source_constant("day007/reduction_shared_memory.cu", "kBlock")
    out = {}
    for kind in ("divergent", "strided_index", "sequential"):
        c = Counts()
        for w in range(block // WARP):
            c.shared("store", words(range(w * WARP, (w + 1) * WARP)))
        for stride, act, index in reduction_steps(kind, block):
            for w in range(block // WARP):
                lanes = range(w * WARP, (w + 1) * WARP)
                taken = [t in index for t in lanes]
                if branch_divergent(taken):
                    c.divergent_branches += 1
                on = [t for t in lanes if t in index]
                c.shared("load", words([index[t] for t in on]))
                c.shared("load", words([index[t] + stride for t in on]))
                c.shared("store", words([index[t] for t in on]))
        c.shared("load", words([0]))
        c.divergent_branches += 1  # if (tid == 0) in warp 0
        out[kind] = c
    return out


DAY_MODELS = {"day001": (day001, None), "day007": (day007, None), "day010": (day010, None),
              "day025": (day025, day025_columns), "day026": (day026, day026_columns)}


# ---- the lessons' claims -----------------------------------------------------------------------
def lesson_claims(day):
    """The ARGS and ASSERT expressions of gpu100_emu_lesson() in dayNNN/CMakeLists.txt, with its
    set(name "...") variables substituted."""
    text = open(os.path.join(ROOT, day, "CMakeLists.txt")).read()
    variables = dict(re.findall(r'^set\((\w+) "((?:[^"\\]|\\.)*)"\)', text, re.M))
    m = re.search(r"gpu100_emu_lesson\(\s*" + day + r"\b(.*?)\)\s*$", text, re.S | re.M)
    if not m:
        return None, []
    body = m.group(1)
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', body)
    args_m = re.search(r'ARGS\s+"([^"]*)"', body)
    args = args_m.group(1) if args_m else ""
    asserts = strings[1:] if args_m else strings
    sub = lambda s: re.sub(r"\$\{(\w+)\}", lambda v: variables[v.group(1)], s)
    return args, [sub(a) for a in asserts]


def parse_args(args):
    values = dict(re.findall(r"--(\w+)\s+(\d+)", args))
    return {k: int(v) for k, v in values.items()}


def read_counts(expr):
    """The version.metric pairs an expression reads, in order, once each."""
    seen = []
    for node in ast.walk(ast.parse(expr, mode="eval")):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) not in seen:
                seen.append((node.value.id, node.attr))
    return seen


def evaluate_claims(day):
    """Each claim of the day's lesson evaluated over the model: (expr, True/False/None), None
    when it reads a version or a column the model does not compute."""
    args_text, asserts = lesson_claims(day)
    count_model, column_model = DAY_MODELS[day]
    args = parse_args(args_text)
    versions = {k: v.namespace() for k, v in count_model(args).items()}
    cols = column_model(args) if column_model else {}

    class Missing(Exception):
        pass

    def column(table, name):
        if (table, name) not in cols:
            raise Missing
        return cols[(table, name)]

    env = dict(versions, column=column, gcd=math.gcd, all=all, any=any, zip=zip, sum=sum,
               min=min, max=max, len=len, abs=abs, range=range, list=list)
    results = []
    for expr in asserts:
        names = {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}
        generators = {n.id for g in ast.walk(ast.parse(expr, mode="eval"))
                      if isinstance(g, ast.comprehension) for n in ast.walk(g.target)
                      if isinstance(n, ast.Name)}
        if names - set(env) - generators:
            results.append((expr, None))
            continue
        try:
            results.append((expr, bool(eval(expr, dict(env, __builtins__={})))))
        except Missing:
            results.append((expr, None))
    return args_text, results


# ---- figures -----------------------------------------------------------------------------------
def setup_matplotlib():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "figure.dpi": 100,
                         "savefig.dpi": 100})
    return plt


def bank_colours(plt):
    cmap = plt.get_cmap("tab20")
    return [cmap(i % 20) if i < 20 else plt.get_cmap("tab20b")(i - 20) for i in range(BANKS)]


def fig_grid_block_warp(plt):
    n, block = 4099, 256  # day001's README example size: the last warp is partly empty
    blocks = -(-n // block)
    warps = -(-n // WARP)
    last_lanes = n - (warps - 1) * WARP
    fig, ax = plt.subplots(figsize=(9, 4.2))
    ax.set_xlim(0, 100); ax.set_ylim(-3, 44); ax.axis("off")
    ax.set_title(f"n = {n} floats, blockDim.x = {block}: gridDim.x = ceil(n / {block}) = {blocks}"
                 f" blocks;\n{warps} warps hold elements, the last of them {last_lanes}")
    shown = [0, 1, 2, blocks - 1]
    for j, b in enumerate(shown):
        x = 2 + j * 24
        ax.add_patch(plt.Rectangle((x, 34), 20, 7, fc="#dde8f5", ec="k"))
        label = f"block {b}" + ("  (last)" if b == blocks - 1 else "")
        ax.text(x + 10, 37.5, label, ha="center", va="center")
        if j == 2:
            ax.text(x + 22, 37.5, "...", ha="center", va="center")
    # the last block, its warps
    b = blocks - 1
    ax.text(2, 30, f"block {b}: {block // WARP} warps of {WARP} threads, threadIdx.x = 0..{block - 1}",
            va="center")
    for w in range(block // WARP):
        x = 2 + w * 12
        first = b * block + w * WARP
        active = max(0, min(WARP, n - first))
        ax.add_patch(plt.Rectangle((x, 20), 11, 7, fc="#b9d9b0" if active else "#eeeeee", ec="k"))
        ax.text(x + 5.5, 23.5, f"warp {w}\n{active} active", ha="center", va="center", fontsize=7)
    ax.text(2, 15.5, f"warp 0 of block {b}: lanes 0..31, i = blockIdx.x * blockDim.x + threadIdx.x",
            va="center")
    for lane in range(WARP):
        x = 2 + lane * 3
        i = b * block + lane
        ax.add_patch(plt.Rectangle((x, 6), 2.8, 7, fc="#f6c28b" if i < n else "#eeeeee", ec="k",
                                   lw=0.5))
        if lane < 4 or lane == WARP - 1:
            ax.text(x + 1.4, 3.5, f"{i}", ha="center", va="center", fontsize=6.5, rotation=90)
    ax.text(2, -2.5, f"orange: i < n, the thread has an element; grey: i >= n, it returns "
            f"(threads launched {blocks * block}, elements {n})", fontsize=8)
    return fig


def fig_warp_divergence(plt):
    taken = [k % 2 == 0 for k in range(WARP)]  # the condition of day007's first `divergent` step
    fig, ax = plt.subplots(figsize=(9, 2.9))
    ax.set_xlim(-7, WARP + 0.5); ax.set_ylim(-0.8, 4.6); ax.axis("off")
    ax.set_title("if (tid % 2 == 0) { path A } else { path B }: one warp, one divergent branch",
                 fontsize=10)
    rows = [("path A (tid even)", taken), ("then path B (tid odd)", [not t for t in taken]),
            ("reconverged", [True] * WARP)]
    for r, (label, mask) in enumerate(rows):
        y = 3 - r * 1.4
        ax.text(-0.5, y + 0.35, label, ha="right", va="center", fontsize=8)
        for k in range(WARP):
            ax.add_patch(plt.Rectangle((k, y), 0.9, 0.7, fc="#4c8bd6" if mask[k] else "#eeeeee",
                                       ec="k", lw=0.4))
    for k in range(0, WARP, 4):
        ax.text(k + 0.45, -0.4, f"lane {k}", ha="center", fontsize=7)
    ax.text(WARP / 2, 4.1, f"blue: lane active. The warp issues path A with {sum(taken)} of {WARP} "
            f"lanes on, then path B with the other {WARP - sum(taken)}: both paths' time, "
            "each at half width", ha="center", fontsize=8)
    fig.tight_layout()
    return fig


def fig_sectors(plt):
    pitch_words = 1024  # a column of a row-major matrix of 1024 floats a row
    patterns = [("coalesced: lane k reads word k", [k for k in range(WARP)]),
                ("strided by 2: word 2k", [2 * k for k in range(WARP)]),
                ("offset by 4 bytes: word k + 1", [k + 1 for k in range(WARP)]),
                (f"column of a row-major matrix ({pitch_words} floats a row): word {pitch_words}k",
                 [pitch_words * k for k in range(WARP)])]
    fig, axes = plt.subplots(len(patterns), 1, figsize=(9, 6.2))
    for ax, (label, ws) in zip(axes, patterns):
        s, ideal = global_request(words(ws))
        touched = sorted({4 * w // SECTOR_BYTES for w in ws})
        show = touched if len(touched) <= 9 else touched[:6]
        ax.set_xlim(-0.5, 10.5); ax.set_ylim(-0.2, 1.4); ax.axis("off")
        ax.set_title(f"{label}: {s} sectors touched, ideal {ideal}", fontsize=9, loc="left")
        for j, sec in enumerate(show):
            x = j * (10 / max(len(show), 4)) if len(touched) <= 9 else j * 1.6
            wbox = 8 * (10 / max(len(show), 4)) / 8 * 0.95 if len(touched) <= 9 else 1.5
            for q in range(8):
                word = sec * 8 + q
                used = word in ws
                ax.add_patch(plt.Rectangle((x + q * wbox / 8, 0.2), wbox / 8, 0.8,
                                           fc="#e07b39" if used else "#f3f3f3", ec="#888",
                                           lw=0.4))
            ax.add_patch(plt.Rectangle((x, 0.2), wbox, 0.8, fill=False, ec="k", lw=1.2))
            ax.text(x + wbox / 2, 0.05, f"sector {sec}", ha="center", va="top", fontsize=7)
        if len(show) < len(touched):
            ax.text(10.2, 0.6, f"... {len(touched) - len(show)} more", ha="right", va="center")
    fig.suptitle("One warp's 4-byte loads: orange words are read, each box is a 32-byte sector "
                 "(8 words)", fontsize=10)
    fig.tight_layout()
    return fig


def fig_bank_conflicts(plt):
    colours = bank_colours(plt)
    fig, axes = plt.subplots(1, 2, figsize=(10, 5.2))
    col = 5
    for ax, pitch in zip(axes, (32, 33)):
        img = [[colours[bank_of_word(r * pitch + c)] for c in range(32)] for r in range(32)]
        ax.imshow(img, interpolation="nearest")
        lane_words = tile_column_words(col, pitch)
        wf, _ = shared_request(words(lane_words))
        ax.add_patch(plt.Rectangle((col - 0.5, -0.5), 1, 32, fill=False, ec="k", lw=2))
        ax.set_title(f"pitch {pitch} words: column {col} is in "
                     f"{len({bank_of_word(w) for w in lane_words})} bank(s)\n"
                     f"-> {wf} wavefront(s) for the warp's read", fontsize=9)
        ax.set_xlabel("column c"); ax.set_ylabel("row r (lane r reads (r, %d))" % col)
        ax.set_xticks(range(0, 32, 4)); ax.set_yticks(range(0, 32, 4))
    fig.suptitle("A 32 x 32 float tile, each word coloured by its bank ((r * pitch + c) % 32)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


def fig_reduction_tree(plt, block=32):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, kind, title in ((axes[0], "divergent", "interleaved: if (tid % (2s) == 0)"),
                            (axes[1], "sequential", "sequential: if (tid < s)")):
        steps = reduction_steps(kind, block)
        ax.set_xlim(-1, block); ax.set_ylim(-0.5, len(steps) + 0.5); ax.invert_yaxis()
        for i, (s, act, index) in enumerate(steps):
            for t in range(block):
                on = t in index
                ax.add_patch(plt.Rectangle((t, i), 0.9, 0.8, fc="#4c8bd6" if on else "#eeeeee",
                                           ec="k", lw=0.3))
            ax.text(block + 0.3, i + 0.4, f"s={s}: {len(act)} add", va="center", fontsize=7)
        ax.set_yticks([]); ax.set_xticks(range(0, block, 4))
        ax.set_xlabel("thread (one warp of the block)")
        ax.set_title(title, fontsize=9)
    fig.suptitle("Tree reduction of 32 values: blue threads add in each step, grey ones idle. "
                 "Interleaved keeps every warp busy (and divergent); sequential frees whole warps",
                 fontsize=9)
    fig.tight_layout()
    return fig


def fig_occupancy(plt):
    fig, ax = plt.subplots(figsize=(8, 4.2))
    regs = list(range(16, 256))
    for block, style in ((128, "-"), (256, "--"), (1024, ":")):
        ax.step(regs, [resident_warps(r, block) for r in regs], where="post", ls=style,
                label=f"{block}-thread blocks")
    ax.set_xlabel("registers per thread"); ax.set_ylabel("resident warps per SM")
    ax.set_ylim(0, H100.warps_per_sm + 4); ax.set_xlim(16, 255)
    ax.axhline(H100.warps_per_sm, color="grey", lw=0.5)
    ax.set_title(f"H100 SM: {H100.regs_per_sm} registers, {H100.warps_per_sm} warps, "
                 f"{H100.blocks_per_sm} blocks, registers allocated {H100.reg_alloc_unit} per warp",
                 fontsize=9)
    ax.legend(); ax.grid(alpha=0.3)
    return fig


def roofline_points():
    """(label, FLOP per DRAM byte) computed from each kernel's FLOPs and compulsory bytes."""
    n = 4096
    return [("day001 vector add (1 FLOP / 12 B)", 1 / 12),
            ("day007 sum reduction (1 FLOP / 4 B)", 1 / 4),
            ("day019 SGEMV (2 FLOP / 4 B of A)", 2 / 4),
            (f"SGEMM {n}^3 (2n^3 FLOP / 3n^2 x 4 B)", 2 * n ** 3 / (3 * n * n * 4)),
            (f"HGEMM {n}^3 (2n^3 FLOP / 3n^2 x 2 B)", 2 * n ** 3 / (3 * n * n * 2))]


def fig_roofline(plt):
    fig, ax = plt.subplots(figsize=(8.5, 5))
    xs = [2 ** (e / 8) for e in range(-40, 101)]
    bw = H100.hbm_bytes_per_s
    for peak, label, c in ((H100.fp32_flops, "FP32 (CUDA cores)", "C0"),
                           (H100.fp16_tensor_flops, "FP16 tensor, dense", "C1")):
        ax.plot(xs, [min(peak, bw * x) / 1e12 for x in xs], color=c, label=label)
        r = ridge(peak, bw)
        ax.plot([r], [peak / 1e12], "o", color=c)
        ax.annotate(f"ridge {peak / 1e12:g}e12 / {bw / 1e12:g}e12 = {r:.0f} FLOP/B",
                    (r, peak / 1e12), textcoords="offset points", xytext=(-8, 6), ha="right",
                    fontsize=8, color=c)
    for label, x in roofline_points():
        y = min(H100.fp32_flops if "HGEMM" not in label else H100.fp16_tensor_flops, bw * x)
        ax.plot([x], [y / 1e12], "ks", ms=4)
        left = x > 64  # the GEMMs sit at the right edge: their labels go to the left
        ax.annotate(label, (x, y / 1e12), textcoords="offset points",
                    xytext=(-6 if left else 5, -12), ha="right" if left else "left", fontsize=7)
    ax.set_xscale("log", base=2); ax.set_yscale("log"); ax.set_ylim(top=3000)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of DRAM traffic)")
    ax.set_ylabel("attainable TFLOP/s")
    ax.set_title(f"H100 SXM roofline: {bw / 1e12:.2f} TB/s HBM3, {H100.fp32_flops / 1e12:.1f} "
                 f"TFLOP/s FP32, {H100.fp16_tensor_flops / 1e12:.0f} TFLOP/s FP16 tensor "
                 "(datasheet)", fontsize=8.5)
    ax.legend(loc="lower right"); ax.grid(alpha=0.3, which="both")
    return fig


GEMM17 = SimpleNamespace(BM=128, BN=128, BK=16, WM=32, WN=64, sub_m=16, sub_n=32, tm=4, tn=4)


def fig_gemm_tiling(plt):
    g = GEMM17
    fig, axes = plt.subplots(1, 3, figsize=(11, 4))
    ax = axes[0]
    ax.set_xlim(-g.BK - 10, g.BN + 5); ax.set_ylim(g.BM + 5, -g.BK - 10); ax.axis("off")
    ax.add_patch(plt.Rectangle((0, 0), g.BN, g.BM, fc="#eef", ec="k"))
    ax.add_patch(plt.Rectangle((-g.BK - 4, 0), g.BK, g.BM, fc="#fde", ec="k"))
    ax.add_patch(plt.Rectangle((0, -g.BK - 4), g.BN, g.BK, fc="#dfd", ec="k"))
    ax.text(-g.BK / 2 - 4, g.BM / 2, f"A panel\n{g.BM} x {g.BK}", ha="center", va="center",
            rotation=90, fontsize=8)
    ax.text(g.BN / 2, -g.BK / 2 - 4, f"B panel {g.BK} x {g.BN}", ha="center", va="center",
            fontsize=8)
    for wm in range(0, g.BM, g.WM):
        for wn in range(0, g.BN, g.WN):
            ax.add_patch(plt.Rectangle((wn, wm), g.WN, g.WM, fill=False, ec="C0", lw=1))
    ax.add_patch(plt.Rectangle((0, 0), g.WN, g.WM, fc="C0", alpha=0.35))
    warps = (g.BM // g.WM) * (g.BN // g.WN)
    ax.set_title(f"block tile {g.BM} x {g.BN} of C:\n{warps} warp tiles of {g.WM} x {g.WN}",
                 fontsize=9)
    ax = axes[1]
    ax.set_xlim(0, g.WN); ax.set_ylim(g.WM, 0); ax.set_aspect("equal")
    lanes_n = g.sub_n // g.tn
    for i in range(g.WM // g.sub_m):
        for j in range(g.WN // g.sub_n):
            for lane in range(WARP):
                r = i * g.sub_m + g.tm * (lane // lanes_n)
                c = j * g.sub_n + g.tn * (lane % lanes_n)
                ax.add_patch(plt.Rectangle((c, r), g.tn, g.tm, fc="C1" if lane == 9 else "white",
                                           ec="grey", lw=0.4))
                if i == 0 and j == 0:
                    ax.text(c + g.tn / 2, r + g.tm / 2, str(lane), ha="center", va="center",
                            fontsize=5)
    ax.set_title(f"warp tile {g.WM} x {g.WN}: {g.sub_m} x {g.sub_n} sub-tiles,\nlane l owns the "
                 f"{g.tm} x {g.tn} block at ({g.tm}(l / {lanes_n}), {g.tn}(l % {lanes_n}))",
                 fontsize=9)
    ax.set_xticks([]); ax.set_yticks([])
    ax = axes[2]
    per_thread = (g.WM // g.sub_m) * (g.WN // g.sub_n)
    ax.axis("off")
    ax.text(0.0, 0.9, f"thread tile: lane 9's {per_thread} blocks of {g.tm} x {g.tn}\n"
            f"= {per_thread * g.tm * g.tn} accumulators in registers", fontsize=9, va="top")
    tm_total, tn_total = g.tm * (g.WM // g.sub_m), g.tn * (g.WN // g.sub_n)
    ax.text(0.0, 0.6, f"per k step: loads {tm_total} A + {tn_total} B values,\n"
            f"does {tm_total * tn_total} FMAs: {(tm_total + tn_total) / (tm_total * tn_total):.3f}"
            " loads per FMA", fontsize=9, va="top")
    ax.text(0.0, 0.25, f"per k step a block reads {g.BM + g.BN} words of\nits panels for "
            f"{g.BM * g.BN} FMAs", fontsize=9, va="top")
    fig.suptitle("Day 017's hierarchy: block tile -> warp tile -> thread tile", fontsize=10)
    fig.tight_layout()
    return fig


def fig_xor_swizzle(plt):
    colours = bank_colours(plt)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
    ax = axes[0]
    col = 5
    img = [[colours[bank_of_word(LAYOUTS["swizzled"](r * 32 + c))] for c in range(32)]
           for r in range(32)]
    ax.imshow(img, interpolation="nearest")
    ws = tile_column_swizzled_words(col)
    wf, _ = shared_request(words(ws))
    ax.add_patch(plt.Rectangle((col - 0.5, -0.5), 1, 32, fill=False, ec="k", lw=2))
    ax.set_title(f"words: (r, c) stored at r * 32 + (c ^ r)\nlogical column {col}: {wf} wavefront",
                 fontsize=9)
    ax.set_xlabel("logical column c"); ax.set_ylabel("row r")
    # 16-byte chunks: 8 chunks of a 128-byte row, chunk c of row r stored at chunk c ^ (r % 8)
    ax = axes[1]
    rows, chunks_per_row = 8, PHASE_BYTES // 16
    for sw, x0 in ((False, 0), (True, 10)):
        for r in range(rows):
            for c in range(chunks_per_row):
                phys = c ^ (r % 8) if sw else c
                ax.add_patch(plt.Rectangle((x0 + phys, r), 0.95, 0.95,
                                           fc=colours[4 * phys] if c == 0 else "#f2f2f2",
                                           ec="k", lw=0.3))
                if c == 0:
                    ax.text(x0 + phys + 0.47, r + 0.5, f"{4 * phys}-{4 * phys + 3}",
                            ha="center", va="center", fontsize=5.5)
        lane_bytes = [((r * chunks_per_row + ((0 ^ r) if sw else 0)) * 16, 16) for r in range(rows)]
        wf, _ = shared_request(lane_bytes)
        ax.text(x0 + 4, -0.6, ("swizzled: chunk c ^ r" if sw else "plain") +
                f": {wf} wavefront(s)", ha="center", fontsize=8)
    ax.set_xlim(-0.5, 18.5); ax.set_ylim(8.5, -1.5); ax.axis("off")
    ax.set_title("16-byte chunks (ldmatrix rows): chunk 0 of 8 rows, banks shown", fontsize=9)
    fig.tight_layout()
    return fig


def pipeline_schedule(k_tiles, latency, compute, stages):
    """Start and end of each k tile's load and compute. A load takes `latency` and several can
    be in flight at once (the memory system pipelines them); the load of tile i needs a free
    buffer, so with `stages` buffers it starts when tile i - stages has been computed. Tiles are
    computed in order, each when its data has arrived."""
    loads, comps = [], []
    for i in range(k_tiles):
        start = loads[-1][0] if loads else 0.0
        if i >= stages:
            start = max(start, comps[i - stages][1])
        loads.append((start, start + latency))
        cstart = max(loads[i][1], comps[-1][1] if comps else 0.0)
        comps.append((cstart, cstart + compute))
    return loads, comps


def fig_pipeline(plt):
    k_tiles, latency, compute = 6, 2.0, 1.0
    fig, axes = plt.subplots(3, 1, figsize=(9, 5.6), sharex=True)
    for ax, stages, title in zip(axes, (1, 2, 3), ("one buffer", "double buffering",
                                                   "three stages (cp.async)")):
        loads, comps = pipeline_schedule(k_tiles, latency, compute, stages)
        for i, (a, b) in enumerate(loads):
            row = 1 + i % stages
            ax.barh(row, b - a, left=a, color="C0", ec="k", lw=0.4, height=0.7)
            ax.text((a + b) / 2, row, f"load {i}", ha="center", va="center", fontsize=7,
                    color="w")
        for i, (a, b) in enumerate(comps):
            ax.barh(0, b - a, left=a, color="C2", ec="k", lw=0.4, height=0.7)
            ax.text((a + b) / 2, 0, f"C{i}", ha="center", va="center", fontsize=7)
        ax.set_yticks(range(stages + 1))
        ax.set_yticklabels(["compute"] + [f"buffer {b}" for b in range(stages)], fontsize=7)
        ax.set_title(f"{title}: {k_tiles} tiles done at {comps[-1][1]:g}", fontsize=9, loc="left")
    axes[-1].set_xlabel(f"time (a tile's load takes {latency:g} from issue to arrival, its "
                        f"compute {compute:g}; a buffer is free again once its tile is computed)")
    fig.tight_layout()
    return fig


def sgemm_ladder():
    """(day and kernel, 4-byte loads per FMA in the inner loop): a thread tile of tm x tn
    outputs loads tm A and tn B values per k for tm * tn FMAs."""
    per = lambda tm, tn: (tm + tn) / (tm * tn)
    return [("011 naive (global)", per(1, 1)), ("012 tiled", per(1, 1)),
            ("013 coarsened x4", per(4, 1)), ("013 blocktile 1D, TM=8", per(8, 1)),
            ("014 blocktile 2D, 8 x 8", per(8, 8)), ("015 vectorized, 8 x 8", per(8, 8)),
            ("017 warptile, 8 x 8", per(GEMM17.tm * 2, GEMM17.tn * 2))]


# An SM issues 4 warp-wide FP32 instructions (128 FMAs) per clock and its L1/shared memory serves
# one 128-byte wavefront per clock: 1 byte per FMA is what it can feed.
SM_FMA_PER_CLOCK, SM_SHARED_BYTES_PER_CLOCK = 128, PHASE_BYTES


def fig_sgemm_ladder(plt):
    ladder = sgemm_ladder()
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    names = [n for n, _ in ladder]
    bytes_per_fma = [4 * l for _, l in ladder]
    feed = SM_SHARED_BYTES_PER_CLOCK / SM_FMA_PER_CLOCK
    cap = [min(1.0, feed / b) for b in bytes_per_fma]
    ax.bar(range(len(ladder)), [100 * c for c in cap], color="C0")
    for i, (b, c) in enumerate(zip(bytes_per_fma, cap)):
        ax.text(i, 100 * c + 2, f"{b:.2g} B/FMA", ha="center", fontsize=7)
    ax.set_xticks(range(len(ladder))); ax.set_xticklabels(names, rotation=20, ha="right",
                                                            fontsize=7)
    ax.set_ylabel("model cap, % of FP32 peak"); ax.set_ylim(0, 115)
    ax.set_title(f"SGEMM ladder: bytes loaded per FMA vs the {feed:.0f} B/FMA an SM's L1/shared "
                 f"memory feeds ({SM_SHARED_BYTES_PER_CLOCK} B and {SM_FMA_PER_CLOCK} FMA per clock)",
                 fontsize=8.5)
    fig.tight_layout()
    return fig


FIGURES = {
    "grid_block_warp": fig_grid_block_warp,
    "warp_divergence": fig_warp_divergence,
    "sectors_coalescing": fig_sectors,
    "bank_conflicts_padding": fig_bank_conflicts,
    "reduction_tree": fig_reduction_tree,
    "occupancy_registers": fig_occupancy,
    "roofline_h100": fig_roofline,
    "gemm_tiling": fig_gemm_tiling,
    "xor_swizzle": fig_xor_swizzle,
    "pipeline_timeline": fig_pipeline,
    "sgemm_ladder": fig_sgemm_ladder,
}
MAX_FIGURE_BYTES = 150 * 1024


def draw_all(out):
    plt = setup_matplotlib()
    os.makedirs(out, exist_ok=True)
    paths = []
    for name, draw in FIGURES.items():
        fig = draw(plt)
        path = os.path.join(out, name + ".png")
        fig.savefig(path, metadata={"Software": None})
        plt.close(fig)
        paths.append(path)
    return paths


# ---- checks ------------------------------------------------------------------------------------
def check_models(paths):
    failures = []

    def expect(ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    for p in paths:
        size = os.path.getsize(p) if os.path.exists(p) else -1
        expect(0 < size <= MAX_FIGURE_BYTES, f"{os.path.basename(p)} drawn ({size} bytes)")
    for day in DAY_MODELS:
        args, results = evaluate_claims(day)
        versions = {k: v.namespace() for k, v in DAY_MODELS[day][0](parse_args(args)).items()}
        evaluated = [r for r in results if r[1] is not None]
        expect(len(evaluated) > 0, f"{day}: the model answers some of the lesson's claims")
        for expr, ok in results:
            if ok is None:
                print(f"skip  {day} [{args}]: {expr} (reads what the model does not compute)")
            else:
                expect(ok, f"{day} [{args}]: {expr}")
                if not ok:
                    print("      the model's counts: " + ", ".join(
                        f"{v}.{a} = {getattr(versions[v], a)}" for v, a in read_counts(expr)
                        if v in versions))
    # The roofline's arithmetic as the docs state it.
    r32 = ridge(H100.fp32_flops, H100.hbm_bytes_per_s)
    vector_add = roofline_points()[0][1]
    expect(round(r32) == 20, f"FP32 ridge {r32:.2f} FLOP/byte rounds to 20")
    expect(round(r32 / vector_add, -1) == 240,
           f"day001 sits {r32 / vector_add:.0f}x below the FP32 ridge (about 240)")
    # Occupancy: launch bounds (256, 8) need at most 32 registers a thread for 64 warps.
    expect(resident_warps(32, 256) == H100.warps_per_sm and resident_warps(33, 256) < 64,
           "256-thread blocks: 32 registers fill the SM, 33 do not")
    return failures


def emulated_metrics(command, env_extra):
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "metrics")
        env = dict(os.environ, GPU100_EMU_METRICS=log, **env_extra)
        env.setdefault("BUILD", os.path.dirname(os.path.abspath(os.path.dirname(command[0]))))
        run = subprocess.run([os.path.join(ROOT, "scripts", "emulate")] + command, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if run.returncode != 0:
            sys.stdout.write(run.stdout[-3000:])
            raise RuntimeError(f"{' '.join(command)} exited with {run.returncode}")
        launches = []
        for line in open(log):
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            launches.append(fields)
        return launches


def emulated_report(command):
    """The --json report of an emulated run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        emulated_metrics(command + ["--json", out], {})
        with open(out) as f:
            return json.load(f)


def table_column(report, title, name):
    """A column of the report's table whose title (after the emulated mark) starts with title."""
    for t in report.get("tables", []):
        if t["title"].split("] ", 1)[-1].startswith(title):
            i = t["columns"].index(name)
            return [int(x) if isinstance(x, float) and x.is_integer() else x for x in
                    (row[i] for row in t["rows"])]
    raise KeyError(f"no table titled {title!r}")


def check_emulator(bin_dir):
    """The model's counts against the emulator's, launch by launch."""
    failures = []

    def expect(ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    keys = ("global_load_requests", "global_load_sectors", "global_store_requests",
            "global_store_sectors")
    n = 4099
    model = day001({"n": n})["naive"]
    for launch in emulated_metrics([os.path.join(bin_dir, "day001"), "--n", str(n), "--kernel",
                                    "naive", "--iters", "1", "--warmup", "0"], {}):
        if "add_naive" not in launch.get("kernel", ""):
            continue
        for k in keys + ("branches", "divergent_branches"):
            expect(int(launch[k]) == getattr(model, k),
                   f"day001 naive n={n}: {k} emulated {launch[k]}, model {getattr(model, k)}")
    n = 4096
    for version in DAY025_PATTERNS:
        model = day025({"n": n})[version]
        runs = emulated_metrics([os.path.join(bin_dir, "day025"), "--n", str(n), "--kernel",
                                 version, "--iters", "1", "--warmup", "0"], {})
        for launch in runs:
            if "sum_strided" not in launch.get("kernel", ""):
                continue
            for k in keys[:2]:
                expect(int(launch[k]) == getattr(model, k),
                       f"day025 {version} n={n}: {k} emulated {launch[k]}, "
                       f"model {getattr(model, k)}")
    # day007's trees do not depend on n (out-of-range threads add zeros): per block, the model's
    # counts for every launch, the partials' pass included.
    per_block = day007({})
    shared_keys = ("divergent_branches", "shared_load_requests", "shared_load_wavefronts",
                   "shared_store_requests", "shared_store_wavefronts")
    runs = emulated_metrics([os.path.join(bin_dir, "day007"), "--n", "65536", "--kernel",
                             ",".join(per_block), "--iters", "1", "--warmup", "0"], {})
    seen = set()
    for launch in runs:
        for version, m in per_block.items():
            if f"reduce_{version}E" not in launch.get("kernel", ""):
                continue
            blocks = int(launch["blocks"])
            seen.add(version)
            for k in shared_keys:
                expect(int(launch[k]) == blocks * getattr(m, k),
                       f"day007 {version}, {blocks} blocks: {k} emulated {launch[k]}, "
                       f"model {blocks} x {getattr(m, k)}")
    expect(seen == set(per_block), f"day007: launches of {sorted(per_block)} found")
    # day026 runs its baseline beside every version, so its launches mix patterns: compare with
    # its report instead, whose tables give the emulated wavefronts of each pattern alone.
    report = emulated_report([os.path.join(bin_dir, "day026"), "--trips", "1", "--iters", "1",
                              "--warmup", "0"])
    layouts = table_column(report, "tile layouts", "emulated wavefronts/access")
    fixed = source_constant("day026/shared_memory_banks.cu", "kFixed")
    model = [shared_request(words(ws))[0] for ws in (
        [fixed * 32 + k for k in range(WARP)], tile_column_words(fixed, 32),
        tile_column_words(fixed, 33), tile_column_swizzled_words(fixed), [fixed] * WARP)]
    expect(layouts == model, f"day026 tile layouts (row, column, padded, swizzled, broadcast): "
                             f"emulated {layouts}, model {model}")
    columns = day026_columns({})
    for (title, name), values in columns.items():
        emulated = table_column(report, title, name)
        expect(emulated == values, f"day026 {title}, {name}: emulated {emulated}, model {values}")
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    p.add_argument("--check", action="store_true", help="check the models (exit 1 on a mismatch)")
    p.add_argument("--emulator", metavar="BIN_DIR",
                   help="with --check: also compare with emulated runs of the days in BIN_DIR")
    a = p.parse_args()
    paths = draw_all(a.out)
    if not a.check:
        for path in paths:
            print(path)
        return 0
    failures = check_models(paths)
    if a.emulator:
        failures += check_emulator(a.emulator)
    print(f"figures: {len(failures)} failure(s)" if failures else "figures: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
