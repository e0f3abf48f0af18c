// Day 030 - streams and copy/compute overlap: hiding PCIe transfers behind a kernel
//
// Data that lives on the host crosses PCIe twice (host to device, back again), at some tens of
// GB/s - a hundred times slower than HBM. A program that copies the whole array in, runs the
// kernel, and copies the whole array out leaves the GPU idle during both copies and the copy
// engines idle during the kernel. Split the array into chunks and give the chunks to several
// CUDA streams, and chunk k+1 can travel to the device while chunk k is computed and chunk k-1
// travels back: with two copy engines (one per direction) and the SMs all busy at once, the total
// time tends to the longest of the three stages instead of their sum.
//
// What it needs: page-locked (pinned) host memory - cudaMemcpyAsync from pageable memory goes
// through a staging buffer and does not overlap with anything - and non-default streams. The
// host buffers here are gpu100::PinnedBuffer (cudaMallocHost); the copy-rate table also times
// pageable copies to show the difference.
//
// The kernel: each element of a uint32 array goes through `work` steps of a linear congruential
// generator, x = 1664525 x + 1013904223 (mod 2^32). The number of steps sets the compute time;
// by default (--work 0) it is calibrated at run time so that the kernel takes about as long as
// the host-to-device copy of the array, the case where overlap has the most to gain. The stage
// times measured alone (H2D, kernel, D2H) are printed, so the reader sees the balance.
//
// Versions (all move the same 4n bytes in and 4n bytes out)
//   serial      one stream, the whole array: H2D copy, kernel, D2H copy, one after the other.
//   streams_N   --chunks chunks (default 16), chunk c on stream c % N, each chunk issued as
//               H2D -> kernel -> D2H in its stream (N = 1, 2, 4, 8). N = 1 is chunked but
//               serialized: it shows that chunks alone overlap nothing.
//
// The rate is (H2D bytes + D2H bytes) / time in GB/s. The limit is the host link, not the GPU:
// the baseline is a plain pinned cudaMemcpy H2D of the whole array measured in the same run
// ("x pinned H2D"; a pipeline that keeps both directions busy can approach 2x, since PCIe is full
// duplex), and the sweep table gives each configuration's speedup over serial and its time as a
// percentage of the overlap bound: the longest stage alone (with two or more copy engines; with
// one, H2D + D2H share it).
//
// Check: exact. The CPU applies the same steps in closed form: `work` steps of x -> a x + c are
// one map x -> A x + C with A = a^work, C = c (a^(work-1) + ... + 1) mod 2^32, so the reference
// costs one multiply-add per element whatever the work.
//
// Run:  build/bin/day030 [--n 67108867] [--chunks 16] [--work 0] [--kernel serial,streams_4]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"
#include "gpu100/stream.h"

namespace {

using gpu100::Event;
using gpu100::Stream;

constexpr uint32_t kLcgMul = 1664525u;  // Numerical Recipes' LCG (Knuth, TAOCP vol. 2)
constexpr uint32_t kLcgAdd = 1013904223u;
constexpr int kBlock = 256;
constexpr int kMaxWork = 1 << 16;
constexpr int kCalibrationWork = 1024;  // long enough that the kernel is bound by its arithmetic

// ---- CPU reference ------------------------------------------------------------------------------
// x -> A x + C, the composition of `work` LCG steps (all arithmetic mod 2^32).
struct AffineMap {
  uint32_t a = 1, c = 0;
};
AffineMap lcg_power(int work) {
  AffineMap m;
  for (int s = 0; s < work; ++s) {  // f_{k+1}(x) = mul f_k(x) + add
    m.a = m.a * kLcgMul;
    m.c = m.c * kLcgMul + kLcgAdd;
  }
  return m;
}

// ---- kernels ------------------------------------------------------------------------------------
// One thread per element (grid-stride so any length fits the grid). The loop is a dependent chain
// of integer multiply-adds; with thousands of threads per SM the chains run side by side at the
// IMAD rate. The multiplier and addend come in as arguments on purpose: as compile-time constants
// the compiler unrolls the loop by 4 and folds the 4 steps into one multiply-add by a^4 (the
// composition of affine maps is affine), doing a quarter of the work the step count says.
__global__ void __launch_bounds__(kBlock)
    lcg_steps(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, int64_t n, int work,
              uint32_t mul, uint32_t add) {
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    uint32_t x = in[i];
    for (int s = 0; s < work; ++s) x = x * mul + add;
    out[i] = x;
  }
}

