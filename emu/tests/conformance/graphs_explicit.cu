// CUDA graphs built node by node (no stream capture): memset, kernel, memcpy (1D and 3D), host,
// empty and event nodes, with dependencies given at creation and with cudaGraphAddDependencies.
// A launch must run every node after the nodes it depends on, whatever order they were added in.
// Expected values and error codes are the CUDA Runtime API documentation's.
#include <algorithm>
#include <cstring>
#include <vector>

#include "conf_common.h"

__global__ void k_triple_plus(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3 * in[i] + 1;
}

// Host nodes append their tag to a log, which shows the order they ran in.
struct TagLog {
  int tags[16];
  int count;
};
struct Tagged {
  TagLog* log;
  int tag;
};
void CUDART_CB log_tag(void* user) {
  auto* t = static_cast<Tagged*>(user);
  if (t->log->count < 16) t->log->tags[t->log->count] = t->tag;
  ++t->log->count;
}

// What the host node at the end of the chain saw: the sum of the copied-back results.
struct SumProbe {
  const int* data;
  int n;
  long long sum;
  int runs;
};
void CUDART_CB sum_results(void* user) {
  auto* p = static_cast<SumProbe*>(user);
  p->sum = 0;
  for (int i = 0; i < p->n; ++i) p->sum += p->data[i];
  ++p->runs;
}

void check_err(const char* name, cudaError_t got, cudaError_t expected) {
  conf_check_text(name, "(return value)", got == expected, cudaGetErrorName(got), cudaGetErrorName(expected));
}

cudaGraphNodeType type_of(cudaGraphNode_t node) {
  cudaGraphNodeType t = cudaGraphNodeTypeCount;
  CUDA_CHECK(cudaGraphNodeGetType(node, &t));
  return t;
}

// memset -> kernel -> memcpy to the host -> host node, added last to first and chained with
// cudaGraphAddDependencies, so only the edges give the right order.
void test_chain_added_backwards() {
  const int n = 200;
  int *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dst, n * sizeof(int)));
  int* host = nullptr;  // pinned: the copy node's host side
  CUDA_CHECK(cudaMallocHost(&host, n * sizeof(int)));
  SumProbe probe{host, n, 0, 0};

  cudaGraph_t graph;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t sum_node, copy_node, kernel_node, memset_node;
  cudaHostNodeParams hp = {};
  hp.fn = sum_results;
  hp.userData = &probe;
  CUDA_CHECK(cudaGraphAddHostNode(&sum_node, graph, nullptr, 0, &hp));
  CUDA_CHECK(cudaGraphAddMemcpyNode1D(&copy_node, graph, nullptr, 0, host, dst, n * sizeof(int),
                                      cudaMemcpyDeviceToHost));
  int count = n;
  void* args[] = {&src, &dst, &count};
  cudaKernelNodeParams kp = {};
  kp.func = (void*)k_triple_plus;
  kp.gridDim = dim3((n + 63) / 64);
  kp.blockDim = dim3(64);
  kp.kernelParams = args;
  CUDA_CHECK(cudaGraphAddKernelNode(&kernel_node, graph, nullptr, 0, &kp));
  cudaMemsetParams mp = {};
  mp.dst = src;
  mp.value = 0x01020304u;
  mp.elementSize = 4;
  mp.width = n;
  mp.height = 1;
  CUDA_CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &mp));
  const cudaGraphNode_t from[] = {memset_node, kernel_node, copy_node};
  const cudaGraphNode_t to[] = {kernel_node, copy_node, sum_node};
  CUDA_CHECK(cudaGraphAddDependencies(graph, from, to, nullptr, 3));
  // "Specifying an existing dependency will return an error."
  check_err("cudaGraphAddDependencies (existing edge)", cudaGraphAddDependencies(graph, from, to, nullptr, 1),
            cudaErrorInvalidValue);
  check_err("cudaGetLastError after an existing edge", cudaGetLastError(), cudaErrorInvalidValue);

  size_t count_nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count_nodes));
  conf_check("cudaGraphGetNodes (count)", "chain of 4", count_nodes, 4);
  cudaGraphNode_t listed[6];
  size_t room = 6;
  CUDA_CHECK(cudaGraphGetNodes(graph, listed, &room));
  conf_check("cudaGraphGetNodes (entries obtained)", "room for 6", room, 4);
  conf_check("cudaGraphGetNodes (entry past the nodes)", "room for 6", listed[4] == nullptr && listed[5] == nullptr, true);
  conf_check("cudaGraphNodeGetType", "host node", int(type_of(sum_node)), int(cudaGraphNodeTypeHost));
  conf_check("cudaGraphNodeGetType", "1D memcpy node", int(type_of(copy_node)), int(cudaGraphNodeTypeMemcpy));
  conf_check("cudaGraphNodeGetType", "kernel node", int(type_of(kernel_node)), int(cudaGraphNodeTypeKernel));
  conf_check("cudaGraphNodeGetType", "memset node", int(type_of(memset_node)), int(cudaGraphNodeTypeMemset));
  size_t roots = 0;
  CUDA_CHECK(cudaGraphGetRootNodes(graph, nullptr, &roots));
  conf_check("cudaGraphGetRootNodes (count)", "chain of 4", roots, 1);
  cudaGraphNode_t root = nullptr;
  roots = 1;
  CUDA_CHECK(cudaGraphGetRootNodes(graph, &root, &roots));
  conf_check("cudaGraphGetRootNodes", "chain of 4: the memset", root == memset_node, true);

  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  for (int launch = 1; launch <= 2; ++launch) {
    std::fill(host, host + n, -1);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += host[i] != 3 * 0x01020304 + 1;
    conf_check("chain: copied-back elements wrong", conf_fmt("launch %d", launch), wrong, 0);
    conf_check("chain: the host node's sum", conf_fmt("launch %d", launch), probe.sum,
               (long long)n * (3 * 0x01020304 + 1));
    conf_check("chain: host node runs", conf_fmt("launch %d", launch), probe.runs, launch);
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFreeHost(host));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
}

