// Day 009 - prefix scan: the inclusive prefix sum of n int32 values
//
// out[i] = in[0] + ... + in[i]. Every output depends on every input before it, yet a scan runs in
// O(log n) parallel steps; it is the building block of stream compaction, radix sort, histograms
// turned into offsets and sparse-matrix construction. The work is tiny (one add per element),
// so what matters is how often the data crosses DRAM: the ideal is one read and one write,
// 8 bytes per element, which is what the GB/s column counts.
//
// Versions (each works for any n)
//   kogge_stone         block scan, one element per thread: in step k every thread adds the
//                       value 2^k places to its left (log2(B) steps, O(B log B) adds), double-
//                       buffered in shared memory. Multi-block by the hierarchical scheme: scan
//                       every tile and write its total; scan the tile totals (the same way,
//                       recursively, until one tile is left); add each tile's offset.
//   brent_kung          the work-efficient block scan (O(B) adds, 2 log2(B) steps): an up-sweep
//                       reduction tree and a down-sweep that distributes the partial sums; two
//                       elements per thread. Same hierarchical multi-block scheme.
//   three_phase         thread coarsening (PMPP 11.5): each thread scans 16 consecutive elements
//                       sequentially in registers (phase 1), a Kogge-Stone scan of the 256 per-
//                       thread totals (phase 2), each thread adds its predecessors' total (phase
//                       3). Tiles of 4096 elements, so far fewer tiles and levels; the same
//                       hierarchical scheme across tiles.
//   decoupled_lookback  one pass over the data (Merrill & Garland 2016): each tile scans itself
//                       like three_phase, publishes its total, and finds its offset by looking
//                       back over its predecessors' published totals/prefixes instead of waiting
//                       for a second and third kernel. 8 bytes per element of DRAM traffic, like a
//                       copy; the hierarchical versions move about 16 (the offset pass re-reads
//                       and re-writes the output).
//
// Check: exact, against a sequential CPU scan (the CUB baseline too). Inputs are integers in
// 0..3, so every prefix is at most 3n; --n is limited to (2^31 - 1) / 3 = 715827882 so that no
// prefix overflows int32.
//
// Run:  build/bin/day009 [--n 134217739] [--kernel three_phase,decoupled_lookback] [--json f]
#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cub/cub.cuh>
#include <cuda/atomic>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kMaxValue = 3;                               // inputs are 0..kMaxValue
constexpr int64_t kMaxN = int64_t(INT32_MAX) / kMaxValue;  // every prefix fits in int32

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<int> scan_cpu(const std::vector<int32_t>& x) {
  std::vector<int> out(x.size());
  int64_t running = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    running += x[i];
    out[i] = int(running);  // <= 3n <= INT32_MAX by the bound on --n
  }
  return out;
}

// ---- block-level scans --------------------------------------------------------------------------
// Kogge-Stone inclusive scan of one value per thread over a block of BLOCK threads. Each step
// reads one buffer and writes the other: a thread never overwrites a value that a thread to its
// right still has to read in the same step, so one barrier per step is enough (a single buffer
// would need a barrier between the read and the write as well). `total` receives the block's sum.
// Call it once per kernel: a second call would need a barrier first (the buffers are reused).
template <int BLOCK>
__device__ __forceinline__ int kogge_stone_scan(int v, int& total) {
  static_assert(BLOCK >= 32 && (BLOCK & (BLOCK - 1)) == 0, "BLOCK: a power of two");
  __shared__ int buf[2][BLOCK];
  const int tid = int(threadIdx.x);
  int in = 0;
  buf[0][tid] = v;
  __syncthreads();
#pragma unroll
  for (int offset = 1; offset < BLOCK; offset *= 2) {
    const int out = in ^ 1;
    buf[out][tid] = tid >= offset ? buf[in][tid] + buf[in][tid - offset] : buf[in][tid];
    __syncthreads();
    in = out;
  }
  total = buf[in][BLOCK - 1];
  return buf[in][tid];
}

// Multi-block kernels share one signature: scan one tile of `in` into `out` and, when there is
// more than one tile, write the tile's total to tile_sums[tile] (nullptr for a single tile).
using TileScanKernel = void (*)(const int*, int*, int64_t, int*);

