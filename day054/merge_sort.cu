// Day 054 - merge sort by co-rank, and a bitonic sorting network
//
// Merging two sorted arrays A and B looks sequential: each output depends on every comparison
// before it. The co-rank (PMPP ch. 12) breaks that: the first k outputs of the merge are the
// first i of A and the first k - i of B for one i, and a binary search finds that i from k
// alone (the i with A[i-1] <= B[k-i] and B[k-i-1] < A[i]). So every thread can find where its
// own k outputs begin and merge them independently. With ties sent to A first the merge is
// stable, and a merge sort built from it is too. A bitonic network instead compares and swaps
// fixed pairs in log2(n)(log2(n)+1)/2 steps whatever the data: no search, no divergence, but
// it needs a power-of-two length and it is not stable.
//
// Versions (key-value pairs; the values are the input positions)
//   merge_global    each block sorts a tile of 1024 pairs in shared memory (a stable insertion
//                   sort of 4 per thread, then co-rank merges of doubling width), then one launch
//                   per doubling of the run width: every thread co-ranks its 4 outputs by binary
//                   search in global memory and merges them from there.
//   merge_tiled     the same tile sort, but each merge launch gives a block 1024 outputs: two
//                   co-ranks place the block's slices of A and B, which are loaded coalesced into
//                   shared memory, merged there, and stored coalesced.
//   bitonic_global  padded to a power of two (all-ones keys that sort after every real key),
//                   one launch per compare-and-swap step.
//   bitonic_shared  the same network, but each tile of 1024 is sorted in shared memory by one
//                   launch, and every step with a partner distance below the tile runs there too:
//                   only the steps across tiles go through global memory.
//
// Check: exact. The merge sorts claim stability: keys and values must equal std::stable_sort's
// order. The bitonic sorts do not: keys must equal std::sort's, and every output pair must be an
// input pair (values a permutation of the positions, each with its own key). --input dups
// (64 distinct keys) and equal put many equal keys side by side, where an unstable merge shows.
//
// Run:  build/bin/day054 [--n 16777216] [--input random|dups|equal|sorted|reverse]
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr int kItems = 4;  // outputs per thread in every merge
constexpr int kTile = kBlock * kItems;
constexpr uint32_t kPad = 0xffffffffu;  // the value of a padding pair (positions are < 2^31)

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<uint32_t> make_keys(const std::string& input, int64_t n, uint64_t seed) {
  std::vector<uint32_t> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = gpu100::mix64(seed * 0x9e3779b97f4a7c15ull + uint64_t(i));
    if (input == "random") keys[size_t(i)] = uint32_t(r >> 32);
    // 64 distinct keys, among them 0 and the largest (the bitonic padding's key).
    else if (input == "dups")
      keys[size_t(i)] = (r >> 58) == 0    ? 0u
                        : (r >> 58) == 63 ? 0xffffffffu
                                          : uint32_t(gpu100::mix64(seed + (r >> 58)) >> 32);
    // The largest key, the padding's too: the bitonic sorts must keep real pairs before padding.
    else if (input == "equal")
      keys[size_t(i)] = 0xffffffffu;
    else if (input == "sorted")
      keys[size_t(i)] = uint32_t(i) * 3u;
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
// How many of the first k outputs of the stable merge of A (m keys) and B (nb keys) come from A.
// i is too small while A[i] <= B[k-i-1]: then A[i] belongs before an output already given to B.
template <class Index>
__device__ Index co_rank(Index k, const uint32_t* a, Index m, const uint32_t* b, Index nb) {
  Index lo = k > nb ? k - nb : 0, hi = k < m ? k : m;
  while (lo < hi) {
    const Index i = lo + (hi - lo) / 2;
    if (a[i] <= b[k - i - 1])
      lo = i + 1;
    else
      hi = i;
  }
  return lo;
}

// count outputs of the stable merge from (i, j) on: ties take A first.
template <class Index>
__device__ void merge_from(const uint32_t* ak, const uint32_t* av, Index m, const uint32_t* bk,
                           const uint32_t* bv, Index nb, Index i, Index j, uint32_t* ok,
                           uint32_t* ov, int count) {
  for (int c = 0; c < count; ++c) {
    if (j >= nb || (i < m && ak[i] <= bk[j])) {
      ok[c] = ak[i], ov[c] = av[i], ++i;
    } else {
      ok[c] = bk[j], ov[c] = bv[j], ++j;
    }
  }
}

// Sorts each tile of kTile pairs, stably. Positions past n hold (all ones, kPad): the largest key,
// after every real key equal to it (they start last and every step is stable), never written.
__global__ void tile_merge_sort(const uint32_t* __restrict__ keys_in,
                                const uint32_t* __restrict__ vals_in,
                                uint32_t* __restrict__ keys_out, uint32_t* __restrict__ vals_out,
                                int64_t n) {
  __shared__ uint32_t s_k[2][kTile], s_v[2][kTile];
  const int64_t base = int64_t(blockIdx.x) * kTile;
  const int valid = int(min(int64_t(kTile), n - base));
  for (int x = threadIdx.x; x < kTile; x += kBlock) {
    s_k[0][x] = x < valid ? keys_in[base + x] : 0xffffffffu;
    s_v[0][x] = x < valid ? vals_in[base + x] : kPad;
  }
  __syncthreads();
  {  // insertion sort of the thread's own kItems (moves only past strictly larger keys)
    const int first = threadIdx.x * kItems;
    uint32_t k[kItems], v[kItems];
    for (int i = 0; i < kItems; ++i) {
      uint32_t key = s_k[0][first + i], val = s_v[0][first + i];
      int p = i;
      for (; p > 0 && k[p - 1] > key; --p) k[p] = k[p - 1], v[p] = v[p - 1];
      k[p] = key, v[p] = val;
    }
    for (int i = 0; i < kItems; ++i) s_k[0][first + i] = k[i], s_v[0][first + i] = v[i];
  }
  __syncthreads();
  int src = 0;
  for (int w = kItems; w < kTile; w *= 2) {
    const int k0 = threadIdx.x * kItems, lo = k0 & ~(2 * w - 1);
    const uint32_t *ak = s_k[src] + lo, *av = s_v[src] + lo;
    const int i = co_rank(k0 - lo, ak, w, ak + w, w);
    merge_from(ak, av, w, ak + w, av + w, w, i, k0 - lo - i, s_k[src ^ 1] + k0, s_v[src ^ 1] + k0,
               kItems);
    __syncthreads();
    src ^= 1;
  }
  for (int x = threadIdx.x; x < valid; x += kBlock) {
    keys_out[base + x] = s_k[src][x];
    vals_out[base + x] = s_v[src][x];
  }
}

// The runs [lo, lo + w) and [lo + w, lo + 2w) (cut at n) of the pair that output k0 falls in.
struct RunPair {
  int64_t lo, m, nb;
};
__device__ RunPair run_pair(int64_t k0, int64_t n, int64_t w) {
  const int64_t lo = k0 / (2 * w) * (2 * w);
  const int64_t m = min(w, n - lo);
  return {lo, m, max(int64_t(0), min(w, n - lo - m))};
}

// One merge of runs of width w into runs of 2w: each thread finds its kItems outputs' start by
// a binary search in global memory, then merges them from there.
__global__ void merge_pass_global(const uint32_t* __restrict__ keys_in,
                                  const uint32_t* __restrict__ vals_in,
                                  uint32_t* __restrict__ keys_out, uint32_t* __restrict__ vals_out,
                                  int64_t n, int64_t w) {
  const int64_t k0 = (int64_t(blockIdx.x) * kBlock + threadIdx.x) * kItems;
  if (k0 >= n) return;
  const RunPair r = run_pair(k0, n, w);
  const uint32_t *ak = keys_in + r.lo, *av = vals_in + r.lo;
  const int64_t i = co_rank(k0 - r.lo, ak, r.m, ak + r.m, r.nb);
  merge_from(ak, av, r.m, ak + r.m, av + r.m, r.nb, i, k0 - r.lo - i, keys_out + k0, vals_out + k0,
             int(min(int64_t(kItems), n - k0)));
}

// The same merge, a block per kTile outputs: its slices of A and B go through shared memory.
// A tile never straddles two run pairs: w is a multiple of kTile.
__global__ void merge_pass_tiled(const uint32_t* __restrict__ keys_in,
                                 const uint32_t* __restrict__ vals_in,
                                 uint32_t* __restrict__ keys_out, uint32_t* __restrict__ vals_out,
                                 int64_t n, int64_t w) {
  __shared__ uint32_t s_k[kTile], s_v[kTile], o_k[kTile], o_v[kTile];
  __shared__ int64_t s_rank[2];
  const int64_t t0 = int64_t(blockIdx.x) * kTile, t1 = min(t0 + kTile, n);
  const RunPair r = run_pair(t0, n, w);
  const uint32_t *ak = keys_in + r.lo, *av = vals_in + r.lo, *bk = ak + r.m, *bv = av + r.m;
  if (threadIdx.x < 2)
    s_rank[threadIdx.x] = co_rank((threadIdx.x == 0 ? t0 : t1) - r.lo, ak, r.m, bk, r.nb);
  __syncthreads();
  const int64_t i0 = s_rank[0], j0 = t0 - r.lo - i0;
  const int na = int(s_rank[1] - i0), len = int(t1 - t0), nbb = len - na;
  for (int x = threadIdx.x; x < len; x += kBlock) {
    s_k[x] = x < na ? ak[i0 + x] : bk[j0 + x - na];
    s_v[x] = x < na ? av[i0 + x] : bv[j0 + x - na];
  }
  __syncthreads();
  const int k0 = threadIdx.x * kItems;
  if (k0 < len) {
    const int i = co_rank(k0, s_k, na, s_k + na, nbb);
    merge_from(s_k, s_v, na, s_k + na, s_v + na, nbb, i, k0 - i, o_k + k0, o_v + k0,
               min(kItems, len - k0));
  }
  __syncthreads();
  for (int x = threadIdx.x; x < len; x += kBlock) {
    keys_out[t0 + x] = o_k[x];
    vals_out[t0 + x] = o_v[x];
  }
}

// Bitonic: positions [0, p2) with p2 the power of two >= n; pairs past n are (all ones, kPad).
__global__ void bitonic_load(const uint32_t* __restrict__ keys_in,
                             const uint32_t* __restrict__ vals_in, uint32_t* __restrict__ keys,
                             uint32_t* __restrict__ vals, int64_t n, int64_t p2) {
  const int64_t x = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (x >= p2) return;
  keys[x] = x < n ? keys_in[x] : 0xffffffffu;
  vals[x] = x < n ? vals_in[x] : kPad;
}

// A padding pair goes after a real pair of the same key, so the first n outputs are real pairs.
__device__ bool goes_before(uint32_t ka, uint32_t va, uint32_t kb, uint32_t vb) {
  return ka < kb || (ka == kb && va != kPad && vb == kPad);
}

// Pair number q of a step with partner distance j: its lower position, and whether the k-wide
// bitonic sequence it belongs to is sorted ascending.
__device__ void compare_swap(uint32_t* keys, uint32_t* vals, int64_t q, int64_t j, int64_t k,
                             int64_t offset) {
  const int64_t i = 2 * j * (q / j) + q % j, l = i + j;
  const bool ascending = ((offset + i) & k) == 0;
  const uint32_t ki = keys[i], kl = keys[l], vi = vals[i], vl = vals[l];
  if (ascending ? goes_before(kl, vl, ki, vi) : goes_before(ki, vi, kl, vl)) {
    keys[i] = kl, keys[l] = ki;
    vals[i] = vl, vals[l] = vi;
  }
}

// One step (k, j) over all p2 / 2 pairs.
__global__ void bitonic_step(uint32_t* __restrict__ keys, uint32_t* __restrict__ vals, int64_t p2,
                             int64_t k, int64_t j) {
  const int64_t q = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (q < p2 / 2) compare_swap(keys, vals, q, j, k, 0);
}

// In shared memory, on a tile of t = min(p2, kTile) positions: every step (k, j) with k from
// k_first to k_last and j < t. From k_first = 2 it sorts the tile; with k_first = k_last = k it
// finishes a merge step k after the steps across tiles.
__global__ void bitonic_tile(uint32_t* __restrict__ keys, uint32_t* __restrict__ vals, int64_t p2,
                             int64_t k_first, int64_t k_last) {
  __shared__ uint32_t s_k[kTile], s_v[kTile];
  const int t = int(min(p2, int64_t(kTile)));
  const int64_t base = int64_t(blockIdx.x) * t;
  for (int x = threadIdx.x; x < t; x += kBlock) s_k[x] = keys[base + x], s_v[x] = vals[base + x];
  __syncthreads();
  for (int64_t k = k_first; k <= k_last; k *= 2)
    for (int64_t j = min(k / 2, int64_t(t / 2)); j >= 1; j /= 2) {
      for (int q = threadIdx.x; q < t / 2; q += kBlock) compare_swap(s_k, s_v, q, j, k, base);
      __syncthreads();
    }
  for (int x = threadIdx.x; x < t; x += kBlock) keys[base + x] = s_k[x], vals[base + x] = s_v[x];
}

// ---- launchers ----------------------------------------------------------------------------------
struct Sort {
  const uint32_t *keys, *vals;    // input (never written)
  uint32_t *keys_out, *vals_out;  // p2 each: the bitonic sorts work in place here
  uint32_t *keys_tmp, *vals_tmp;  // the merges' other buffer
  int64_t n, p2;
};

int merge_passes(int64_t n) {
  int passes = 0;
  for (int64_t w = kTile; w < n; w *= 2) ++passes;
  return passes;
}

void merge_sort(const Sort& s, bool tiled, cudaStream_t st) {
  const int passes = merge_passes(s.n);
  // The last pass writes the output, so the ping-pong starts on whichever side gets it there.
  uint32_t *k = passes % 2 ? s.keys_tmp : s.keys_out, *v = passes % 2 ? s.vals_tmp : s.vals_out;
  uint32_t *k2 = passes % 2 ? s.keys_out : s.keys_tmp, *v2 = passes % 2 ? s.vals_out : s.vals_tmp;
  tile_merge_sort<<<gpu100::grid_for(s.n, kTile), kBlock, 0, st>>>(s.keys, s.vals, k, v, s.n);
  LAUNCH_CHECK();
  for (int64_t w = kTile; w < s.n; w *= 2) {
    if (tiled)
      merge_pass_tiled<<<gpu100::grid_for(s.n, kTile), kBlock, 0, st>>>(k, v, k2, v2, s.n, w);
    else
      merge_pass_global<<<gpu100::grid_for(s.n, kTile), kBlock, 0, st>>>(k, v, k2, v2, s.n, w);
    LAUNCH_CHECK();
    std::swap(k, k2), std::swap(v, v2);
  }
}

void bitonic_sort(const Sort& s, bool shared, cudaStream_t st) {
  bitonic_load<<<gpu100::grid_for(s.p2, kBlock), kBlock, 0, st>>>(s.keys, s.vals, s.keys_out,
                                                                  s.vals_out, s.n, s.p2);
  LAUNCH_CHECK();
  const int64_t t = std::min<int64_t>(s.p2, kTile);
  const unsigned pair_grid = gpu100::grid_for(std::max<int64_t>(s.p2 / 2, 1), kBlock);
  if (shared) {
    bitonic_tile<<<unsigned(s.p2 / t), kBlock, 0, st>>>(s.keys_out, s.vals_out, s.p2, 2, t);
    LAUNCH_CHECK();
  }
  for (int64_t k = shared ? 2 * t : 2; k <= s.p2; k *= 2) {
    for (int64_t j = k / 2; j >= (shared ? t : 1); j /= 2) {
      bitonic_step<<<pair_grid, kBlock, 0, st>>>(s.keys_out, s.vals_out, s.p2, k, j);
      LAUNCH_CHECK();
    }
    if (shared) {
      bitonic_tile<<<unsigned(s.p2 / t), kBlock, 0, st>>>(s.keys_out, s.vals_out, s.p2, k, k);
      LAUNCH_CHECK();
    }
  }
}

struct Version {
  const char* name;
  void (*launch)(const Sort&, cudaStream_t);
  bool stable;
};
const Version kVersions[] = {
    {"merge_global", [](const Sort& s, cudaStream_t st) { merge_sort(s, false, st); }, true},
    {"merge_tiled", [](const Sort& s, cudaStream_t st) { merge_sort(s, true, st); }, true},
    {"bitonic_global", [](const Sort& s, cudaStream_t st) { bitonic_sort(s, false, st); }, false},
    {"bitonic_shared", [](const Sort& s, cudaStream_t st) { bitonic_sort(s, true, st); }, false},
};

// ---- analysis -----------------------------------------------------------------------------------
// For a sort that does not claim stability: keys exact, and every output pair an input pair
// (the values a permutation of the positions, each beside its own key).
gpu100::CheckResult check_pairs_intact(const std::vector<uint32_t>& got_keys,
                                       const std::vector<uint32_t>& got_vals,
                                       const std::vector<uint32_t>& keys,
                                       const std::vector<uint32_t>& ref_keys,
                                       const std::vector<uint32_t>& stable) {
  gpu100::CheckResult c = gpu100::compare_exact(got_keys, ref_keys);
  std::vector<uint8_t> seen(keys.size(), 0);
  int64_t bad = 0, first_bad = -1;
  for (size_t i = 0; i < got_vals.size(); ++i) {
    const uint32_t p = got_vals[i];
    const bool ok = p < keys.size() && !seen[p] && keys[p] == got_keys[i];
    if (ok) seen[p] = 1;
    if (!ok && bad++ == 0) first_bad = int64_t(i);
  }
  gpu100::CheckResult pairs;
  pairs.checked = true;
  pairs.tolerance = "exact";
  pairs.count = int64_t(got_vals.size());
  pairs.pass = bad == 0;
  pairs.mismatches = bad;
  pairs.rel_err = got_vals.empty() ? 0 : double(bad) / double(got_vals.size());
  if (bad) {  // "expected": the stable order's value there, one of the admissible ones
    pairs.worst_index = first_bad;
    pairs.worst_got = got_vals[size_t(first_bad)];
    pairs.worst_ref = stable[size_t(first_bad)];
  }
  return gpu100::combine(c, pairs);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("Merge sort by co-rank (global, tiled) and bitonic networks (global, shared)");
  int64_t n = int64_t(1) << 24;
  std::string input = "random";
  cli.size("n", n, 100'003, "key-value pairs to sort", INT32_MAX);
  cli.option("input", input, {"random", "dups", "equal", "sorted", "reverse"}, "the keys");
  cli.kernels_of(kVersions);
  cli.device_bytes([&] { return 8.0 * double(n) + 2 * 8.0 * 2.0 * double(n); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("Gkeys/s");
    const auto keys = make_keys(input, n, ctx.seed());
    const auto order = stable_order(keys);
    std::vector<uint32_t> ref_keys(static_cast<size_t>(n)), positions(static_cast<size_t>(n));
    for (size_t i = 0; i < size_t(n); ++i) ref_keys[i] = keys[order[i]];
    std::iota(positions.begin(), positions.end(), 0u);

    int64_t p2 = 1;
    while (p2 < n) p2 *= 2;
    gpu100::DeviceBuffer<uint32_t> d_keys(keys), d_vals(positions), d_keys_out{size_t(p2)},
        d_vals_out{size_t(p2)}, d_keys_tmp{size_t(n)}, d_vals_tmp{size_t(n)};
    const Sort s{d_keys.data(),
                 d_vals.data(),
                 d_keys_out.data(),
                 d_vals_out.data(),
                 d_keys_tmp.data(),
                 d_vals_tmp.data(),
                 n,
                 p2};

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions)
      runs.push_back({.name = v.name,
                      .launch = [&](cudaStream_t st) { v.launch(s, st); },
                      .reset =
                          [&] {
                            d_keys_out.poison();
                            d_vals_out.poison();
                            d_keys_tmp.poison();
                            d_vals_tmp.poison();
                          },
                      .check =
                          [&] {
                            std::vector<uint32_t> got_k(static_cast<size_t>(n)),
                                got_v(static_cast<size_t>(n));
                            d_keys_out.download(got_k.data(), got_k.size());
                            d_vals_out.download(got_v.data(), got_v.size());
                            if (v.stable)
                              return gpu100::combine(gpu100::compare_exact(got_k, ref_keys),
                                                     gpu100::compare_exact(got_v, order));
                            return check_pairs_intact(got_k, got_v, keys, ref_keys, order);
                          },
                      .rate = [n](double ms) { return double(n) / (ms * 1e6); }});
    ctx.measure_all(runs);

    int64_t distinct = 1;
    for (size_t i = 1; i < ref_keys.size(); ++i) distinct += ref_keys[i] != ref_keys[i - 1];
    report.note(fmt::format(
        "{} pairs, {} distinct keys; merges checked for stability, bitonic networks (padded to "
        "{}) for intact pairs; {} merge passes after the tile sort",
        n, distinct, p2, merge_passes(n)));
  });
}
