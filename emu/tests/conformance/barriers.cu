// CTA barriers and the CTA/grid-level special registers:
//   bar.sync / barrier.sync (all threads, reuse across rounds, a CTA whose last warp is partial),
//   named barriers with thread counts (bar.sync 1, 64 shared by two warps while two other warps
//   use barrier 2), bar.arrive + bar.sync producer/consumer, bar.red.popc/and/or
//   (__syncthreads_count/and/or and raw forms, on barrier 0 and on a named barrier with a count),
//   the non-.aligned barrier.sync reached from two different branches of one warp;
//   %tid/%ntid/%ctaid/%nctaid in a 3D launch with odd sizes, %laneid, %warpid < %nwarpid,
//   %smid < %nsmid, %clock64 and %globaltimer monotonic within a thread;
//   device printf, whose output is captured from file descriptor 1 and compared with the same
//   format applied on the host.
//
// Expected values follow the PTX ISA's barrier{.cta} description: a barrier completes when the
// given number of threads (or all threads of the CTA) have arrived; .red combines the predicate of
// every participating thread (popc: the number of true predicates, and: all true, or: any true)
// and gives every waiting thread the result; memory accesses before the barrier are performed
// relative to the participating threads when it completes.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "conf_common.h"

namespace {

__host__ __device__ inline uint32_t mix(uint32_t a, uint32_t b) {
  return (a * 2654435761u) ^ (b * 40503u + 0x9e37u);
}

// ---------------------------------------------------------------------------------------------
// bar.sync 0 over a 100-thread CTA (warp 3 has 4 threads), four rounds reusing the barrier.
// ---------------------------------------------------------------------------------------------
constexpr int kBasicThreads = 100, kRounds = 4;
// Kernels launched with several blocks write each block's results to its own slice of the output
// (blocks writing the same words would race), and the host checks that every slice agrees.
constexpr int kBlockWords = 4096;
__global__ void k_bar_basic(uint32_t* out) {
  out += blockIdx.x * kBlockWords;
  __shared__ uint32_t s[kBasicThreads];
  const uint32_t t = threadIdx.x;
  for (int r = 0; r < kRounds; ++r) {
    s[t] = mix(t, r);
    __syncthreads();
    out[r * kBasicThreads + t] = s[(t * 7 + 3 + r) % kBasicThreads];
    __syncthreads();  // nobody overwrites s before everyone has read it
  }
}

// ---------------------------------------------------------------------------------------------
// Named barriers with a thread count: warps 0-1 pair on barrier 1, warps 2-3 on barrier 2, for
// three rounds; warps 2-3 spin a while first so the pairs arrive at different times.
// ---------------------------------------------------------------------------------------------
__global__ void k_bar_named(uint32_t* out, int delay) {
  out += blockIdx.x * kBlockWords;
  __shared__ uint32_t s[128];
  const uint32_t t = threadIdx.x, warp = t / 32;
  if (warp >= 2) {
    volatile uint32_t sink = 0;
    for (int i = 0; i < delay; ++i) sink = sink + i;
  }
  for (int r = 0; r < 3; ++r) {
    s[t] = mix(t + 1000, r);
    if (warp < 2)
      asm volatile("bar.sync 1, 64;" ::: "memory");
    else
      asm volatile("bar.sync 2, 64;" ::: "memory");
    const uint32_t partner = t ^ 32;  // the other warp of the pair
    out[r * 128 + t] = s[partner];
    if (warp < 2)
      asm volatile("bar.sync 1, 64;" ::: "memory");
    else
      asm volatile("barrier.sync 2, 64;" ::: "memory");
  }
}

// ---------------------------------------------------------------------------------------------
// Producer/consumer: warp 0 fills buf and signals with bar.arrive 3, 64; warp 1 waits on
// bar.sync 3, 64, consumes, and signals back with bar.arrive 4, 64, which the producer waits on
// (bar.sync 4, 64) before refilling. Eight rounds.
// ---------------------------------------------------------------------------------------------
constexpr int kPcRounds = 8;
__global__ void k_producer_consumer(uint32_t* out) {
  out += blockIdx.x * kBlockWords;
  __shared__ uint32_t buf[32];
  const uint32_t t = threadIdx.x, lane = t % 32;
  if (t < 32) {
    for (int r = 0; r < kPcRounds; ++r) {
      if (r > 0) asm volatile("bar.sync 4, 64;" ::: "memory");
      buf[lane] = mix(lane, r + 50);
      asm volatile("bar.arrive 3, 64;" ::: "memory");
    }
  } else {
    uint32_t acc = 0;
    for (int r = 0; r < kPcRounds; ++r) {
      asm volatile("bar.sync 3, 64;" ::: "memory");
      acc = acc * 31u + buf[(lane + r) % 32];
      if (r < kPcRounds - 1) asm volatile("bar.arrive 4, 64;" ::: "memory");
    }
    out[lane] = acc;
  }
}

// ---------------------------------------------------------------------------------------------
// bar.red
// ---------------------------------------------------------------------------------------------
constexpr int kNumRedPreds = 5;
__host__ __device__ inline bool red_pred(int k, uint32_t t) {
  switch (k) {
    case 0:
      return t % 3 == 0;
    case 1:
      return true;
    case 2:
      return false;
    case 3:
      return t == 57;
    default:
      return t != 99;
  }
}

// 100 threads. Per pattern k, per thread: [0] __syncthreads_count, [1] __syncthreads_and,
// [2] __syncthreads_or, [3] bar.red.popc.u32 on barrier 0 with the negated predicate,
// [4] bar.red.and.pred, [5] bar.red.or.pred with the negated predicate.
constexpr int kRedOuts = 6;
__global__ void k_bar_red(uint32_t* out) {
  out += blockIdx.x * kBlockWords;
  const uint32_t t = threadIdx.x;
  for (int k = 0; k < kNumRedPreds; ++k) {
    const int p = red_pred(k, t);
    uint32_t* o = out + (k * kRedOuts) * kBasicThreads + t;
    o[0 * kBasicThreads] = __syncthreads_count(p);
    o[1 * kBasicThreads] = __syncthreads_and(p);
    o[2 * kBasicThreads] = __syncthreads_or(p);
    uint32_t v;
    asm volatile("{ .reg .pred pq; setp.ne.u32 pq, %1, 0; bar.red.popc.u32 %0, 0, !pq; }"
                 : "=r"(v)
                 : "r"(p)
                 : "memory");
    o[3 * kBasicThreads] = v;
    asm volatile(
        "{ .reg .pred pq; setp.ne.u32 pq, %1, 0; bar.red.and.pred pq, 0, pq; selp.u32 %0, 1, 0, "
        "pq; }"
        : "=r"(v)
        : "r"(p)
        : "memory");
    o[4 * kBasicThreads] = v;
    asm volatile(
        "{ .reg .pred pq; setp.ne.u32 pq, %1, 0; bar.red.or.pred pq, 0, !pq; selp.u32 %0, 1, 0, "
        "pq; }"
        : "=r"(v)
        : "r"(p)
        : "memory");
    o[5 * kBasicThreads] = v;
  }
}

// 128 threads: warps 0-1 reduce on barrier 5 with a count of 64, warps 2-3 on barrier 6.
// Per thread: [0] popc of (t % 5 == 0) over its pair, [1] and of (t != 40), [2] or of (t == 100).
__global__ void k_bar_red_named(uint32_t* out) {
  const uint32_t t = threadIdx.x;
  const uint32_t p0 = t % 5 == 0, p1 = t != 40, p2 = t == 100;
  uint32_t a, b, c;
  if (t < 64) {
    asm volatile("{ .reg .pred pq; setp.ne.u32 pq, %1, 0; bar.red.popc.u32 %0, 5, 64, pq; }"
                 : "=r"(a)
                 : "r"(p0)
                 : "memory");
    asm volatile(
        "{ .reg .pred pq; setp.ne.u32 pq, %1, 0; bar.red.and.pred pq, 5, 64, pq; selp.u32 %0, 1, "
        "0, pq; }"
        : "=r"(b)
        : "r"(p1)
        : "memory");
    asm volatile(
        "{ .reg .pred pq; setp.ne.u32 pq, %1, 0; barrier.red.or.pred pq, 5, 64, pq; selp.u32 %0, "
        "1, 0, pq; }"
        : "=r"(c)
        : "r"(p2)
        : "memory");
  } else {
    asm volatile("{ .reg .pred pq; setp.ne.u32 pq, %1, 0; bar.red.popc.u32 %0, 6, 64, pq; }"
                 : "=r"(a)
                 : "r"(p0)
                 : "memory");
    asm volatile(
        "{ .reg .pred pq; setp.ne.u32 pq, %1, 0; bar.red.and.pred pq, 6, 64, pq; selp.u32 %0, 1, "
        "0, pq; }"
        : "=r"(b)
        : "r"(p1)
        : "memory");
    asm volatile(
        "{ .reg .pred pq; setp.ne.u32 pq, %1, 0; barrier.red.or.pred pq, 6, 64, pq; selp.u32 %0, "
        "1, 0, pq; }"
        : "=r"(c)
        : "r"(p2)
        : "memory");
  }
  out[t * 3] = a, out[t * 3 + 1] = b, out[t * 3 + 2] = c;
}

// ---------------------------------------------------------------------------------------------
// barrier.sync (not .aligned) reached from two different branches within each warp.
// ---------------------------------------------------------------------------------------------
__global__ void k_bar_divergent(uint32_t* out) {
  out += blockIdx.x * kBlockWords;
  __shared__ uint32_t s[64];
  const uint32_t t = threadIdx.x;
  uint32_t r;
  if (t & 1) {
    s[t] = t * 3 + 1;
    asm volatile("barrier.sync 0;" ::: "memory");
    r = s[t ^ 1] * 2;
  } else {
    s[t] = t * 5 + 2;
    asm volatile("barrier.sync 0;" ::: "memory");
    r = s[t ^ 1] + 1000;
  }
  out[t] = r;
}

// Every block's slice of d_out holds the same first `words` words as block 0's.
void check_blocks_agree(const char* name, const uint32_t* d_out, size_t words, int blocks) {
  std::vector<uint32_t> all(size_t(blocks) * kBlockWords);
  CUDA_CHECK(cudaMemcpy(all.data(), d_out, all.size() * 4, cudaMemcpyDeviceToHost));
  for (int b = 1; b < blocks; ++b)
    for (size_t i = 0; i < words; ++i)
      conf_check(name, conf_fmt("block %d word %zu (as block 0)", b, i), all[b * kBlockWords + i],
                 all[i]);
}

void test_barriers() {
  uint32_t* d_out;
  CUDA_CHECK(cudaMalloc(&d_out, 64 * 1024));

  k_bar_basic<<<3, kBasicThreads>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(kRounds * kBasicThreads);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  for (int r = 0; r < kRounds; ++r)
    for (uint32_t t = 0; t < static_cast<uint32_t>(kBasicThreads); ++t)
      conf_check("bar.sync 0 (100 threads)", conf_fmt("round %d thread %u", r, t),
                 g[r * kBasicThreads + t], mix((t * 7 + 3 + r) % kBasicThreads, r));
  check_blocks_agree("bar.sync 0 (100 threads)", d_out, g.size(), 3);

  k_bar_named<<<2, 128>>>(d_out, 20000);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  g.resize(3 * 128);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  for (int r = 0; r < 3; ++r)
    for (uint32_t t = 0; t < 128; ++t)
      conf_check(t < 64 ? "bar.sync 1, 64 (warps 0-1)" : "bar.sync 2, 64 (warps 2-3)",
                 conf_fmt("round %d thread %u", r, t), g[r * 128 + t], mix((t ^ 32) + 1000, r));
  check_blocks_agree("bar.sync 1, 64 / bar.sync 2, 64", d_out, g.size(), 2);

  k_producer_consumer<<<2, 64>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  g.resize(32);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, 32 * 4, cudaMemcpyDeviceToHost));
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t acc = 0;
    for (int r = 0; r < kPcRounds; ++r) acc = acc * 31u + mix((lane + r) % 32, r + 50);
    conf_check("bar.arrive/bar.sync producer-consumer", conf_fmt("consumer lane %u", lane), g[lane],
               acc);
  }
  check_blocks_agree("bar.arrive/bar.sync producer-consumer", d_out, 32, 2);

  k_bar_red<<<2, kBasicThreads>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  g.resize(kNumRedPreds * kRedOuts * kBasicThreads);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  const char* red_names[kRedOuts] = {"__syncthreads_count", "__syncthreads_and",
                                     "__syncthreads_or",    "bar.red.popc.u32 (!p)",
                                     "bar.red.and.pred",    "bar.red.or.pred (!p)"};
  for (int k = 0; k < kNumRedPreds; ++k) {
    uint32_t cnt = 0;
    for (uint32_t t = 0; t < static_cast<uint32_t>(kBasicThreads); ++t) cnt += red_pred(k, t);
    const uint32_t n = kBasicThreads;
    const uint32_t e[kRedOuts] = {cnt, cnt == n, cnt != 0, n - cnt, cnt == n, cnt != n};
    for (uint32_t t = 0; t < n; ++t)
      for (int i = 0; i < kRedOuts; ++i)
        conf_check(red_names[i], conf_fmt("pattern %d thread %u", k, t),
                   g[(k * kRedOuts + i) * n + t], e[i]);
  }
  check_blocks_agree("bar.red", d_out, g.size(), 2);

  k_bar_red_named<<<1, 128>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  g.resize(128 * 3);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  for (uint32_t t = 0; t < 128; ++t) {
    const uint32_t lo = t < 64 ? 0 : 64;
    uint32_t popc = 0, all = 1, any = 0;
    for (uint32_t u = lo; u < lo + 64; ++u) popc += u % 5 == 0, all &= u != 40, any |= u == 100;
    conf_check("bar.red.popc.u32 on a named barrier, count 64", conf_fmt("thread %u", t), g[t * 3],
               popc);
    conf_check("bar.red.and.pred on a named barrier, count 64", conf_fmt("thread %u", t),
               g[t * 3 + 1], all);
    conf_check("barrier.red.or.pred on a named barrier, count 64", conf_fmt("thread %u", t),
               g[t * 3 + 2], any);
  }

  k_bar_divergent<<<2, 64>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  g.resize(64);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, 64 * 4, cudaMemcpyDeviceToHost));
  for (uint32_t t = 0; t < 64; ++t) {
    const uint32_t o = t ^ 1;
    const uint32_t so = (o & 1) ? o * 3 + 1 : o * 5 + 2;
    conf_check("barrier.sync 0 from two branches of a warp", conf_fmt("thread %u", t), g[t],
               (t & 1) ? so * 2 : so + 1000);
  }
  check_blocks_agree("barrier.sync 0 from two branches of a warp", d_out, 64, 2);
  CUDA_CHECK(cudaFree(d_out));
}