// ---- kogge_stone: one element per thread, tile = BLOCK ------------------------------------------
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    scan_tiles_kogge_stone(const int* __restrict__ in, int* __restrict__ out, int64_t n,
                           int* __restrict__ tile_sums) {
  const int64_t i = int64_t(blockIdx.x) * BLOCK + threadIdx.x;
  int total = 0;
  const int v = kogge_stone_scan<BLOCK>(i < n ? in[i] : 0, total);  // zeros pad the last tile
  if (i < n) out[i] = v;
  if (tile_sums != nullptr && threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// ---- brent_kung: two elements per thread, tile = 2 * BLOCK --------------------------------------
// Up-sweep: after the step with stride d, s[k] for k = (m+1)*2d - 1 holds the sum of the 2d
// elements ending at k (a reduction tree). Down-sweep: halving d, s[k + d] += s[k] passes each
// completed prefix to the middle of the next subtree. The indices written in a step and the
// indices read in it never coincide, so each step needs only the barrier before it.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    scan_tiles_brent_kung(const int* __restrict__ in, int* __restrict__ out, int64_t n,
                          int* __restrict__ tile_sums) {
  constexpr int kTile = 2 * BLOCK;
  __shared__ int s[kTile];
  const int tid = int(threadIdx.x);
  const int64_t i0 = int64_t(blockIdx.x) * kTile + tid;
  const int64_t i1 = i0 + BLOCK;
  s[tid] = i0 < n ? in[i0] : 0;
  s[tid + BLOCK] = i1 < n ? in[i1] : 0;
  for (int stride = 1; stride <= BLOCK; stride *= 2) {
    __syncthreads();
    const int k = (tid + 1) * 2 * stride - 1;
    if (k < kTile) s[k] += s[k - stride];
  }
  for (int stride = kTile / 4; stride > 0; stride /= 2) {
    __syncthreads();
    const int k = (tid + 1) * 2 * stride - 1;
    if (k + stride < kTile) s[k + stride] += s[k];
  }
  __syncthreads();
  if (i0 < n) out[i0] = s[tid];
  if (i1 < n) out[i1] = s[tid + BLOCK];
  if (tile_sums != nullptr && tid == 0) tile_sums[blockIdx.x] = s[kTile - 1];
}

// ---- three_phase: ITEMS consecutive elements per thread, tile = BLOCK * ITEMS -------------------
// Shared memory holds the tile with one padding word after every 32: thread t's segment starts
// at word 16t (ITEMS = 16), which without padding puts lanes t and t+2 in the same bank (16-way
// conflicts); with it, lane t's word j lands in bank (16t + j + t/2) mod 32, all different.
__device__ __forceinline__ int padded(int k) {
  return k + (k >> 5);
}

// Loads tile elements [base, base + BLOCK*ITEMS) (zeros past n) and leaves their inclusive scan
// in items[padded(k)]; returns the tile's total (in every thread). items holds
// BLOCK*ITEMS + BLOCK*ITEMS/32 ints.
template <int BLOCK, int ITEMS>
__device__ __forceinline__ int coarse_tile_scan(const int* __restrict__ in, int64_t n, int64_t base,
                                                int* items) {
  const int tid = int(threadIdx.x);
  // Coalesced load: in each round the block reads BLOCK consecutive ints.
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int k = j * BLOCK + tid;
    items[padded(k)] = base + k < n ? in[base + k] : 0;
  }
  __syncthreads();
  // Phase 1: a sequential scan of this thread's own ITEMS consecutive elements, in registers.
  int r[ITEMS];
  int acc = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    acc += items[padded(tid * ITEMS + j)];
    r[j] = acc;
  }
  // Phase 2: scan of the per-thread totals (its barriers also order the phase-1 reads of every
  // thread before the phase-3 writes below).
  int total = 0;
  const int before = kogge_stone_scan<BLOCK>(acc, total) - acc;
  // Phase 3: add the total of all earlier segments of the tile.
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) items[padded(tid * ITEMS + j)] = r[j] + before;
  __syncthreads();
  return total;
}

