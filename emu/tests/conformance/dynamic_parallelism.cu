// Dynamic parallelism (device-side launches, the CUDA 12+ device runtime), built with
// -rdc=true and the device runtime library. Every expected value follows from the programming
// guide's rules, not from a run:
//   - a parent grid is complete only when every grid its threads launched is complete, so the
//     host sees all the children's writes after synchronizing with the parent alone;
//   - launches into one stream run in order: a block's NULL stream is shared by its threads, a
//     stream created on the device (non-blocking) belongs to the grid;
//   - cudaStreamTailLaunch: the grid runs after the parent and all the parent's other work
//     (children in any stream, fire-and-forget ones included) is complete; tail launches of one
//     grid run in the order they were issued;
//   - nesting: the host's grid has depth 0 and the deepest grid allowed has depth 24, a launch
//     from depth 24 fails with cudaErrorLaunchMaxDepthExceeded;
//   - launch errors are the launching thread's: cudaPeekAtLastError() reads its last error,
//     cudaGetLastError() reads and clears it.
#include "conf_common.h"

namespace {

// --- children writing distinct ranges ------------------------------------------------------
// Thread t of the parent launches a child of kChildBlocks x kChildThreads threads writing the
// range [t * kSpan, (t + 1) * kSpan): 3 blocks x 5 parent threads, 2 x 7 child threads.
constexpr int kParentBlocks = 3, kParentThreads = 5, kChildBlocks = 2, kChildThreads = 7;
constexpr int kSpan = kChildBlocks * kChildThreads;
constexpr int kRanges = kParentBlocks * kParentThreads * kSpan;

__global__ void k_fill_child(int* out, int base, int tag) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[base + i] = tag * 100000 + base + i;
}
__global__ void k_fill_parent(int* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  // Every third parent thread uses the fire-and-forget stream: it, too, completes before the
  // parent counts as complete.
  if (t % 3 == 2) k_fill_child<<<kChildBlocks, kChildThreads, 0, cudaStreamFireAndForget>>>(out, t * kSpan, 2);
  else k_fill_child<<<kChildBlocks, kChildThreads>>>(out, t * kSpan, 1);
}

// --- nesting --------------------------------------------------------------------------------
// Grid d writes level[d] and launches grid d + 1 until `last`; each records the error of its
// launch. Depth 25 cannot be launched.
constexpr int kMaxDepth = 24, kTryDepth = 27;
__global__ void k_nest(int* level, int* err, int depth, int last) {
  level[depth] = 1000 + depth;
  int e = 0;
  if (depth < last) {
    k_nest<<<1, 1>>>(level, err, depth + 1, last);
    e = int(cudaGetLastError());
  }
  err[depth] = e;
}

// --- ordering: one block's NULL stream, a device stream, tail launches -----------------------
__global__ void k_store(int* p, int v) { *p = v; }
__global__ void k_add_from(int* dst, const int* src, int v) { *dst = *src + v; }
__global__ void k_count(int* counter, int v) { atomicAdd(counter, v); }
// A tail grid reads the counter: by then the whole parent (its threads and its children) is done.
__global__ void k_tail_read(int* counter, int* seen, int* ticket_out, int* tickets) {
  *seen = *counter;
  *ticket_out = atomicAdd(tickets, 1);
}

constexpr int kOrderBlocks = 4, kOrderThreads = 33;
struct OrderOut {
  int counter, tickets;
  int chain[3];     // NULL stream of block 0: 7, then chain[0] + 1, then chain[1] + 10
  int dev_chain[2]; // device stream: 5, then dev_chain[0] * ... + 3
  int seen[2], ticket[2];
  int stream_err;
};
__global__ void k_order_parent(OrderOut* o) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t == 0) {
    // Issued first, run last: after every parent thread's add and every child's.
    k_tail_read<<<1, 1, 0, cudaStreamTailLaunch>>>(&o->counter, &o->seen[0], &o->ticket[0], &o->tickets);
    k_tail_read<<<1, 1, 0, cudaStreamTailLaunch>>>(&o->counter, &o->seen[1], &o->ticket[1], &o->tickets);
    k_store<<<1, 1>>>(&o->chain[0], 7);
    k_add_from<<<1, 1>>>(&o->chain[1], &o->chain[0], 1);
    k_add_from<<<1, 1>>>(&o->chain[2], &o->chain[1], 10);
    cudaStream_t s;
    int e = int(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (e == 0) {
      k_store<<<1, 1, 0, s>>>(&o->dev_chain[0], 5);
      k_add_from<<<1, 1, 0, s>>>(&o->dev_chain[1], &o->dev_chain[0], 3);
      e = int(cudaStreamDestroy(s));
    }
    o->stream_err = e;
  }
  // One child per block adds 1000 (NULL stream of the block), one per block fire-and-forget 100.
  if (threadIdx.x == 1) k_count<<<1, 1>>>(&o->counter, 1000);
  if (threadIdx.x == 2) k_count<<<1, 1, 0, cudaStreamFireAndForget>>>(&o->counter, 100);
  atomicAdd(&o->counter, 1);
}

