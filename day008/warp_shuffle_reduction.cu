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
//                 shared memory at all); longer rows get a whole block each. Its CUB
//                 counterpart, cub::DeviceSegmentedReduce::Sum, is compared in a table of its own.
//
// Check: CPU sums in double. The inputs are quarters, k/4 with k in 1..4 (as on day 7): while a
// sum has at most 2^22 terms (4 * terms <= 2^24, the fp32 significand) every partial sum is exact
// in fp32 in any order, atomics included, so the check is exact and one lost or doubled element
// fails (CUB's full sum too). Longer sums round; then the tolerance is the worst-case rounding
// bound gamma_h of each version's order of additions (see gpu100::summation_error_bound).
//
// Run:  build/bin/day008 [--n 134217735] [--rows 32771 --cols 2053] [--kernel float4,segmented]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cub/cub.cuh>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;                // the full-sum kernels
constexpr int kFinishBlock = 1024;         // the one-block second pass over the partials
constexpr int kRowBlock = 256;             // the per-row kernels
constexpr int64_t kWarpRowMaxCols = 2048;  // longer rows: a block per row
// Sums of at most this many quarter-valued inputs are exact in fp32 (see Check above).
constexpr int64_t kExactMaxTerms = int64_t(1) << 22;

// ---- CPU reference ------------------------------------------------------------------------------
// Inputs k/4, k uniform in 1..4: never zero, so every element counts, and short sums are exact.
std::vector<float> quarters(size_t count, uint64_t seed) {
  const auto k = gpu100::random_ints(count, seed, 1, 4);
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = 0.25f * float(k[i]);
  return x;
}

double sum_cpu(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += double(v);
  return s;
}

std::vector<double> row_sums_cpu(const std::vector<float>& m, int64_t rows, int64_t cols) {
  std::vector<double> out(size_t(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += double(m[size_t(r * cols + c)]);
    out[size_t(r)] = s;
  }
  return out;
}

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

constexpr int kUnroll = 4;  // independent float4 loads per thread per iteration

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

// ---- launchers ----------------------------------------------------------------------------------
// The full sums: grids that fill the device, capped so that no block is left without work at
// small n; partials of the first pass go to `partials`, the total to `result`.
struct FullSum {
  const float* in;
  int64_t n;
  float* partials;
  float* result;
  int64_t shuffle_grid, float4_grid;
};

FullSum full_sum(const float* in, int64_t n, float* result) {
  const int64_t shuffle_grid =
      std::min(int64_t(gpu100::resident_grid(sum_warp_shuffle<kBlock>, kBlock)),
               gpu100::ceil_div<int64_t>(n, kBlock));
  const int64_t float4_grid = std::min(
      int64_t(gpu100::resident_grid(sum_float4<kBlock, kUnroll, Output::Partials>, kBlock)),
      gpu100::ceil_div<int64_t>(n, 4 * kBlock));
  return {in, n, nullptr, result, shuffle_grid, float4_grid};
}

// The second pass: one block sums `partials` values into the result.
void finish(const FullSum& f, int64_t partials, cudaStream_t s) {
  sum_warp_shuffle<kFinishBlock><<<1, kFinishBlock, 0, s>>>(f.partials, f.result, partials);
  LAUNCH_CHECK();
}

void launch_warp_shuffle(const FullSum& f, cudaStream_t s) {
  const int64_t grid = f.shuffle_grid;
  sum_warp_shuffle<kBlock>
      <<<unsigned(grid), kBlock, 0, s>>>(f.in, grid > 1 ? f.partials : f.result, f.n);
  LAUNCH_CHECK();
  if (grid > 1) finish(f, grid, s);
}

void launch_float4(const FullSum& f, cudaStream_t s) {
  const int64_t grid = f.float4_grid;
  sum_float4<kBlock, kUnroll, Output::Partials>
      <<<unsigned(grid), kBlock, 0, s>>>(f.in, grid > 1 ? f.partials : f.result, f.n);
  LAUNCH_CHECK();
  if (grid > 1) finish(f, grid, s);
}

void launch_atomic(const FullSum& f, cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(f.result, 0, sizeof(float), s));
  sum_float4<kBlock, kUnroll, Output::Atomic>
      <<<unsigned(f.float4_grid), kBlock, 0, s>>>(f.in, f.result, f.n);
  LAUNCH_CHECK();
}