// ---- launchers: the pipeline --------------------------------------------------------------------
// Events of one chunk, for the timeline: when its stream reached the H2D copy, and when the copy,
// the kernel and the D2H copy finished. (A stream reaches a copy when its previous work is done;
// the copy may still wait there for the copy engine, so "H2D start" is an upper bound on the
// idle time before it, not the moment bytes began to move.)
struct ChunkEvents {
  Event h2d_start{true}, h2d_end{true}, kernel_end{true}, d2h_end{true};
};

struct Pipeline {
  const uint32_t* h_in;
  uint32_t* h_out;
  uint32_t* d_in;
  uint32_t* d_out;
  int64_t n;
  int work;
  int max_grid;

  unsigned grid(int64_t len) const {
    return unsigned(std::min<int64_t>(gpu100::ceil_div<int64_t>(len, kBlock), max_grid));
  }

  // H2D, kernel, D2H of elements [begin, begin + len) on stream s.
  void chunk(cudaStream_t s, int64_t begin, int64_t len, ChunkEvents* ev) const {
    const size_t bytes = size_t(len) * sizeof(uint32_t);
    if (ev) CUDA_CHECK(cudaEventRecord(ev->h2d_start.get(), s));
    CUDA_CHECK(cudaMemcpyAsync(d_in + begin, h_in + begin, bytes, cudaMemcpyHostToDevice, s));
    if (ev) CUDA_CHECK(cudaEventRecord(ev->h2d_end.get(), s));
    lcg_steps<<<grid(len), kBlock, 0, s>>>(d_in + begin, d_out + begin, len, work, kLcgMul,
                                           kLcgAdd);
    LAUNCH_CHECK();
    if (ev) CUDA_CHECK(cudaEventRecord(ev->kernel_end.get(), s));
    CUDA_CHECK(cudaMemcpyAsync(h_out + begin, d_out + begin, bytes, cudaMemcpyDeviceToHost, s));
    if (ev) CUDA_CHECK(cudaEventRecord(ev->d2h_end.get(), s));
  }

  void serial(cudaStream_t s) const { chunk(s, 0, n, nullptr); }

  // Chunk c covers [c n / chunks, (c + 1) n / chunks): sizes differ by at most one element, and
  // when n < chunks some chunks are empty (skipped: a grid of 0 blocks is a launch error).
  // The workers wait for `fork` (recorded on s), and s waits for every worker's `join`, so the
  // caller's events on s bracket the whole pipeline.
  void pipelined(cudaStream_t s, const std::vector<Stream>& workers, int chunks, const Event& fork,
                 const std::vector<Event>& joins, std::vector<ChunkEvents>* timeline) const {
    const int count = int(workers.size());
    CUDA_CHECK(cudaEventRecord(fork.get(), s));
    for (int w = 0; w < count; ++w)
      CUDA_CHECK(cudaStreamWaitEvent(workers[size_t(w)].get(), fork.get(), 0));
    for (int c = 0; c < chunks; ++c) {
      const int64_t begin = int64_t(c) * n / chunks, end = int64_t(c + 1) * n / chunks;
      if (end == begin) continue;
      chunk(workers[size_t(c % count)].get(), begin, end - begin,
            timeline ? &(*timeline)[size_t(c)] : nullptr);
    }
    for (int w = 0; w < count; ++w) {
      CUDA_CHECK(cudaEventRecord(joins[size_t(w)].get(), workers[size_t(w)].get()));
      CUDA_CHECK(cudaStreamWaitEvent(s, joins[size_t(w)].get(), 0));
    }
  }
};

struct Version {
  const char* name;
  int streams;  // 0: serial (one stream, the whole array)
};
const Version kVersions[] = {
    {"serial", 0}, {"streams_1", 1}, {"streams_2", 2}, {"streams_4", 4}, {"streams_8", 8},
};

// The versions' streams and events, made once: per version its worker streams (serial: none).
struct Streams {
  Streams() {
    for (const Version& v : kVersions) workers.emplace_back(size_t(v.streams));
  }
  std::vector<std::vector<Stream>> workers;
  Event fork;
  std::vector<Event> joins = std::vector<Event>(8);
};

