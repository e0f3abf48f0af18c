// Day 008 - warp-shuffle reductions: full sums and per-row (segmented) sums of floats
//
// Day 7 reduced through shared memory and a barrier per tree level. The 32 lanes of a warp can
// instead exchange registers directly: __shfl_down_sync(mask, v, k) hands lane i the value of
// lane i + k, so five shuffle-and-add steps sum a warp with no shared memory and no barrier. A
// block then needs shared memory only for one value per warp (warp totals -> warp 0 sums them).
// With the arithmetic out of the way, what remains is the memory system: keeping enough bytes in
// flight (16-byte loads, several independent loads per thread, a grid that fills every SM) to
// reach the bandwidth cub::DeviceReduce::Sum reaches on the same data.
//
// Versions
//   warp_shuffle  grid-stride loop with scalar loads, block_sum (warp shuffles + one shared value
//                 per warp), one partial per block; a second launch (one block) sums the partials.
//   float4        the same two passes, but 16-byte loads (ld.global.v4), four independent ones per
//                 thread per iteration; scalar code handles the 0-3 floats before the first
//                 16-byte boundary and after the last.
//   atomic        the float4 kernel, but each block atomicAdds its total into the result: one
//                 launch (plus the memset that zeroes the result, timed because it is part of the
//                 work). The order of the atomics is not fixed, so the last bits of the sum can
//                 change from run to run: fast, but not reproducible.
//   segmented     a different problem in the same report: the sum of every row of a rows x cols
//                 matrix. Up to 2048 columns a warp owns a row (shuffle with __shfl_xor_sync, no
//                 shared memory at all); longer rows get a whole block each. Its GB/s are bytes of
//                 the matrix / time; its CUB counterpart, cub::DeviceSegmentedReduce::Sum, is
//                 timed on the same matrix and compared in a table of its own.
//
// Check: CPU sums in double. The inputs are quarters, k/4 with k in 1..4 (as on day 7): while a
// sum has at most 2^22 terms (4 * terms <= 2^24, the fp32 significand) every partial sum is exact
// in fp32 in any order, atomics included, so the check is exact and one lost or doubled element
// fails. Longer sums round; then the tolerance is the worst-case rounding bound gamma_h of each
// version's order of additions (see gpu100::summation_error_bound).
//
// Run:  build/bin/day008 [--n 134217735] [--rows 32771 --cols 2053] [--kernel float4,segmented]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cub/cub.cuh>
#include <functional>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

// ---- warp and block reductions ----------------------------------------------------------------
enum class Shuffle { Down, Xor };

// Sum of v over the 32 lanes of a warp, in five register exchanges.
//   Down: lane i adds lane i+k (lanes whose partner is past lane 31 get their own value back,
//         which only pollutes lanes that are not read); the total ends in lane 0.
//   Xor:  butterfly, lane i adds lane i^k; every lane ends with the total.
// The full mask says all 32 lanes take part: callers must make sure the whole warp calls it
// (no lane may have left a loop or returned early), or the result is undefined.
template <Shuffle MODE>
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) {
    if constexpr (MODE == Shuffle::Down)
      v += __shfl_down_sync(0xffffffffu, v, k);
    else
      v += __shfl_xor_sync(0xffffffffu, v, k);
  }
  return v;
}

// Sum of v over a block of BLOCK threads; the total is valid in thread 0. Every thread of the
// block must call it (it contains __syncthreads()).
template <int BLOCK>
__device__ __forceinline__ float block_sum(float v) {
  static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "BLOCK: whole warps, <= 1024");
  constexpr int kWarps = BLOCK / 32;
  __shared__ float warp_totals[kWarps];
  const int lane = int(threadIdx.x) % 32;
  const int warp = int(threadIdx.x) / 32;
  v = warp_sum<Shuffle::Down>(v);
  // A previous call (the block-per-row kernel loops over rows) may still have warp 0 reading
  // warp_totals; this barrier keeps the writes below from overtaking those reads.
  __syncthreads();
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {  // all 32 lanes of warp 0, so the full-mask shuffles are legal
    v = lane < kWarps ? warp_totals[lane] : 0.0f;
    v = warp_sum<Shuffle::Down>(v);
  }
  return v;
}

