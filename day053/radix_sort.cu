// Day 053 - radix sort: LSD passes built from block-local scans, keys and key-value pairs
//
// A least-significant-digit radix sort looks at b bits of every key per pass, lowest digit first,
// and each pass is a stable counting sort by that digit: keys with a smaller digit go first, keys
// with equal digits keep their order. Stability is what makes the passes compose: after the pass
// on digit k the keys are sorted by their lowest k+1 digits. Each pass on the GPU is three
// launches over tiles of the input:
//   count    each block counts the digits of its tile: counts[digit][block] (digit-major)
//   scan     an exclusive scan of that array gives, for every (digit, block), where in the output
//            the block's keys of that digit start: all smaller digits of all blocks, then this
//            digit of the blocks before it (this is where the pass stays stable across blocks)
//   scatter  each block sorts its tile by the digit in shared memory, with b one-bit splits
//            (each a block-wide exclusive scan of "how many ones before me"), then writes every
//            key to its block's offset for the digit plus its rank among the tile's keys of that
//            digit. Sorting the tile first makes those writes runs of consecutive addresses.
// The splits are the same in every version: 32 one-bit splits of every key in all. What b changes
// is how often the keys travel through global memory (32 / b passes of count + scatter) against
// the size of the count array (2^b digits per tile) and the length of the runs the scatter writes.
//
// Versions (each sorts keys, or key-value pairs with --pairs: the values travel with the keys)
//   radix1  one bit per pass: 32 passes, two digits, the simplest split sort.
//   radix4  four bits per pass: 8 passes, 16 digits, four splits per tile per pass.
//   radix8  eight bits per pass: 4 passes, 256 digits, so the scatter's runs are short.
//   cub::DeviceRadixSort::SortKeys / SortPairs, the baseline (checked too).
//
// Inputs (--input): random (uniform 32-bit keys), dups (64 distinct random keys: long runs of
// equal keys, where an unstable sort shows), equal, sorted, reverse.
//
// Check: keys exact against std::stable_sort; with --pairs each value is its key's input
// position, so the values must equal the positions in std::stable_sort's order exactly: one pair
// of equal keys out of order fails the check. Every size works, not only multiples of a tile.
//
// Run:  build/bin/day053 [--n 16777216] [--pairs] [--input random|dups|equal|sorted|reverse]
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cub/cub.cuh>
#include <numeric>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr int kItems = 4;  // keys per thread in a split: one 16-byte shared-memory load
constexpr int kTile = kBlock * kItems;
constexpr int kWarps = kBlock / 32;

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<uint32_t> make_keys(const std::string& input, int64_t n, uint64_t seed) {
  std::vector<uint32_t> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = gpu100::mix64(seed * 0x9e3779b97f4a7c15ull + uint64_t(i));
    if (input == "random") keys[size_t(i)] = uint32_t(r >> 32);
    // 64 distinct keys whose bits reach every digit of every version.
    else if (input == "dups")
      keys[size_t(i)] = uint32_t(gpu100::mix64(seed + (r >> 58)) >> 32);
    // An odd number of ones: a split that reversed the ones would not undo itself over 32 bits.
    else if (input == "equal")
      keys[size_t(i)] = 0x9e3779b8u;
    else if (input == "sorted")
      keys[size_t(i)] = uint32_t(i) * 3u;  // gaps, and still sorted
    else
      keys[size_t(i)] = uint32_t(n - 1 - i) * 3u;  // reverse
  }
  return keys;
}

// The input positions in the order of a stable sort by key.
std::vector<uint32_t> stable_order(const std::vector<uint32_t>& keys) {
  std::vector<uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  return order;
}

