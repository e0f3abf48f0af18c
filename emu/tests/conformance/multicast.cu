// TMA multicast and remote mbarrier arrivals in thread block clusters (sm_90a), as the PTX ISA
// defines them:
// - cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster and
//   cp.async.bulk.tensor.2d...multicast::cluster: the copy's bytes land at the same CTA-relative
//   offset as dstMem in the shared memory of every CTA whose bit is set in the 16-bit ctaMask (bit
//   i: the CTA of %cluster_ctarank i), and the complete_tx of those bytes is performed on the
//   mbarrier at the same CTA-relative offset as mbar in each of those CTAs; CTAs outside the mask
//   receive nothing. A tile-mode tensor load fills the box's elements outside the tensor with zero
//   (or a NaN with CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA), dimension 0 innermost, the
//   box dense in shared memory, and with the 64-byte swizzle the 16-byte chunk index (address
//   bits 4-5) XORed with bits 7-8 (the buffer is 1024-byte aligned, so the table is computed
//   from the buffer offset).
// - mbarrier.arrive{.expect_tx}.release.cluster.shared::cluster.b64 _, [addr]{, count | txCount}
//   with addr from mapa: an arrive-on (with a count, or after an expect-tx) on the mbarrier of
//   another CTA of the cluster; it returns no state. The phase completes when its pending count
//   and tx-count are zero; the arrive releases, the waiter's try_wait acquires, so what the
//   arriving thread wrote before it is seen by the waiter after it.
// - cp.async.bulk.shared::cluster.shared::cta: a copy from the CTA's own shared memory into
//   another CTA's, its complete_tx performed on the mbarrier (in the destination's CTA) that
//   mbar names.
// Under the emulator the TMA metrics are checked too (include/gpu100_emu_metrics.h): a copy is
// one request, and its bytes count once however many CTAs it delivers to.
//
// --plant changes every expected value (and expects success where an error is due): the program
// must then fail every check.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conf_common.h"
#include "conf_tensor_map.h"
#include "gpu100_emu_metrics.h"

namespace {

bool g_plant = false;

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ uint32_t cta_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ void wait_parity(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}

__device__ uint32_t test_parity(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done;
}

__device__ uint32_t map_rank(uint32_t a, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}

// --- 1D bulk multicast ----------------------------------------------------------------------------
constexpr int kCtas = 4;       // the cluster
constexpr int kChunk = 1024;   // bytes per round
constexpr int kRounds = 8;
constexpr uint8_t kFill = 0xEE;
// Round r: CTA r % 4 issues one multicast of kChunk bytes to the CTAs of kMasks[r]. Even rounds:
// each destination announces its bytes on its own mbarrier (arrive.expect_tx); odd rounds: the
// issuing CTA announces them on every destination's mbarrier (a remote arrive.expect_tx).
constexpr uint16_t kMasks[kRounds] = {0xF, 0x5, 0xA, 0x1, 0x8, 0x6, 0x3, 0xE};

struct Masks {
  uint16_t m[kRounds];
};

// Every CTA ends with its kRounds chunks in out (block b at b * kRounds * kChunk), and in
// phase_done[b * kRounds + r] whether bar[r]'s phase 0 completed.
__global__ void k_bulk(const uint8_t* in, uint8_t* out, uint32_t* phase_done, Masks masks) {
  __shared__ alignas(128) uint8_t buf[kRounds * kChunk];
  __shared__ uint64_t bar[kRounds];
  const uint32_t rank = cta_rank(), cluster = blockIdx.x / kCtas;
  for (int i = threadIdx.x; i < kRounds * kChunk; i += blockDim.x) buf[i] = kFill;
  if (threadIdx.x == 0) {
    for (int r = 0; r < kRounds; ++r) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar[r])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the fill before the copies' writes
  cluster_sync();
  if (threadIdx.x == 0) {
    for (int r = 0; r < kRounds; ++r) {
      const uint32_t m = masks.m[r], issuer = r % kCtas;
      if (r % 2 == 0 && (m >> rank & 1))
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar[r])), "r"(kChunk) : "memory");
      if (rank != issuer) continue;
      if (r % 2 == 1)
        for (uint32_t d = 0; d < kCtas; ++d)
          if (m >> d & 1)
            asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(
                             map_rank(smem(&bar[r]), d)),
                         "r"(kChunk)
                         : "memory");
      const uint8_t* src = in + (size_t(cluster) * kRounds + r) * kChunk;
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;" ::"r"(
              smem(buf + r * kChunk)),
          "l"(src), "r"(kChunk), "r"(smem(&bar[r])), "h"(uint16_t(m))
          : "memory");
    }
  }
  for (int r = 0; r < kRounds; ++r)
    if (masks.m[r] >> rank & 1) wait_parity(smem(&bar[r]), 0);
  __syncthreads();
  for (int i = threadIdx.x; i < kRounds * kChunk; i += blockDim.x) out[size_t(blockIdx.x) * kRounds * kChunk + i] = buf[i];
  if (threadIdx.x < kRounds) phase_done[blockIdx.x * kRounds + threadIdx.x] = test_parity(smem(&bar[threadIdx.x]), 0);
  cluster_sync();  // no CTA exits while another may still signal it
}