// Per-row sums: a warp per row up to kWarpRowMaxCols columns, a block per row beyond.
struct RowSums {
  bool warp_rows;
  int64_t grid;
};

RowSums row_sums_shape(int64_t rows, int64_t cols) {
  if (cols <= kWarpRowMaxCols)
    return {true, std::min(int64_t(gpu100::resident_grid(row_sums_warp<kRowBlock>, kRowBlock)),
                           gpu100::ceil_div<int64_t>(rows, kRowBlock / 32))};
  return {false,
          std::min(int64_t(gpu100::resident_grid(row_sums_block<kRowBlock>, kRowBlock)), rows)};
}

void launch_row_sums(const RowSums& shape, const float* m, float* out, int64_t rows, int64_t cols,
                     cudaStream_t s) {
  if (shape.warp_rows)
    row_sums_warp<kRowBlock><<<unsigned(shape.grid), kRowBlock, 0, s>>>(m, out, rows, cols);
  else
    row_sums_block<kRowBlock><<<unsigned(shape.grid), kRowBlock, 0, s>>>(m, out, rows, cols);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(const FullSum&, cudaStream_t);  // null: the segmented sum
};
const Version kVersions[] = {
    {"warp_shuffle", launch_warp_shuffle},
    {"float4", launch_float4},
    {"atomic", launch_atomic},
    {"segmented", nullptr},
};

// ---- analysis: the rounding bound of each version's order of additions -----------------------
constexpr double kBlockSumLevels = 10;  // 5 shuffle levels within a warp + 5 over <= 32 warps

// h per version: the values one thread adds in registers, the block_sum levels, and the second
// pass (or, for atomic, the chain of up to `grid` atomicAdds into one float).
double additions_per_input(const Version& v, const FullSum& f) {
  auto second_pass = [](int64_t grid) {
    return grid > 1 ? double(gpu100::ceil_div<int64_t>(grid, kFinishBlock)) + kBlockSumLevels : 0.0;
  };
  if (v.launch == launch_warp_shuffle)
    return double(gpu100::ceil_div<int64_t>(f.n, f.shuffle_grid * kBlock)) + kBlockSumLevels +
           second_pass(f.shuffle_grid);
  // float4 loop: per element 2 adds inside its float4, at most ceil(n / (4 threads)) into its
  // accumulator, kUnroll to add up the accumulators and 2 for the head and tail floats.
  const double thread_h = double(gpu100::ceil_div<int64_t>(f.n, 4 * f.float4_grid * kBlock)) + 2 +
                          kUnroll + 2 + kBlockSumLevels;
  if (v.launch == launch_float4) return thread_h + second_pass(f.float4_grid);
  return thread_h + double(f.float4_grid);  // atomic
}

// Per row: ceil(cols / threads_per_row) register adds, then the shuffle (and, for a block, the
// warp-totals) levels.
double additions_per_row_input(const RowSums& shape, int64_t cols) {
  return double(gpu100::ceil_div<int64_t>(cols, shape.warp_rows ? 32 : kRowBlock)) +
         kBlockSumLevels;
}

// Exact while the sum of `terms` quarters cannot round; the worst-case bound beyond.
gpu100::Tolerance sum_tolerance(double h, int64_t terms) {
  return terms <= kExactMaxTerms ? gpu100::Tolerance::Exact()
                                 : gpu100::summation_tolerance(h, terms);
}

gpu100::Table segmented_table(const RowSums& shape, const gpu100::Measured& cub,
                              const gpu100::Measured& own, double own_rel_err, double bytes) {
  gpu100::Table t{fmt::format("segmented: per-row sums of the rows x cols matrix ({} per row)",
                              shape.warp_rows ? "a warp" : "a block"),
                  {"version", "median ms", "GB/s", "x cub::DeviceSegmentedReduce", "rel err"},
                  {}};
  const double cub_rate = gpu100::gbps(bytes, cub.time.median_ms);
  const double own_rate = gpu100::gbps(bytes, own.time.median_ms);
  t.add_row(
      {"cub::DeviceSegmentedReduce::Sum", cub.time.median_ms, cub_rate, 1.0, cub.check.rel_err});
  t.add_row({"segmented", own.time.median_ms, own_rate, cub_rate > 0 ? own_rate / cub_rate : 0.0,
             own_rel_err});
  return t;
}

