// Barriers after some threads of the block have exited.
//
// PTX ISA, bar/barrier: without a thread count "all threads in the CTA participate", and
// barrier.sync "causes executing thread to wait for all non-exited threads from its warp" and
// "for non-exited threads of all other warps participating in the barrier to arrive"; exit: "as
// threads exit, barriers waiting on all threads are checked to see if the exiting threads are
// the only threads that have not yet made it to a barrier ... If the exiting threads are holding
// up the barrier, the barrier is released". The CUDA Programming Guide says the same of
// __syncthreads() on compute capability 7.0 and later: it succeeds when reached by all
// non-exited threads of the block.
//
// So a __syncthreads() after an early `return` of some threads is defined, whether whole warps
// or some lanes of a warp exit, and whether they exit before or while the others wait. Each
// kernel below has its surviving threads exchange values through shared memory over several
// barriers; __syncthreads_count (bar.red.popc without a count) counts the threads that did not
// exit. A barrier with a thread count is a different contract: it waits for its count, which
// the threads that are left still make up here.
#include <cstdint>

#include "conf_common.h"

namespace {

constexpr int kThreads = 256;
constexpr int kRounds = 4;

// The value thread t publishes in round r.
__host__ __device__ int published(int t, int r) { return t * 37 + r * 1000 + 11; }

}  // namespace

// Threads with first_exit <= t < last_exit return at once; the others run kRounds rounds, each
// publishing a value, meeting at __syncthreads, adding the value of a partner that is also
// alive, and meeting again before the next round overwrites the array. out[t] is the sum, or -1
// for a thread that exited; counts[r] is __syncthreads_count(1) of round r (thread `first_alive`
// writes it).
__global__ void k_exchange(int first_exit, int last_exit, int* out, int* counts) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x;
  const int alive = kThreads - (last_exit - first_exit);
  if (t >= first_exit && t < last_exit) {
    out[t] = -1;
    return;
  }
  // The surviving threads in order: rank 0 .. alive-1, and back.
  const int rank = t < first_exit ? t : t - (last_exit - first_exit);
  int sum = 0;
  for (int r = 0; r < kRounds; ++r) {
    s[t] = published(t, r);
    const int n = __syncthreads_count(1);
    if (rank == 0) counts[r] = n;
    const int partner_rank = (rank + 1 + r) % alive;
    const int partner = partner_rank < first_exit ? partner_rank : partner_rank + (last_exit - first_exit);
    sum += s[partner];
    __syncthreads();
  }
  out[t] = sum;
}

// Warps 0 and 1 meet on named barrier 1 with a count of 64 (their own threads) while warps 2 and
// 3 exit: the count is met by the threads that arrive.
__global__ void k_named_after_exit(int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t >= 64) return;
  s[t] = published(t, 0);
  asm volatile("bar.sync 1, 64;" ::: "memory");
  out[t] = s[63 - t];
}

// One survivor per warp: only lane 0 of each warp stays; its barrier waits for no other lane.
__global__ void k_one_lane_per_warp(int* out) {
  __shared__ int s[kThreads / 32];
  const int t = threadIdx.x;
  if (t % 32 != 0) return;
  const int w = t / 32;
  s[w] = published(t, 1);
  __syncthreads();
  out[w] = s[(w + 1) % (kThreads / 32)];
}

// A thread that leaves through `exit` in a called function has exited too. In block b, warps
// b % 8 and (b + 3) % 8 exit that way; the others meet at the block-wide reductions
// (bar.red.popc/and/or without a count), which take only the threads that have not exited:
// __syncthreads_count(1) counts the survivors, __syncthreads_and of a predicate true for every
// survivor is 1, __syncthreads_or of one false for every survivor is 0 (the exited threads would
// have made it 1). Then a survivor reads its neighbour survivor's value after __syncthreads.
__device__ __noinline__ void leave() { asm volatile("exit;"); }

__global__ void k_reductions_after_exit(int* results, int* out) {
  __shared__ int s[kThreads];
  const int t = threadIdx.x, w = t / 32, b = blockIdx.x;
  const bool exits = w == b % 8 || w == (b + 3) % 8;
  if (exits) leave();
  const int n = __syncthreads_count(1);
  const int all = __syncthreads_and(!exits);
  const int any = __syncthreads_or(exits);
  s[t] = published(t, b);
  __syncthreads();
  int next = (t + 32) % kThreads;  // the same lane of the next surviving warp
  while ((next / 32) == b % 8 || (next / 32) == (b + 3) % 8) next = (next + 32) % kThreads;
  out[b * kThreads + t] = s[next];
  if (t == (w * 32) && w == (b + 1) % 8) {  // a survivor, whatever b is
    results[3 * b] = n;
    results[3 * b + 1] = all;
    results[3 * b + 2] = any;
  }
}