uint8_t source_byte(size_t i) { return uint8_t((i * 131u + 7u) ^ (i >> 8)); }

void test_bulk() {
  const int clusters = 2, blocks = clusters * kCtas;
  std::vector<uint8_t> in(size_t(clusters) * kRounds * kChunk);
  for (size_t i = 0; i < in.size(); ++i) in[i] = source_byte(i);
  uint8_t *d_in, *d_out;
  uint32_t* d_done;
  CUDA_CHECK(cudaMalloc(&d_in, in.size()));
  CUDA_CHECK(cudaMalloc(&d_out, size_t(blocks) * kRounds * kChunk));
  CUDA_CHECK(cudaMalloc(&d_done, blocks * kRounds * 4));
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size(), cudaMemcpyHostToDevice));
  Masks masks;
  for (int r = 0; r < kRounds; ++r) masks.m[r] = kMasks[r];

  auto read = reinterpret_cast<Gpu100EmuMetricsFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_METRICS_SYMBOL));
  Gpu100EmuMetrics before{}, after{};
  before.size = after.size = sizeof before;
  CUDA_CHECK(cudaDeviceSynchronize());
  if (read) read(&before);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(128);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCtas;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_bulk, static_cast<const uint8_t*>(d_in), d_out, d_done, masks));
  CUDA_CHECK(cudaDeviceSynchronize());
  if (read) {
    read(&after);
    gpu100_emu_metrics_diff(&after, &before);
    // One multicast per round and cluster, its kChunk bytes counted once.
    conf_check("metrics tma_requests", "bulk multicast, 8 rounds x 2 clusters", after.tma_requests,
               unsigned(clusters * kRounds + g_plant));
    conf_check("metrics tma_bytes", "bulk multicast, 8 rounds x 2 clusters", after.tma_bytes,
               unsigned(clusters * kRounds * kChunk + g_plant));
  }
  std::vector<uint8_t> out(size_t(blocks) * kRounds * kChunk);
  std::vector<uint32_t> done(blocks * kRounds);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(done.data(), d_done, done.size() * 4, cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    const int rank = b % kCtas, cluster = b / kCtas;
    for (int r = 0; r < kRounds; ++r) {
      const bool dest = kMasks[r] >> rank & 1;
      int bad = 0;
      for (int i = 0; i < kChunk; ++i) {
        uint8_t want = dest ? source_byte((size_t(cluster) * kRounds + r) * kChunk + i) : kFill;
        if (g_plant) want ^= 1;
        bad += out[(size_t(b) * kRounds + r) * kChunk + i] != want;
      }
      const ConfStr where = conf_fmt("ctaMask 0x%x issued by rank %d%s, block %d (rank %d)", kMasks[r], r % kCtas,
                                     r % 2 ? ", remote expect_tx" : "", b, rank);
      conf_check(dest ? "multicast bytes delivered" : "no bytes outside the mask", where, bad, 0);
      conf_check("mbarrier phase 0 complete (only in the mask's CTAs)", where, done[b * kRounds + r],
                 unsigned(dest) ^ unsigned(g_plant));
    }
  }
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_done));
}

// --- 2D tensor multicast with out-of-bounds fill --------------------------------------------------
constexpr int kBoxW = 16, kBoxH = 8;              // f32: 64-byte rows (the 64-byte swizzle span)
constexpr int kBoxBytes = kBoxW * kBoxH * 4;      // 512
constexpr int kTensorW = 40, kTensorH = 24;

