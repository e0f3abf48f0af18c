// Day 028 - atomics: what an atomic update costs, and what contention does to it
//
// n updates go to A counters: update i adds (or maxes) a value into counter i mod A. With A = n
// every update has a counter of its own, and a warp's 32 atomics hit 32 consecutive words (one
// 128-byte line): the atomic units in the L2 work on many lines in parallel. With A = 1 every
// update in flight on the whole GPU queues on one word in one L2 slice, which applies them one
// after the other. The experiment is the sweep of A from 1 to n: throughput in Gatomic/s
// (1e9 updates per second), for each way of doing the updates, against the uncontended rate
// (plain atomicAdd at A = n) measured in the same run.
//
// Versions (256 threads per block, a grid of as many blocks as fit on the GPU at once, each
// thread striding over the updates)
//   atomic_add         atomicAdd(&counter[i % A], v_i) per update. The result is unused, so the
//                      PTX atom.global.add becomes a fire-and-forget RED in the SASS (ptxas): the
//                      thread does not wait for it. One L2 operation per update.
//   warp_aggregated    the lanes of a warp that hit the same counter find each other
//                      (__match_any_sync), add their values in one instruction
//                      (__reduce_add_sync over that group) and only the group's first lane issues
//                      the atomic. A < 32: a warp sends A atomics instead of 32 (with A a power
//                      of 2), but the reduction runs once per group (the hardware serializes a
//                      warp's groups), so the saving shrinks as A grows. A >= 32: every lane is
//                      alone, skips the reduction, and the match costs without saving anything.
//   shared_privatized  each block adds into its own copy of the A counters in shared memory
//                      (atom.shared: serialized within the SM, not across the GPU) and adds its
//                      non-zero counters to global memory once at the end: grid * A global
//                      atomics instead of n. Only for A <= 8192 (32 KiB of shared memory per
//                      block); beyond, it falls back to atomic_add (same numbers, see the note).
//   cas_float_max      there is no float atomicMax in CUDA: read the counter, and while our value
//                      is larger, atomicCAS(counter, seen, ours) until it succeeds or somebody
//                      else wrote a larger one (atom.global.cas.b32). An update that does not beat
//                      the current maximum costs one load and no atomic at all, so under heavy
//                      contention most updates only read; with A = n every update does one CAS.
//   cas_argmax         a custom op on a packed 64-bit word: (float score, uint32 index), keep the
//                      larger score and, on a tie, the smaller index (atom.global.cas.b64). The
//                      scores take only 4096 values, so ties are common and the tie rule is
//                      tested. A CAS loop can do any op on up to 8 bytes this way, as long as the
//                      op is commutative and associative (the result must not depend on order).
// Beside the rates, the sweep counts the atomicCAS calls per update of the two CAS versions (an
// instrumented, untimed run): 1 at A = n, near 0 under heavy contention.
// Why the CAS versions are max-like: a CAS loop whose every update must write (an add built from
// CAS, say) makes all T threads on one counter retry, and each success invalidates the CAS of
// all the others: about one success per round trip through the queue of T requests, so n
// updates on one counter take on the order of n * T queue slots instead of n (a queueing
// estimate, not measured here). The max versions avoid that storm: a loser stops after one read.
//
// Sweep: A = 1, 2, 4, ..., 64 (lanes of a warp share counters), 512, 4096, 32768, 262144,
// 2097152 and n; --quick: 1, 3, 32, 33, 1000, 8192, 8193, n (odd A splits a warp into uneven
// groups; 8192/8193 sit on both sides of the shared-memory capacity). Columns: Gatomic/s per
// version, atomic_add as % of the uncontended rate, CAS calls per update. The time is that of the
// updates kernel alone: each run starts by resetting its counters, outside the CUDA events
// (time_updates). A point whose first run takes over 50 ms is timed over fewer repeats (at least
// 3), so no contention level can stretch the run into minutes.
//
// Check: exact at every sweep point. The adds are integers in 1..256 summed mod 2^32 (the CPU
// sums the same way), a maximum is one of the inputs (no rounding; the values are never 0 or NaN,
// so a bit-exact comparison is fair), and the argmax is unique by its tie rule.
//
// Run:  build/bin/day028 [--n 16777259] [--addresses 1] [--kernel atomic_add,warp_aggregated]
//                        [--json f]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/gpu100.h"
#include "gpu100/stream.h"

