// Day 028 - atomics: what an atomic update costs, and what contention does to it
//
// n updates go to A counters: update i adds (or maxes) a value into counter i mod A. With A = n
// every update has a counter of its own, and a warp's 32 atomics hit one 128-byte line: the
// atomic units in the L2 work on many lines in parallel. With A = 1 every update in flight on the
// whole GPU queues on one word in one L2 slice. The experiment is the sweep of A from 1 to n:
// throughput in Gatomic/s (1e9 updates per second) for each way of doing the updates, against the
// uncontended rate (plain atomicAdd at A = n) measured in the same run. The values come from a
// hash of the index, not from memory, so the kernels do nothing but their atomics.
//
// Versions (256 threads per block, as many blocks as fit at once, grid-stride over the updates)
//   atomic_add         atomicAdd(&counter[i % A], v_i) per update: one L2 operation each (a
//                      fire-and-forget RED in the SASS, since the result is unused).
//   warp_aggregated    the lanes of a warp that hit the same counter find each other
//                      (__match_any_sync), add their values (__reduce_add_sync) and only the
//                      group's first lane issues the atomic.
//   shared_privatized  each block adds into its own copy of the counters in shared memory and
//                      merges its non-zero counters into global memory at the end (A <= 8192;
//                      beyond, it runs atomic_add).
//   cas_float_max      no float atomicMax exists: read the counter and atomicCAS while our value
//                      is larger; an update that does not beat the maximum costs one load.
//   cas_argmax         a custom op on a packed 64-bit (score, index) word: larger score, then
//                      smaller index (atom.global.cas.b64); ties are common, so the rule is tested.
// Beside the rates, the sweep counts the atomicCAS calls per update of the two CAS versions
// (an instrumented run). Each run resets its counters first, outside the CUDA events.
//
// Check: exact at every sweep point. The adds are integers in 1..256 summed mod 2^32 (the CPU
// sums the same way), a maximum is one of the inputs (never 0 or NaN, so a bit-exact comparison
// is fair), and the argmax is unique by its tie rule.
//
// Run:  build/bin/day028 [--n 16777259] [--addresses 1] [--kernel atomic_add,warp_aggregated]
//                        [--json f]
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

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

// ---- CPU reference: walk the updates once, slot = i mod a ---------------------------------------
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

// ---- kernels ------------------------------------------------------------------------------------
// 1: plain atomicAdd.
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

// 2: warp-aggregated.
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

// 3: privatized in shared memory.
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

// 4, 5: compare-and-swap loops.
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

// ---- launchers ----------------------------------------------------------------------------------
enum class Op { kSum, kMax, kArgmax };

struct Version {
  const char* name;
  Op op;
};
constexpr Version kVersions[] = {
    {"atomic_add", Op::kSum},    {"warp_aggregated", Op::kSum}, {"shared_privatized", Op::kSum},
    {"cas_float_max", Op::kMax}, {"cas_argmax", Op::kArgmax},
};

// The counters of every op (up to n of each) and the CAS count of the instrumented runs.
struct Counters {
  explicit Counters(size_t n) : sums(n), maxima(n), argmax(n), cas(1) {}
  gpu100::DeviceBuffer<unsigned> sums;
  gpu100::DeviceBuffer<float> maxima;
  gpu100::DeviceBuffer<unsigned long long> argmax, cas;
  void poison(Op op) {
    if (op == Op::kSum) sums.poison();
    if (op == Op::kMax) maxima.poison();
    if (op == Op::kArgmax) argmax.poison();
  }
};

// One run of a version at a counters: the reset of the counters (untimed), then the updates.
struct Run {
  std::function<void(cudaStream_t)> reset, updates;
};

// One grid-stride launch shape per kernel: the blocks that fit on the GPU at once (this sets how
// many updates are in flight, hence the contention), but no more than n needs.
template <class Kernel>
unsigned grid_of(Kernel kernel, size_t smem, int64_t n) {
  const int64_t needed = std::max<int64_t>(1, gpu100::ceil_div<int64_t>(n, kBlock));
  return unsigned(std::min<int64_t>(gpu100::resident_grid(kernel, kBlock, smem), needed));
}