// The CTA of rank `issuer` loads the box at (x0, y0) into the CTAs of `mask`; every CTA copies
// its 512-byte buffer (filled with 0xAB first) to out.
__global__ void k_tensor(const __grid_constant__ CUtensorMap map, int x0, int y0, uint32_t mask, uint32_t issuer,
                         uint32_t* out) {
  __shared__ alignas(1024) uint32_t buf[kBoxBytes / 4];
  __shared__ uint64_t bar;
  const uint32_t rank = cta_rank();
  for (int i = threadIdx.x; i < kBoxBytes / 4; i += blockDim.x) buf[i] = 0xABABABABu;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  cluster_sync();
  const bool dest = mask >> rank & 1;
  if (threadIdx.x == 0 && dest)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(kBoxBytes) : "memory");
  if (threadIdx.x == 0 && rank == issuer)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem(buf)),
        "l"(reinterpret_cast<uint64_t>(&map)), "r"(x0), "r"(y0), "r"(smem(&bar)), "h"(uint16_t(mask))
        : "memory");
  if (dest) wait_parity(smem(&bar), 0);
  __syncthreads();
  for (int i = threadIdx.x; i < kBoxBytes / 4; i += blockDim.x) out[blockIdx.x * (kBoxBytes / 4) + i] = buf[i];
  cluster_sync();
}

PFN_cuTensorMapEncodeTiled_v12000 g_encode = nullptr;

void test_tensor() {
  std::vector<float> t(kTensorW * kTensorH);
  for (int i = 0; i < kTensorW * kTensorH; ++i) t[i] = float(i + 1);  // no element is zero
  float* d_t;
  uint32_t* d_out;
  const int blocks = kCtas;
  CUDA_CHECK(cudaMalloc(&d_t, t.size() * 4));
  CUDA_CHECK(cudaMalloc(&d_out, blocks * kBoxBytes));
  CUDA_CHECK(cudaMemcpy(d_t, t.data(), t.size() * 4, cudaMemcpyHostToDevice));
  struct Case {
    const char* name;
    int x0, y0;
    uint32_t mask, issuer;
    bool nan_fill;
  };
  const Case cases[] = {
      {"inside the tensor", 8, 4, 0xF, 0, false},
      {"past the right and bottom edges", 32, 20, 0x5, 1, false},
      {"before the left and top edges", -8, -4, 0xA, 3, false},
      {"past the bottom edge, NaN fill", 16, 20, 0x7, 2, true},
      {"one CTA, the issuer itself", 24, 0, 0x4, 2, false},
  };
  for (const Case& c : cases) {
    alignas(64) CUtensorMap map;
    const uint64_t dims[2] = {kTensorW, kTensorH}, strides[1] = {kTensorW * 4};
    const uint32_t box[2] = {kBoxW, kBoxH}, es[2] = {1, 1};
    const CUresult r = g_encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d_t, dims, strides, box, es,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                c.nan_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      conf_check("cuTensorMapEncodeTiled", c.name, int(r), int(CUDA_SUCCESS));
      continue;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(64);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = kCtas;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_tensor, map, c.x0, c.y0, c.mask, c.issuer, d_out));
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(blocks * kBoxBytes / 4);
    CUDA_CHECK(cudaMemcpy(got.data(), d_out, got.size() * 4, cudaMemcpyDeviceToHost));
    // The box, dense (row y of the box at byte 64 y), each byte offset p swizzled to
    // p ^ (((p >> 7) & 3) << 4).
    std::vector<uint32_t> want(kBoxBytes / 4);
    std::vector<bool> want_nan(kBoxBytes / 4, false);
    for (int y = 0; y < kBoxH; ++y)
      for (int x = 0; x < kBoxW; ++x) {
        const uint32_t p = uint32_t(y * kBoxW + x) * 4, at = (p ^ (((p >> 7) & 3) << 4)) / 4;
        const int gx = c.x0 + x, gy = c.y0 + y;
        const bool in = gx >= 0 && gx < kTensorW && gy >= 0 && gy < kTensorH;
        float v = in ? t[gy * kTensorW + gx] : 0.0f;
        std::memcpy(&want[at], &v, 4);
        want_nan[at] = !in && c.nan_fill;
      }
    for (int b = 0; b < blocks; ++b) {
      const bool dest = c.mask >> b & 1;
      int bad = 0;
      for (int i = 0; i < kBoxBytes / 4; ++i) {
        const uint32_t g = got[b * kBoxBytes / 4 + i];
        bool ok;
        if (!dest) {
          ok = g == (0xABABABABu ^ uint32_t(g_plant));
        } else if (want_nan[i]) {
          float f;
          std::memcpy(&f, &g, 4);
          ok = g_plant ? g == 0 : std::isnan(f);
        } else {
          ok = g == (want[i] ^ uint32_t(g_plant));
        }
        bad += !ok;
      }
      conf_check(dest ? "tensor multicast: box delivered (swizzled, OOB filled)" : "tensor multicast: nothing outside the mask",
                 conf_fmt("%s, box at (%d, %d), ctaMask 0x%x from rank %u, block %d", c.name, c.x0, c.y0, c.mask, c.issuer, b),
                 bad, 0);
    }
  }
  CUDA_CHECK(cudaFree(d_t));
  CUDA_CHECK(cudaFree(d_out));
}