// One run of version i; with a timeline, its chunks' events are recorded there.
void launch(const Pipeline& pipe, Streams& st, size_t i, int chunks,
            std::vector<ChunkEvents>* timeline, cudaStream_t s) {
  if (kVersions[i].streams == 0)
    pipe.serial(s);
  else
    pipe.pipelined(s, st.workers[i], chunks, st.fork, st.joins, timeline);
}

// ---- analysis -----------------------------------------------------------------------------------
// The stages of the pipeline, each alone over the whole array, and the copies it does not use.
struct Stages {
  gpu100::Stats h2d, d2h, both, h2d_pageable, d2h_pageable, kernel;
};

// The LCG steps per element that make the kernel take about as long as the H2D copy, from the
// time of a kCalibrationWork-step run.
int calibrated_work(double h2d_ms, double calibration_ms) {
  const double scaled = kCalibrationWork * h2d_ms / std::max(calibration_ms, 1e-6);
  return int(std::clamp(std::lround(scaled), 1L, long(kMaxWork)));
}

// The overlap bound: the pipeline cannot finish before its longest stage. With one copy engine
// the two directions take turns on it.
double overlap_bound_ms(const Stages& t, int engines) {
  return engines >= 2 ? std::max({t.h2d.median_ms, t.kernel.median_ms, t.d2h.median_ms})
                      : std::max(t.h2d.median_ms + t.d2h.median_ms, t.kernel.median_ms);
}

// Every stage alone over the whole array, the copies the pipeline does not use too. The baseline
// H2D copy leaves the input on the device for the kernel timings; with work 0 the kernel is first
// calibrated against it. Host-side copies: flushing L2 between repeats would change nothing but
// add a kernel.
Stages stage_times(gpu100::Context& ctx, Pipeline& pipe, gpu100::DeviceBuffer<uint32_t>& d_in,
                   int& work) {
  const size_t bytes = size_t(pipe.n) * sizeof(uint32_t);
  auto copy = [bytes](void* dst, const void* src, cudaMemcpyKind kind) {
    return [=](cudaStream_t s) { CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s)); };
  };
  auto stage = [&](std::string name, std::function<void(cudaStream_t)> run, double moved) {
    return ctx.measure({.name = std::move(name),
                        .launch = std::move(run),
                        .work = moved,
                        .role = gpu100::Role::point,
                        .flush_l2 = false})
        .time;
  };
  const auto h2d = copy(pipe.d_in, pipe.h_in, cudaMemcpyHostToDevice);
  const auto d2h = copy(pipe.h_out, pipe.d_out, cudaMemcpyDeviceToHost);
  auto kernel_alone = [&](cudaStream_t s) {
    lcg_steps<<<pipe.grid(pipe.n), kBlock, 0, s>>>(pipe.d_in, pipe.d_out, pipe.n, pipe.work,
                                                   kLcgMul, kLcgAdd);
    LAUNCH_CHECK();
  };
  Stages t;
  t.h2d = ctx.measure({.name = "pinned H2D cudaMemcpy",
                       .launch = h2d,
                       .reset = [&] { d_in.poison(); },
                       .check =
                           [&] {
                             return gpu100::compare_exact(d_in.download().data(), pipe.h_in,
                                                          size_t(pipe.n));
                           },
                       .work = double(bytes),
                       .role = gpu100::Role::baseline,
                       .flush_l2 = false})
              .time;
  if (work == 0) {
    pipe.work = kCalibrationWork;
    work = calibrated_work(t.h2d.median_ms, stage("calibration", kernel_alone, 0).median_ms);
    ctx.report().note(fmt::format("--work 0: calibrated to {} LCG steps per element so that the "
                                  "kernel alone takes about as long as the H2D copy (from a "
                                  "{}-step run)",
                                  work, kCalibrationWork));
  }
  pipe.work = work;
  t.kernel = stage("kernel alone", kernel_alone, 2.0 * double(bytes));
  t.d2h = stage("D2H", d2h, double(bytes));
  // Both directions at once (two streams): what PCIe's full duplex gives when it is used.
  Stream side_a, side_b;
  Event fork, join_a, join_b;
  t.both = stage(
      "H2D + D2H",
      [&](cudaStream_t s) {
        CUDA_CHECK(cudaEventRecord(fork.get(), s));
        CUDA_CHECK(cudaStreamWaitEvent(side_a.get(), fork.get(), 0));
        CUDA_CHECK(cudaStreamWaitEvent(side_b.get(), fork.get(), 0));
        h2d(side_a.get());
        d2h(side_b.get());
        CUDA_CHECK(cudaEventRecord(join_a.get(), side_a.get()));
        CUDA_CHECK(cudaEventRecord(join_b.get(), side_b.get()));
        CUDA_CHECK(cudaStreamWaitEvent(s, join_a.get(), 0));
        CUDA_CHECK(cudaStreamWaitEvent(s, join_b.get(), 0));
      },
      2.0 * double(bytes));
  // Pageable memory: the driver copies through its own pinned staging buffer, chunk by chunk,
  // and the call returns only when the data is staged - no overlap with anything.
  std::vector<uint32_t> pageable(size_t(pipe.n), 1u);
  t.h2d_pageable = stage("H2D pageable",
                         copy(pipe.d_in, pageable.data(), cudaMemcpyHostToDevice), double(bytes));
  t.d2h_pageable = stage("D2H pageable",
                         copy(pageable.data(), pipe.d_out, cudaMemcpyDeviceToHost), double(bytes));
  return t;
}

