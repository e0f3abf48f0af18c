// mbarrier (sm_90): phases, pending arrivals and tx-counts as the PTX ISA defines them
// ("Parallel Synchronization and Communication Instructions: mbarrier"):
//   init(n): phase 0, pending = expected = n, tx-count 0.
//   arrive(c): pending -= c; arrive_drop(c) also lowers the expected count of later phases by c.
//   expect-tx(b): tx-count += b; complete-tx(b): tx-count -= b (it may go below zero first).
//   The current phase completes when pending == 0 and tx-count == 0: the phase advances, pending
//   becomes the expected count again.
//   test_wait/try_wait.parity(P): true when the phase of parity P has completed, i.e. the current
//   phase's parity differs from P. test_wait(state) with the state an arrive returned: true when
//   the phase that arrive arrived in has completed.
// A second kernel runs a two-stage producer/consumer ring on full and empty barriers, whose sums
// follow from the data alone; a third arrives through cp.async.mbarrier.arrive.
#include <cstdint>
#include <vector>

#include "conf_common.h"

namespace {

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ void mb_init(uint64_t* b, uint32_t n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(b)), "r"(n) : "memory");
}
__device__ uint64_t mb_arrive(uint64_t* b, uint32_t c) {
  uint64_t s;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(smem(b)), "r"(c) : "memory");
  return s;
}
__device__ void mb_arrive_drop(uint64_t* b, uint32_t c) {
  asm volatile("mbarrier.arrive_drop.shared::cta.b64 _, [%0], %1;" ::"r"(smem(b)), "r"(c) : "memory");
}
__device__ void mb_arrive_expect_tx(uint64_t* b, uint32_t tx) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(b)), "r"(tx) : "memory");
}
__device__ void mb_expect_tx(uint64_t* b, uint32_t tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem(b)), "r"(tx) : "memory");
}
__device__ void mb_complete_tx(uint64_t* b, uint32_t tx) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem(b)), "r"(tx) : "memory");
}
__device__ uint32_t mb_test_parity(uint64_t* b, uint32_t parity) {
  uint32_t r;
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(r) : "r"(smem(b)), "r"(parity) : "memory");
  return r;
}
__device__ uint32_t mb_test_state(uint64_t* b, uint64_t state) {
  uint32_t r;
  asm volatile("{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(r) : "r"(smem(b)), "l"(state) : "memory");
  return r;
}
__device__ void mb_wait_parity(uint64_t* b, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(b)), "r"(parity) : "memory");
}
__device__ void mb_wait_state(uint64_t* b, uint64_t state) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(b)), "l"(state) : "memory");
}

// One thread walks mbarriers through their phases and records what the waits see.
__global__ void k_arith(uint32_t* out) {
  __shared__ uint64_t a, b, c, d;
  if (threadIdx.x != 0) return;
  int i = 0;
  // a: init(3); arrivals of 1 and 2 complete phase 0.
  mb_init(&a, 3);
  out[i++] = mb_test_parity(&a, 0);   // 0: phase 0 not complete
  out[i++] = mb_test_parity(&a, 1);   // 1: parity 1 names the phase before 0, taken as complete
  const uint64_t s0 = mb_arrive(&a, 1);
  out[i++] = mb_test_state(&a, s0);   // 2: 2 arrivals still pending
  out[i++] = mb_test_parity(&a, 0);   // 3
  mb_arrive(&a, 2);
  out[i++] = mb_test_parity(&a, 0);   // 4: phase 0 complete
  out[i++] = mb_test_parity(&a, 1);   // 5: phase 1 (pending 3 again) not complete
  out[i++] = mb_test_state(&a, s0);   // 6: s0's phase has completed
  const uint64_t s1 = mb_arrive(&a, 3);  // completes phase 1
  out[i++] = mb_test_state(&a, s1);   // 7
  out[i++] = mb_test_parity(&a, 0);   // 8: current phase 2, parity 0: not complete
  // b: init(1), tx-count: expect 32, complete 16 and arrive (pending 0, tx 16), complete 16.
  mb_init(&b, 1);
  mb_expect_tx(&b, 32);
  mb_complete_tx(&b, 16);
  mb_arrive(&b, 1);
  out[i++] = mb_test_parity(&b, 0);   // 9: tx-count 16 holds phase 0
  mb_complete_tx(&b, 16);
  out[i++] = mb_test_parity(&b, 0);   // 10: complete
  // The tx-count may go below zero: complete 64 before arrive.expect_tx(64).
  mb_complete_tx(&b, 64);
  out[i++] = mb_test_parity(&b, 1);   // 11: phase 1 pending (1 arrival, tx -64)
  mb_arrive_expect_tx(&b, 64);
  out[i++] = mb_test_parity(&b, 1);   // 12: tx 0 and pending 0: complete
  // c: init(2); arrive_drop(1) lowers the expected count to 1 for the phases after.
  mb_init(&c, 2);
  mb_arrive_drop(&c, 1);
  out[i++] = mb_test_parity(&c, 0);   // 13: 1 arrival still pending
  mb_arrive(&c, 1);
  out[i++] = mb_test_parity(&c, 0);   // 14: phase 0 complete
  mb_arrive(&c, 1);                   // phase 1 needs only 1
  out[i++] = mb_test_parity(&c, 1);   // 15: phase 1 complete
  out[i++] = mb_test_parity(&c, 0);   // 16: phase 2 not complete
  // d: five phases of one arrival each; after each, the parity of the completed phase tests true
  // and the other false.
  mb_init(&d, 1);
  for (uint32_t ph = 0; ph < 5; ++ph) {
    mb_arrive(&d, 1);
    out[i++] = mb_test_parity(&d, ph & 1) * 2 + mb_test_parity(&d, (ph + 1) & 1);  // 17..21
  }
  out[31] = uint32_t(i);
}

