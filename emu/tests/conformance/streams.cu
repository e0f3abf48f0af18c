// Streams, events and graphs, correctly ordered: each case is a pattern the CUDA Programming
// Guide ("Streams", "Events", "CUDA Graphs") and the runtime API's "Stream synchronization
// behavior" / "API synchronization behavior" pages define, and each result is computed on the
// host from the kernels' definitions. Under the emulator, work queued on streams runs when the
// program synchronizes, interleaved across streams, and two unordered operations touching the
// same bytes fail the program: every case here must be ordered, and must give the right values.
//
// Built twice: as is (the legacy default stream) and with --default-stream per-thread
// (conf_streams_per_thread), where stream 0 is the calling thread's per-thread default stream
// and the runtime's _ptsz / _ptds entry points are called.
#include "conf_common.h"

#include <vector>

constexpr int kN = 4096, kBlock = 128, kGrid = kN / kBlock;

__global__ void k_fill(int* out, int n, int mul, int add) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * mul + add;
}
__global__ void k_affine(const int* in, int* out, int n, int mul, int add) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * mul + add;
}
__global__ void k_sum2(const int* a, const int* b, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
__global__ void k_count(int* counter, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(counter, 1);
}

static void check_all(const char* what, const std::vector<int>& got, int mul, int add) {
  bool ok = true;
  int bad = 0;
  for (int i = 0; i < kN && ok; ++i)
    if (got[size_t(i)] != i * mul + add) {
      ok = false;
      bad = i;
    }
  const ConfStr in = conf_fmt("out[i] = i*%d + %d", mul, add);
  const ConfStr g = conf_fmt("out[%d] = %d", bad, got[size_t(bad)]);
  const ConfStr e = conf_fmt("out[%d] = %d", bad, bad * mul + add);
  conf_check_text(what, in.s, ok, g.s, e.s);
}

struct HostCheck {
  const int* pinned;
  int expect0, expect_last;
  int seen0 = -1, seen_last = -1;
};
static void CUDART_CB host_reads(void* p) {
  auto* h = static_cast<HostCheck*>(p);
  h->seen0 = h->pinned[0];
  h->seen_last = h->pinned[kN - 1];
}

int main() {
  conf_require_device();
  const size_t bytes = kN * sizeof(int);
  int *a, *b, *c, *d, *counter, *pinned;
  CUDA_CHECK(cudaMalloc(&a, bytes));
  CUDA_CHECK(cudaMalloc(&b, bytes));
  CUDA_CHECK(cudaMalloc(&c, bytes));
  CUDA_CHECK(cudaMalloc(&d, bytes));
  CUDA_CHECK(cudaMalloc(&counter, sizeof(int)));
  CUDA_CHECK(cudaMallocHost(&pinned, bytes));
  std::vector<int> h(kN);

  // 1. An event orders two non-blocking streams: s2 waits for s1's record before reading a.
  cudaStream_t s1, s2, blocking;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreate(&blocking));
  cudaEvent_t done_a, t0, t1;
  CUDA_CHECK(cudaEventCreateWithFlags(&done_a, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreate(&t0));
  CUDA_CHECK(cudaEventCreate(&t1));
  CUDA_CHECK(cudaEventRecord(t0, s1));
  k_fill<<<kGrid, kBlock, 0, s1>>>(a, kN, 3, 1);
  CUDA_CHECK(cudaEventRecord(done_a, s1));
  CUDA_CHECK(cudaStreamWaitEvent(s2, done_a, 0));
  k_affine<<<kGrid, kBlock, 0, s2>>>(a, b, kN, 2, 5);  // b = 6i + 7
  CUDA_CHECK(cudaMemcpyAsync(pinned, b, bytes, cudaMemcpyDeviceToHost, s2));
  CUDA_CHECK(cudaStreamSynchronize(s2));
  check_all("event wait between non-blocking streams", std::vector<int>(pinned, pinned + kN), 6, 7);

  // 2. Timing events: the elapsed time between two records of one stream is defined and >= 0.
  CUDA_CHECK(cudaEventRecord(t1, s1));
  CUDA_CHECK(cudaEventSynchronize(t1));
  float ms = -1;
  CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
  conf_check_text("cudaEventElapsedTime", "t0, t1 of stream s1", ms >= 0, conf_fmt("%g", double(ms)).s, ">= 0");
  conf_check("cudaEventQuery after cudaEventSynchronize", "t1", int(cudaEventQuery(t1)), int(cudaSuccess));
  conf_check("cudaStreamQuery after cudaStreamSynchronize", "s2", int(cudaStreamQuery(s2)), int(cudaSuccess));

  // 3. The legacy default stream and a blocking stream: work on the legacy stream waits for the
  // blocking stream's earlier work, and later work on the blocking stream waits for it.
  k_fill<<<kGrid, kBlock, 0, blocking>>>(c, kN, 5, 2);
  k_affine<<<kGrid, kBlock, 0, cudaStreamLegacy>>>(c, d, kN, 1, 3);  // d = 5i + 5
  k_affine<<<kGrid, kBlock, 0, blocking>>>(d, c, kN, 2, 0);      // c = 10i + 10
  CUDA_CHECK(cudaStreamSynchronize(blocking));
  CUDA_CHECK(cudaMemcpy(h.data(), c, bytes, cudaMemcpyDeviceToHost));
  check_all("default stream between blocking-stream launches", h, 10, 10);

  // 4. A non-blocking stream does not synchronize with the default stream: the program
  // synchronizes it before the (synchronous, default-stream) copy to pageable memory.
  k_fill<<<kGrid, kBlock, 0, s1>>>(d, kN, 7, 0);
  CUDA_CHECK(cudaStreamSynchronize(s1));
  CUDA_CHECK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  check_all("non-blocking stream, then cudaStreamSynchronize", h, 7, 0);
  // cudaDeviceSynchronize orders everything before it.
  k_fill<<<kGrid, kBlock, 0, s2>>>(d, kN, 9, 4);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  check_all("non-blocking stream, then cudaDeviceSynchronize", h, 9, 4);

  // 5. A host function runs in stream order: after the copy before it on its stream.
  HostCheck hc{pinned, 0 * 11 + 1, (kN - 1) * 11 + 1};
  k_fill<<<kGrid, kBlock, 0, s2>>>(a, kN, 11, 1);
  CUDA_CHECK(cudaMemcpyAsync(pinned, a, bytes, cudaMemcpyDeviceToHost, s2));
  CUDA_CHECK(cudaLaunchHostFunc(s2, host_reads, &hc));
  CUDA_CHECK(cudaStreamSynchronize(s2));
  conf_check("host function after a copy", "pinned[0]", hc.seen0, hc.expect0);
  conf_check("host function after a copy", "pinned[n-1]", hc.seen_last, hc.expect_last);

  // 6. Atomics of two unordered streams on one counter: both are device-scope atomic updates.
  CUDA_CHECK(cudaMemset(counter, 0, sizeof(int)));
  CUDA_CHECK(cudaDeviceSynchronize());
  k_count<<<kGrid, kBlock, 0, s1>>>(counter, kN);
  k_count<<<kGrid, kBlock, 0, s2>>>(counter, kN);
  CUDA_CHECK(cudaDeviceSynchronize());
  int count = 0;
  CUDA_CHECK(cudaMemcpy(&count, counter, sizeof count, cudaMemcpyDeviceToHost));
  conf_check("atomicAdd from two streams", "2 x n", count, 2 * kN);

  // 7. A graph with edges: a -> (b, c) -> d, b and c independent (they write different buffers).
  cudaGraph_t g;
  CUDA_CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t na, nb, nc, nd;
  int mul_a = 2, add_a = 1, n = kN, one = 1, zero = 0, three = 3;
  void* args_a[] = {&a, &n, &mul_a, &add_a};
  void* args_b[] = {&a, &b, &n, &three, &zero};  // b = 3a
  void* args_c[] = {&a, &c, &n, &one, &one};     // c = a + 1
  void* args_d[] = {&b, &c, &d, &n};             // d = b + c = 4a + 1 = 8i + 5
  cudaKernelNodeParams p{};
  p.gridDim = dim3(kGrid);
  p.blockDim = dim3(kBlock);
  p.func = reinterpret_cast<void*>(k_fill);
  p.kernelParams = args_a;
  CUDA_CHECK(cudaGraphAddKernelNode(&na, g, nullptr, 0, &p));
  p.func = reinterpret_cast<void*>(k_affine);
  p.kernelParams = args_b;
  CUDA_CHECK(cudaGraphAddKernelNode(&nb, g, &na, 1, &p));
  p.kernelParams = args_c;
  CUDA_CHECK(cudaGraphAddKernelNode(&nc, g, &na, 1, &p));
  p.func = reinterpret_cast<void*>(k_sum2);
  p.kernelParams = args_d;
  CUDA_CHECK(cudaGraphAddKernelNode(&nd, g, nullptr, 0, &p));
  cudaGraphNode_t from[] = {nb, nc}, to[] = {nd, nd};
  CUDA_CHECK(cudaGraphAddDependencies(g, from, to, nullptr, 2));
  cudaGraphExec_t x;
  CUDA_CHECK(cudaGraphInstantiate(&x, g, 0));
  for (int rep = 0; rep < 2; ++rep) CUDA_CHECK(cudaGraphLaunch(x, s1));
  CUDA_CHECK(cudaMemcpyAsync(pinned, d, bytes, cudaMemcpyDeviceToHost, s1));
  CUDA_CHECK(cudaStreamSynchronize(s1));
  check_all("graph with edges a -> (b, c) -> d", std::vector<int>(pinned, pinned + kN), 8, 5);

  // 8. A graph captured from one stream keeps the stream's order.
  cudaGraph_t cg;
  CUDA_CHECK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal));
  k_fill<<<kGrid, kBlock, 0, s2>>>(a, kN, 1, 0);
  k_affine<<<kGrid, kBlock, 0, s2>>>(a, b, kN, 4, 0);
  k_affine<<<kGrid, kBlock, 0, s2>>>(b, a, kN, 1, 2);  // a = 4i + 2
  CUDA_CHECK(cudaStreamEndCapture(s2, &cg));
  cudaGraphExec_t cx;
  CUDA_CHECK(cudaGraphInstantiate(&cx, cg, 0));
  CUDA_CHECK(cudaGraphLaunch(cx, s2));
  CUDA_CHECK(cudaStreamSynchronize(s2));
  CUDA_CHECK(cudaMemcpy(h.data(), a, bytes, cudaMemcpyDeviceToHost));
  check_all("captured graph in stream order", h, 4, 2);

  // 9. The per-thread default stream by its handle, and an event from it to a non-blocking stream.
  k_fill<<<kGrid, kBlock, 0, cudaStreamPerThread>>>(c, kN, 12, 3);
  CUDA_CHECK(cudaEventRecord(done_a, cudaStreamPerThread));
  CUDA_CHECK(cudaStreamWaitEvent(s1, done_a, 0));
  k_affine<<<kGrid, kBlock, 0, s1>>>(c, d, kN, 1, 1);  // d = 12i + 4
  CUDA_CHECK(cudaStreamSynchronize(s1));
  CUDA_CHECK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  check_all("cudaStreamPerThread, then an event wait", h, 12, 4);

  // 10. Stream 0 (the per-thread default stream in the per-thread build) and the legacy default
  // stream synchronize with each other.
  k_fill<<<kGrid, kBlock>>>(b, kN, 13, 0);
  k_affine<<<kGrid, kBlock, 0, cudaStreamLegacy>>>(b, c, kN, 1, 6);  // c = 13i + 6
  k_affine<<<kGrid, kBlock>>>(c, d, kN, 2, 0);                        // d = 26i + 12
  CUDA_CHECK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  check_all("stream 0 and the legacy default stream", h, 26, 12);

  CUDA_CHECK(cudaGraphExecDestroy(cx));
  CUDA_CHECK(cudaGraphDestroy(cg));
  CUDA_CHECK(cudaGraphExecDestroy(x));
  CUDA_CHECK(cudaGraphDestroy(g));
  CUDA_CHECK(cudaEventDestroy(done_a));
  CUDA_CHECK(cudaEventDestroy(t0));
  CUDA_CHECK(cudaEventDestroy(t1));
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaStreamDestroy(s2));
  CUDA_CHECK(cudaStreamDestroy(blocking));
  CUDA_CHECK(cudaFreeHost(pinned));
  for (int* p2 : {a, b, c, d, counter}) CUDA_CHECK(cudaFree(p2));
#ifdef CONF_PER_THREAD
  return conf_finish("streams_per_thread");
#else
  return conf_finish("streams");
#endif
}