// `counted`: the CAS versions' instrumented kernels, which also count their atomicCAS calls.
Run run_of(const Version& v, uint32_t a, bool counted, Counters& c, int64_t n, Updates up) {
  unsigned* sums = c.sums.data();
  float* maxima = c.maxima.data();
  unsigned long long* best = c.argmax.data();
  unsigned long long* cas = counted ? c.cas.data() : nullptr;
  auto zero_sums = [=](cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(sums, 0, a * sizeof(unsigned), s));
  };
  const std::string name = v.name;
  if (name == "atomic_add" || (name == "shared_privatized" && a > kMaxPrivate)) {
    return {zero_sums, [=, grid = grid_of(add_atomic, 0, n)](cudaStream_t s) {
              add_atomic<<<grid, kBlock, 0, s>>>(sums, a, n, up);
              LAUNCH_CHECK();
            }};
  }
  if (name == "warp_aggregated") {
    return {zero_sums, [=, grid = grid_of(add_warp_aggregated, 0, n)](cudaStream_t s) {
              add_warp_aggregated<<<grid, kBlock, 0, s>>>(sums, a, n, up);
              LAUNCH_CHECK();
            }};
  }
  if (name == "shared_privatized") {
    const size_t smem = a * sizeof(unsigned);  // <= 32 KiB: no opt-in needed
    return {zero_sums, [=, grid = grid_of(add_shared_privatized, smem, n)](cudaStream_t s) {
              add_shared_privatized<<<grid, kBlock, smem, s>>>(sums, a, n, up);
              LAUNCH_CHECK();
            }};
  }
  if (name == "cas_float_max") {
    return {[=](cudaStream_t s) {
              launch_fill(reinterpret_cast<unsigned*>(maxima), a, kNegInfBits, s);
            },
            [=, grid = grid_of(max_cas<false>, 0, n)](cudaStream_t s) {
              if (counted)
                max_cas<true><<<grid, kBlock, 0, s>>>(maxima, a, n, up, cas);
              else
                max_cas<false><<<grid, kBlock, 0, s>>>(maxima, a, n, up, nullptr);
              LAUNCH_CHECK();
            }};
  }
  return {[=](cudaStream_t s) { launch_fill(best, a, kArgmaxStart, s); },  // cas_argmax
          [=, grid = grid_of(argmax_cas<false>, 0, n)](cudaStream_t s) {
            if (counted)
              argmax_cas<true><<<grid, kBlock, 0, s>>>(best, a, n, up, cas);
            else
              argmax_cas<false><<<grid, kBlock, 0, s>>>(best, a, n, up, nullptr);
            LAUNCH_CHECK();
          }};
}

// ---- analysis -----------------------------------------------------------------------------------
// Every update's addend, value and score, on the host.
struct HostUpdates {
  HostUpdates(int64_t n, Updates up) : adds(size_t(n)), values(size_t(n)), scores(size_t(n)) {
    for (size_t i = 0; i < adds.size(); ++i) {
      adds[i] = up.add(uint32_t(i));
      values[i] = up.value(uint32_t(i));
      scores[i] = up.score(uint32_t(i));
    }
  }
  std::vector<uint32_t> adds;
  std::vector<float> values, scores;
};

// The CPU's counters at one A, for the ops of the versions measured there (the others empty).
struct Expected {
  std::vector<unsigned> sums;
  std::vector<float> maxima;
  std::vector<unsigned long long> argmax;
};

Expected expected_at(const HostUpdates& h, uint32_t a,
                     const std::vector<const Version*>& versions) {
  Expected e;
  for (const Version* v : versions) {
    if (v->op == Op::kSum && e.sums.empty()) e.sums = cpu_sums(h.adds, a);
    if (v->op == Op::kMax && e.maxima.empty()) e.maxima = cpu_maxima(h.values, a);
    if (v->op == Op::kArgmax && e.argmax.empty()) e.argmax = cpu_argmax(h.scores, a);
  }
  return e;
}

// The first want.size() counters on the device, exactly.
template <class T>
gpu100::CheckResult compare_counters(const gpu100::DeviceBuffer<T>& d, const std::vector<T>& want) {
  std::vector<T> got(want.size());
  d.download(got.data(), got.size());
  return gpu100::compare_exact(got, want);
}

// The counters of `op` after the updates, compared with the CPU's.
gpu100::CheckResult check_counters(Op op, const Counters& c, const Expected& e) {
  switch (op) {
    case Op::kSum:
      return compare_counters(c.sums, e.sums);
    case Op::kMax:
      return compare_counters(c.maxima, e.maxima);
    default:
      return compare_counters(c.argmax, e.argmax);
  }
}

// What every run shares: the updates, on the device (a key) and the host, and the counters.
struct Problem {
  int64_t n;
  Updates up;
  HostUpdates host;
  Counters counters;
};