namespace {

constexpr int kBlock = 256;
constexpr int kWarp = 32;
constexpr uint32_t kMaxPrivate = 8192;             // shared counters per block (32 KiB)
constexpr int64_t kMaxN = (int64_t(1) << 31) - 1;  // indices and slots fit in 32 bits
constexpr uint32_t kNegInfBits = 0xFF800000u;      // -inf: where every maximum starts
constexpr unsigned long long kArgmaxStart = (0xFF800000ull << 32) | 0xFFFFFFFFull;  // (-inf, max)

// ---- the updates: the same formulas on both sides ---------------------------------------------
GPU100_HD inline uint32_t hash32(uint32_t x) {  // a bijective integer mixer (lowbias32)
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

GPU100_HD inline uint32_t float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

GPU100_HD inline float bits_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// Computed from the index instead of loaded: the kernels then do nothing but their atomics, and
// the uncontended rate is not capped by reading an input array.
struct Updates {
  uint32_t key;  // from --seed
  GPU100_HD uint32_t add(uint32_t i) const { return 1u + (hash32(i ^ key) & 255u); }
  // An odd integer in (-2^24, 2^24) times 2^-24: exact in fp32 on both sides (no rounding, no
  // contraction can change it), never 0 (so -0 vs +0 cannot arise), never NaN.
  GPU100_HD float value(uint32_t i) const {
    const int32_t odd = int32_t((hash32(i ^ key) >> 7) | 1u) - (int32_t(1) << 24);
    return float(odd) * 0x1p-24f;
  }
  // One of 4096 scores in [-1, 1): many updates of a counter share its best score.
  GPU100_HD float score(uint32_t i) const {
    return float(int32_t(hash32(i ^ ~key) & 4095u) - 2048) * 0x1p-11f;
  }
};

GPU100_HD inline unsigned long long pack_argmax(float score, uint32_t index) {
  return (static_cast<unsigned long long>(float_bits(score)) << 32) | index;
}
// The argmax order: larger score first, then smaller index. Every update only ever replaces a
// counter by a better one, so a counter's value only moves up in this order.
GPU100_HD inline bool argmax_better(float score, uint32_t index, unsigned long long current) {
  const float s = bits_float(uint32_t(current >> 32));
  return score > s || (score == s && index < uint32_t(current));
}

// ---- 1: plain atomicAdd -------------------------------------------------------------------------
// Nothing the compiler could combine: the address depends on the runtime A and the value on i, so
// every update is its own atom.global.add.u32 in the PTX (REDG.E.ADD in the sm_90 SASS; no
// VOTE/MATCH/REDUX there: ptxas does not aggregate it behind our back).
__global__ void __launch_bounds__(kBlock)
    add_atomic(unsigned* counters, uint32_t a, int64_t n, Updates up) {
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    const uint32_t u = uint32_t(i);
    atomicAdd(&counters[u % a], up.add(u));
  }
}

// ---- 2: warp-aggregated -------------------------------------------------------------------------
// The sum of v over the lanes in `peers` (which all call this with the same mask).
__device__ __forceinline__ unsigned group_sum(unsigned peers, unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  unsigned sum = 0;  // no redux.sync before sm_80: read every peer's value
  for (unsigned m = peers; m; m &= m - 1) sum += __shfl_sync(peers, v, __ffs(m) - 1);
  return sum;
#else
  return __reduce_add_sync(peers, v);
#endif
}

__global__ void __launch_bounds__(kBlock)
    add_warp_aggregated(unsigned* counters, uint32_t a, int64_t n, Updates up) {
  const int lane = threadIdx.x % kWarp;
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  // The loop runs over the warp's first index, the same in all 32 lanes: every lane does the same
  // iterations, so the *_sync calls below always see the lanes their masks name. Only the last
  // warp of the input can have lanes past n; they sit out through the ballot's mask.
  for (int64_t base = int64_t(blockIdx.x) * kBlock + (threadIdx.x - lane); base < n;
       base += stride) {
    const int64_t i = base + lane;
    const unsigned in_range = __ballot_sync(0xFFFFFFFFu, i < n);
    if (i < n) {
      const uint32_t u = uint32_t(i);
      const uint32_t slot = u % a;
      const unsigned peers = __match_any_sync(in_range, slot);  // lanes with my counter
      // The hardware runs a reduction once per group of a warp (SASS: WARPSYNC.EXCLUSIVE before
      // REDUX), so a lane alone with its counter skips it; all lanes of a group branch alike.
      const unsigned v = up.add(u);
      const unsigned sum = peers == (1u << lane) ? v : group_sum(peers, v);
      if (lane == __ffs(peers) - 1) atomicAdd(&counters[slot], sum);
    }
  }
}

// ---- 3: privatized in shared memory -------------------------------------------------------------
// Dynamic shared memory of a * 4 bytes, a <= kMaxPrivate (the launcher checks).
__global__ void __launch_bounds__(kBlock)
    add_shared_privatized(unsigned* counters, uint32_t a, int64_t n, Updates up) {
  extern __shared__ unsigned private_counters[];
  for (uint32_t s = threadIdx.x; s < a; s += kBlock) private_counters[s] = 0;
  __syncthreads();  // all zero before any thread adds

  const int64_t stride = int64_t(gridDim.x) * kBlock;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    const uint32_t u = uint32_t(i);
    atomicAdd(&private_counters[u % a], up.add(u));
  }
  __syncthreads();  // every add of the block is done before the merge reads the counters