constexpr int kBlock = 256;         // the full-sum kernels
constexpr int kFinishBlock = 1024;  // the one-block second pass over the partials
constexpr int kUnroll = 4;          // independent float4 loads per thread per iteration
// Sums of at most this many quarter-valued inputs are exact in fp32 (see Check above).
constexpr int64_t kExactMaxTerms = int64_t(1) << 22;

// ---- warp_shuffle: scalar grid-stride loads + block_sum -----------------------------------------
// Also the second pass of warp_shuffle and float4 (one block of kFinishBlock over the partials).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    sum_warp_shuffle(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * BLOCK;
  float v = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += stride) v += in[i];
  v = block_sum<BLOCK>(v);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ---- float4 / atomic: vectorized loads, several in flight ---------------------------------------
enum class Output { Partials, Atomic };

template <int BLOCK, int UNROLL, Output OUT>
__global__ void __launch_bounds__(BLOCK)
    sum_float4(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
  // float4 loads need 16-byte alignment. cudaMalloc gives 256, but a caller may pass in + 1, so
  // the 0-3 floats before the first 16-byte boundary are summed with scalar loads ("head"), as
  // are the 0-3 after the last whole float4 ("tail").
  const int64_t misaligned = int64_t(((16u - (reinterpret_cast<uintptr_t>(in) & 15u)) & 15u) / 4u);
  const int64_t head = misaligned < n ? misaligned : n;
  const float4* in4 = reinterpret_cast<const float4*>(in + head);
  const int64_t n4 = (n - head) / 4;
  const int64_t tid = int64_t(blockIdx.x) * BLOCK + threadIdx.x;
  const int64_t threads = int64_t(gridDim.x) * BLOCK;

  // UNROLL independent accumulators and loads: the loads of one iteration do not depend on each
  // other, so all UNROLL * 16 bytes are requested before the first one is needed.
  float acc[UNROLL] = {};
  int64_t i = tid;
  for (; i + (UNROLL - 1) * threads < n4; i += UNROLL * threads) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = in4[i + u * threads];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  // Fewer than UNROLL float4 are left for this thread: one more round with guarded loads, so they
  // too are in flight together instead of one memory latency after another.
  if (i < n4) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      v[u] = i + u * threads < n4 ? in4[i + u * threads] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) sum += acc[u];
  if (tid < head) sum += in[tid];
  if (const int64_t t = head + 4 * n4 + tid; t < n) sum += in[t];

  sum = block_sum<BLOCK>(sum);
  if (threadIdx.x == 0) {
    if constexpr (OUT == Output::Partials)
      out[blockIdx.x] = sum;
    else
      atomicAdd(out, sum);  // *out was zeroed before the launch
  }
}

// ---- segmented: per-row sums --------------------------------------------------------------------
// One warp per row. Rows are warp-uniform, so the whole warp runs every iteration of the row loop
// together and the full-mask shuffles are legal.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    row_sums_warp(const float* __restrict__ m, float* __restrict__ out, int64_t rows,
                  int64_t cols) {
  const int lane = int(threadIdx.x) % 32;
  const int64_t warp = (int64_t(blockIdx.x) * BLOCK + threadIdx.x) / 32;
  const int64_t warps = int64_t(gridDim.x) * (BLOCK / 32);
  for (int64_t r = warp; r < rows; r += warps) {
    const float* row = m + r * cols;
    float v = 0.0f;
#pragma unroll 4
    for (int64_t c = lane; c < cols; c += 32) v += row[c];
    v = warp_sum<Shuffle::Xor>(v);
    if (lane == 0) out[r] = v;
  }
}

// One block per row, for rows too long for one warp. The row loop is block-uniform, so the
// __syncthreads() inside block_sum is reached by every thread.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    row_sums_block(const float* __restrict__ m, float* __restrict__ out, int64_t rows,
                   int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = m + r * cols;
    float v = 0.0f;