// --- shared::cta -> shared::cluster: a bulk copy into the next CTA --------------------------------
constexpr int kPass = 512;  // bytes

// Every CTA fills src with its own pattern, then copies it into dst of the next CTA of the
// cluster (cp.async.bulk.shared::cluster.shared::cta, the mbarrier in the destination's CTA,
// both from mapa); each CTA announces the bytes on its own mbarrier, waits, and copies dst out.
__global__ void k_pass(uint8_t* out) {
  __shared__ alignas(128) uint8_t src[kPass], dst[kPass];
  __shared__ uint64_t bar;
  const uint32_t rank = cta_rank();
  for (int i = threadIdx.x; i < kPass; i += blockDim.x) {
    src[i] = uint8_t(blockIdx.x * 37 + i * 3);
    dst[i] = kFill;
  }
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(kPass) : "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // src's generic writes before the copy reads them
  cluster_sync();
  if (threadIdx.x == 0) {
    const uint32_t next = (rank + 1) % kCtas;
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     map_rank(smem(dst), next)),
                 "r"(smem(src)), "r"(kPass), "r"(map_rank(smem(&bar), next))
                 : "memory");
  }
  wait_parity(smem(&bar), 0);
  for (int i = threadIdx.x; i < kPass; i += blockDim.x) out[blockIdx.x * kPass + i] = dst[i];
  cluster_sync();
}

void test_pass() {
  const int blocks = 2 * kCtas;
  uint8_t* d_out;
  CUDA_CHECK(cudaMalloc(&d_out, blocks * kPass));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(64);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCtas;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_pass, d_out));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> out(blocks * kPass);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size(), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    const int from = (b / kCtas) * kCtas + (b % kCtas + kCtas - 1) % kCtas;  // the previous rank's block
    int bad = 0;
    for (int i = 0; i < kPass; ++i) bad += out[b * kPass + i] != uint8_t((from * 37 + i * 3) ^ int(g_plant));
    conf_check("cp.async.bulk.shared::cluster.shared::cta into the next CTA", conf_fmt("block %d, from block %d", b, from),
               bad, 0);
  }
  CUDA_CHECK(cudaFree(d_out));
}

// --- remote arrive: a producer CTA signalling its consumers ---------------------------------------
constexpr int kPhases = 3;
constexpr int kThreads = 64;