  // A counter the block never touched (or whose sum wrapped to 0) adds nothing: skip it.
  for (uint32_t s = threadIdx.x; s < a; s += kBlock) {
    const unsigned c = private_counters[s];
    if (c) atomicAdd(&counters[s], c);
  }
}

// ---- 4, 5: compare-and-swap loops ---------------------------------------------------------------
// The first look at a counter: a relaxed atomic load at GPU scope. Any value the counter held
// since the launch's reset will do - the CAS below corrects a stale one - but it must be one whole
// value, never half of an old 64-bit word and half of a new one, which a plain load of a word
// other threads are writing does not promise.
__device__ __forceinline__ unsigned load_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long load_relaxed(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// kCount: the instrumented copy also counts its atomicCAS instructions (never timed).
template <bool kCount>
__global__ void __launch_bounds__(kBlock)
    max_cas(float* maxima, uint32_t a, int64_t n, Updates up, unsigned long long* cas_count) {
  unsigned* words = reinterpret_cast<unsigned*>(maxima);
  unsigned long long attempts = 0;
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    const uint32_t u = uint32_t(i);
    const float v = up.value(u);
    unsigned* p = &words[u % a];
    // A maximum only grows, so a stale `seen` is never above the true value: stopping when
    // v <= seen is right even then.
    unsigned seen = load_relaxed(p);
    while (v > __uint_as_float(seen)) {
      const unsigned expected = seen;
      seen = atomicCAS(p, expected, __float_as_uint(v));
      if constexpr (kCount) ++attempts;
      if (seen == expected) break;  // ours is in
    }
  }
  if constexpr (kCount) {
    if (attempts) atomicAdd(cas_count, attempts);
  }
}

template <bool kCount>
__global__ void __launch_bounds__(kBlock)
    argmax_cas(unsigned long long* best, uint32_t a, int64_t n, Updates up,
               unsigned long long* cas_count) {
  unsigned long long attempts = 0;
  const int64_t stride = int64_t(gridDim.x) * kBlock;
  for (int64_t i = int64_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    const uint32_t u = uint32_t(i);
    const float s = up.score(u);
    unsigned long long* p = &best[u % a];
    unsigned long long seen = load_relaxed(p);  // stale only means "worse": same argument as max
    while (argmax_better(s, u, seen)) {
      const unsigned long long expected = seen;
      seen = atomicCAS(p, expected, pack_argmax(s, u));
      if constexpr (kCount) ++attempts;
      if (seen == expected) break;
    }
  }
  if constexpr (kCount) {
    if (attempts) atomicAdd(cas_count, attempts);
  }
}