// ---- the versions: each one's run and check ----------------------------------------------------
// The full sum's device side: input, result, the first pass's partials and CUB's temporary storage.
struct FullSumData {
  gpu100::DeviceBuffer<float> in, result, partials;
  FullSum f;
  size_t cub_temp_bytes = 0;
  gpu100::DeviceBuffer<unsigned char> cub_temp;
};

FullSumData full_sum_data(const std::vector<float>& x) {
  const int64_t n = int64_t(x.size());
  FullSumData d{gpu100::DeviceBuffer<float>(x), gpu100::DeviceBuffer<float>(1)};
  d.f = full_sum(d.in.data(), n, d.result.data());
  d.partials = gpu100::DeviceBuffer<float>(size_t(std::max(d.f.shuffle_grid, d.f.float4_grid)));
  d.f.partials = d.partials.data();
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, d.cub_temp_bytes, d.in.data(), d.result.data(), n));
  d.cub_temp = gpu100::DeviceBuffer<unsigned char>(std::max<size_t>(d.cub_temp_bytes, 1));
  return d;
}

// CUB's full sum, the baseline: exact where every order of additions is (CUB's order is its
// own); unchecked beyond. The checked run's sum is kept in `value` for the report.
gpu100::Measure cub_sum_measure(FullSumData& d, double ref, float& value) {
  const int64_t n = d.f.n;
  return {.name = "cub::DeviceReduce::Sum",
          .launch =
              [&d, n](cudaStream_t s) {
                CUDA_CHECK(cub::DeviceReduce::Sum(d.cub_temp.data(), d.cub_temp_bytes, d.in.data(),
                                                  d.result.data(), n, s));
              },
          .reset = [&d] { d.result.poison(); },
          .check =
              [&d, ref, n, &value] {
                value = d.result.download()[0];
                return n <= kExactMaxTerms
                           ? gpu100::compare(&value, &ref, 1, gpu100::Tolerance::Exact())
                           : gpu100::CheckResult{};
              },
          .work = 4.0 * double(n),
          .role = gpu100::Role::baseline};
}

gpu100::Measure full_sum_measure(const Version& v, FullSumData& d, double ref) {
  return {.name = v.name,
          .launch = [&v, &d](cudaStream_t s) { v.launch(d.f, s); },
          .reset =
              [&d] {
                d.result.poison();
                d.partials.poison();
              },
          .check =
              [&d, ref, tol = sum_tolerance(additions_per_input(v, d.f), d.f.n)] {
                const float got = d.result.download()[0];
                return gpu100::compare(&got, &ref, 1, tol);
              },
          .work = 4.0 * double(d.f.n)};
}

// The full sum: CUB as the baseline, then the three versions.
void measure_full_sums(gpu100::Context& ctx, int64_t n) {
  const auto x = quarters(size_t(n), ctx.seed());
  const double ref = sum_cpu(x);
  if (n <= kExactMaxTerms)
    ctx.report().note(
        "n <= 2^22: every partial sum of the quarter-valued inputs is exact in fp32, so "
        "the full sums must equal the reference exactly (so must rows of <= 2^22 "
        "columns)");
  FullSumData d = full_sum_data(x);
  float cub_value = 0;
  std::vector<gpu100::Measure> runs{cub_sum_measure(d, ref, cub_value)};
  for (const Version& v : kVersions)
    if (v.launch) runs.push_back(full_sum_measure(v, d, ref));
  ctx.measure_all(runs);
  ctx.report().note(
      fmt::format("cub::DeviceReduce::Sum = {:.9g}, reference {:.12g}, rel err {:.2e}", cub_value,
                  ref, std::fabs(double(cub_value) - ref) / ref));
}

// The segmented sum's device side: the matrix, both row outputs, and CUB's begin/end offsets
// (rows are contiguous, so one array of rows + 1 offsets serves as both: begin = offsets,
// end = offsets + 1) and temporary storage.
struct SegmentedData {
  int64_t rows, cols;
  gpu100::DeviceBuffer<float> m, out, cub_out;
  gpu100::DeviceBuffer<int64_t> offsets;
  size_t cub_temp_bytes = 0;
  gpu100::DeviceBuffer<unsigned char> cub_temp;
};