// A diamond of host nodes with an empty node as the join: the root runs first, the join's
// dependent last, the two branches in between.
void test_diamond() {
  TagLog log = {};
  Tagged root_tag{&log, 1}, left_tag{&log, 2}, right_tag{&log, 3}, last_tag{&log, 4};
  cudaGraph_t graph;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaHostNodeParams hp = {};
  hp.fn = log_tag;
  cudaGraphNode_t last, root, left, right, join;
  hp.userData = &last_tag;
  CUDA_CHECK(cudaGraphAddHostNode(&last, graph, nullptr, 0, &hp));
  hp.userData = &root_tag;
  CUDA_CHECK(cudaGraphAddHostNode(&root, graph, nullptr, 0, &hp));
  hp.userData = &left_tag;
  CUDA_CHECK(cudaGraphAddHostNode(&left, graph, &root, 1, &hp));
  hp.userData = &right_tag;
  CUDA_CHECK(cudaGraphAddHostNode(&right, graph, &root, 1, &hp));
  const cudaGraphNode_t branches[] = {left, right};
  CUDA_CHECK(cudaGraphAddEmptyNode(&join, graph, branches, 2));
  CUDA_CHECK(cudaGraphAddDependencies(graph, &join, &last, nullptr, 1));
  conf_check("cudaGraphNodeGetType", "empty node", int(type_of(join)), int(cudaGraphNodeTypeEmpty));
  // "pDependencies may not have any duplicate entries."
  const cudaGraphNode_t twice[] = {left, left};
  cudaGraphNode_t refused;
  check_err("cudaGraphAddEmptyNode (duplicate dependency)", cudaGraphAddEmptyNode(&refused, graph, twice, 2),
            cudaErrorInvalidValue);
  check_err("cudaGetLastError after a duplicate dependency", cudaGetLastError(), cudaErrorInvalidValue);

  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, 0));
  CUDA_CHECK(cudaDeviceSynchronize());
  conf_check("diamond: host nodes run", "4 nodes", log.count, 4);
  conf_check("diamond: first", "root", log.tags[0], 1);
  conf_check("diamond: middle two are the branches", "left, right",
             (log.tags[1] == 2 && log.tags[2] == 3) || (log.tags[1] == 3 && log.tags[2] == 2), true);
  conf_check("diamond: last", "after the join", log.tags[3], 4);
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
}

