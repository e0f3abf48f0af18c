// Day 052 - top-k per row: the k largest values of every row and where they are
//
// Sampling from a language model keeps the k most likely tokens of each row of logits; beam
// search and mixture-of-experts routing do the same. Sorting each whole row does far more work
// than needed: k is tens or hundreds, a row tens of thousands. The answer is defined exactly:
// the k elements first in the order "larger value first, equal values by lower index first"
// (-0 and +0 count as equal, as in std::partial_sort with operator>), listed in that order.
// Every version turns a float into an unsigned key that orders like the float (flip all bits of
// a negative, set the sign bit of a positive, -0 made +0 first) and appends the complemented
// index: one 64-bit key per element, all distinct, whose descending order is the answer's.
//
// Versions (a block of 256 threads per row)
//   radix_select  finds the k-th largest 32-bit key one byte at a time: four passes over the row,
//                 each a shared-memory histogram of the next byte among the elements that still
//                 match the chosen prefix, then a walk down the bins to the one holding the k-th.
//                 A last pass takes every element above that key, and of those equal to it the
//                 lowest indices (a block-wide ballot count in index order); the k picks are then
//                 sorted by a bitonic network in shared memory.
//   bitonic       keeps the best P (a power of two >= k) in shared memory: each tile of P new
//                 elements is sorted by a bitonic network, merged against the running best (the
//                 first of a descending list against the last of the other, then log P steps of
//                 a bitonic merge), and the best P stay.
// Baseline: cub::DeviceSegmentedSort::SortKeysDescending sorts every row completely (the same
// 64-bit keys), then a kernel takes the first k of each.
//
// Check: values and indices must equal std::partial_sort's bit for bit (the CPU uses the
// comparator above); CUB's result is checked the same way. Rows of distinct random values, rows
// of few distinct values (many ties, -0 among +0), rows all equal, rows with infinities.
//
// Run:  build/bin/day052 [--rows 4096 --cols 32003 --k 50] [--kernel radix_select]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cub/device/device_segmented_sort.cuh>
#include <numeric>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr int kMaxK = 1024;  // the sort buffers live in shared memory

// ---- inputs -------------------------------------------------------------------------------------
std::vector<float> make_rows(int64_t rows, int64_t cols, uint64_t seed) {
  auto x = gpu100::random_floats(size_t(rows * cols), seed, -1.0f, 1.0f);
  const auto q = gpu100::random_ints(size_t(rows * cols), seed + 1, -6, 6);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x.data() + r * cols;
    for (int64_t i = 0; i < cols; ++i) {
      switch (r % 4) {
        case 1: {  // few distinct values: many ties; a few positives, then half the row zeros
                   // of both signs, so the k-th element is usually a zero
          const int v = q[size_t(r * cols + i)];
          const bool keep = v < 0 || (v > 0 && i % 16 == 0);
          row[i] = keep ? 0.25f * float(v) : (i % 2 ? -0.0f : 0.0f);
          break;
        }
        case 2:
          row[i] = 0.5f;
          break;  // all equal: the lowest k indices
        case 3:
          if (i % 97 == 5) row[i] = INFINITY;
          if (i % 89 == 7) row[i] = -INFINITY;
          break;
        default:
          break;
      }
    }
  }
  return x;
}

// ---- CPU reference ------------------------------------------------------------------------------
struct TopK {
  std::vector<float> values;
  std::vector<int32_t> indices;
};

TopK topk_cpu(const std::vector<float>& x, int64_t rows, int64_t cols, int64_t k) {
  TopK out{std::vector<float>(size_t(rows * k)), std::vector<int32_t>(size_t(rows * k))};
  std::vector<int32_t> idx(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * cols;
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) {
      return row[a] > row[b] || (row[a] == row[b] && a < b);
    });
    for (int64_t j = 0; j < k; ++j) {
      out.indices[size_t(r * k + j)] = idx[size_t(j)];
      out.values[size_t(r * k + j)] = row[idx[size_t(j)]];
    }
  }
  return out;
}