#pragma unroll 4
    for (int64_t c = threadIdx.x; c < cols; c += BLOCK) v += row[c];
    v = block_sum<BLOCK>(v);
    if (threadIdx.x == 0) out[r] = v;
  }
}

constexpr int64_t kWarpRowMaxCols = 2048;  // longer rows: a block per row

// ---- host helpers -------------------------------------------------------------------------------
constexpr double kBlockSumLevels = 10;  // 5 shuffle levels within a warp + 5 over <= 32 warps

// Inputs k/4, k uniform in 1..4: never zero, so every element counts, and short sums are exact.
std::vector<float> quarters(size_t count, uint64_t seed) {
  const auto k = gpu100::random_ints(count, seed, 1, 4);
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = 0.25f * float(k[i]);
  return x;
}

// Exact while the sum of `terms` quarters cannot round; the worst-case bound beyond.
gpu100::Tolerance sum_tolerance(double h, int64_t terms) {
  return terms <= kExactMaxTerms ? gpu100::Tolerance::Exact()
                                 : gpu100::summation_tolerance(h, terms);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("warp-shuffle sums: scalar, float4, atomic and per-row (segmented) vs CUB");
  int64_t n = (int64_t(1) << 27) + 7;
  int64_t rows = 32771, cols = 2053;
  cli.size("n", n, 1'000'003, "elements of the full sum");
  cli.size("rows", rows, 257, "rows of the segmented sum's matrix");
  cli.size("cols", cols, 1031, "columns of the segmented sum's matrix");
  cli.kernels({"warp_shuffle", "float4", "atomic", "segmented"});
  cli.device_bytes([&] {
    return 4.0 * double(n) + 4.0 * double(rows) * double(cols) + 16.0 * double(rows) +
           double(64 << 20);  // input, matrix, two row outputs + offsets, partials + CUB temp
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    const auto& dev = ctx.device();
    report.problem("n", double(n));
    report.problem("rows", double(rows));
    report.problem("cols", double(cols));
    report.unit("GB/s");
    report.limit("dram_gbps", dev.peak_dram_gbps(), "HBM peak");
    report.intensity(1.0 / 4.0);  // one add per 4-byte element

    // ---- full sum ----------------------------------------------------------------------------
    const auto x = quarters(size_t(n), ctx.seed());
    double ref = 0;
    for (float v : x) ref += double(v);
    if (n <= kExactMaxTerms)
      report.note(
          "n <= 2^22: every partial sum of the quarter-valued inputs is exact in fp32, so "
          "the full sums must equal the reference exactly (so must rows of <= 2^22 "
          "columns)");
    gpu100::DeviceBuffer<float> d_in(x), d_result(1);
    const double bytes = 4.0 * double(n);

    // Grids that fill the device, capped so that no block is left without work at small n.
    const int64_t shuffle_grid =
        std::min(int64_t(gpu100::resident_grid(sum_warp_shuffle<kBlock>, kBlock)),
                 gpu100::ceil_div<int64_t>(n, kBlock));
    const int64_t float4_grid = std::min(
        int64_t(gpu100::resident_grid(sum_float4<kBlock, kUnroll, Output::Partials>, kBlock)),
        gpu100::ceil_div<int64_t>(n, 4 * kBlock));
    gpu100::DeviceBuffer<float> d_partials(size_t(std::max(shuffle_grid, float4_grid)));

    size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in.data(), d_result.data(), n));
    gpu100::DeviceBuffer<unsigned char> d_temp(std::max<size_t>(temp_bytes, 1));
    auto cub_sum = [&](cudaStream_t s) {
      CUDA_CHECK(
          cub::DeviceReduce::Sum(d_temp.data(), temp_bytes, d_in.data(), d_result.data(), n, s));
    };
    d_result.poison();
    cub_sum(nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const double cub_value = d_result.download()[0];
    const auto cub_time = ctx.bench(cub_sum);
    report.baseline("cub::DeviceReduce::Sum", cub_time, gpu100::gbps(bytes, cub_time.median_ms));
    report.note(
        gpu100::format_doubles("cub::DeviceReduce::Sum = %.9g, reference %.12g, rel err %.2e",
                               cub_value, ref, std::fabs(cub_value - ref) / ref));

    // The second pass: one block sums `partials` values into the result.
    auto finish = [&](int64_t partials, cudaStream_t s) {
      sum_warp_shuffle<kFinishBlock>
          <<<1, kFinishBlock, 0, s>>>(d_partials.data(), d_result.data(), partials);
      LAUNCH_CHECK();
    };
    auto run_full = [&](const char* name, double h,
                        const std::function<void(cudaStream_t)>& launch) {
      d_result.poison();
      d_partials.poison();
      launch(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const float got = d_result.download()[0];
      const auto check = gpu100::compare(&got, &ref, 1, sum_tolerance(h, n));
      const auto t = ctx.bench(launch);
      report.add(name, t, gpu100::gbps(bytes, t.median_ms), check);
    };

    // h per version: the values one thread adds in registers, the block_sum levels, and the
    // second pass (or, for atomic, the chain of up to `grid` atomicAdds into one float).
    if (ctx.want("warp_shuffle")) {
      const int64_t grid = shuffle_grid;
      const double h =
          double(gpu100::ceil_div<int64_t>(n, grid * kBlock)) + kBlockSumLevels +
          (grid > 1 ? double(gpu100::ceil_div<int64_t>(grid, kFinishBlock)) + kBlockSumLevels
                    : 0.0);
      run_full("warp_shuffle", h, [&](cudaStream_t s) {
        float* out = grid > 1 ? d_partials.data() : d_result.data();
        sum_warp_shuffle<kBlock><<<unsigned(grid), kBlock, 0, s>>>(d_in.data(), out, n);
        LAUNCH_CHECK();
        if (grid > 1) finish(grid, s);
      });
    }
    // float4 loop: per element 2 adds inside its float4, at most ceil(n / (4 threads)) into its
    // accumulator, kUnroll to add up the accumulators and 2 for the head and tail floats.
    const double float4_thread_h = double(gpu100::ceil_div<int64_t>(n, 4 * float4_grid * kBlock)) +
                                   2 + kUnroll + 2 + kBlockSumLevels;
    if (ctx.want("float4")) {
      const int64_t grid = float4_grid;
      const double h =
          float4_thread_h +
          (grid > 1 ? double(gpu100::ceil_div<int64_t>(grid, kFinishBlock)) + kBlockSumLevels
                    : 0.0);
      run_full("float4", h, [&](cudaStream_t s) {
        float* out = grid > 1 ? d_partials.data() : d_result.data();
        sum_float4<kBlock, kUnroll, Output::Partials>
            <<<unsigned(grid), kBlock, 0, s>>>(d_in.data(), out, n);
        LAUNCH_CHECK();
        if (grid > 1) finish(grid, s);
      });
    }
    if (ctx.want("atomic")) {
      const int64_t grid = float4_grid;
      run_full("atomic", float4_thread_h + double(grid), [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemsetAsync(d_result.data(), 0, sizeof(float), s));
        sum_float4<kBlock, kUnroll, Output::Atomic>
            <<<unsigned(grid), kBlock, 0, s>>>(d_in.data(), d_result.data(), n);
        LAUNCH_CHECK();
      });
    }

    // ---- segmented: per-row sums of a rows x cols matrix ------------------------------------
    if (ctx.want("segmented")) {
      const int64_t elems = rows * cols;
      const auto m = quarters(size_t(elems), ctx.seed() + 1);
      std::vector<double> row_ref(size_t(rows), 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (int64_t c = 0; c < cols; ++c) s += double(m[size_t(r * cols + c)]);
        row_ref[size_t(r)] = s;
      }
      gpu100::DeviceBuffer<float> d_m(m), d_rows{size_t(rows)}, d_cub_rows{size_t(rows)};
      const double seg_bytes = 4.0 * double(elems);

      // CUB's segmented reduction takes begin/end offsets; rows are contiguous, so one array of
      // rows + 1 offsets serves as both (begin = offsets, end = offsets + 1).
      std::vector<int64_t> offsets(size_t(rows) + 1);
      for (int64_t r = 0; r <= rows; ++r) offsets[size_t(r)] = r * cols;
      gpu100::DeviceBuffer<int64_t> d_offsets(offsets);
      size_t seg_temp_bytes = 0;
      CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, seg_temp_bytes, d_m.data(),
                                                 d_cub_rows.data(), rows, d_offsets.data(),
                                                 d_offsets.data() + 1));
      gpu100::DeviceBuffer<unsigned char> d_seg_temp(std::max<size_t>(seg_temp_bytes, 1));
      auto cub_rows = [&](cudaStream_t s) {
        CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(d_seg_temp.data(), seg_temp_bytes, d_m.data(),
                                                   d_cub_rows.data(), rows, d_offsets.data(),
                                                   d_offsets.data() + 1, s));
      };
      d_cub_rows.poison();
      cub_rows(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto cub_row_check =
          gpu100::compare(d_cub_rows.download(), row_ref, gpu100::Tolerance::FP32());
      const auto cub_seg_time = ctx.bench(cub_rows);
      const double cub_seg_rate = gpu100::gbps(seg_bytes, cub_seg_time.median_ms);

      const bool warp_rows = cols <= kWarpRowMaxCols;
      constexpr int kRowBlock = 256;
      const int64_t threads_per_row = warp_rows ? 32 : kRowBlock;
      int64_t grid = 0;
      if (warp_rows)
        grid = std::min(int64_t(gpu100::resident_grid(row_sums_warp<kRowBlock>, kRowBlock)),
                        gpu100::ceil_div<int64_t>(rows, kRowBlock / 32));
      else
        grid = std::min(int64_t(gpu100::resident_grid(row_sums_block<kRowBlock>, kRowBlock)), rows);
      auto launch = [&](cudaStream_t s) {
        if (warp_rows)
          row_sums_warp<kRowBlock>
              <<<unsigned(grid), kRowBlock, 0, s>>>(d_m.data(), d_rows.data(), rows, cols);
        else
          row_sums_block<kRowBlock>
              <<<unsigned(grid), kRowBlock, 0, s>>>(d_m.data(), d_rows.data(), rows, cols);
        LAUNCH_CHECK();
      };
      // Per row: ceil(cols / threads_per_row) register adds, then the shuffle (and, for a block,
      // the warp-totals) levels.
      const double h = double(gpu100::ceil_div<int64_t>(cols, threads_per_row)) + kBlockSumLevels;
      d_rows.poison();
      launch(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto got_rows = d_rows.download();
      const auto check = gpu100::compare(got_rows, row_ref, sum_tolerance(h, cols));
      // The table's error column: the relative L2 error for both rows (an exact check's rel_err
      // is the fraction of unequal rows instead).
      const double rel_err = gpu100::compare(got_rows, row_ref, gpu100::Tolerance::FP32()).rel_err;
      const auto t = ctx.bench(launch);
      const double rate = gpu100::gbps(seg_bytes, t.median_ms);
      report.add("segmented", t, rate, check);

      gpu100::Table seg{"segmented: per-row sums of the rows x cols matrix (" +
                            std::string(warp_rows ? "a warp" : "a block") + " per row)",
                        {"version", "median ms", "GB/s", "x cub::DeviceSegmentedReduce", "rel err"},
                        {}};
      seg.add_row({"cub::DeviceSegmentedReduce::Sum", cub_seg_time.median_ms, cub_seg_rate, 1.0,
                   cub_row_check.rel_err});
      seg.add_row(
          {"segmented", t.median_ms, rate, cub_seg_rate > 0 ? rate / cub_seg_rate : 0.0, rel_err});
      report.table(seg);
      report.note(
          "segmented sums a different array (the matrix) than the full-sum versions; its "
          "\"x cub::DeviceReduce::Sum\" compares bandwidths only. Its CUB counterpart is "
          "in the table below.");
    }
  });
}