gpu100::Table stage_table(const Stages& t, size_t bytes) {
  gpu100::Table table{fmt::format("stages alone, whole array ({} bytes each way)", bytes),
                      {"stage", "median ms", "GB/s"},
                      {}};
  auto row = [&](const char* name, const gpu100::Stats& s, double b) {
    table.add_row({name, s.median_ms, gpu100::gbps(b, s.median_ms)});
  };
  row("H2D pinned", t.h2d, double(bytes));
  row("D2H pinned", t.d2h, double(bytes));
  row("H2D + D2H at once, pinned (2 streams)", t.both, 2.0 * double(bytes));
  row("H2D pageable", t.h2d_pageable, double(bytes));
  row("D2H pageable", t.d2h_pageable, double(bytes));
  row("kernel alone (GB/s: 8 bytes/element)", t.kernel, 2.0 * double(bytes));
  return table;
}

// One row per pipelined version that ran: its time, rate, speedup over serial and the bound.
gpu100::Table streams_table(int chunks, const std::vector<gpu100::Measured>& rs, double bound_ms) {
  gpu100::Table t{fmt::format("overlap vs number of streams ({} chunks)", chunks),
                  {"streams", "median ms", "GB/s (H2D+D2H)", "speedup vs serial",
                   "% of overlap bound"},
                  {}};
  const double serial_ms = rs[0].ran ? rs[0].time.median_ms : 0.0;
  for (size_t i = 1; i < rs.size(); ++i) {
    if (!rs[i].ran) continue;
    const double ms = rs[i].time.median_ms;
    t.add_row({kVersions[i].streams, ms, rs[i].rate,
               serial_ms > 0 ? gpu100::Cell(serial_ms / ms) : gpu100::Cell("-"),
               100.0 * bound_ms / ms});
  }
  return t;
}