// ---- keys ---------------------------------------------------------------------------------------
// An unsigned key that orders like the float: -0 becomes +0 (they compare equal), negatives have
// every bit flipped (more negative: smaller), positives get the sign bit set (above all negatives).
__device__ __forceinline__ uint32_t ordered(float v) {
  uint32_t b = __float_as_uint(v == 0.0f ? 0.0f : v);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
// Value first, then the lower index: the index complemented in the low half. Distinct for every
// element of a row, and never 0 (the key of -inf is 0x007fffff), so 0 pads below everything.
__device__ __forceinline__ uint64_t full_key(float v, int64_t i) {
  return (uint64_t(ordered(v)) << 32) | uint64_t(0xffffffffu - uint32_t(i));
}
__device__ __forceinline__ int32_t index_of(uint64_t key) {
  return int32_t(0xffffffffu - uint32_t(key & 0xffffffffu));
}

// Sorts s[0, n) descending, n a power of two; the whole block calls it.
__device__ void bitonic_sort_desc(uint64_t* s, int n) {
  for (int size = 2; size <= n; size <<= 1)
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      for (int i = int(threadIdx.x); i < n / 2; i += int(blockDim.x)) {
        const int lo = 2 * stride * (i / stride) + i % stride, hi = lo + stride;
        const bool desc = (lo & size) == 0;  // the last stage (size == n) is all descending
        const uint64_t a = s[lo], b = s[hi];
        if ((a < b) == desc) {
          s[lo] = b;
          s[hi] = a;
        }
      }
      __syncthreads();
    }
}

// Sorts a bitonic sequence s[0, n) descending (the merge half of the network).
__device__ void bitonic_merge_desc(uint64_t* s, int n) {
  for (int stride = n / 2; stride > 0; stride >>= 1) {
    for (int i = int(threadIdx.x); i < n / 2; i += int(blockDim.x)) {
      const int lo = 2 * stride * (i / stride) + i % stride, hi = lo + stride;
      const uint64_t a = s[lo], b = s[hi];
      if (a < b) {
        s[lo] = b;
        s[hi] = a;
      }
    }
    __syncthreads();
  }
}

// The first k of the sorted keys to the outputs.
__device__ void write_row(const uint64_t* s, const float* row, int k, float* values,
                          int32_t* indices) {
  for (int j = int(threadIdx.x); j < k; j += int(blockDim.x)) {
    const int32_t i = index_of(s[j]);
    indices[j] = i;
    values[j] = row[i];
  }
}

// ---- kernels ------------------------------------------------------------------------------------
// One pick into the p slots of the sort buffer; counts every pick, stores only what fits.
__device__ __forceinline__ void pick(uint64_t* picks, int p, uint32_t* count, uint64_t key) {
  const uint32_t slot = atomicAdd(count, 1u);
  if (slot < uint32_t(p)) picks[slot] = key;
}