// ---------------------------------------------------------------------------------------------
// Special registers in a 3D launch: grid (3, 5, 2), block (5, 3, 7) = 105 threads (4 warps).
// ---------------------------------------------------------------------------------------------
constexpr int kRegs = 20;
__global__ void k_special_regs(uint32_t* out, unsigned long long* times) {
  uint32_t r[kRegs];
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(r[0]));
  asm volatile("mov.u32 %0, %%tid.y;" : "=r"(r[1]));
  asm volatile("mov.u32 %0, %%tid.z;" : "=r"(r[2]));
  asm volatile("mov.u32 %0, %%ntid.x;" : "=r"(r[3]));
  asm volatile("mov.u32 %0, %%ntid.y;" : "=r"(r[4]));
  asm volatile("mov.u32 %0, %%ntid.z;" : "=r"(r[5]));
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(r[6]));
  asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(r[7]));
  asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(r[8]));
  asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(r[9]));
  asm volatile("mov.u32 %0, %%nctaid.y;" : "=r"(r[10]));
  asm volatile("mov.u32 %0, %%nctaid.z;" : "=r"(r[11]));
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r[12]));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(r[13]));
  asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(r[14]));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r[15]));
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r[16]));
  r[17] =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);  // C++ view, same values
  r[18] = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  r[19] = blockDim.x * blockDim.y * blockDim.z;
  const uint32_t lin = r[18] * r[19] + r[17];
  for (int i = 0; i < kRegs; ++i) out[lin * kRegs + i] = r[i];
  // %clock64 and %globaltimer around some dependent work, read three times.
  unsigned long long c0, c1, c2, g0, g1, g2;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  uint32_t x = lin;
  for (int i = 0; i < 2000; ++i) x = x * 1664525u + 1013904223u;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  for (int i = 0; i < 2000; ++i) x = x * 22695477u + 1u;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c2));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g2));
  unsigned long long* tp = times + lin * 7;
  tp[0] = c0, tp[1] = c1, tp[2] = c2, tp[3] = g0, tp[4] = g1, tp[5] = g2, tp[6] = x;
}