// A two-stage ring: warp 0 produces, warps 1-3 consume. full[s] counts the producer's 32
// arrivals, empty[s] the consumers' 96; round r uses stage r % 2 and waits for the phase
// r / 2 of it (parity (r / 2) & 1), the empty barrier one phase behind.
constexpr int kRounds = 12;
__global__ void k_ring(const uint32_t* in, uint32_t* sums) {
  __shared__ uint64_t full[2], empty[2];
  __shared__ uint32_t buf[2][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) {
      mb_init(&full[s], 32);
      mb_init(&empty[s], 96);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  for (int r = 0; r < kRounds; ++r) {
    const int s = r % 2;
    const uint32_t phase = uint32_t(r / 2) & 1;
    if (warp == 0) {
      if (r >= 2) mb_wait_parity(&empty[s], phase ^ 1);  // the consumers freed the stage
      buf[s][lane] = in[r * 32 + lane];
      mb_arrive(&full[s], 1);
    } else {
      mb_wait_parity(&full[s], phase);
      uint32_t sum = 0;
      for (int j = 0; j < 32; ++j) sum += buf[s][(j + lane) % 32] * uint32_t(warp);
      if (lane == 0) sums[r * 4 + warp] = sum;
      mb_arrive(&empty[s], 1);
    }
  }
}

// Tokens: every thread arrives and waits for its own token's phase, four times.
__global__ void k_tokens(uint32_t* out) {
  __shared__ uint64_t bar;
  __shared__ uint32_t counter[4];
  if (threadIdx.x == 0) {
    mb_init(&bar, blockDim.x);
    for (int i = 0; i < 4; ++i) counter[i] = 0;
  }
  __syncthreads();
  for (int i = 0; i < 4; ++i) {
    atomicAdd(&counter[i], 1u);
    const uint64_t state = mb_arrive(&bar, 1);
    mb_wait_state(&bar, state);
    // Every thread's add came before its arrival, so after the phase all adds are visible.
    if (threadIdx.x % 32 == 0) out[i * 4 + threadIdx.x / 32] = counter[i];
  }
}

// cp.async.mbarrier.arrive: the arrive-on happens once the thread's earlier cp.async copies are
// complete. With .noinc it is one of the phase's arrivals (init counts it); without, the pending
// count is raised by one first, so only the thread's own mbarrier.arrive counts.
__global__ void k_cp_async_arrive(const uint32_t* in, uint32_t* out) {
  __shared__ alignas(16) uint32_t a[128], b[128];
  __shared__ uint64_t noinc, inc;
  const int t = threadIdx.x;
  if (t == 0) {
    mb_init(&noinc, blockDim.x);
    mb_init(&inc, blockDim.x);
  }
  __syncthreads();
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem(&a[t])), "l"(in + t) : "memory");
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem(&noinc)) : "memory");
  mb_wait_parity(&noinc, 0);
  out[t] = a[(t + 1) % 128];
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem(&b[t])), "l"(in + 128 + t) : "memory");
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" ::"r"(smem(&inc)) : "memory");
  mb_arrive(&inc, 1);
  mb_wait_parity(&inc, 0);
  out[128 + t] = b[(t + 5) % 128];
}

}  // namespace