namespace {

void check_exchange(const char* what, int first_exit, int last_exit) {
  int *out = nullptr, *counts = nullptr;
  CUDA_CHECK(cudaMalloc(&out, kThreads * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&counts, kRounds * sizeof(int)));
  k_exchange<<<1, kThreads>>>(first_exit, last_exit, out, counts);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  int got[kThreads], got_counts[kRounds];
  CUDA_CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(got_counts, counts, sizeof got_counts, cudaMemcpyDeviceToHost));
  const int gap = last_exit - first_exit, alive = kThreads - gap;
  for (int r = 0; r < kRounds; ++r)
    conf_check(what, conf_fmt("__syncthreads_count(1) in round %d", r), got_counts[r], alive);
  for (int t = 0; t < kThreads; ++t) {
    int want = -1;
    if (t < first_exit || t >= last_exit) {
      const int rank = t < first_exit ? t : t - gap;
      want = 0;
      for (int r = 0; r < kRounds; ++r) {
        const int pr = (rank + 1 + r) % alive;
        want += published(pr < first_exit ? pr : pr + gap, r);
      }
    }
    conf_check(what, conf_fmt("thread %d", t), got[t], want);
  }
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(counts));
}

}  // namespace

int main() {
  conf_require_device();
  // Whole warps exit: the first three (before the others can arrive, in any order), the last
  // three (the first warps may already wait when they exit), three in the middle.
  check_exchange("__syncthreads after warps 0-2 exit", 0, 96);
  check_exchange("__syncthreads after warps 5-7 exit", 160, 256);
  check_exchange("__syncthreads after warps 2-4 exit", 64, 160);
  // Part of a warp exits: `if (t >= 100) return;` leaves lanes 0-3 of warp 3 and exits the rest
  // of it and warps 4-7; and lanes 8-23 of warp 1 exit while its other lanes stay.
  check_exchange("__syncthreads after threads 100-255 exit", 100, 256);
  check_exchange("__syncthreads after threads 40-55 exit", 40, 56);

  {
    int* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, 64 * sizeof(int)));
    k_named_after_exit<<<1, 128>>>(out);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    int got[64];
    CUDA_CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
    for (int t = 0; t < 64; ++t)
      conf_check("bar.sync 1, 64 after warps 2-3 exit", conf_fmt("thread %d", t), got[t],
                 published(63 - t, 0));
    CUDA_CHECK(cudaFree(out));
  }
  {
    int* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, (kThreads / 32) * sizeof(int)));
    k_one_lane_per_warp<<<1, kThreads>>>(out);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    int got[kThreads / 32];
    CUDA_CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
    for (int w = 0; w < kThreads / 32; ++w)
      conf_check("__syncthreads with lane 0 of each warp left", conf_fmt("warp %d", w), got[w],
                 published(((w + 1) % (kThreads / 32)) * 32, 1));
    CUDA_CHECK(cudaFree(out));
  }
  {
    constexpr int kBlocks = 5;
    int *results = nullptr, *out = nullptr;
    CUDA_CHECK(cudaMalloc(&results, 3 * kBlocks * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&out, kBlocks * kThreads * sizeof(int)));
    CUDA_CHECK(cudaMemset(out, 0xff, kBlocks * kThreads * sizeof(int)));
    k_reductions_after_exit<<<kBlocks, kThreads>>>(results, out);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    int got[3 * kBlocks], got_out[kBlocks * kThreads];
    CUDA_CHECK(cudaMemcpy(got, results, sizeof got, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(got_out, out, sizeof got_out, cudaMemcpyDeviceToHost));
    const char* what = "bar.red after two warps exit in a called function";
    for (int b = 0; b < kBlocks; ++b) {
      conf_check(what, conf_fmt("block %d: __syncthreads_count(1)", b), got[3 * b], kThreads - 64);
      conf_check(what, conf_fmt("block %d: __syncthreads_and(true for survivors)", b), got[3 * b + 1], 1);
      conf_check(what, conf_fmt("block %d: __syncthreads_or(false for survivors)", b), got[3 * b + 2], 0);
      for (int t = 0; t < kThreads; ++t) {
        const int w = t / 32;
        if (w == b % 8 || w == (b + 3) % 8) {
          conf_check(what, conf_fmt("block %d thread %d (exited) wrote nothing", b, t), got_out[b * kThreads + t], -1);
          continue;
        }
        int next = (t + 32) % kThreads;
        while ((next / 32) == b % 8 || (next / 32) == (b + 3) % 8) next = (next + 32) % kThreads;
        conf_check(what, conf_fmt("block %d thread %d", b, t), got_out[b * kThreads + t], published(next, b));
      }
    }
    CUDA_CHECK(cudaFree(results));
    CUDA_CHECK(cudaFree(out));
  }
  return conf_finish("barrier_exit");
}