void test_special_regs() {
  const dim3 grid(3, 5, 2), block(5, 3, 7);
  const uint32_t nthreads = 5 * 3 * 7, nblocks = 3 * 5 * 2, total = nthreads * nblocks;
  uint32_t* d_out;
  unsigned long long* d_t;
  CUDA_CHECK(cudaMalloc(&d_out, total * kRegs * 4));
  CUDA_CHECK(cudaMalloc(&d_t, total * 7 * 8));
  CUDA_CHECK(cudaMemset(d_out, 0xff, total * kRegs * 4));
  k_special_regs<<<grid, block>>>(d_out, d_t);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(total * kRegs);
  std::vector<unsigned long long> tm(total * 7);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(tm.data(), d_t, tm.size() * 8, cudaMemcpyDeviceToHost));
  const char* names[12] = {"%tid.x",   "%tid.y",    "%tid.z",    "%ntid.x",
                           "%ntid.y",  "%ntid.z",   "%ctaid.x",  "%ctaid.y",
                           "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z"};
  for (uint32_t bz = 0; bz < 2; ++bz)
    for (uint32_t by = 0; by < 5; ++by)
      for (uint32_t bx = 0; bx < 3; ++bx)
        for (uint32_t tz = 0; tz < 7; ++tz)
          for (uint32_t ty = 0; ty < 3; ++ty)
            for (uint32_t tx = 0; tx < 5; ++tx) {
              const uint32_t tl = tx + 5 * (ty + 3 * tz), bl = bx + 3 * (by + 5 * bz),
                             lin = bl * nthreads + tl;
              const uint32_t* r = &g[lin * kRegs];
              ConfStr in = conf_fmt("block (%u,%u,%u) thread (%u,%u,%u)", bx, by, bz, tx, ty, tz);
              const uint32_t e[12] = {tx, ty, tz, 5, 3, 7, bx, by, bz, 3, 5, 2};
              for (int i = 0; i < 12; ++i) conf_check(names[i], in, r[i], e[i]);
              conf_check("%laneid (linear thread id % 32)", in, r[12], tl % 32);
              conf_check_text("%warpid < %nwarpid", in.s, r[13] < r[14],
                              conf_fmt("%u, %u", r[13], r[14]).s, "warpid < nwarpid");
              conf_check_text("%smid < %nsmid", in.s, r[15] < r[16],
                              conf_fmt("%u, %u", r[15], r[16]).s, "smid < nsmid");
              const unsigned long long* t = &tm[lin * 7];
              conf_check_text("%clock64 increases within a thread", in.s,
                              t[0] <= t[1] && t[1] <= t[2] && t[0] < t[2],
                              conf_fmt("%llu, %llu, %llu", t[0], t[1], t[2]).s,
                              "c0 <= c1 <= c2, c0 < c2");
              conf_check_text("%globaltimer never decreases within a thread", in.s,
                              t[3] <= t[4] && t[4] <= t[5],
                              conf_fmt("%llu, %llu, %llu", t[3], t[4], t[5]).s, "g0 <= g1 <= g2");
            }
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_t));
}