// Sets the first `count` words (the counters the max versions start from; no byte pattern is -inf).
template <class T>
__global__ void fill(T* p, int64_t count, T value) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    p[i] = value;
}

template <class T>
void launch_fill(T* p, int64_t count, T value, cudaStream_t s) {
  const unsigned grid =
      unsigned(std::min<int64_t>(gpu100::ceil_div<int64_t>(count, kBlock), 65535));
  fill<<<grid, kBlock, 0, s>>>(p, count, value);
  LAUNCH_CHECK();
}

// One run of a version at one sweep point: the reset of the counters, then the updates.
struct Launch {
  std::function<void(cudaStream_t)> reset, updates;
  void operator()(cudaStream_t s) const {
    reset(s);
    updates(s);
  }
};

// Like gpu100::benchmark, but the CUDA events enclose the updates only: the reset of the counters
// runs before each start event. At A = n the reset writes 4 bytes per update (8 for the argmax),
// a memset of 64 MiB at the default n, a share of the time of the fastest updates that would
// lower exactly the uncontended rate every other point is compared with. No L2 flush: the
// updates read no input, and the reset has just rewritten every counter, so each timed run starts
// from the same state (freshly reset counters, as many of them in L2 as fit) whatever the run
// before it left.
gpu100::Stats time_updates(const Launch& launch, const gpu100::BenchOptions& o) {
  for (int i = 0; i < o.warmup; ++i) launch(o.stream);
  CUDA_CHECK(cudaStreamSynchronize(o.stream));
  std::vector<std::pair<gpu100::Event, gpu100::Event>> events;
  for (int i = 0; i < std::max(1, o.iters); ++i) {
    events.emplace_back(gpu100::Event(true), gpu100::Event(true));
    launch.reset(o.stream);
    CUDA_CHECK(cudaEventRecord(events.back().first.get(), o.stream));
    launch.updates(o.stream);
    CUDA_CHECK(cudaEventRecord(events.back().second.get(), o.stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(o.stream));
  std::vector<double> ms;
  for (const auto& [start, stop] : events) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start.get(), stop.get()));
    ms.push_back(t);
  }
  return gpu100::summarize(std::move(ms));
}

// ---- CPU references: walk the updates once, slot = i mod a -----------------------------------
std::vector<unsigned> cpu_sums(const std::vector<uint32_t>& adds, uint32_t a) {
  std::vector<unsigned> r(a, 0u);
  uint32_t s = 0;
  for (uint32_t v : adds) {
    r[s] += v;  // wraps mod 2^32, as the GPU's u32 atomics do
    if (++s == a) s = 0;
  }
  return r;
}

std::vector<float> cpu_maxima(const std::vector<float>& values, uint32_t a) {
  std::vector<float> r(a, -std::numeric_limits<float>::infinity());
  uint32_t s = 0;
  for (float v : values) {
    if (v > r[s]) r[s] = v;
    if (++s == a) s = 0;
  }
  return r;
}

std::vector<unsigned long long> cpu_argmax(const std::vector<float>& scores, uint32_t a) {
  std::vector<unsigned long long> r(a, kArgmaxStart);
  uint32_t s = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (argmax_better(scores[i], uint32_t(i), r[s])) r[s] = pack_argmax(scores[i], uint32_t(i));
    if (++s == a) s = 0;
  }
  return r;
}

enum class Op { kSum, kMax, kArgmax };

struct Version {
  const char* name;
  Op op;
};

constexpr Version kVersions[] = {
    {"atomic_add", Op::kSum},    {"warp_aggregated", Op::kSum}, {"shared_privatized", Op::kSum},
    {"cas_float_max", Op::kMax}, {"cas_argmax", Op::kArgmax},
};

