#!/usr/bin/env python3
"""Tests of the emulator's debugging options (scripts/emulate --trace, --watch, --access-map, the
failed-check hint), run by ctest (emu/tests/debug/CMakeLists.txt):

    debug_test.py CASE PROGRAM [HINT_PROGRAM]

Each case runs PROGRAM (trace_five.cu, or hint_check.cu) through scripts/emulate and checks the
output against what the program's source says: the instructions of a kernel, the value a store
writes, the thread that writes it, the line it is on. Addresses come from the program itself (it
prints its device pointers), never from an earlier run of the emulator.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
EMULATE = os.path.join(ROOT, "scripts", "emulate")
SOURCE = os.path.join(HERE, "trace_five.cu")


def run(args, expect_rc=0):
    p = subprocess.run([EMULATE] + args, capture_output=True, text=True, timeout=120)
    if p.returncode != expect_rc:
        fail("`%s` exited with %d, expected %d\nstdout:\n%s\nstderr:\n%s" %
             (" ".join(args), p.returncode, expect_rc, p.stdout, p.stderr))
    return p.stdout, p.stderr


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def expect(cond, why, text=""):
    if not cond:
        fail(why + ("\n--- output ---\n" + text if text else ""))


def marker_line(marker, path=SOURCE):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if marker in line:
                return n
    fail("no %s in %s" % (marker, path))


def pointers(stdout):
    return {m.group(1): int(m.group(2), 16) for m in re.finditer(r"^(\w+) (0x[0-9a-f]+)$", stdout, re.M)}


def case_trace(prog):
    """k_five (out[1] = v, v = 20) is five PTX instructions; each is listed with what it wrote."""
    out, err = run(["--trace", "k_five", prog, "five"])
    out_ptr = pointers(out)["out"]
    line = marker_line("__global__ void k_five")
    steps = re.findall(r"^  (\d+)  trace_five\.cu:(\d+)  (\S+)", err, re.M)
    ops = [s[2] for s in steps]
    expect(ops == ["ld.param.u64", "ld.param.u32", "cvta.to.global.u64", "st.global.u32", "ret;"],
           "the trace lists %s" % ops, err)
    expect([int(s[0]) for s in steps] == [1, 2, 3, 4, 5], "instructions not numbered 1..5", err)
    expect(all(int(s[1]) == line for s in steps), "an instruction not at trace_five.cu:%d" % line, err)
    expect(re.search(r"^        %%rd1 = 0x%x \(" % out_ptr, err, re.M), "the pointer parameter is not shown", err)
    expect(re.search(r"^        %r1 = 20$", err, re.M), "the value parameter (20) is not shown", err)
    store = r"^        store 0x%x \(4 bytes into a cudaMalloc allocation of 400 bytes at 0x%x\): \d+ -> 20$" % (
        out_ptr + 4, out_ptr)
    expect(re.search(store, err, re.M), "the store of 20 at out + 4 is not shown", err)
    expect("end of the trace: 5 instructions" in err, "the trace does not end after 5 instructions", err)
    # The same thread of another launch index does not exist: refused.
    _, err = run(["--trace", "k_five,launch=2", prog, "five"], expect_rc=2)
    expect("never a launch 2" in err, "launch=2 of a kernel launched once is not refused", err)


def case_watch(prog):
    """out[37] is written once, by thread 37 with the planted value 1000."""
    out, _ = run([prog, "fill"])
    out_ptr = pointers(out)["out"]
    target = out_ptr + 37 * 4
    out, err = run(["--watch", "0x%x:4" % target, prog, "fill"])
    expect(pointers(out)["out"] == out_ptr, "device addresses differ between two runs", out)
    stores = [l for l in err.splitlines() if l.startswith("gpu100 emulator: watch ")]
    kernel = [l for l in stores if "by kernel" in l]
    expect(len(kernel) == 1, "%d kernel stores reported, expected 1" % len(kernel), err)
    want = (r"^gpu100 emulator: watch 0x%x \(148 bytes into a cudaMalloc allocation of 400 bytes at 0x%x\): "
            r"store by kernel k_fill \(launch 1\), block \(0,0,0\) thread \(37,0,0\), 'st\.global\.[bsu]32 [^']*' "
            r"at trace_five\.cu:%d: \d+ -> 1000$") % (target, out_ptr, marker_line("out[i] = v;"))
    expect(re.match(want, kernel[0]), "the report does not name thread 37's store of 1000", err)
    # --watch-reads: the loads of in[2] by k_halves, after the host's upload of it.
    out, err = run([prog, "halves"])
    in_ptr = pointers(out)["in"]
    _, err = run(["--watch", "0x%x" % (in_ptr + 8), "--watch-reads", prog, "halves"])
    expect(re.search(r"watch 0x%x [^\n]*: cudaMemcpy by the host \(before launch 1\): 0xffffffff -> 0x00000002$" %
                     (in_ptr + 8), err, re.M), "the host's upload of in[2] = 2 is not reported", err)
    loads = re.findall(r"load by kernel k_halves \(launch 1\), block \(0,0,0\) thread \((\d+),0,0\)[^\n]*: reads 2$",
                       err, re.M)
    # in[2] is read by lanes 2..15 (their prefix sums) and by none of the upper half.
    expect(sorted(set(int(t) for t in loads)) == list(range(2, 16)),
           "the loads of in[2] come from threads %s, expected 2..15" % sorted(set(loads)), err)


def case_divergence(prog):
    """Warp 0 of k_halves splits 16/16 at the branch and runs as one warp again before the store."""
    _, err = run(["--trace", "k_halves,warp=0", "--trace-limit", "1", prog, "halves"])
    summary = err[err.index("divergence of warp 0"):] if "divergence of warp 0" in err else ""
    expect(summary, "no divergence summary", err)
    first = re.search(r"split at trace_five\.cu:(\d+) '[^']*bra[^']*':\n    ([T.]{32}) jump to [^\n]*\n    ([F.]{32}) "
                      r"fall through", summary)
    expect(first, "no split in the summary", err)
    expect(int(first.group(1)) == marker_line("if (lane < 16)"), "the first split is not at the if", err)
    sides = {first.group(2).replace("T", "#"), first.group(3).replace("F", "#")}
    expect(sides == {"#" * 16 + "." * 16, "." * 16 + "#" * 16}, "the first split is not lanes 0-15 / 16-31", err)
    meets = re.findall(r"meet at [^\n]*:\n    ([a-z.]{32}) run together again", summary)
    expect(meets and "." not in meets[-1], "the warp never runs as a whole again", err)


def case_refusals(prog):
    _, err = run(["--trace", "k_nosuch", prog, "five"], expect_rc=2)
    expect(re.search(r"--trace: the program has no kernel 'k_nosuch'; its kernels: k_fill, k_five, k_halves", err),
           "an unknown kernel is not refused clearly", err)
    _, err = run(["--trace", "k_five,block=0.1", prog, "five"], expect_rc=2)
    expect("--trace: block (0,1,0) is outside the grid (1,1,1) of launch 1 of k_five" in err,
           "a block outside the grid is not refused clearly", err)
    _, err = run(["--access-map", "k_fill,block=9", prog, "fill"], expect_rc=2)
    expect("--access-map: block (9,0,0) is outside the grid (2,1,1)" in err,
           "a block outside the grid is not refused clearly (access map)", err)
    _, err = run(["--watch", "0x10", prog, "fill"], expect_rc=2)
    expect("--watch: 0x10:4 was never inside an allocation of the program" in err,
           "an address outside every allocation is not refused clearly", err)
    _, err = run(["--watch", "0x12:zz", prog, "fill"], expect_rc=2)
    expect("--watch: cannot read '0x12:zz'" in err, "a malformed watch is not refused clearly", err)
    _, err = run(["--trace", "k_five,warp=1,thread=0", prog, "five"], expect_rc=2)
    expect("give thread= or warp=, not both" in err, "thread= with warp= is not refused", err)
    _, err = run(["--no-such-option", prog], expect_rc=2)
    expect("unknown option '--no-such-option'" in err, "an unknown option is not refused", err)


def case_access_map(prog):
    """k_fill's block 1 (threads 64..99 write out[64..99], the rest return): a text map."""
    out, _ = run([prog, "fill"])
    out_ptr = pointers(out)["out"]
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "debug_test_map_%d" % os.getpid())
    _, err = run(["--access-map", "k_fill,block=1", "--access-map-out", tmp, prog, "fill"])
    with open(tmp + ".txt") as f:
        text = f.read()
    accesses = re.findall(r"^access \d+ W 1 (\d+) 4 (\d+) (\d+)$", text, re.M)
    expect(re.search(r"^region 1 global 0x%x 400 a cudaMalloc allocation$" % out_ptr, text, re.M),
           "the map does not name the output allocation", text)
    got = sorted((int(o), int(w) * 32 + int(l)) for o, w, l in accesses)
    expect(got == [(4 * i, i - 64) for i in range(64, 100)],
           "the map's stores are not thread t -> out[64 + t] for t < 36", text)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "access_map.py"), tmp + ".txt", "--text"],
                       capture_output=True, text=True)
    expect(p.returncode == 0 and re.search(r"^    64 \| a 0 a 1 a 2", p.stdout, re.M),
           "the text grid does not start out[64] with lanes 0, 1, 2 of warp 0", p.stdout + p.stderr)
    for ext in (".txt", ".png"):
        if os.path.exists(tmp + ext):
            os.remove(tmp + ext)


def case_hint(prog):
    """A failed check prints the command that watches the first wrong element; running it names
    the planted store."""
    p = subprocess.run([EMULATE, prog, "--n", "300"], capture_output=True, text=True, timeout=120)
    expect(p.returncode == 1, "the planted bug did not fail the check (exit %d)" % p.returncode, p.stdout + p.stderr)
    both = p.stdout + p.stderr
    m = re.search(r"^  (scripts/emulate --watch (0x[0-9a-f]+):4 \S+ --n 300)$", both, re.M)
    expect(m, "no re-run command in the report", both)
    args = m.group(1).split()[1:]
    args[2] = prog
    _, err = run(args, expect_rc=1)
    planted = marker_line("PLANTED", os.path.join(HERE, "hint_check.cu"))
    want = (r"watch %s [^\n]*: store by kernel k_offset \(launch 1\), block \(1,0,0\) thread \(17,0,0\), "
            r"'st\.global\.f32 [^']*' at hint_check\.cu:%d: [^\n]* -> ") % (m.group(2), planted)
    expect(re.search(want, err), "the watch does not name the planted store", err)


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[3])
        return 2
    case, prog = sys.argv[1], sys.argv[2]
    globals()["case_" + case](prog)
    print("ok: " + case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