int main() {
  conf_require_device();
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) {
    std::printf("SKIP: mbarrier tx-counts need compute capability 9.0\n");
    return 77;
  }
  uint32_t* d_out;
  CUDA_CHECK(cudaMalloc(&d_out, 64 * sizeof(uint32_t)));
  CUDA_CHECK(cudaMemset(d_out, 0, 64 * sizeof(uint32_t)));
  k_arith<<<1, 32>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> out(64);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, 64 * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  // The expectations, from the definitions in the header comment.
  const uint32_t expect[] = {0, 1, 0, 0, 1, 0, 1, 1, 0,  // a
                             0, 1, 0, 1,                // b
                             0, 1, 1, 0,                // c
                             2, 2, 2, 2, 2};            // d: phase ph completed, ph + 1 (current) not: 2*1 + 0
  const char* what[] = {
      "init(3): test_wait.parity 0", "init(3): test_wait.parity 1", "arrive(1): test_wait(state)",
      "arrive(1): test_wait.parity 0", "arrive(2): test_wait.parity 0", "arrive(2): test_wait.parity 1",
      "arrive(2): test_wait(state of phase 0)", "arrive(3): test_wait(state of phase 1)",
      "phase 2: test_wait.parity 0", "expect_tx 32, complete_tx 16, arrive: parity 0",
      "complete_tx 16: parity 0", "complete_tx 64 first: parity 1", "arrive.expect_tx 64: parity 1",
      "arrive_drop(1) on init(2): parity 0", "arrive(1): parity 0", "arrive(1) completes phase 1: parity 1",
      "phase 2: parity 0"};
  const int n = sizeof expect / sizeof expect[0];
  conf_check("mbarrier k_arith", "checks run", out[31], uint32_t(n));
  for (int i = 0; i < n; ++i)
    conf_check("mbarrier", i < 17 ? what[i] : conf_fmt("one arrival per phase, phase %d: 2*parity(ph)+parity(ph+1)", i - 17).s,
               out[i], expect[i]);

  // The ring: sums[r][w] = w * the sum of round r's 32 inputs.
  std::vector<uint32_t> in(kRounds * 32);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint32_t(i * 2654435761u >> 20);
  uint32_t *d_in, *d_sums;
  CUDA_CHECK(cudaMalloc(&d_in, in.size() * sizeof(uint32_t)));
  CUDA_CHECK(cudaMalloc(&d_sums, kRounds * 4 * sizeof(uint32_t)));
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_sums, 0, kRounds * 4 * sizeof(uint32_t)));
  k_ring<<<1, 128>>>(d_in, d_sums);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> sums(kRounds * 4);
  CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, sums.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  for (int r = 0; r < kRounds; ++r) {
    uint32_t s = 0;
    for (int j = 0; j < 32; ++j) s += in[r * 32 + j];
    for (int w = 1; w < 4; ++w) conf_check("mbarrier ring", conf_fmt("round %d, consumer warp %d", r, w), sums[r * 4 + w], s * uint32_t(w));
  }

  CUDA_CHECK(cudaMemset(d_out, 0, 64 * sizeof(uint32_t)));
  k_tokens<<<1, 128>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, 64 * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 16; ++i) conf_check("mbarrier tokens", conf_fmt("round %d, warp %d: adds seen", i / 4, i % 4), out[i], 128u);

  // cp.async.mbarrier.arrive: every copied word is there after the phase.
  std::vector<uint32_t> words(256);
  for (int i = 0; i < 256; ++i) words[i] = uint32_t(i * 40503u + 7);
  uint32_t *d_words, *d_copied;
  CUDA_CHECK(cudaMalloc(&d_words, 256 * 4));
  CUDA_CHECK(cudaMalloc(&d_copied, 256 * 4));
  CUDA_CHECK(cudaMemcpy(d_words, words.data(), 256 * 4, cudaMemcpyHostToDevice));
  k_cp_async_arrive<<<1, 128>>>(d_words, d_copied);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> copied(256);
  CUDA_CHECK(cudaMemcpy(copied.data(), d_copied, 256 * 4, cudaMemcpyDeviceToHost));
  for (int t = 0; t < 128; ++t) {
    conf_check("cp.async.mbarrier.arrive.noinc", conf_fmt("thread %d reads word %d", t, (t + 1) % 128), copied[t], words[(t + 1) % 128]);
    conf_check("cp.async.mbarrier.arrive", conf_fmt("thread %d reads word %d", t, 128 + (t + 5) % 128), copied[128 + t], words[128 + (t + 5) % 128]);
  }
  CUDA_CHECK(cudaFree(d_words));
  CUDA_CHECK(cudaFree(d_copied));
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_sums));
  return conf_finish("mbarrier");
}