struct Measured {
  gpu100::Stats time;
  double rate = 0;  // Gatomic/s
  gpu100::CheckResult check;
  double cas_per_update = -1;  // CAS versions only
};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "atomic throughput vs contention: atomicAdd, warp-aggregated, shared-privatized, "
      "atomicCAS loops for float max and a packed argmax");
  int64_t n = (int64_t(1) << 24) + 43;
  int64_t addresses = 1;
  cli.size("n", n, 200'003, "number of atomic updates", kMaxN);
  cli.size("addresses", addresses, 1,
           "distinct counters of the main table (update i goes to counter i mod addresses)", kMaxN);
  cli.kernels_of(kVersions);
  cli.validate([&]() -> std::string {
    return addresses <= n ? "" : "--addresses must not exceed --n (each counter needs an update)";
  });
  // u32 sums, f32 maxima, u64 argmax pairs: up to n counters of each.
  cli.device_bytes([&] { return 16.0 * double(n) + 64.0; });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("n", double(n));
    report.problem("addresses", double(addresses));
    report.unit("Gatomic/s");

    const Updates up{uint32_t(gpu100::mix64(ctx.seed() ^ 0xA70Bull))};
    const size_t count = size_t(n);
    std::vector<uint32_t> adds(count);
    std::vector<float> values(count), scores(count);
    for (size_t i = 0; i < count; ++i) {
      adds[i] = up.add(uint32_t(i));
      values[i] = up.value(uint32_t(i));
      scores[i] = up.score(uint32_t(i));
    }

    gpu100::DeviceBuffer<unsigned> d_sums(count);
    gpu100::DeviceBuffer<float> d_maxima(count);
    gpu100::DeviceBuffer<unsigned long long> d_argmax(count), d_cas(1);

    // One grid-stride launch shape per kernel: the blocks that fit on the GPU at once (this sets
    // how many updates are in flight, hence the contention), but no more than n needs.
    const int64_t needed = std::max<int64_t>(1, gpu100::ceil_div<int64_t>(n, kBlock));
    auto grid_of = [&](auto kernel, size_t smem) {
      return unsigned(std::min<int64_t>(gpu100::resident_grid(kernel, kBlock, smem), needed));
    };
    const unsigned grid_add = grid_of(add_atomic, 0);
    const unsigned grid_aggr = grid_of(add_warp_aggregated, 0);
    const unsigned grid_max = grid_of(max_cas<false>, 0);
    const unsigned grid_arg = grid_of(argmax_cas<false>, 0);

    // Version v at a counters: reset the counters (untimed, see time_updates), then the updates.
    auto make_launch = [&](const Version& v, uint32_t a, bool counted) -> Launch {
      unsigned* sums = d_sums.data();
      float* maxima = d_maxima.data();
      unsigned long long* best = d_argmax.data();
      unsigned long long* cas = d_cas.data();
      const std::string name = v.name;
      if (name == "atomic_add" || (name == "shared_privatized" && a > kMaxPrivate)) {
        return {
            [=](cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(sums, 0, a * sizeof(unsigned), s)); },
            [=](cudaStream_t s) {
              add_atomic<<<grid_add, kBlock, 0, s>>>(sums, a, n, up);
              LAUNCH_CHECK();
            }};
      }
      if (name == "warp_aggregated") {
        return {
            [=](cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(sums, 0, a * sizeof(unsigned), s)); },
            [=](cudaStream_t s) {
              add_warp_aggregated<<<grid_aggr, kBlock, 0, s>>>(sums, a, n, up);
              LAUNCH_CHECK();
            }};
      }
      if (name == "shared_privatized") {
        const size_t smem = a * sizeof(unsigned);  // <= 32 KiB: no opt-in needed
        const unsigned grid = grid_of(add_shared_privatized, smem);
        return {
            [=](cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(sums, 0, a * sizeof(unsigned), s)); },
            [=](cudaStream_t s) {
              add_shared_privatized<<<grid, kBlock, smem, s>>>(sums, a, n, up);
              LAUNCH_CHECK();
            }};
      }
      if (name == "cas_float_max") {
        return {[=](cudaStream_t s) {
                  launch_fill(reinterpret_cast<unsigned*>(maxima), a, kNegInfBits, s);
                },
                [=](cudaStream_t s) {
                  if (counted)
                    max_cas<true><<<grid_max, kBlock, 0, s>>>(maxima, a, n, up, cas);
                  else
                    max_cas<false><<<grid_max, kBlock, 0, s>>>(maxima, a, n, up, nullptr);
                  LAUNCH_CHECK();
                }};
      }
      return {[=](cudaStream_t s) { launch_fill(best, a, kArgmaxStart, s); },  // cas_argmax
              [=](cudaStream_t s) {
                if (counted)
                  argmax_cas<true><<<grid_arg, kBlock, 0, s>>>(best, a, n, up, cas);
                else
                  argmax_cas<false><<<grid_arg, kBlock, 0, s>>>(best, a, n, up, nullptr);
                LAUNCH_CHECK();
              }};
    };

    // CPU references of the current sweep point, computed when a version first needs them.
    uint32_t ref_a = 0;
    std::vector<unsigned> ref_sums;
    std::vector<float> ref_maxima;
    std::vector<unsigned long long> ref_argmax;
    auto check_result = [&](Op op, uint32_t a) -> gpu100::CheckResult {
      if (ref_a != a) {
        ref_a = a;
        ref_sums.clear();
        ref_maxima.clear();
        ref_argmax.clear();
      }
      switch (op) {
        case Op::kSum: {
          if (ref_sums.empty()) ref_sums = cpu_sums(adds, a);
          std::vector<unsigned> got(a);
          d_sums.download(got.data(), a);
          return gpu100::compare_exact(got, ref_sums);
        }
        case Op::kMax: {
          if (ref_maxima.empty()) ref_maxima = cpu_maxima(values, a);
          std::vector<float> got(a);
          d_maxima.download(got.data(), a);
          return gpu100::compare_exact(got, ref_maxima);
        }
        default: {
          if (ref_argmax.empty()) ref_argmax = cpu_argmax(scores, a);
          std::vector<unsigned long long> got(a);
          d_argmax.download(got.data(), a);
          return gpu100::compare_exact(got, ref_argmax);
        }
      }
    };
    auto poison = [&](Op op) {
      if (op == Op::kSum) d_sums.poison();
      if (op == Op::kMax) d_maxima.poison();
      if (op == Op::kArgmax) d_argmax.poison();
    };

    // Poison, run once, check; time; for the CAS versions one more (instrumented) run counts the
    // CAS instructions and is checked too. A point whose first run is slow is timed over fewer
    // repeats, so that no contention level can stretch the run into minutes.
    auto measure = [&](const Version& v, uint32_t a) {
      Measured m;
      const auto launch = make_launch(v, a, false);
      poison(v.op);
      const auto start = std::chrono::steady_clock::now();
      launch(nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const double first_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      m.check = check_result(v.op, a);
      gpu100::BenchOptions options = ctx.bench_options();
      if (first_ms > 50.0) {
        options.warmup = 1;
        options.iters = std::min(options.iters, std::max(3, int(1000.0 / first_ms)));
      }
      m.time = time_updates(launch, options);
      m.rate = m.time.median_ms > 0 ? double(n) / (m.time.median_ms * 1e6) : 0.0;
      if (v.op != Op::kSum) {
        poison(v.op);
        d_cas.zero();
        make_launch(v, a, true)(nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        m.check = gpu100::combine(m.check, check_result(v.op, a));
        m.cas_per_update = double(d_cas.download()[0]) / double(n);
      }
      return m;
    };

    // The baseline: plain atomicAdd with one counter per update, checked like every point.
    const Measured uncontended = measure(kVersions[0], uint32_t(n));
    report.baseline("atomic_add, A = n", uncontended.time, uncontended.rate);
    gpu100::CheckResult sweep_check = uncontended.check;

    // Sweep points: powers of 2 where a warp's lanes share counters (A < 32), then every factor
    // of 8, then n; --quick uses odd counts (uneven groups in a warp) and both sides of the shared
    // capacity. --addresses is always a point: the main table comes from it.
    std::set<int64_t> points = {n, addresses};
    const std::vector<int64_t> full = {1, 2, 4, 8, 16, 32, 64, 512, 4096, 32768, 262144, 2097152};
    const std::vector<int64_t> quick = {1, 3, 32, 33, 1000, kMaxPrivate, kMaxPrivate + 1};
    for (int64_t a : ctx.quick() ? quick : full)
      if (a <= n) points.insert(a);

    gpu100::Table sweep{
        "Gatomic/s vs distinct addresses A (n updates, update i -> counter i mod A)",
        {"addresses A"},
        {}};
    std::vector<const Version*> selected;
    for (const auto& v : kVersions)
      if (ctx.want(v.name)) selected.push_back(&v);
    for (const Version* v : selected) sweep.columns.push_back(std::string(v->name) + " Gatomic/s");
    const bool plain = ctx.want("atomic_add");
    if (plain) sweep.columns.push_back("% of uncontended (atomic_add)");
    for (const Version* v : selected)
      if (v->op != Op::kSum) sweep.columns.push_back(std::string(v->name) + " CAS/update");

    for (int64_t a64 : points) {
      const uint32_t a = uint32_t(a64);
      std::vector<gpu100::Cell> row = {a64};
      std::vector<gpu100::Cell> cas_cells;
      double plain_rate = 0;
      for (const Version* v : selected) {
        const bool reuse = v == &kVersions[0] && a64 == n;
        const Measured m = reuse ? uncontended : measure(*v, a);
        if (!reuse) sweep_check = gpu100::combine(sweep_check, m.check);
        if (a64 == addresses) report.add(v->name, m.time, m.rate, m.check);
        row.push_back(m.check.pass ? gpu100::Cell(m.rate) : gpu100::Cell("FAIL"));
        if (v == &kVersions[0]) plain_rate = m.check.pass ? m.rate : 0.0;
        if (v->op != Op::kSum)
          cas_cells.push_back(m.check.pass ? gpu100::Cell(m.cas_per_update) : gpu100::Cell("FAIL"));
      }
      if (plain) row.push_back(uncontended.rate > 0 ? 100.0 * plain_rate / uncontended.rate : 0.0);
      for (auto& c : cas_cells) row.push_back(std::move(c));
      sweep.add_row(std::move(row));
    }
    report.add_check("contention sweep (every point, every version, baseline)", sweep_check);

    char line[320];
    std::snprintf(line, sizeof line,
                  "Gatomic/s = n updates / median time / 1e9; the time is the updates kernel "
                  "only: the reset of the A counters before each run (cudaMemsetAsync, or a fill "
                  "kernel to -inf for the max versions) is outside the CUDA events; grid = "
                  "blocks resident at once (%u x %d threads for atomic_add)",
                  grid_add, kBlock);
    report.note(line);
    report.note(
        "baseline: atomic_add with one counter per update (A = n) in this run; "
        "'x atomic_add, A = n' is what contention costs (or aggregation saves)");
    const double counter_mib = 4.0 * double(n) / (1 << 20);
    const double l2_mib = double(ctx.device().l2_bytes) / (1 << 20);
    if (4.0 * double(n) > double(ctx.device().l2_bytes)) {
      std::snprintf(line, sizeof line,
                    "at A = n the counters (%.1f MiB) exceed the L2 (%.1f MiB): an update whose "
                    "counter is not in L2 costs 8 bytes of HBM traffic (read 4, write back 4); "
                    "if every update did, the HBM peak would cap the rate at %.1f Gatomic/s",
                    counter_mib, l2_mib, ctx.device().peak_dram_gbps() / 8.0);
    } else {
      std::snprintf(line, sizeof line,
                    "at A = n the counters (%.1f MiB) fit in the L2 (%.1f MiB): the uncontended "
                    "rate is the L2 atomic units', not HBM's",
                    counter_mib, l2_mib);
    }
    report.note(line);
    std::snprintf(line, sizeof line,
                  "shared_privatized keeps at most %u counters per block in shared memory; for "
                  "larger A it runs atomic_add",
                  kMaxPrivate);
    report.note(line);
    report.note(
        "CAS/update: atomicCAS calls (one per thread and try) per update of the CAS versions, "
        "from an untimed instrumented run; an update that does not beat its counter only loads");
    report.table(std::move(sweep));
  });
}