// p: the power of two >= k (the sort buffer). Dynamic shared memory: p 64-bit keys.
__global__ void __launch_bounds__(kBlock)
    topk_radix_select(const float* __restrict__ x, int64_t cols, int k, int p,
                      float* __restrict__ values, int32_t* __restrict__ indices) {
  extern __shared__ uint64_t picks[];
  __shared__ uint32_t hist[256];
  __shared__ uint32_t s_prefix, s_remaining, s_count, s_running;
  __shared__ uint32_t warp_eq[kBlock / 32];
  const float* row = x + int64_t(blockIdx.x) * cols;
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  static_assert(kBlock == 256, "one histogram bin per thread");
  uint32_t prefix = 0, mask = 0, remaining = uint32_t(k);
  for (int shift = 24; shift >= 0; shift -= 8) {
    hist[tid] = 0;  // kBlock == 256 bins
    __syncthreads();
    for (int64_t i = tid; i < cols; i += kBlock) {
      const uint32_t key = ordered(row[i]);
      if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (tid == 0) {  // the bin holding the remaining-th largest among the matching keys
      uint32_t above = 0;
      for (int b = 255; b >= 0; --b) {
        if (above + hist[b] >= remaining) {
          s_prefix = prefix | (uint32_t(b) << shift);
          s_remaining = remaining - above;
          break;
        }
        above += hist[b];
      }
    }
    __syncthreads();
    prefix = s_prefix;
    remaining = s_remaining;
    mask |= 255u << shift;
  }
  // prefix is now the k-th largest key: take all keys above it and the `remaining` lowest-indexed
  // keys equal to it, counting the equal ones in index order tile by tile.
  if (tid == 0) {
    s_count = 0;
    s_running = 0;
  }
  __syncthreads();
  for (int64_t base = 0; base < cols; base += kBlock) {  // block-uniform
    const int64_t i = base + tid;
    const uint32_t key = i < cols ? ordered(row[i]) : 0u;
    const bool eq = i < cols && key == prefix;
    if (i < cols && key > prefix) pick(picks, p, &s_count, full_key(row[i], i));
    const uint32_t ballot = __ballot_sync(0xffffffffu, eq);
    if (lane == 0) warp_eq[warp] = uint32_t(__popc(ballot));
    __syncthreads();
    uint32_t before = s_running;
    for (int w = 0; w < warp; ++w) before += warp_eq[w];
    before += uint32_t(__popc(ballot & ((1u << lane) - 1u)));
    if (eq && before < remaining) pick(picks, p, &s_count, full_key(row[i], i));
    __syncthreads();
    if (tid == 0)
      for (int w = 0; w < kBlock / 32; ++w) s_running += warp_eq[w];
    __syncthreads();
  }
  for (int j = k + tid; j < p; j += kBlock) picks[j] = 0;  // padding sorts last
  __syncthreads();
  bitonic_sort_desc(picks, p);
  if (s_count == uint32_t(k))
    write_row(picks, row, k, values + int64_t(blockIdx.x) * k, indices + int64_t(blockIdx.x) * k);
  else  // a selection that did not pick exactly k: say so in the output rather than hide it
    for (int j = tid; j < k; j += kBlock) indices[int64_t(blockIdx.x) * k + j] = -1;
}

// Dynamic shared memory: 2 p keys, the running best in [0, p) and the tile in [p, 2p).
__global__ void __launch_bounds__(kBlock)
    topk_bitonic(const float* __restrict__ x, int64_t cols, int k, int p,
                 float* __restrict__ values, int32_t* __restrict__ indices) {
  extern __shared__ uint64_t buf[];
  const float* row = x + int64_t(blockIdx.x) * cols;
  for (int j = int(threadIdx.x); j < p; j += kBlock) buf[j] = 0;
  for (int64_t base = 0; base < cols; base += p) {  // block-uniform
    for (int j = int(threadIdx.x); j < p; j += kBlock)
      buf[p + j] = base + j < cols ? full_key(row[base + j], base + j) : 0;
    __syncthreads();
    bitonic_sort_desc(buf + p, p);
    // Both halves descending: the larger of best[i] and tile[p - 1 - i] is a bitonic sequence
    // holding the best p of the two.
    for (int j = int(threadIdx.x); j < p; j += kBlock) buf[j] = max(buf[j], buf[2 * p - 1 - j]);
    __syncthreads();
    bitonic_merge_desc(buf, p);
  }
  write_row(buf, row, k, values + int64_t(blockIdx.x) * k, indices + int64_t(blockIdx.x) * k);
}

// The baseline's helpers: the keys of every element, and the first k of each sorted row.
__global__ void make_keys(const float* __restrict__ x, int64_t rows, int64_t cols,
                          uint64_t* __restrict__ keys) {
  const int64_t n = rows * cols;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += int64_t(gridDim.x) * blockDim.x)
    keys[e] = full_key(x[e], e % cols);
}

__global__ void take_first_k(const uint64_t* __restrict__ sorted, const float* __restrict__ x,
                             int64_t rows, int64_t cols, int k, float* __restrict__ values,
                             int32_t* __restrict__ indices) {
  const int64_t n = rows * k;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / k;
    const int32_t i = index_of(sorted[r * cols + e % k]);
    indices[e] = i;
    values[e] = x[r * cols + i];
  }
}

__global__ void make_offsets(int64_t rows, int64_t cols, int64_t* __restrict__ offsets) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= rows;
       r += int64_t(gridDim.x) * blockDim.x)
    offsets[r] = r * cols;
}

// ---- launchers ----------------------------------------------------------------------------------
int pow2_at_least(int64_t k) {
  int p = 1;
  while (p < k) p <<= 1;
  return p;
}

struct Args {
  const float* x;
  int64_t rows, cols;
  int k;
  float* values;
  int32_t* indices;
};

void launch_radix_select(const Args& a, cudaStream_t s) {
  const int p = pow2_at_least(a.k);
  topk_radix_select<<<unsigned(a.rows), kBlock, size_t(p) * sizeof(uint64_t), s>>>(
      a.x, a.cols, a.k, p, a.values, a.indices);
  LAUNCH_CHECK();
}