// --- errors -----------------------------------------------------------------------------------
__global__ void k_nothing(int*) {}
__global__ void k_errors(int* out) {
  k_nothing<<<1, 2048>>>(out);  // more threads than a block may have
  out[0] = int(cudaPeekAtLastError());
  out[1] = int(cudaPeekAtLastError());
  out[2] = int(cudaGetLastError());
  out[3] = int(cudaGetLastError());
  k_nothing<<<1, 1, 0, cudaStreamFireAndForget>>>(out);
  out[4] = int(cudaGetLastError());
}

}  // namespace

int main() {
  conf_require_device();

  // Distinct ranges, no sync but the host's.
  {
    int* d;
    CUDA_CHECK(cudaMalloc(&d, kRanges * sizeof(int)));
    CUDA_CHECK(cudaMemset(d, 0xFF, kRanges * sizeof(int)));
    k_fill_parent<<<kParentBlocks, kParentThreads>>>(d);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> h(kRanges);
    CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int j = 0; j < kRanges; ++j) {
      const int t = j / kSpan;
      conf_check("children write distinct ranges", conf_fmt("element %d (parent thread %d)", j, t), h[j],
                 (t % 3 == 2 ? 2 : 1) * 100000 + j);
    }
    CUDA_CHECK(cudaFree(d));
  }

  // Nesting to depth 24; the launch of depth 25 fails.
  {
    int *level, *err;
    CUDA_CHECK(cudaMalloc(&level, (kTryDepth + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&err, (kTryDepth + 1) * sizeof(int)));
    CUDA_CHECK(cudaMemset(level, 0, (kTryDepth + 1) * sizeof(int)));
    CUDA_CHECK(cudaMemset(err, 0xFF, (kTryDepth + 1) * sizeof(int)));
    k_nest<<<1, 1>>>(level, err, 0, kTryDepth);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> hl(kTryDepth + 1), he(kTryDepth + 1);
    CUDA_CHECK(cudaMemcpy(hl.data(), level, hl.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(he.data(), err, he.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int d = 0; d <= kTryDepth; ++d) {
      conf_check("nested grid ran", conf_fmt("depth %d", d), hl[d], d <= kMaxDepth ? 1000 + d : 0);
      conf_check("nested launch error", conf_fmt("launch from depth %d", d), he[d],
                 d < kMaxDepth ? 0 : d == kMaxDepth ? int(cudaErrorLaunchMaxDepthExceeded) : -1);
    }
    // A shallow chain, to show the limit is not what stops it.
    k_nest<<<1, 1>>>(level, err, 20, 23);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(he.data(), err, he.size() * sizeof(int), cudaMemcpyDeviceToHost));
    conf_check("nested launch error", "parameter 22, a grid at depth 2", he[22], 0);
    CUDA_CHECK(cudaFree(level));
    CUDA_CHECK(cudaFree(err));
  }

  // Ordering.
  {
    OrderOut* d;
    CUDA_CHECK(cudaMalloc(&d, sizeof(OrderOut)));
    CUDA_CHECK(cudaMemset(d, 0, sizeof(OrderOut)));
    k_order_parent<<<kOrderBlocks, kOrderThreads>>>(d);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    OrderOut h;
    CUDA_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    const int all = kOrderBlocks * kOrderThreads * 1 + kOrderBlocks * 1000 + kOrderBlocks * 100;
    conf_check("NULL stream order", "store 7", h.chain[0], 7);
    conf_check("NULL stream order", "then + 1", h.chain[1], 8);
    conf_check("NULL stream order", "then + 10", h.chain[2], 18);
    conf_check("device stream", "create, two launches, destroy", h.stream_err, 0);
    conf_check("device stream order", "store 5", h.dev_chain[0], 5);
    conf_check("device stream order", "then + 3", h.dev_chain[1], 8);
    conf_check("tail launch after the parent and its children", "first tail", h.seen[0], all);
    conf_check("tail launch after the parent and its children", "second tail", h.seen[1], all);
    conf_check("tail launches in issue order", "first tail's ticket", h.ticket[0], 0);
    conf_check("tail launches in issue order", "second tail's ticket", h.ticket[1], 1);
    conf_check("parent complete with its children", "final counter", h.counter, all);
    CUDA_CHECK(cudaFree(d));
  }

  // Errors: per thread, peek keeps, get clears.
  {
    int* d;
    CUDA_CHECK(cudaMalloc(&d, 5 * sizeof(int)));
    k_errors<<<1, 1>>>(d);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    int h[5];
    CUDA_CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    const int bad = int(cudaErrorInvalidConfiguration);
    conf_check("device launch error", "peek", h[0], bad);
    conf_check("device launch error", "peek again", h[1], bad);
    conf_check("device launch error", "get", h[2], bad);
    conf_check("device launch error", "get after get", h[3], 0);
    conf_check("device launch error", "a good launch after", h[4], 0);
    CUDA_CHECK(cudaFree(d));
  }
  return conf_finish("dynamic_parallelism");
}