SegmentedData segmented_data(const std::vector<float>& m, int64_t rows, int64_t cols) {
  SegmentedData d{rows, cols, gpu100::DeviceBuffer<float>(m),
                  gpu100::DeviceBuffer<float>(size_t(rows)),
                  gpu100::DeviceBuffer<float>(size_t(rows))};
  std::vector<int64_t> offsets(size_t(rows) + 1);
  for (int64_t r = 0; r <= rows; ++r) offsets[size_t(r)] = r * cols;
  d.offsets = gpu100::DeviceBuffer<int64_t>(offsets);
  CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, d.cub_temp_bytes, d.m.data(),
                                             d.cub_out.data(), rows, d.offsets.data(),
                                             d.offsets.data() + 1));
  d.cub_temp = gpu100::DeviceBuffer<unsigned char>(std::max<size_t>(d.cub_temp_bytes, 1));
  return d;
}

// CUB's row sums: a point of the segmented table (the full sum's CUB is the baseline).
gpu100::Measure cub_rows_measure(SegmentedData& d, const std::vector<double>& row_ref) {
  return {.name = "cub::DeviceSegmentedReduce::Sum",
          .launch =
              [&d](cudaStream_t s) {
                CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(
                    d.cub_temp.data(), d.cub_temp_bytes, d.m.data(), d.cub_out.data(), d.rows,
                    d.offsets.data(), d.offsets.data() + 1, s));
              },
          .reset = [&d] { d.cub_out.poison(); },
          .check =
              [&d, &row_ref] {
                return gpu100::compare(d.cub_out.download(), row_ref, gpu100::Tolerance::FP32());
              },
          .work = 4.0 * double(d.rows * d.cols),
          .role = gpu100::Role::point};
}

// `rel_err` gets the relative L2 error of the checked run, for the table (an exact check's is a
// fraction).
gpu100::Measure segmented_measure(const RowSums& shape, SegmentedData& d,
                                  const std::vector<double>& row_ref, double& rel_err) {
  return {.name = "segmented",
          .launch =
              [shape, &d](cudaStream_t s) {
                launch_row_sums(shape, d.m.data(), d.out.data(), d.rows, d.cols, s);
              },
          .reset = [&d] { d.out.poison(); },
          .check =
              [shape, &d, &row_ref, &rel_err] {
                const auto got = d.out.download();
                rel_err = gpu100::compare(got, row_ref, gpu100::Tolerance::FP32()).rel_err;
                return gpu100::compare(
                    got, row_ref, sum_tolerance(additions_per_row_input(shape, d.cols), d.cols));
              },
          .work = 4.0 * double(d.rows * d.cols)};
}

// The segmented sum: per-row sums of a rows x cols matrix, CUB's and ours, in a table of their own.
void measure_segmented(gpu100::Context& ctx, int64_t rows, int64_t cols) {
  const auto m = quarters(size_t(rows * cols), ctx.seed() + 1);
  const auto row_ref = row_sums_cpu(m, rows, cols);
  SegmentedData d = segmented_data(m, rows, cols);
  const gpu100::Measured cub_rows = ctx.measure(cub_rows_measure(d, row_ref));
  const RowSums shape = row_sums_shape(rows, cols);
  double rel_err = 0;
  const gpu100::Measured own = ctx.measure(segmented_measure(shape, d, row_ref, rel_err));
  ctx.report().table(segmented_table(shape, cub_rows, own, rel_err, 4.0 * double(rows * cols)));
  ctx.report().note(
      "segmented sums a different array (the matrix) than the full-sum versions; its "
      "\"x cub::DeviceReduce::Sum\" compares bandwidths only. Its CUB counterpart is "
      "in the table below.");
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("warp-shuffle sums: scalar, float4, atomic and per-row (segmented) vs CUB");
  int64_t n = (int64_t(1) << 27) + 7;
  int64_t rows = 32771, cols = 2053;
  cli.size("n", n, 1'000'003, "elements of the full sum");
  cli.size("rows", rows, 257, "rows of the segmented sum's matrix");
  cli.size("cols", cols, 1031, "columns of the segmented sum's matrix");
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    return 4.0 * double(n) + 4.0 * double(rows) * double(cols) + 16.0 * double(rows) +
           double(64 << 20);  // input, matrix, two row outputs + offsets, partials + CUB temp
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.intensity(1.0 / 4.0);  // one add per 4-byte element
    measure_full_sums(ctx, n);
    if (ctx.want("segmented")) measure_segmented(ctx, rows, cols);
  });
}