template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    scan_tiles_three_phase(const int* __restrict__ in, int* __restrict__ out, int64_t n,
                           int* __restrict__ tile_sums) {
  constexpr int kTile = BLOCK * ITEMS;
  __shared__ int items[kTile + kTile / 32];
  const int64_t base = int64_t(blockIdx.x) * kTile;
  const int total = coarse_tile_scan<BLOCK, ITEMS>(in, n, base, items);
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int k = j * BLOCK + int(threadIdx.x);
    if (base + k < n) out[base + k] = items[padded(k)];
  }
  if (tile_sums != nullptr && threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// ---- the last step of the hierarchical scheme ---------------------------------------------------
// Block b handles tile b + 1 (tile 0 needs nothing) and adds the inclusive scan of the tile
// totals up to tile b.
__global__ void add_tile_offsets(int* __restrict__ out, int64_t n, int tile_size,
                                 const int* __restrict__ scanned_tile_sums) {
  const int64_t tile = int64_t(blockIdx.x) + 1;
  const int offset = scanned_tile_sums[tile - 1];
  const int64_t base = tile * tile_size;
  for (int k = int(threadIdx.x); k < tile_size; k += int(blockDim.x))
    if (base + k < n) out[base + k] += offset;
}

// ---- decoupled_lookback: a single pass ----------------------------------------------------------
// Each tile publishes a status word: X (nothing yet), A (its own total, the "aggregate") or P (its
// inclusive prefix: the sum of every element up to the end of the tile). The flag sits in the
// high 32 bits and the value in the low 32 bits of ONE 64-bit word written by ONE store, so a
// reader sees either the old word or the new one, never a new flag with a stale value.
//
// Memory ordering: everything a reader needs travels inside that word; no other memory is
// published through the flag. So relaxed atomics are enough, and what matters is their device
// scope: ld.relaxed.gpu / st.relaxed.gpu go to L2, the point where all SMs agree, while a plain
// load may return a stale copy of the word from this SM's L1 forever. (Were flag and value in two
// words, the writer would need value, __threadfence(), flag and the reader flag,
// __threadfence(), value, both with volatile or atomic accesses; packing avoids all of it.)
constexpr unsigned long long kFlagAggregate = 1ull << 32;
constexpr unsigned long long kFlagPrefix = 2ull << 32;
using StatusRef = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

__device__ __forceinline__ int warp_sum_int(int v) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}

// Run by the 32 lanes of warp 0: publishes the tile's aggregate, returns the sum of every element
// before the tile, and publishes the tile's inclusive prefix. Lane k reads the status of tile
// (window_end - k), so 32 predecessors are inspected per round trip to L2. The nearest P in the
// window ends the walk; otherwise all 32 aggregates are added and the window slides back.
__device__ int look_back(unsigned long long* status, int64_t tile, int aggregate) {
  const int lane = int(threadIdx.x) % 32;
  if (tile == 0) {
    if (lane == 0)
      StatusRef(status[0]).store(kFlagPrefix | uint32_t(aggregate), cuda::memory_order_relaxed);
    return 0;
  }
  if (lane == 0)
    StatusRef(status[tile]).store(kFlagAggregate | uint32_t(aggregate), cuda::memory_order_relaxed);
  int exclusive = 0;
  for (int64_t window_end = tile - 1;; window_end -= 32) {
    const int64_t p = window_end - lane;
    // Past tile 0 there is nothing to add: such lanes act as a prefix of 0 (tile 0 itself always
    // publishes P, so the walk stops at or before them anyway).
    unsigned long long word = kFlagPrefix;
    if (p >= 0) {
      // Tile p was handed out before this one (see the tile counter), so its block is running
      // and will publish at least its aggregate without waiting for anyone: this wait ends.
      word = StatusRef(status[p]).load(cuda::memory_order_relaxed);
      while ((word >> 32) == 0) {
        __nanosleep(32);
        word = StatusRef(status[p]).load(cuda::memory_order_relaxed);
      }
    }
    const unsigned prefix_lanes = __ballot_sync(0xffffffffu, (word >> 32) == 2);
    const int stop = prefix_lanes ? __ffs(int(prefix_lanes)) - 1 : 31;  // nearest P
    exclusive += warp_sum_int(lane <= stop ? int(uint32_t(word)) : 0);
    if (prefix_lanes) break;
  }
  if (lane == 0)
    StatusRef(status[tile])
        .store(kFlagPrefix | uint32_t(exclusive + aggregate), cuda::memory_order_relaxed);
  return exclusive;
}

