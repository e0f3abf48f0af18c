// Planted bug: a single-pass scan chained on blockIdx.x. Block b sums its tile, waits until block
// b - 1 has published the inclusive prefix of the tiles before it, and publishes its own. Nothing
// promises that block b - 1 has started when block b runs: if every resident slot holds a block
// whose predecessor has not started, they wait forever (a GPU hangs). The emulator starts blocks in
// linear order by default, where this passes; GPU100_EMU_SCHEDULE=random:SEED starts them in a
// shuffled order, and each block is large enough (dynamic shared memory) that few are resident.
// Expected under random seeds: the launch stops (no progress, cudaErrorLaunchFailure), the
// emulator saying where the blocks wait.
// --fixed: each block takes its tile number from an atomic ticket, so the tile it waits for
// belongs to a block that has already started (decoupled look-back's rule); correct in any order.
#include "fault_common.h"

constexpr int kThreads = 32;
constexpr size_t kSmem = 160 * 1024;  // one block per SM

__global__ void k_chain(const int* in, int* prefix, int* flag, unsigned* ticket, int fixed) {
  extern __shared__ int s[];
  __shared__ int tile_of_block;
  if (threadIdx.x == 0) tile_of_block = fixed ? int(atomicAdd(ticket, 1u)) : int(blockIdx.x);
  __syncthreads();
  const int tile = tile_of_block;
  s[threadIdx.x] = in[tile * kThreads + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (int i = 0; i < kThreads; ++i) sum += s[i];
    int before = 0;
    if (tile > 0) {
      while (((volatile int*)flag)[tile - 1] == 0) __nanosleep(64);  // PLANTED
      __threadfence();
      before = ((volatile int*)prefix)[tile - 1];
    }
    prefix[tile] = before + sum;
    __threadfence();
    ((volatile int*)flag)[tile] = 1;
  }
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  CHECK(cudaFuncSetAttribute(k_chain, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
  int per_sm = 0, sms = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_chain, kThreads, kSmem));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = 4 * per_sm * sms, n = blocks * kThreads;
  int* h = new int[n];
  int* got = new int[blocks];
  for (int i = 0; i < n; ++i) h[i] = (i * 7) % 11 - 5;
  int *in = nullptr, *prefix = nullptr, *flag = nullptr;
  unsigned* ticket = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(int)));
  CHECK(cudaMalloc(&prefix, blocks * sizeof(int)));
  CHECK(cudaMalloc(&flag, blocks * sizeof(int)));
  CHECK(cudaMalloc(&ticket, sizeof(unsigned)));
  CHECK(cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(flag, 0, blocks * sizeof(int)));
  CHECK(cudaMemset(ticket, 0, sizeof(unsigned)));
  k_chain<<<blocks, kThreads, kSmem>>>(in, prefix, flag, ticket, fixed);
  const cudaError_t e = launch_result();
  if (!fixed && e != cudaSuccess) return verdict("schedule_chain", e, cudaErrorLaunchFailure);
  CHECK(e);
  CHECK(cudaMemcpy(got, prefix, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  int want = 0;
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < kThreads; ++i) want += h[b * kThreads + i];
    if (got[b] != want) {
      if (fixed) return fixed_wrong("schedule_chain", "prefix of tile %d: %d, expected %d", b, got[b], want);
      std::fprintf(stderr, "schedule_chain: wrong prefix of tile %d\n", b);
      return 1;
    }
  }
  if (!fixed) {
    std::fprintf(stderr, "schedule_chain: the blocks ran in an order that hid the bug\n");
    return 0;
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(prefix));
  CHECK(cudaFree(flag));
  CHECK(cudaFree(ticket));
  delete[] h;
  delete[] got;
  return fixed_ok("schedule_chain");
}