// Rank 0 produces, ranks 1-3 consume, for kPhases phases. Phase k: the producer waits until every
// consumer has released its inbox (empty, one remote arrival per consumer, from phase 1 on),
// stores k * 1000 + rank * 100 + t into each consumer's inbox through mapa, and arrives on each
// consumer's full mbarrier (expected count 3) with a count of 2 and then of 1. A consumer waits
// for full's phase k, copies its inbox out and arrives on the producer's empty.
__global__ void k_remote(uint32_t* out, uint32_t* phases) {
  __shared__ uint32_t inbox[kThreads];
  __shared__ uint64_t full, empty;
  const uint32_t rank = cta_rank(), t = threadIdx.x;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 3;" ::"r"(smem(&full)) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&empty)), "r"(kCtas - 1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync();
  for (int k = 0; k < kPhases; ++k) {
    if (rank == 0) {
      if (k > 0) wait_parity(smem(&empty), (k - 1) & 1);
      for (uint32_t c = 1; c < kCtas; ++c) {
        const uint32_t slot = map_rank(smem(&inbox[t]), c);
        asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(slot), "r"(k * 1000 + c * 100 + t) : "memory");
      }
      __syncthreads();  // every thread's stores before thread 0's releases
      if (t == 0)
        for (uint32_t c = 1; c < kCtas; ++c) {
          const uint32_t bar = map_rank(smem(&full), c);
          asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0], 2;" ::"r"(bar) : "memory");
          asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0], 1;" ::"r"(bar) : "memory");
        }
    } else {
      wait_parity(smem(&full), k & 1);
      out[((blockIdx.x * kPhases) + k) * kThreads + t] = inbox[t];
      __syncthreads();  // every thread's read before thread 0 releases the inbox
      if (t == 0)
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(map_rank(smem(&empty), 0))
                     : "memory");
    }
  }
  if (rank == 0) wait_parity(smem(&empty), (kPhases - 1) & 1);
  __syncthreads();
  // Phases completed: full kPhases times (consumers), empty kPhases times (producer); phase
  // kPhases - 1 done and kPhases not: parity (kPhases - 1) & 1 tests true, kPhases & 1 false.
  if (t == 0) {
    const uint32_t bar = smem(rank == 0 ? &empty : &full);
    phases[2 * blockIdx.x] = test_parity(bar, (kPhases - 1) & 1);
    phases[2 * blockIdx.x + 1] = test_parity(bar, kPhases & 1);
  }
  cluster_sync();
}

void test_remote() {
  const int blocks = 2 * kCtas;
  uint32_t *d_out, *d_phases;
  CUDA_CHECK(cudaMalloc(&d_out, blocks * kPhases * kThreads * 4));
  CUDA_CHECK(cudaMalloc(&d_phases, blocks * 2 * 4));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, blocks * kPhases * kThreads * 4));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(kThreads);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kCtas;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_remote, d_out, d_phases));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> out(blocks * kPhases * kThreads), ph(blocks * 2);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(ph.data(), d_phases, ph.size() * 4, cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    const int rank = b % kCtas;
    if (rank != 0)
      for (int k = 0; k < kPhases; ++k) {
        int bad = 0;
        for (int t = 0; t < kThreads; ++t)
          bad += out[(b * kPhases + k) * kThreads + t] != uint32_t(k * 1000 + rank * 100 + t + g_plant);
        conf_check("remote arrive: the producer's stores seen after the wait", conf_fmt("block %d (rank %d), phase %d", b, rank, k),
                   bad, 0);
      }
    const char* bar = rank == 0 ? "empty (3 remote arrivals a phase)" : "full (remote arrivals of 2 and 1)";
    conf_check("remote arrive: last phase complete", conf_fmt("block %d, %s", b, bar), ph[2 * b], 1u ^ unsigned(g_plant));
    conf_check("remote arrive: no further phase complete", conf_fmt("block %d, %s", b, bar), ph[2 * b + 1],
               0u ^ unsigned(g_plant));
  }
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_phases));
}

}  // namespace

int main(int argc, char** argv) {
  g_plant = argc > 1 && std::strcmp(argv[1], "--plant") == 0;
  conf_require_device();
  int major = 0, minor = 0, cluster_launch = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, 0));
  if (major != 9 || minor != 0 || !cluster_launch) {
    std::printf("SKIP: this build of TMA multicast needs sm_90a (this device is sm_%d%d)\n", major, minor);
    return 77;
  }
  g_encode = conf_encode_tiled(ConfLookupCheck::none);  // a missing one is checked below
  test_bulk();
  if (g_encode) test_tensor();
  else conf_check_text("cudaGetDriverEntryPointByVersion", "cuTensorMapEncodeTiled", g_plant, "no function", "one");
  test_pass();
  test_remote();
  if (g_plant) {
    const int failed = conf_failures(), total = conf_checks();
    std::printf("multicast --plant: %d of %d checks failed\n", failed, total);
    return failed == total && total > 0 ? 0 : 1;
  }
  return conf_finish("multicast");
}