// state[0] is the tile counter, state[1 + t] the status of tile t; all zero (X) at launch.
template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    scan_decoupled_lookback(const int* __restrict__ in, int* __restrict__ out, int64_t n,
                            unsigned long long* state) {
  constexpr int kTile = BLOCK * ITEMS;
  __shared__ int items[kTile + kTile / 32];
  __shared__ unsigned long long tile_id;
  __shared__ int exclusive_s;
  // Tiles are numbered in the order blocks start, not by blockIdx: the hardware may start block
  // 1000 before block 3, and if the SMs then filled up with blocks spinning on a tile whose block
  // cannot start, the scan would hang. With the counter every lower tile is already running.
  if (threadIdx.x == 0) tile_id = atomicAdd(&state[0], 1ull);
  __syncthreads();
  const int64_t tile = int64_t(tile_id);
  const int64_t base = tile * kTile;
  const int aggregate = coarse_tile_scan<BLOCK, ITEMS>(in, n, base, items);
  if (threadIdx.x < 32) {  // all of warp 0: look_back uses full-mask warp intrinsics
    const int exclusive = look_back(state + 1, tile, aggregate);
    if (threadIdx.x == 0) exclusive_s = exclusive;
  }
  __syncthreads();
  const int exclusive = exclusive_s;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const int k = j * BLOCK + int(threadIdx.x);
    if (base + k < n) out[base + k] = items[padded(k)] + exclusive;
  }
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kKoggeStoneBlock = 512;
constexpr int kBrentKungBlock = 512;
constexpr int kCoarseBlock = 256, kCoarseItems = 16;  // tiles of 4096
constexpr int kOffsetBlock = 256;

struct Hierarchical {
  const char* name;
  TileScanKernel kernel;
  int block;
  int tile;
};

// Scratch for the hierarchical scheme: for every level with more than one tile, the tile totals
// and their scan (the input and output of the next level down).
struct Levels {
  std::vector<gpu100::DeviceBuffer<int>> sums, scanned;
  Levels(int64_t n, int tile) {
    for (int64_t len = n; len > tile;) {
      len = gpu100::ceil_div<int64_t>(len, tile);
      sums.emplace_back(size_t(len));
      scanned.emplace_back(size_t(len));
    }
  }
};

void scan_hierarchical(const Hierarchical& v, const int* in, int* out, int64_t n, Levels& levels,
                       size_t level, cudaStream_t stream) {
  const int64_t tiles = gpu100::ceil_div<int64_t>(n, v.tile);
  int* sums = tiles > 1 ? levels.sums[level].data() : nullptr;
  v.kernel<<<unsigned(tiles), v.block, 0, stream>>>(in, out, n, sums);
  LAUNCH_CHECK();
  if (tiles == 1) return;
  int* scanned = levels.scanned[level].data();
  scan_hierarchical(v, sums, scanned, tiles, levels, level + 1, stream);
  add_tile_offsets<<<unsigned(tiles - 1), kOffsetBlock, 0, stream>>>(out, n, v.tile, scanned);
  LAUNCH_CHECK();
}

void launch_decoupled_lookback(const int* in, int* out, int64_t n, unsigned long long* state,
                               size_t state_bytes, cudaStream_t s) {
  constexpr int kTile = kCoarseBlock * kCoarseItems;
  // Resetting the counter and the tile states is part of every scan (CUB does the same with a
  // small init kernel), so it is inside the timed region.
  CUDA_CHECK(cudaMemsetAsync(state, 0, state_bytes, s));
  scan_decoupled_lookback<kCoarseBlock, kCoarseItems>
      <<<unsigned(gpu100::ceil_div<int64_t>(n, kTile)), kCoarseBlock, 0, s>>>(in, out, n, state);
  LAUNCH_CHECK();
}

const Hierarchical kHierarchical[] = {
    {"kogge_stone", scan_tiles_kogge_stone<kKoggeStoneBlock>, kKoggeStoneBlock, kKoggeStoneBlock},
    {"brent_kung", scan_tiles_brent_kung<kBrentKungBlock>, kBrentKungBlock, 2 * kBrentKungBlock},
    {"three_phase", scan_tiles_three_phase<kCoarseBlock, kCoarseItems>, kCoarseBlock,
     kCoarseBlock* kCoarseItems},
};