// ---------------------------------------------------------------------------------------------
// Device printf. File descriptor 1 is pointed at a temporary file around the launch and the
// synchronization that flushes the device's printf buffer; the captured lines (in any order, as
// threads print concurrently) must equal the host's formatting of the same format and arguments.
// ---------------------------------------------------------------------------------------------
#define PRINTF_FMT \
  "conf_printf b=%d t=%u x=%#x f=%.3f s=%s c=%c ll=%lld neg=%+d pad=[%5d] [%-4u] e=%.2e\n"

__global__ void k_printf() {
  const int t = threadIdx.x, b = blockIdx.x;
  if (t < 3) {
    printf(PRINTF_FMT, b, t, 0xbeef0 + t, 1.25 * t - 0.5, t == 1 ? "one" : "other", 'A' + t,
           -1234567890123LL * (t + 1), -t, t * 11, t, 6.02214076e23 * (b + 1));
  }
}

std::string host_format(int b, int t) {
  char buf[256];
  std::snprintf(buf, sizeof buf, PRINTF_FMT, b, static_cast<unsigned>(t), 0xbeef0 + t,
                1.25 * t - 0.5, t == 1 ? "one" : "other", 'A' + t, -1234567890123LL * (t + 1), -t,
                t * 11, static_cast<unsigned>(t), 6.02214076e23 * (b + 1));
  return buf;
}