// A 2D memset of 2-byte elements over a pitched buffer, then a 3D memcpy node copying a
// sub-rectangle of it into a second pitched buffer; the bytes beyond each row's width keep
// what an earlier cudaMemset put there.
void test_pitched_nodes() {
  const size_t width = 6, height = 4;  // elements of 2 bytes
  size_t pitch_a = 0, pitch_b = 0;
  unsigned short *a = nullptr, *b = nullptr;
  CUDA_CHECK(cudaMallocPitch((void**)&a, &pitch_a, 16 * sizeof(unsigned short), height));
  CUDA_CHECK(cudaMallocPitch((void**)&b, &pitch_b, 16 * sizeof(unsigned short), height));
  CUDA_CHECK(cudaMemset(a, 0x11, pitch_a * height));
  CUDA_CHECK(cudaMemset(b, 0x22, pitch_b * height));

  cudaGraph_t graph;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaMemsetParams mp = {};
  mp.dst = a;
  mp.pitch = pitch_a;
  mp.value = 0xBEEF;
  mp.elementSize = 2;
  mp.width = width;
  mp.height = height;
  cudaGraphNode_t memset_node, copy_node;
  CUDA_CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &mp));
  mp.elementSize = 3;  // "The element size must be 1, 2, or 4 bytes."
  cudaGraphNode_t refused;
  check_err("cudaGraphAddMemsetNode (element size 3)", cudaGraphAddMemsetNode(&refused, graph, nullptr, 0, &mp),
            cudaErrorInvalidValue);
  check_err("cudaGetLastError after element size 3", cudaGetLastError(), cudaErrorInvalidValue);

  // Rows 1..2, bytes [2, 10) of a (elements 1..4) -> rows 0..1 of b starting at byte 4.
  cudaMemcpy3DParms cp = {};
  cp.srcPtr = make_cudaPitchedPtr(a, pitch_a, 16 * sizeof(unsigned short), height);
  cp.srcPos = make_cudaPos(2, 1, 0);
  cp.dstPtr = make_cudaPitchedPtr(b, pitch_b, 16 * sizeof(unsigned short), height);
  cp.dstPos = make_cudaPos(4, 0, 0);
  cp.extent = make_cudaExtent(8, 2, 1);
  cp.kind = cudaMemcpyDeviceToDevice;
  CUDA_CHECK(cudaGraphAddMemcpyNode(&copy_node, graph, &memset_node, 1, &cp));
  conf_check("cudaGraphNodeGetType", "3D memcpy node", int(type_of(copy_node)), int(cudaGraphNodeTypeMemcpy));

  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, 0));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned short> ha(pitch_a / 2 * height), hb(pitch_b / 2 * height);
  CUDA_CHECK(cudaMemcpy(ha.data(), a, pitch_a * height, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hb.data(), b, pitch_b * height, cudaMemcpyDeviceToHost));
  int wrong_a = 0, wrong_b = 0;
  for (size_t r = 0; r < height; ++r)
    for (size_t c = 0; c < 16; ++c) {
      const unsigned short want = c < width ? 0xBEEF : 0x1111;
      wrong_a += ha[r * pitch_a / 2 + c] != want;
      // b's row r, element c: elements 2..5 of rows 0..1 came from a's elements 1..4 of rows 1..2.
      const bool copied = r < 2 && c >= 2 && c < 6;
      wrong_b += hb[r * pitch_b / 2 + c] != (copied ? 0xBEEF : 0x2222);
    }
  conf_check("2D memset node (elementSize 2): elements wrong", "6 x 4 of 16 x 4", wrong_a, 0);
  conf_check("3D memcpy node: elements wrong", "8 bytes x 2 rows", wrong_b, 0);
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
}

// Event record nodes around a kernel node: both events complete with the launch and the time
// between them can be read.
void test_event_nodes() {
  const int n = 64;
  int *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dst, n * sizeof(int)));
  CUDA_CHECK(cudaMemset(src, 0, n * sizeof(int)));
  cudaEvent_t before, start, stop;
  CUDA_CHECK(cudaEventCreate(&before));
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(before, 0));

  cudaGraph_t graph;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t wait_node, start_node, kernel_node, stop_node;
  CUDA_CHECK(cudaGraphAddEventWaitNode(&wait_node, graph, nullptr, 0, before));
  CUDA_CHECK(cudaGraphAddEventRecordNode(&start_node, graph, &wait_node, 1, start));
  int count = n;
  void* args[] = {&src, &dst, &count};
  cudaKernelNodeParams kp = {};
  kp.func = (void*)k_triple_plus;
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(n);
  kp.kernelParams = args;
  CUDA_CHECK(cudaGraphAddKernelNode(&kernel_node, graph, &start_node, 1, &kp));
  CUDA_CHECK(cudaGraphAddEventRecordNode(&stop_node, graph, &kernel_node, 1, stop));
  conf_check("cudaGraphNodeGetType", "event wait node", int(type_of(wait_node)), int(cudaGraphNodeTypeWaitEvent));
  conf_check("cudaGraphNodeGetType", "event record node", int(type_of(stop_node)), int(cudaGraphNodeTypeEventRecord));

  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, 0));
  CUDA_CHECK(cudaEventSynchronize(stop));
  check_err("cudaEventQuery(stop) after the launch", cudaEventQuery(stop), cudaSuccess);
  float ms = -1.0f;
  check_err("cudaEventElapsedTime(start, stop)", cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  conf_check_text("cudaEventElapsedTime(start, stop)", "graph event nodes", ms >= 0.0f, conf_fmt("%g", ms).s, ">= 0");
  int got[n];
  CUDA_CHECK(cudaMemcpy(got, dst, sizeof got, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += got[i] != 1;
  conf_check("event-bracketed kernel node: elements wrong", "3 * 0 + 1", wrong, 0);
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaEventDestroy(before));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
}

int main() {
  conf_require_device();
  test_chain_added_backwards();
  test_diamond();
  test_pitched_nodes();
  test_event_nodes();
  return conf_finish("graphs_explicit");
}