// Version v at a counters: the reset untimed before every run, the updates timed, checked
// exactly. A point whose checked run is slow is timed over fewer repeats, so that no contention
// level can stretch the run into minutes.
gpu100::Measure measure_updates(std::string name, const Version& v, uint32_t a, gpu100::Role role,
                                Problem& p, const Expected& expected) {
  const Run run = run_of(v, a, false, p.counters, p.n, p.up);
  return {.name = std::move(name),
          .launch = run.updates,
          .reset = [&p, op = v.op] { p.counters.poison(op); },
          .check = [&p, &expected, op = v.op] { return check_counters(op, p.counters, expected); },
          .rate = [n = p.n](double ms) { return ms > 0 ? double(n) / (ms * 1e6) : 0.0; },
          .role = role,
          .flush_l2 = false,  // the reset has just rewritten every counter: the same start state
          .prepare = run.reset,
          .max_timed_ms = 1000};
}

// The instrumented copy of a CAS version: its count of atomicCAS calls in the checked run (the
// timed runs add to it afterwards, so the check reads it), per update; its result is checked too.
struct Counted {
  gpu100::CheckResult check;
  double cas_per_update = -1;
};

Counted measure_counted(gpu100::Context& ctx, const Version& v, uint32_t a, Problem& p,
                        const Expected& expected) {
  gpu100::Measure m = measure_updates(fmt::format("{} counted, A = {}", v.name, a), v, a,
                                      gpu100::Role::point, p, expected);
  m.launch = run_of(v, a, true, p.counters, p.n, p.up).updates;
  m.reset = [&p, op = v.op] {
    p.counters.poison(op);
    p.counters.cas.zero();
  };
  Counted counted;
  m.check = [&p, &expected, &counted, op = v.op] {
    counted.cas_per_update = double(p.counters.cas.download()[0]) / double(p.n);
    return check_counters(op, p.counters, expected);
  };
  counted.check = ctx.measure(m).check;
  return counted;
}

// The baseline: plain atomicAdd with one counter per update (A = n), checked like every point.
gpu100::Measured measure_baseline(gpu100::Context& ctx, Problem& p) {
  const uint32_t a = uint32_t(p.n);
  const Expected expected = expected_at(p.host, a, {&kVersions[0]});
  return ctx.measure(
      measure_updates("atomic_add, A = n", kVersions[0], a, gpu100::Role::baseline, p, expected));
}

// measure_all's results by the names of the runs.
using Results = std::map<std::string, gpu100::Measured>;
Results measure_by_name(gpu100::Context& ctx, const std::vector<gpu100::Measure>& runs) {
  const auto measured = ctx.measure_all(runs);
  Results by_name;
  for (size_t i = 0; i < runs.size(); ++i) by_name[runs[i].name] = measured[i];
  return by_name;
}

// Sweep points: powers of 2 where a warp's lanes share counters (A < 32), then every factor of 8,
// then n; --quick uses odd counts (uneven groups in a warp) and both sides of the shared
// capacity. --addresses is always a point: the main table comes from it.
std::set<int64_t> sweep_points(int64_t n, int64_t addresses, bool quick) {
  std::set<int64_t> points = {n, addresses};
  const std::vector<int64_t> full = {1, 2, 4, 8, 16, 32, 64, 512, 4096, 32768, 262144, 2097152};
  const std::vector<int64_t> small = {1, 3, 32, 33, 1000, kMaxPrivate, kMaxPrivate + 1};
  for (int64_t a : quick ? small : full)
    if (a <= n) points.insert(a);
  return points;
}

// The sweep table: per selected version its Gatomic/s, atomic_add as % of the uncontended rate,
// and the CAS versions' atomicCAS calls per update.
gpu100::Table sweep_table(const std::vector<const Version*>& selected) {
  gpu100::Table t{"Gatomic/s vs distinct addresses A (n updates, update i -> counter i mod A)",
                  {"addresses A"},
                  {}};
  for (const Version* v : selected) t.columns.push_back(fmt::format("{} Gatomic/s", v->name));
  if (selected.size() && selected[0] == &kVersions[0])
    t.columns.push_back("% of uncontended (atomic_add)");
  for (const Version* v : selected)
    if (v->op != Op::kSum) t.columns.push_back(fmt::format("{} CAS/update", v->name));
  return t;
}

// One point's row: rates (FAIL where the check failed), then the % and CAS/update columns.
std::vector<gpu100::Cell> sweep_row(int64_t a, const std::vector<const Version*>& selected,
                                    const Results& rs,
                                    const std::map<std::string, double>& cas_per_update,
                                    double uncontended_rate) {
  std::vector<gpu100::Cell> row = {a}, cas;
  for (const Version* v : selected) {
    const gpu100::Measured& r = rs.at(v->name);
    row.push_back(r.check.pass ? gpu100::Cell(r.rate) : gpu100::Cell("FAIL"));
    if (v->op != Op::kSum)
      cas.push_back(r.check.pass ? gpu100::Cell(cas_per_update.at(v->name)) : gpu100::Cell("FAIL"));
  }
  if (const auto plain = rs.find(kVersions[0].name); plain != rs.end()) {
    const double rate = plain->second.check.pass ? plain->second.rate : 0.0;
    row.push_back(uncontended_rate > 0 ? 100.0 * rate / uncontended_rate : 0.0);
  }
  row.insert(row.end(), cas.begin(), cas.end());
  return row;
}