void launch_bitonic(const Args& a, cudaStream_t s) {
  // Tiles of at least 2 kBlock elements, so every thread has a comparator in each step.
  const int p = std::max(pow2_at_least(a.k), 2 * kBlock);
  topk_bitonic<<<unsigned(a.rows), kBlock, 2 * size_t(p) * sizeof(uint64_t), s>>>(
      a.x, a.cols, a.k, p, a.values, a.indices);
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(const Args&, cudaStream_t);
};
const Version kVersions[] = {
    {"radix_select", launch_radix_select},
    {"bitonic", launch_bitonic},
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("top-k of every row: radix select, bitonic, vs CUB's full segmented sort");
  int64_t rows = 4096, cols = 32003;
  int k = 50;  // no power of two
  cli.size("rows", rows, 37, "rows (one block each)", (int64_t(1) << 31) - 1);
  cli.size("cols", cols, 1031, "elements per row", int64_t(1) << 31);
  cli.option("k", k, "elements kept per row (at most cols)", 1, kMaxK);
  cli.kernels_of(kVersions);
  cli.validate([&]() -> std::string {
    if (k > cols) return fmt::format("--k {} is more than --cols {}", k, cols);
    return "";
  });
  cli.device_bytes([&] {  // input, CUB's two key arrays, outputs, offsets
    return double(rows) * double(cols) * 20.0 + double(rows) * k * 8.0 + 8.0 * double(rows + 1);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("Mrows/s");
    const auto x = make_rows(rows, cols, ctx.seed());
    const TopK ref = topk_cpu(x, rows, cols, k);
    gpu100::DeviceBuffer<float> d_x(x), d_values{size_t(rows * k)};
    gpu100::DeviceBuffer<int32_t> d_indices{size_t(rows * k)};
    const Args args{d_x.data(), rows, cols, k, d_values.data(), d_indices.data()};

    // The baseline: CUB sorts every row completely.
    gpu100::DeviceBuffer<uint64_t> d_keys{size_t(rows * cols)}, d_sorted{size_t(rows * cols)};
    gpu100::DeviceBuffer<int64_t> d_offsets{size_t(rows + 1)};
    size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceSegmentedSort::SortKeysDescending(
        nullptr, temp_bytes, d_keys.data(), d_sorted.data(), rows * cols, rows, d_offsets.data(),
        d_offsets.data() + 1));
    gpu100::DeviceBuffer<unsigned char> d_temp{std::max<size_t>(temp_bytes, 1)};
    const unsigned grid = std::min<unsigned>(gpu100::grid_for(rows * cols, kBlock), 65535u);

    auto check = [&] {
      return gpu100::combine(gpu100::compare_exact(d_values.download(), ref.values),
                             gpu100::compare_exact(d_indices.download(), ref.indices));
    };
    auto reset = [&] {
      d_values.poison();
      d_indices.poison();
    };
    auto rate = [&](double ms) { return double(rows) / (ms * 1e3); };

    std::vector<gpu100::Measure> runs{
        {.name = "cub::DeviceSegmentedSort",
         .launch =
             [&](cudaStream_t s) {
               make_offsets<<<1 + unsigned(rows / kBlock), kBlock, 0, s>>>(rows, cols,
                                                                           d_offsets.data());
               LAUNCH_CHECK();
               make_keys<<<grid, kBlock, 0, s>>>(d_x.data(), rows, cols, d_keys.data());
               LAUNCH_CHECK();
               CUDA_CHECK(cub::DeviceSegmentedSort::SortKeysDescending(
                   d_temp.data(), temp_bytes, d_keys.data(), d_sorted.data(), rows * cols, rows,
                   d_offsets.data(), d_offsets.data() + 1, s));
               take_first_k<<<std::min<unsigned>(gpu100::grid_for(rows * k, kBlock), 65535u),
                              kBlock, 0, s>>>(d_sorted.data(), d_x.data(), rows, cols, k,
                                              d_values.data(), d_indices.data());
               LAUNCH_CHECK();
             },
         .reset = reset,
         .check = check,
         .rate = rate,
         .role = gpu100::Role::baseline}};
    for (const Version& v : kVersions)
      runs.push_back({.name = v.name,
                      .launch = [&](cudaStream_t s) { v.launch(args, s); },
                      .reset = reset,
                      .check = check,
                      .rate = rate});
    ctx.measure_all(runs);
    report.note(
        "rows by index mod 4: distinct random values; few distinct values (ties, -0 and +0); all "
        "equal; random with +-inf");
  });
}