// ---- kernels ------------------------------------------------------------------------------------
// Exclusive scan of one value per thread over the block; `total` gets the sum of all of them.
// Warp scans with shuffles, then warp 0 scans the warp totals. It ends with a barrier, so the
// caller may overwrite what it read before calling.
__device__ uint32_t block_exclusive_scan(uint32_t x, uint32_t& total) {
  __shared__ uint32_t s_warp[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint32_t inclusive = x;
  for (int o = 1; o < 32; o <<= 1) {
    const uint32_t y = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  if (lane == 31) s_warp[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    uint32_t w = lane < kWarps ? s_warp[lane] : 0;
    for (int o = 1; o < kWarps; o <<= 1) {
      const uint32_t y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < kWarps) s_warp[lane] = w;  // inclusive prefix of the warp totals
  }
  __syncthreads();
  const uint32_t result = inclusive - x + (warp > 0 ? s_warp[warp - 1] : 0u);
  total = s_warp[kWarps - 1];
  __syncthreads();
  return result;
}

// counts[d * blocks + block] = the keys of this block's tile whose digit is d.
template <int kBits>
__global__ void radix_count(const uint32_t* __restrict__ keys, uint32_t* __restrict__ counts,
                            int64_t n, int shift) {
  constexpr uint32_t kRadix = 1u << kBits;
  __shared__ uint32_t s_hist[kRadix];
  for (uint32_t d = threadIdx.x; d < kRadix; d += kBlock) s_hist[d] = 0;
  __syncthreads();
  const int64_t base = int64_t(blockIdx.x) * kTile;
  for (int j = threadIdx.x; j < kTile; j += kBlock)
    if (base + j < n) atomicAdd(&s_hist[(keys[base + j] >> shift) & (kRadix - 1)], 1u);
  __syncthreads();
  for (uint32_t d = threadIdx.x; d < kRadix; d += kBlock)
    counts[int64_t(d) * gridDim.x + blockIdx.x] = s_hist[d];
}

// One block: offsets = exclusive scan of counts (m entries), a tile of kTile entries at a time
// with the running total carried from tile to tile.
__global__ void radix_scan(const uint32_t* __restrict__ counts, uint32_t* __restrict__ offsets,
                           int64_t m) {
  uint32_t carry = 0;
  for (int64_t base = 0; base < m; base += kTile) {
    const int64_t first = base + int64_t(threadIdx.x) * kItems;
    uint32_t v[kItems], sum = 0;
    for (int i = 0; i < kItems; ++i) {
      v[i] = first + i < m ? counts[first + i] : 0u;
      sum += v[i];
    }
    uint32_t total;
    uint32_t run = carry + block_exclusive_scan(sum, total);
    for (int i = 0; i < kItems; ++i) {
      if (first + i < m) offsets[first + i] = run;
      run += v[i];
    }
    carry += total;
  }
}

// One pass: sort the tile by the digit at `shift` with kBits one-bit splits in shared memory,
// then write each key (and value) to offsets[digit][block] + its rank within the tile's digit.
// Positions past n hold all-ones keys: the largest digit, after every real key of that digit (the
// splits are stable and they start last), so they end at the tile's end and are never written.
template <int kBits, bool kPairs>
__global__ void radix_scatter(const uint32_t* __restrict__ keys_in,
                              const uint32_t* __restrict__ vals_in, uint32_t* __restrict__ keys_out,
                              uint32_t* __restrict__ vals_out, const uint32_t* __restrict__ offsets,
                              int64_t n, int shift) {
  constexpr uint32_t kRadix = 1u << kBits;
  __shared__ __align__(16) uint32_t s_keys[kTile];
  __shared__ __align__(16) uint32_t s_vals[kPairs ? kTile : 4];
  __shared__ uint32_t s_start[kRadix];  // first tile position of each digit present
  const int64_t base = int64_t(blockIdx.x) * kTile;
  const int valid = int(min(int64_t(kTile), n - base));
  for (int j = threadIdx.x; j < kTile; j += kBlock) {
    s_keys[j] = j < valid ? keys_in[base + j] : 0xffffffffu;
    if (kPairs) s_vals[j] = j < valid ? vals_in[base + j] : 0u;
  }
  __syncthreads();

  for (int b = 0; b < kBits; ++b) {
    // Each thread owns kItems consecutive positions: the split keeps positions in order.
    const uint4 k4 = reinterpret_cast<const uint4*>(s_keys)[threadIdx.x];
    const uint32_t k[kItems] = {k4.x, k4.y, k4.z, k4.w};
    uint32_t v[kItems] = {0, 0, 0, 0};
    if (kPairs) {
      const uint4 v4 = reinterpret_cast<const uint4*>(s_vals)[threadIdx.x];
      v[0] = v4.x, v[1] = v4.y, v[2] = v4.z, v[3] = v4.w;
    }
    uint32_t ones = 0;
    for (int i = 0; i < kItems; ++i) ones += (k[i] >> (shift + b)) & 1u;
    uint32_t total_ones;
    uint32_t ones_before = block_exclusive_scan(ones, total_ones);  // ends with a barrier
    const uint32_t zeros_total = kTile - total_ones;
    for (int i = 0; i < kItems; ++i) {
      const uint32_t p = threadIdx.x * kItems + i, bit = (k[i] >> (shift + b)) & 1u;
      const uint32_t to = bit ? zeros_total + ones_before : p - ones_before;
      ones_before += bit;
      s_keys[to] = k[i];
      if (kPairs) s_vals[to] = v[i];
    }
    __syncthreads();
  }

  for (int j = threadIdx.x; j < valid; j += kBlock) {
    const uint32_t d = (s_keys[j] >> shift) & (kRadix - 1);
    if (j == 0 || ((s_keys[j - 1] >> shift) & (kRadix - 1)) != d) s_start[d] = j;
  }
  __syncthreads();
  for (int j = threadIdx.x; j < valid; j += kBlock) {
    const uint32_t d = (s_keys[j] >> shift) & (kRadix - 1);
    const uint32_t to = offsets[int64_t(d) * gridDim.x + blockIdx.x] + uint32_t(j) - s_start[d];
    keys_out[to] = s_keys[j];
    if (kPairs) vals_out[to] = s_vals[j];
  }
}

// ---- launchers ----------------------------------------------------------------------------------
struct Sort {
  const uint32_t *keys, *vals;  // input (never written)
  uint32_t *keys_out, *vals_out;
  uint32_t *keys_tmp, *vals_tmp;  // the other buffer of the ping-pong
  uint32_t *counts, *offsets;     // 256 digits x tiles: room for every version
  int64_t n;
};

unsigned tiles_of(int64_t n) {
  return gpu100::grid_for(n, kTile);
}

template <int kBits, bool kPairs>
void radix_sort(const Sort& s, cudaStream_t st) {
  constexpr int kPasses = 32 / kBits;
  const unsigned tiles = tiles_of(s.n);
  const int64_t m = int64_t(tiles) << kBits;
  const uint32_t *src_k = s.keys, *src_v = s.vals;
  for (int p = 0; p < kPasses; ++p) {
    // The last pass writes the output, so the ping-pong starts from whichever side gets it there.
    const bool to_out = (kPasses - 1 - p) % 2 == 0;
    uint32_t* dst_k = to_out ? s.keys_out : s.keys_tmp;
    uint32_t* dst_v = to_out ? s.vals_out : s.vals_tmp;
    radix_count<kBits><<<tiles, kBlock, 0, st>>>(src_k, s.counts, s.n, p * kBits);
    LAUNCH_CHECK();
    radix_scan<<<1, kBlock, 0, st>>>(s.counts, s.offsets, m);
    LAUNCH_CHECK();
    radix_scatter<kBits, kPairs>
        <<<tiles, kBlock, 0, st>>>(src_k, src_v, dst_k, dst_v, s.offsets, s.n, p * kBits);
    LAUNCH_CHECK();
    src_k = dst_k, src_v = dst_v;
  }
}

struct Version {
  const char* name;
  void (*keys)(const Sort&, cudaStream_t);
  void (*pairs)(const Sort&, cudaStream_t);
};
const Version kVersions[] = {
    {"radix1", radix_sort<1, false>, radix_sort<1, true>},
    {"radix4", radix_sort<4, false>, radix_sort<4, true>},
    {"radix8", radix_sort<8, false>, radix_sort<8, true>},
};

// ---- analysis -----------------------------------------------------------------------------------
gpu100::CheckResult check_sorted(const std::vector<uint32_t>& got_keys,
                                 const std::vector<uint32_t>& ref_keys, bool pairs,
                                 const std::vector<uint32_t>& got_vals,
                                 const std::vector<uint32_t>& ref_order) {
  const auto c = gpu100::compare_exact(got_keys, ref_keys);
  return pairs ? gpu100::combine(c, gpu100::compare_exact(got_vals, ref_order)) : c;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("LSD radix sort with block-local scans: 1, 4, 8 bits per pass vs CUB");
  int64_t n = int64_t(1) << 24;
  bool pairs = false;
  std::string input = "random";
  cli.size("n", n, 100'003, "keys to sort", UINT32_MAX);
  cli.flag("pairs", pairs, "sort key-value pairs (the values are the input positions)");
  cli.option("input", input, {"random", "dups", "equal", "sorted", "reverse"}, "the keys");
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    // keys (and values) in, out and ping-pong; counts and offsets; CUB's buffers and scratch.
    return (pairs ? 2.0 : 1.0) * 4.0 * double(n) * 5 + 2.0 * 4.0 * 256 * double(n) / kTile +
           double(64 << 20);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("Gkeys/s");
    const auto keys = make_keys(input, n, ctx.seed());
    const auto order = stable_order(keys);
    std::vector<uint32_t> ref_keys(static_cast<size_t>(n)), positions(static_cast<size_t>(n));
    for (size_t i = 0; i < size_t(n); ++i) ref_keys[i] = keys[order[i]];
    std::iota(positions.begin(), positions.end(), 0u);

    const size_t cnt = size_t(n), vcnt = pairs ? size_t(n) : 1;
    gpu100::DeviceBuffer<uint32_t> d_keys(keys), d_vals{vcnt}, d_keys_out{cnt}, d_vals_out{vcnt},
        d_keys_tmp{cnt}, d_vals_tmp{vcnt}, d_counts{size_t(tiles_of(n)) * 256},
        d_offsets{size_t(tiles_of(n)) * 256};
    if (pairs) d_vals.upload(positions);
    const Sort s{d_keys.data(),     d_vals.data(),     d_keys_out.data(),
                 d_vals_out.data(), d_keys_tmp.data(), d_vals_tmp.data(),
                 d_counts.data(),   d_offsets.data(),  n};

    size_t temp_bytes = 0;
    if (pairs)
      CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, s.keys, s.keys_out, s.vals,
                                                 s.vals_out, n));
    else
      CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, s.keys, s.keys_out, n));
    gpu100::DeviceBuffer<unsigned char> d_temp{std::max<size_t>(temp_bytes, 1)};

    const auto reset = [&] {
      d_keys_out.poison();
      d_vals_out.poison();
      d_keys_tmp.poison();
      d_vals_tmp.poison();
    };
    const auto check = [&] {
      return check_sorted(d_keys_out.download(), ref_keys, pairs,
                          pairs ? d_vals_out.download() : std::vector<uint32_t>{}, order);
    };
    const auto rate = [n](double ms) { return double(n) / (ms * 1e6); };
    std::vector<gpu100::Measure> runs{
        {.name = pairs ? "cub::DeviceRadixSort::SortPairs" : "cub::DeviceRadixSort::SortKeys",
         .launch =
             [&](cudaStream_t st) {
               if (pairs)
                 CUDA_CHECK(cub::DeviceRadixSort::SortPairs(d_temp.data(), temp_bytes, s.keys,
                                                            s.keys_out, s.vals, s.vals_out, n, 0,
                                                            32, st));
               else
                 CUDA_CHECK(cub::DeviceRadixSort::SortKeys(d_temp.data(), temp_bytes, s.keys,
                                                           s.keys_out, n, 0, 32, st));
             },
         .reset = reset,
         .check = check,
         .rate = rate,
         .role = gpu100::Role::baseline}};
    for (const Version& v : kVersions)
      runs.push_back({.name = v.name,
                      .launch = [&](cudaStream_t st) { (pairs ? v.pairs : v.keys)(s, st); },
                      .reset = reset,
                      .check = check,
                      .rate = rate});
    ctx.measure_all(runs);

    int64_t distinct = 1;
    for (size_t i = 1; i < ref_keys.size(); ++i) distinct += ref_keys[i] != ref_keys[i - 1];
    report.note(fmt::format(
        "{} keys, {} distinct; {}", n, distinct,
        pairs ? "pairs: values are input positions, so stability is checked" : "keys only"));
  });
}