// One point of the sweep: every selected version at a counters (at --addresses the main table's
// rows), then the CAS versions' instrumented copies; adds the point's row. Returns its checks.
gpu100::CheckResult sweep_point(gpu100::Context& ctx, Problem& p, int64_t a64, int64_t addresses,
                                const std::vector<const Version*>& selected,
                                const gpu100::Measured& uncontended, gpu100::Table& sweep) {
  const uint32_t a = uint32_t(a64);
  const auto role = a64 == addresses ? gpu100::Role::version : gpu100::Role::point;
  const Expected expected = expected_at(p.host, a, selected);
  // atomic_add at A = n is the baseline, already measured (unless it is a row too).
  const Version* plain = &kVersions[0];
  const bool reuse = ctx.want(plain->name) && a64 == p.n && role == gpu100::Role::point;
  std::vector<gpu100::Measure> runs;
  for (const Version* v : selected)
    if (!(reuse && v == plain)) runs.push_back(measure_updates(v->name, *v, a, role, p, expected));
  Results rs = measure_by_name(ctx, runs);
  if (reuse) rs[plain->name] = uncontended;

  gpu100::CheckResult check;
  std::map<std::string, double> cas_per_update;
  for (const Version* v : selected) {
    if (!(reuse && v == plain)) check = gpu100::combine(check, rs.at(v->name).check);
    if (v->op == Op::kSum) continue;
    const Counted counted = measure_counted(ctx, *v, a, p, expected);
    check = gpu100::combine(check, counted.check);
    cas_per_update[v->name] = counted.cas_per_update;
  }
  sweep.add_row(sweep_row(a64, selected, rs, cas_per_update, uncontended.rate));
  return check;
}

// Where the uncontended rate comes from: the L2's atomic units, or HBM when the counters spill.
std::string uncontended_note(int64_t n, const gpu100::DeviceInfo& dev) {
  const double counter_mib = 4.0 * double(n) / (1 << 20);
  const double l2_mib = double(dev.l2_bytes) / (1 << 20);
  if (4.0 * double(n) > double(dev.l2_bytes))
    return fmt::format(
        "at A = n the counters ({:.1f} MiB) exceed the L2 ({:.1f} MiB): an update whose counter "
        "is not in L2 costs 8 bytes of HBM traffic (read 4, write back 4); if every update did, "
        "the HBM peak would cap the rate at {:.1f} Gatomic/s",
        counter_mib, l2_mib, dev.peak_dram_gbps() / 8.0);
  return fmt::format(
      "at A = n the counters ({:.1f} MiB) fit in the L2 ({:.1f} MiB): the uncontended rate is "
      "the L2 atomic units', not HBM's",
      counter_mib, l2_mib);
}

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
    Problem p{n, up, HostUpdates(n, up), Counters{size_t(n)}};
    const gpu100::Measured uncontended = measure_baseline(ctx, p);
    gpu100::CheckResult sweep_check = uncontended.check;

    std::vector<const Version*> selected;
    for (const auto& v : kVersions)
      if (ctx.want(v.name)) selected.push_back(&v);
    gpu100::Table sweep = sweep_table(selected);
    for (int64_t a : sweep_points(n, addresses, ctx.quick()))
      sweep_check = gpu100::combine(
          sweep_check, sweep_point(ctx, p, a, addresses, selected, uncontended, sweep));
    report.add_check("contention sweep (every point, every version, baseline)", sweep_check);

    report.note(fmt::format(
        "Gatomic/s = n updates / median time / 1e9; the time is the updates kernel only: the "
        "reset of the A counters before each run (cudaMemsetAsync, or a fill kernel to -inf for "
        "the max versions) is outside the CUDA events; grid = blocks resident at once ({} x {} "
        "threads for atomic_add)",
        grid_of(add_atomic, 0, n), kBlock));
    report.note(
        "baseline: atomic_add with one counter per update (A = n) in this run; "
        "'x atomic_add, A = n' is what contention costs (or aggregation saves)");
    report.note(uncontended_note(n, ctx.device()));
    report.note(fmt::format("shared_privatized keeps at most {} counters per block in shared "
                            "memory; for larger A it runs atomic_add",
                            kMaxPrivate));
    report.note(
        "CAS/update: atomicCAS calls (one per thread and try) per update of the CAS versions, "
        "from an instrumented run; an update that does not beat its counter only loads");
    report.table(std::move(sweep));
  });
}
