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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
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
const int kStreamCounts[] = {1, 2, 4, 8};

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

// ---- the pipeline ------------------------------------------------------------------------------
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
    for (int w = 0; w < count; ++w) CUDA_CHECK(cudaStreamWaitEvent(workers[size_t(w)].get(), fork.get(), 0));
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
  cli.kernels({"serial", "streams_1", "streams_2", "streams_4", "streams_8"});
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
    Pipeline pipe{h_in.data(), h_out.data(), d_in.data(), d_out.data(), n, 0, ctx.device().max_grid_x};

    // ---- copy rates and stage times, each alone -------------------------------------------------
    // Host-side copies: flushing L2 between repeats would change nothing but add a kernel.
    const bool flush = false;
    auto h2d = [&](cudaStream_t s) {
      CUDA_CHECK(cudaMemcpyAsync(d_in.data(), h_in.data(), bytes, cudaMemcpyHostToDevice, s));
    };
    auto d2h = [&](cudaStream_t s) {
      CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.data(), bytes, cudaMemcpyDeviceToHost, s));
    };
    auto kernel_alone = [&](cudaStream_t s) {
      lcg_steps<<<pipe.grid(n), kBlock, 0, s>>>(d_in.data(), d_out.data(), n, pipe.work, kLcgMul,
                                                kLcgAdd);
      LAUNCH_CHECK();
    };
    h2d(nullptr);  // defined device contents for the kernel timings below
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto t_h2d = ctx.bench(h2d, flush);
    report.baseline("pinned H2D cudaMemcpy", t_h2d, gpu100::gbps(double(bytes), t_h2d.median_ms));

    if (work == 0) {
      pipe.work = kCalibrationWork;
      const auto t_cal = ctx.bench(kernel_alone, flush);
      const double scaled = kCalibrationWork * t_h2d.median_ms / std::max(t_cal.median_ms, 1e-6);
      work = int(std::clamp(std::lround(scaled), 1L, long(kMaxWork)));
      report.note("--work 0: calibrated to " + std::to_string(work) +
                  " LCG steps per element so that the kernel alone takes about as long as the "
                  "H2D copy (from a " + std::to_string(kCalibrationWork) + "-step run)");
    }
    pipe.work = work;
    report.problem("work", double(work));
    const auto t_kernel = ctx.bench(kernel_alone, flush);
    const auto t_d2h = ctx.bench(d2h, flush);

    int engines = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&engines, cudaDevAttrAsyncEngineCount, ctx.device().id));
    // Both directions at once (two streams): what PCIe's full duplex gives when it is used.
    Stream side_a, side_b;
    Event fork_copy, join_a, join_b;
    auto both = [&](cudaStream_t s) {
      CUDA_CHECK(cudaEventRecord(fork_copy.get(), s));
      CUDA_CHECK(cudaStreamWaitEvent(side_a.get(), fork_copy.get(), 0));
      CUDA_CHECK(cudaStreamWaitEvent(side_b.get(), fork_copy.get(), 0));
      h2d(side_a.get());
      d2h(side_b.get());
      CUDA_CHECK(cudaEventRecord(join_a.get(), side_a.get()));
      CUDA_CHECK(cudaEventRecord(join_b.get(), side_b.get()));
      CUDA_CHECK(cudaStreamWaitEvent(s, join_a.get(), 0));
      CUDA_CHECK(cudaStreamWaitEvent(s, join_b.get(), 0));
    };
    const auto t_both = ctx.bench(both, flush);
    // Pageable memory: the driver copies through its own pinned staging buffer, chunk by chunk,
    // and the call returns only when the data is staged - no overlap with anything.
    std::vector<uint32_t> pageable(count, 1u);
    const auto t_h2d_pageable = ctx.bench(
        [&](cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(d_in.data(), pageable.data(), bytes, cudaMemcpyHostToDevice, s));
        },
        flush);
    const auto t_d2h_pageable = ctx.bench(
        [&](cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(pageable.data(), d_out.data(), bytes, cudaMemcpyDeviceToHost, s));
        },
        flush);
    pageable = {};

    gpu100::Table stages{"stages alone, whole array (" + std::to_string(bytes) + " bytes each way)",
                         {"stage", "median ms", "GB/s"},
                         {}};
    auto stage_row = [&](const char* name, const gpu100::Stats& t, double b) {
      stages.add_row({name, t.median_ms, gpu100::gbps(b, t.median_ms)});
    };
    stage_row("H2D pinned", t_h2d, double(bytes));
    stage_row("D2H pinned", t_d2h, double(bytes));
    stage_row("H2D + D2H at once, pinned (2 streams)", t_both, moved);
    stage_row("H2D pageable", t_h2d_pageable, double(bytes));
    stage_row("D2H pageable", t_d2h_pageable, double(bytes));
    stages.add_row({"kernel alone (GB/s: 8 bytes/element)", t_kernel.median_ms,
                    gpu100::gbps(moved, t_kernel.median_ms)});
    report.table(std::move(stages));

    // The overlap bound: the pipeline cannot finish before its longest stage. With one copy
    // engine the two directions take turns on it.
    const double bound_ms = engines >= 2
                                ? std::max({t_h2d.median_ms, t_kernel.median_ms, t_d2h.median_ms})
                                : std::max(t_h2d.median_ms + t_d2h.median_ms, t_kernel.median_ms);
    char line[240];
    std::snprintf(line, sizeof line,
                  "copy engines: %d; overlap bound = longest stage%s = %.3f ms; serial sum of the "
                  "stages = %.3f ms",
                  engines, engines >= 2 ? "" : " (H2D + D2H share one engine)", bound_ms,
                  t_h2d.median_ms + t_kernel.median_ms + t_d2h.median_ms);
    report.note(line);
    report.note("GB/s = (H2D bytes + D2H bytes) / time; baseline = pinned H2D cudaMemcpy of the "
                "array (one direction), so a pipeline using both directions can exceed 1x");

    // ---- the versions ---------------------------------------------------------------------------
    const AffineMap map = lcg_power(work);
    std::vector<uint32_t> ref(count);
    for (size_t i = 0; i < count; ++i) ref[i] = map.a * h_in[i] + map.c;

    auto poison = [&] {
      d_in.poison();
      d_out.poison();
      std::memset(h_out.data(), 0xFF, bytes);
    };
    auto check = [&] { return gpu100::compare_exact(h_out.data(), ref.data(), count); };

    double serial_ms = 0;
    if (ctx.want("serial")) {
      poison();
      pipe.serial(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto result = check();
      const auto t = ctx.bench([&](cudaStream_t s) { pipe.serial(s); }, flush);
      report.add("serial", t, gpu100::gbps(moved, t.median_ms), result);
      serial_ms = t.median_ms;
    }

    gpu100::Table sweep{"overlap vs number of streams (" + std::to_string(chunks) + " chunks)",
                        {"streams", "median ms", "GB/s (H2D+D2H)", "speedup vs serial",
                         "% of overlap bound"},
                        {}};
    Event fork;
    std::vector<Event> joins(8);
    int timeline_streams = 0;
    for (int streams : kStreamCounts) {
      const std::string name = "streams_" + std::to_string(streams);
      if (!ctx.want(name)) continue;
      std::vector<Stream> workers(static_cast<size_t>(streams));
      auto launch = [&](cudaStream_t s) { pipe.pipelined(s, workers, chunks, fork, joins, nullptr); };
      poison();
      launch(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto result = check();
      const auto t = ctx.bench(launch, flush);
      report.add(name, t, gpu100::gbps(moved, t.median_ms), result);
      sweep.add_row({streams, t.median_ms, gpu100::gbps(moved, t.median_ms),
                     serial_ms > 0 ? gpu100::Cell(serial_ms / t.median_ms) : gpu100::Cell("-"),
                     100.0 * bound_ms / t.median_ms});
      if (timeline_streams != 4) timeline_streams = streams;  // prefer 4, else the last one run
    }
    if (!sweep.rows.empty()) report.table(std::move(sweep));

    // ---- one configuration's timeline ------------------------------------------------------------
    if (timeline_streams > 0) {
      std::vector<Stream> workers(static_cast<size_t>(timeline_streams));
      std::vector<ChunkEvents> timeline(static_cast<size_t>(chunks));
      Event origin(true);
      poison();
      CUDA_CHECK(cudaDeviceSynchronize());
      CUDA_CHECK(cudaEventRecord(origin.get(), nullptr));
      pipe.pipelined(nullptr, workers, chunks, fork, joins, &timeline);
      CUDA_CHECK(cudaDeviceSynchronize());
      // The recorded run is a run like any other: its result must be right too.
      report.add_check("timeline run (streams_" + std::to_string(timeline_streams) + ")", check());
      gpu100::Table tl{"timeline of one run with " + std::to_string(timeline_streams) +
                           " streams (ms after the first event; each stage starts when the "
                           "one before it in its stream ends, H2D when the stream reaches it)",
                       {"chunk", "stream", "H2D start ms", "H2D end ms", "kernel end ms",
                        "D2H end ms"},
                       {}};
      auto since = [&](const Event& e) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, origin.get(), e.get()));
        return double(ms);
      };
      // A timeline is read by eye: at most kTimelineRows chunks (the pattern repeats after the
      // first few rounds of the streams); the rest are run and checked but not listed.
      constexpr int kTimelineRows = 32;
      int listed = 0, nonempty = 0;
      for (int c = 0; c < chunks; ++c) {
        if (int64_t(c + 1) * n / chunks == int64_t(c) * n / chunks) continue;  // empty chunk
        if (++nonempty > kTimelineRows) continue;
        const auto& ev = timeline[size_t(c)];
        tl.add_row({c, c % timeline_streams, since(ev.h2d_start), since(ev.h2d_end),
                    since(ev.kernel_end), since(ev.d2h_end)});
        ++listed;
      }
      if (listed < nonempty)
        report.note("timeline: the first " + std::to_string(listed) + " of " +
                    std::to_string(nonempty) + " chunks are listed");
      report.table(std::move(tl));
    }
  });
}