void test_printf() {
  std::fflush(stdout);
  FILE* tmp = std::tmpfile();
  if (!tmp) {
    conf_check_text("device printf", "tmpfile()", false, "no temporary file", "a capture file");
    return;
  }
  const int saved = dup(1);
  dup2(fileno(tmp), 1);
  k_printf<<<2, 32>>>();
  const cudaError_t launch = cudaGetLastError();
  const cudaError_t sync = cudaDeviceSynchronize();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  CUDA_CHECK(launch);
  CUDA_CHECK(sync);
  std::rewind(tmp);
  std::vector<std::string> got, want;
  char line[512];
  while (std::fgets(line, sizeof line, tmp))
    if (std::strncmp(line, "conf_printf", 11) == 0) got.push_back(line);
  std::fclose(tmp);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t) want.push_back(host_format(b, t));
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  conf_check("device printf: lines printed", "2 blocks x 3 threads", got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    std::string g = got[i], w = want[i];
    if (!g.empty() && g.back() == '\n') g.pop_back();
    if (!w.empty() && w.back() == '\n') w.pop_back();
    conf_check_text("device printf", conf_fmt("sorted line %zu", i).s, g == w, g.c_str(),
                    w.c_str());
  }
}

}  // namespace

int main() {
  conf_require_device();
  test_barriers();
  test_special_regs();
  test_printf();
  return conf_finish("barriers");
}