// One run of version i with the events of every chunk recorded, checked like every run; the
// table lists the events of its last timed run, at most kTimelineRows chunks (a timeline is read
// by eye, and the pattern repeats after the first few rounds of the streams).
constexpr int kTimelineRows = 32;
void timeline_run(gpu100::Context& ctx, const Pipeline& pipe, Streams& st, size_t i, int chunks,
                  const std::function<void()>& reset,
                  const std::function<gpu100::CheckResult()>& check) {
  std::vector<ChunkEvents> timeline(static_cast<size_t>(chunks));
  Event origin(true);
  const auto r = ctx.measure({.name = "timeline",
                              .launch =
                                  [&](cudaStream_t s) {
                                    CUDA_CHECK(cudaEventRecord(origin.get(), s));
                                    launch(pipe, st, i, chunks, &timeline, s);
                                  },
                              .reset = reset,
                              .check = check,
                              .role = gpu100::Role::point,
                              .flush_l2 = false});
  ctx.report().add_check(fmt::format("timeline run ({})", kVersions[i].name), r.check);

  const int streams = kVersions[i].streams;
  gpu100::Table t{fmt::format("timeline of one run with {} streams (ms after the first event; "
                              "each stage starts when the one before it in its stream ends, H2D "
                              "when the stream reaches it)",
                              streams),
                  {"chunk", "stream", "H2D start ms", "H2D end ms", "kernel end ms", "D2H end ms"},
                  {}};
  auto since = [&](const Event& e) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, origin.get(), e.get()));
    return double(ms);
  };
  int listed = 0, nonempty = 0;
  for (int c = 0; c < chunks; ++c) {
    if (int64_t(c + 1) * pipe.n / chunks == int64_t(c) * pipe.n / chunks) continue;  // empty
    if (++nonempty > kTimelineRows) continue;
    const auto& ev = timeline[size_t(c)];
    t.add_row({c, c % streams, since(ev.h2d_start), since(ev.h2d_end), since(ev.kernel_end),
               since(ev.d2h_end)});
    ++listed;
  }
  if (listed < nonempty)
    ctx.report().note(
        fmt::format("timeline: the first {} of {} chunks are listed", listed, nonempty));
  ctx.report().table(std::move(t));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("copy/compute overlap: chunked H2D -> kernel -> D2H over 1..8 streams vs serial, "
                  "pinned host memory");
  int64_t n = (int64_t(1) << 26) + 3;
  int chunks = 16;
  int work = 0;
  cli.size("n", n, 1'000'003, "number of uint32 elements", int64_t(1) << 30);
  cli.option("chunks", chunks, "chunks the pipelined versions split the array into", 1, 4096);
  cli.option("work", work, "LCG steps per element (0: calibrate so kernel time ~ H2D time)", 0,
             kMaxWork);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 2.0 * double(n) * sizeof(uint32_t); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const size_t count = size_t(n);
    const size_t bytes = count * sizeof(uint32_t);
    const double moved = 2.0 * double(bytes);  // H2D + D2H
    report.problem("n", double(n));
    report.problem("chunks", double(chunks));
    report.unit("GB/s");

    gpu100::PinnedBuffer<uint32_t> h_in(count), h_out(count);
    for (size_t i = 0; i < count; ++i)
      h_in[i] = uint32_t(gpu100::mix64(ctx.seed() * 0x9E3779B97F4A7C15ull + i) >> 32);
    gpu100::DeviceBuffer<uint32_t> d_in(count), d_out(count);
    const int max_grid = ctx.device().max_grid_x;
    Pipeline pipe{h_in.data(), h_out.data(), d_in.data(), d_out.data(), n, 0, max_grid};

    // ---- the stages alone, the overlap bound --------------------------------------------------
    const Stages t = stage_times(ctx, pipe, d_in, work);
    report.problem("work", double(work));
    report.table(stage_table(t, bytes));
    int engines = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&engines, cudaDevAttrAsyncEngineCount, ctx.device().id));
    const double bound_ms = overlap_bound_ms(t, engines);
    report.note(fmt::format("copy engines: {}; overlap bound = longest stage{} = {:.3f} ms; serial "
                            "sum of the stages = {:.3f} ms",
                            engines, engines >= 2 ? "" : " (H2D + D2H share one engine)", bound_ms,
                            t.h2d.median_ms + t.kernel.median_ms + t.d2h.median_ms));
    report.note("GB/s = (H2D bytes + D2H bytes) / time; baseline = pinned H2D cudaMemcpy of the "
                "array (one direction), so a pipeline using both directions can exceed 1x");

    // ---- the versions -------------------------------------------------------------------------
    const AffineMap map = lcg_power(work);
    std::vector<uint32_t> ref(count);
    for (size_t i = 0; i < count; ++i) ref[i] = map.a * h_in[i] + map.c;
    auto reset = [&] {
      d_in.poison();
      d_out.poison();
      std::memset(h_out.data(), 0xFF, bytes);
    };
    auto check = [&] { return gpu100::compare_exact(h_out.data(), ref.data(), count); };
    Streams streams;
    std::vector<gpu100::Measure> runs;
    for (size_t i = 0; i < std::size(kVersions); ++i)
      runs.push_back({.name = kVersions[i].name,
                      .launch =
                          [&, i](cudaStream_t s) {
                            launch(pipe, streams, i, chunks, nullptr, s);
                          },
                      .reset = reset,
                      .check = check,
                      .work = moved,
                      .flush_l2 = false});
    const auto rs = ctx.measure_all(runs);
    if (std::any_of(rs.begin() + 1, rs.end(), [](const auto& r) { return r.ran; }))
      report.table(streams_table(chunks, rs, bound_ms));

    // ---- one configuration's timeline: 4 streams, else the most that ran ----------------------
    size_t shown = 0;
    for (size_t i = 1; i < rs.size(); ++i)
      if (rs[i].ran && shown != 3) shown = i;
    if (shown > 0) timeline_run(ctx, pipe, streams, shown, chunks, reset, check);
  });
}
