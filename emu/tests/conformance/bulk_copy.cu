// cp.async.bulk (sm_90), as the PTX ISA defines it ("Data Movement and Conversion Instructions:
// cp.async.bulk"): a global -> shared copy of `size` bytes (a multiple of 16, both addresses
// 16-byte aligned) whose completion performs complete-tx(size) on the mbarrier it names, and a
// shared -> global copy tracked by bulk async-groups (commit_group, wait_group). The values
// expected are the bytes copied: the destination must equal the source exactly. Under the
// emulator the TMA metrics are checked too (include/gpu100_emu_metrics.h: one request per copy a
// thread issues, and its bytes).
#include <dlfcn.h>

#include <cstdint>
#include <vector>

#include "conf_common.h"
#include "gpu100_emu_metrics.h"

namespace {

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

constexpr int kWords = 1024;  // 4 KiB, loaded as pieces of 16, 48, ..., bytes

// Block b loads the 4 KiB at in + b * kWords in pieces (sizes 16 * (1 + i % 7), one copy per
// thread of warp 0), announcing the total with one arrive.expect_tx, then every thread adds 1 to
// each word in shared memory, and thread 0 stores the 4 KiB to out with one bulk copy.
__global__ void k_bulk(const uint32_t* in, uint32_t* out, uint32_t* phase_seen) {
  __shared__ alignas(128) uint32_t buf[kWords];
  __shared__ uint64_t bar;
  const uint32_t* src = in + blockIdx.x * kWords;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(kWords * 4) : "memory");
  __syncthreads();  // the expect_tx precedes every copy's complete_tx
  if (threadIdx.x < 32) {
    // Pieces: piece i starts where piece i-1 ended; 16 * (1 + i % 7) bytes, the last one cut.
    uint32_t at = 0;
    for (uint32_t i = 0; at < kWords * 4; ++i) {
      uint32_t size = 16 * (1 + i % 7);
      if (at + size > kWords * 4) size = kWords * 4 - at;
      if (i % 32 == threadIdx.x)
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                smem(reinterpret_cast<char*>(buf) + at)),
            "l"(reinterpret_cast<const char*>(src) + at), "r"(size), "r"(smem(&bar))
            : "memory");
      at += size;
    }
  }
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(&bar)) : "memory");
  {
    uint32_t p1;  // phase 0 has completed, so parity 1 (the current phase) has not
    asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 1; selp.u32 %0, 1, 0, p; }"
                 : "=r"(p1) : "r"(smem(&bar)) : "memory");
    if (threadIdx.x == 0) phase_seen[blockIdx.x] = p1;
  }
  for (int i = threadIdx.x; i < kWords; i += blockDim.x) buf[i] += 1;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // generic writes -> async proxy
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + blockIdx.x * kWords),
                 "r"(smem(buf)), "r"(kWords * 4)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

}  // namespace

int main() {
  conf_require_device();
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) {
    std::printf("SKIP: cp.async.bulk needs compute capability 9.0\n");
    return 77;
  }
  const int blocks = 3;
  std::vector<uint32_t> in(blocks * kWords);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint32_t(i * 0x9E3779B9u);
  // The pieces each block loads (the kernel's loop), for the metrics.
  unsigned long long pieces = 0;
  for (uint32_t at = 0, i = 0; at < kWords * 4; ++i) {
    uint32_t size = 16 * (1 + i % 7);
    if (at + size > kWords * 4) size = kWords * 4 - at;
    at += size;
    ++pieces;
  }
  auto read = reinterpret_cast<Gpu100EmuMetricsFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_METRICS_SYMBOL));
  Gpu100EmuMetrics before{}, after{};
  before.size = after.size = sizeof before;
  uint32_t *d_in, *d_out, *d_phase;
  CUDA_CHECK(cudaMalloc(&d_in, in.size() * 4));
  CUDA_CHECK(cudaMalloc(&d_out, in.size() * 4));
  CUDA_CHECK(cudaMalloc(&d_phase, blocks * 4));
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
  if (read) read(&before);
  k_bulk<<<blocks, 128>>>(d_in, d_out, d_phase);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  if (read) {
    read(&after);
    gpu100_emu_metrics_diff(&after, &before);
    // Per block: the load pieces and one store, 4 KiB each way.
    conf_check("metrics", "tma_requests", after.tma_requests, blocks * (pieces + 1));
    conf_check("metrics", "tma_bytes", after.tma_bytes, blocks * 2ull * kWords * 4);
  }
  std::vector<uint32_t> out(in.size()), phase(blocks);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(phase.data(), d_phase, blocks * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t i = 0; i < in.size(); ++i)
    if (out[i] != in[i] + 1 && bad++ < 8)
      conf_check("cp.async.bulk global->shared->global", conf_fmt("word %zu", i), out[i], in[i] + 1);
  conf_check("cp.async.bulk", "every word copied in and out (+1)", bad, 0);
  for (int b = 0; b < blocks; ++b)
    conf_check("cp.async.bulk complete_tx", conf_fmt("block %d: parity 1 after one phase", b), phase[b], 0u);
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_phase));
  return conf_finish("bulk_copy");
}