// A version's check: its output, exactly, against the CPU scan.
std::function<gpu100::CheckResult()> scan_check(const gpu100::DeviceBuffer<int>& out,
                                               const std::vector<int>& ref) {
  return [&out, &ref] { return gpu100::compare_exact(out.download(), ref); };
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "inclusive prefix sum of int32: Kogge-Stone, Brent-Kung, three-phase, "
      "decoupled look-back vs CUB");
  int64_t n = (int64_t(1) << 27) + 11;
  cli.size("n", n, 1'000'003, "number of elements (at most 715827882 so sums fit in int32)", kMaxN);
  cli.kernels({"kogge_stone", "brent_kung", "three_phase", "decoupled_lookback"});
  // Input, output, CUB's output and a little scratch (tile sums, tile states, CUB temp storage).
  cli.device_bytes([&] { return 3.0 * 4.0 * double(n) + double(64 << 20); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.intensity(1.0 / 8.0);  // one add per 8 bytes (read in, write out)

    const auto x = gpu100::random_ints(size_t(n), ctx.seed(), 0, kMaxValue);
    const auto ref = scan_cpu(x);
    gpu100::DeviceBuffer<int> d_in(x), d_out{size_t(n)}, d_cub{size_t(n)};
    if (gpu100::ceil_div<int64_t>(n, kKoggeStoneBlock) > ctx.device().max_grid_x)
      throw std::runtime_error("n needs more blocks than the grid allows");
    const double bytes = 8.0 * double(n);  // read every input and write every output once

    // Baseline: CUB's single-pass decoupled look-back scan, temp storage allocated up front.
    // n <= kMaxN < 2^31, so a 32-bit item count is enough (and selects CUB's 32-bit offsets).
    const int cub_n = int(n);
    size_t temp_bytes = 0;
    CUDA_CHECK(
        cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, d_in.data(), d_cub.data(), cub_n));
    gpu100::DeviceBuffer<unsigned char> d_temp(std::max<size_t>(temp_bytes, 1));
    std::vector<gpu100::Measure> runs{
        {.name = "cub::DeviceScan::InclusiveSum",
         .launch =
             [&](cudaStream_t s) {
               CUDA_CHECK(cub::DeviceScan::InclusiveSum(d_temp.data(), temp_bytes, d_in.data(),
                                                        d_cub.data(), cub_n, s));
             },
         .reset = [&] { d_cub.poison(); },
         .check = scan_check(d_cub, ref),
         .work = bytes,
         .role = gpu100::Role::baseline}};

    // Each hierarchical version's scratch: the tile totals of every level.
    std::vector<Levels> levels;
    for (const Hierarchical& v : kHierarchical) levels.emplace_back(n, v.tile);
    for (size_t i = 0; i < std::size(kHierarchical); ++i) {
      runs.push_back({.name = kHierarchical[i].name,
                      .launch =
                          [&, i](cudaStream_t s) {
                            scan_hierarchical(kHierarchical[i], d_in.data(), d_out.data(), n,
                                              levels[i], 0, s);
                          },
                      .reset = [&] { d_out.poison(); },
                      .check = scan_check(d_out, ref),
                      .work = bytes});
    }
    constexpr int kLookbackTile = kCoarseBlock * kCoarseItems;
    gpu100::DeviceBuffer<unsigned long long> d_state(
        size_t(gpu100::ceil_div<int64_t>(n, kLookbackTile)) + 1);
    runs.push_back({.name = "decoupled_lookback",
                    .launch =
                        [&](cudaStream_t s) {
                          launch_decoupled_lookback(d_in.data(), d_out.data(), n, d_state.data(),
                                                    d_state.bytes(), s);
                        },
                    .reset = [&] { d_out.poison(); },
                    .check = scan_check(d_out, ref),
                    .work = bytes});
    ctx.measure_all(runs);

    gpu100::Table shape{"launch shape", {"version", "tile", "levels", "kernel launches"}, {}};
    for (size_t i = 0; i < std::size(kHierarchical); ++i) {
      if (!ctx.want(kHierarchical[i].name)) continue;
      const int deep = int(levels[i].sums.size());
      shape.add_row({kHierarchical[i].name, kHierarchical[i].tile, deep + 1, 2 * deep + 1});
    }
    if (ctx.want("decoupled_lookback")) shape.add_row({"decoupled_lookback", kLookbackTile, 1, 1});
    report.table(shape);
  });
}
