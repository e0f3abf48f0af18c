// The emulator's launch metrics (emu/include/gpu100_emu_metrics.h): kernels whose counts follow
// by hand from the definitions, one launch each, read through the exported gpu100_emu_metrics.
//
// The definitions used below (emu/src/exec/metrics.cpp states the model):
//   global: a warp request touches the distinct 32-byte sectors holding its active lanes' bytes;
//           its ideal is ceil(distinct bytes / 32). cudaMalloc returns 256-byte aligned memory,
//           so a warp's first float of a 128-byte run starts a sector.
//   shared: 32 banks of 4-byte words (word w in bank w % 32); a request is served in 128-byte
//           phases (32 lanes for <= 4 bytes a lane, 16 for 8 bytes, 8 for 16 bytes); a phase takes
//           as many wavefronts as the most distinct words one bank is asked for (lanes reading one
//           word share it); ideal: one wavefront per phase with an active lane.
//   instructions: every PTX instruction a warp executes counts once as a warp instruction and
//           once per active thread (predicated-off threads included) as a thread instruction.
//   branches: each bra a warp executes; divergent when its guard splits the active threads.
// Where a kernel's own code (parameter loads, index arithmetic) adds instructions that depend on
// the compiler, the check compares two kernels that differ by a known block of inline PTX only.
//
// Run under the emulator (it exits 77 with SKIP on a GPU: the counters are the emulator's).
// --plant adds one to every expected value: every check must then fail, and the program exits 0
// only if each did, which is how the checks themselves are shown able to fail.
#include <dlfcn.h>

#include <functional>

#include "conf_common.h"
#include "gpu100_emu_metrics.h"

namespace {

unsigned long long g_plant = 0;

Gpu100EmuMetricsFn g_read = nullptr;
Gpu100EmuResetPeakFn g_reset_peak = nullptr;

Gpu100EmuMetrics read_metrics() {
  Gpu100EmuMetrics m{};
  m.size = sizeof m;
  g_read(&m);
  return m;
}

// The metrics of what `launch` runs (one or more launches, synchronized).
Gpu100EmuMetrics measure(const std::function<void()>& launch) {
  CUDA_CHECK(cudaDeviceSynchronize());
  const Gpu100EmuMetrics before = read_metrics();
  launch();
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  Gpu100EmuMetrics after = read_metrics();
  gpu100_emu_metrics_diff(&after, &before);
  return after;
}

void expect(const char* name, const char* field, unsigned long long got, unsigned long long expected) {
  conf_check(name, field, got, expected + g_plant);
}

// ---------------------------------------------------------------------------------------------
// Global loads and stores: 2 blocks of 64 threads = 4 full warps, one load and one store each.
// ---------------------------------------------------------------------------------------------
constexpr int kBlocks = 2, kThreads = 64, kWarps = kBlocks * kThreads / 32;

template <int STRIDE, int OFFSET>
__global__ void k_load_f32(const float* __restrict__ in, float* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = in[t * STRIDE + OFFSET];
}

template <int STRIDE>
__global__ void k_store_f32(float* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t * STRIDE] = float(t);
}

template <typename T>
__global__ void k_load_vec(const T* __restrict__ in, T* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = in[t];
}

__global__ void k_load_bytes(const uint8_t* __restrict__ in, uint8_t* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = in[t];
}

// Lane i reads float (31 - i) of its warp's 32: the same 4 sectors, in falling order.
__global__ void k_load_reversed(const float* __restrict__ in, float* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = in[(t & ~31) + 31 - (t & 31)];
}

// Every lane reads float 0: one sector holds all the request needs.
__global__ void k_load_broadcast(const float* __restrict__ in, float* __restrict__ out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = in[0];
}

// A generic-space load (no .global): the address decides, per lane, which memory it reads.
__global__ void k_load_generic(const float* in, float* __restrict__ out, int shared_side) {
  __shared__ float tile[64];
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = float(t);
  __syncthreads();
  const float* p = shared_side ? &tile[threadIdx.x] : &in[t];
  float v;
  asm volatile("ld.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  out[t] = v;
}

void global_tests() {
  const int n = 64 * 1024;
  float *in, *out;
  CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  CUDA_CHECK(cudaMemset(in, 0, n * sizeof(float)));

  struct Case {
    const char* name;
    void (*kernel)(const float*, float*);
    unsigned long long sectors;  // per load request
    unsigned long long ideal;
  };
  // 32 floats = 128 bytes per warp. Stride 2 spreads them over 256 bytes (8 sectors), stride 8
  // over 1 KiB (32 sectors, one float each), stride 32 likewise. Offset 1 shifts the warp's 128
  // bytes 4 bytes into a sector, so they end 4 bytes into a fifth.
  const Case cases[] = {
      {"ld.global f32 stride 1", k_load_f32<1, 0>, 4, 4},
      {"ld.global f32 stride 2", k_load_f32<2, 0>, 8, 4},
      {"ld.global f32 stride 4", k_load_f32<4, 0>, 16, 4},
      {"ld.global f32 stride 8", k_load_f32<8, 0>, 32, 4},
      {"ld.global f32 stride 32", k_load_f32<32, 0>, 32, 4},
      {"ld.global f32 offset 1", k_load_f32<1, 1>, 5, 4},
      {"ld.global f32 offset 8", k_load_f32<1, 8>, 4, 4},
      {"ld.global f32 reversed lanes", k_load_reversed, 4, 4},
      {"ld.global f32 broadcast", k_load_broadcast, 1, 1},
  };
  for (const Case& c : cases) {
    const Gpu100EmuMetrics m = measure([&] { c.kernel<<<kBlocks, kThreads>>>(in, out); });
    expect(c.name, "launches", m.launches, 1);
    expect(c.name, "blocks", m.blocks, kBlocks);
    expect(c.name, "global_load_requests", m.global_load_requests, kWarps);
    expect(c.name, "global_load_sectors", m.global_load_sectors, kWarps * c.sectors);
    expect(c.name, "global_load_ideal_sectors", m.global_load_ideal_sectors, kWarps * c.ideal);
    // out[t]: every warp stores 128 consecutive bytes.
    expect(c.name, "global_store_requests", m.global_store_requests, kWarps);
    expect(c.name, "global_store_sectors", m.global_store_sectors, kWarps * 4);
    expect(c.name, "global_store_ideal_sectors", m.global_store_ideal_sectors, kWarps * 4);
    expect(c.name, "shared_load_requests", m.shared_load_requests, 0);
  }

  // Stores: stride 2 and 32 as for loads.
  {
    const Gpu100EmuMetrics m = measure([&] { k_store_f32<2><<<kBlocks, kThreads>>>(out); });
    expect("st.global f32 stride 2", "global_store_requests", m.global_store_requests, kWarps);
    expect("st.global f32 stride 2", "global_store_sectors", m.global_store_sectors, kWarps * 8);
    expect("st.global f32 stride 2", "global_store_ideal_sectors", m.global_store_ideal_sectors, kWarps * 4);
    expect("st.global f32 stride 2", "global_load_requests", m.global_load_requests, 0);
  }
  {
    const Gpu100EmuMetrics m = measure([&] { k_store_f32<32><<<kBlocks, kThreads>>>(out); });
    expect("st.global f32 stride 32", "global_store_sectors", m.global_store_sectors, kWarps * 32);
    expect("st.global f32 stride 32", "global_store_ideal_sectors", m.global_store_ideal_sectors, kWarps * 4);
  }

  // Vector widths, the same 128 threads: 8 bytes a lane = 256 bytes a warp = 8 sectors, 16 bytes
  // = 512 bytes = 16 sectors; loads and stores alike. 1 byte a lane: 32 bytes, one sector.
  {
    const Gpu100EmuMetrics m = measure([&] {
      k_load_vec<float2><<<kBlocks, kThreads>>>(reinterpret_cast<const float2*>(in),
                                                reinterpret_cast<float2*>(out));
    });
    expect("ld.global.v2.f32", "global_load_requests", m.global_load_requests, kWarps);
    expect("ld.global.v2.f32", "global_load_sectors", m.global_load_sectors, kWarps * 8);
    expect("ld.global.v2.f32", "global_store_sectors", m.global_store_sectors, kWarps * 8);
  }
  {
    const Gpu100EmuMetrics m = measure([&] {
      k_load_vec<float4><<<kBlocks, kThreads>>>(reinterpret_cast<const float4*>(in),
                                                reinterpret_cast<float4*>(out));
    });
    expect("ld.global.v4.f32", "global_load_requests", m.global_load_requests, kWarps);
    expect("ld.global.v4.f32", "global_load_sectors", m.global_load_sectors, kWarps * 16);
    expect("ld.global.v4.f32", "global_load_ideal_sectors", m.global_load_ideal_sectors, kWarps * 16);
    expect("ld.global.v4.f32", "global_store_requests", m.global_store_requests, kWarps);
    expect("ld.global.v4.f32", "global_store_sectors", m.global_store_sectors, kWarps * 16);
  }
  // The same 512 floats as scalar loads by 512 threads take four times the requests for the
  // same sectors; as float4 loads by 128 threads, a quarter of them.
  {
    const Gpu100EmuMetrics scalar = measure([&] { k_load_f32<1, 0><<<4, 128>>>(in, out); });
    const Gpu100EmuMetrics vec4 = measure([&] {
      k_load_vec<float4><<<1, 128>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out));
    });
    expect("512 floats as f32", "global_load_requests", scalar.global_load_requests, 16);
    expect("512 floats as v4.f32", "global_load_requests", vec4.global_load_requests, 4);
    expect("512 floats as f32", "global_load_sectors", scalar.global_load_sectors, 64);
    expect("512 floats as v4.f32", "global_load_sectors", vec4.global_load_sectors, 64);
  }
  {
    const Gpu100EmuMetrics m = measure([&] {
      k_load_bytes<<<kBlocks, kThreads>>>(reinterpret_cast<const uint8_t*>(in),
                                          reinterpret_cast<uint8_t*>(out));
    });
    expect("ld.global.u8", "global_load_sectors", m.global_load_sectors, kWarps * 1);
    expect("ld.global.u8", "global_load_ideal_sectors", m.global_load_ideal_sectors, kWarps * 1);
  }
  // A partial warp: 40 threads a block = one full warp and one of 8 lanes (32 bytes, 1 sector).
  {
    const Gpu100EmuMetrics m = measure([&] { k_load_f32<1, 0><<<1, 40>>>(in, out); });
    expect("ld.global f32 40 threads", "global_load_requests", m.global_load_requests, 2);
    expect("ld.global f32 40 threads", "global_load_sectors", m.global_load_sectors, 4 + 1);
  }
  // Generic loads: one request in the space the addresses lie in.
  {
    const Gpu100EmuMetrics m = measure([&] { k_load_generic<<<kBlocks, kThreads>>>(in, out, 0); });
    expect("ld generic (global)", "global_load_requests", m.global_load_requests, kWarps);
    expect("ld generic (global)", "global_load_sectors", m.global_load_sectors, kWarps * 4);
    expect("ld generic (global)", "shared_load_requests", m.shared_load_requests, 0);
  }
  {
    const Gpu100EmuMetrics m = measure([&] { k_load_generic<<<kBlocks, kThreads>>>(in, out, 1); });
    expect("ld generic (shared)", "global_load_requests", m.global_load_requests, 0);
    expect("ld generic (shared)", "shared_load_requests", m.shared_load_requests, kWarps);
    expect("ld generic (shared)", "shared_load_wavefronts", m.shared_load_wavefronts, kWarps);
  }
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
}

// ---------------------------------------------------------------------------------------------
// Shared memory: one warp fills a tile with coalesced 4-byte stores (one wavefront each), then
// makes one load at a stride (in words) whose wavefronts follow from the banks.
// ---------------------------------------------------------------------------------------------
constexpr int kTileWords = 32 * 132;

__device__ uint32_t fold(uint32_t v) { return v; }
__device__ uint32_t fold(uint8_t v) { return v; }
__device__ uint32_t fold(uint2 v) { return v.x ^ v.y; }
__device__ uint32_t fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

template <typename T, int STRIDE>
__global__ void k_shared(uint32_t* out) {
  __shared__ __align__(16) uint32_t tile[kTileWords];
  for (int i = threadIdx.x; i < kTileWords; i += 32) tile[i] = i;
  __syncwarp();
  out[threadIdx.x] = fold(reinterpret_cast<const T*>(tile)[threadIdx.x * STRIDE]);
}

// The two tiles of a transpose: a column of a 32x32 tile, and of a 32x33 one.
template <int PITCH>
__global__ void k_tile_column(float* out, int column) {
  __shared__ float tile[32 * PITCH];
  for (int i = threadIdx.x; i < 32 * PITCH; i += 32) tile[i] = float(i);
  __syncwarp();
  out[threadIdx.x] = tile[threadIdx.x * PITCH + column];
}

// ldmatrix.x4: each lane gives the address of one 16-byte row, rows ROW_BYTES apart.
template <int ROW_BYTES>
__global__ void k_ldmatrix(uint32_t* out) {
  __shared__ __align__(16) uint16_t tile[32 * ROW_BYTES / 2];
  for (int i = threadIdx.x; i < 32 * ROW_BYTES / 2; i += 32) tile[i] = uint16_t(i);
  __syncwarp();
  const uint32_t row = uint32_t(__cvta_generic_to_shared(tile)) + threadIdx.x * ROW_BYTES;
  uint32_t r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(row));
  out[threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}

void shared_tests() {
  uint32_t* out;
  CUDA_CHECK(cudaMalloc(&out, 32 * 16));
  struct Case {
    const char* name;
    void (*kernel)(uint32_t*);
    unsigned long long wavefronts, ideal;
  };
  // 4-byte words at a stride of s words: lane i asks bank (s * i) % 32 for word s * i, all words
  // distinct; the banks in use are 32 / gcd(s, 32), each asked for gcd(s, 32) words. Stride 0
  // is one word for every lane. 8-byte accesses (v2) go in two phases of 16 lanes, 16-byte (v4)
  // in four of 8 lanes: stride 1 keeps every phase on 32 distinct banks. v4 at stride 2 (lane i
  // at byte 32 i): a phase's 8 lanes cover 256 bytes, every bank twice: 2 wavefronts a phase.
  // v2 at stride 16 (byte 128 i): a phase's 16 lanes all use banks 0 and 1: 16 a phase.
  // Bytes: lanes reading bytes 0-31 share 8 words (1); bytes 4 i: 32 words, 32 banks (1); bytes
  // 128 i: 32 words in bank 0 (32).
  const Case cases[] = {
      {"ld.shared b32 stride 0", k_shared<uint32_t, 0>, 1, 1},
      {"ld.shared b32 stride 1", k_shared<uint32_t, 1>, 1, 1},
      {"ld.shared b32 stride 2", k_shared<uint32_t, 2>, 2, 1},
      {"ld.shared b32 stride 3", k_shared<uint32_t, 3>, 1, 1},
      {"ld.shared b32 stride 4", k_shared<uint32_t, 4>, 4, 1},
      {"ld.shared b32 stride 6", k_shared<uint32_t, 6>, 2, 1},
      {"ld.shared b32 stride 8", k_shared<uint32_t, 8>, 8, 1},
      {"ld.shared b32 stride 16", k_shared<uint32_t, 16>, 16, 1},
      {"ld.shared b32 stride 32", k_shared<uint32_t, 32>, 32, 1},
      {"ld.shared b32 stride 33", k_shared<uint32_t, 33>, 1, 1},
      {"ld.shared b32 stride 64", k_shared<uint32_t, 64>, 32, 1},
      {"ld.shared.v2 stride 1", k_shared<uint2, 1>, 2, 2},
      {"ld.shared.v2 stride 16", k_shared<uint2, 16>, 32, 2},
      {"ld.shared.v4 stride 1", k_shared<uint4, 1>, 4, 4},
      {"ld.shared.v4 stride 2", k_shared<uint4, 2>, 8, 4},
      {"ld.shared u8 stride 1", k_shared<uint8_t, 1>, 1, 1},
      {"ld.shared u8 stride 4", k_shared<uint8_t, 4>, 1, 1},
      {"ld.shared u8 stride 128", k_shared<uint8_t, 128>, 32, 1},
  };
  for (const Case& c : cases) {
    const Gpu100EmuMetrics m = measure([&] { c.kernel<<<1, 32>>>(out); });
    expect(c.name, "shared_load_requests", m.shared_load_requests, 1);
    expect(c.name, "shared_load_wavefronts", m.shared_load_wavefronts, c.wavefronts);
    expect(c.name, "shared_load_ideal_wavefronts", m.shared_load_ideal_wavefronts, c.ideal);
    // The fill: kTileWords / 32 coalesced stores, one wavefront each.
    expect(c.name, "shared_store_requests", m.shared_store_requests, kTileWords / 32);
    expect(c.name, "shared_store_wavefronts", m.shared_store_wavefronts, kTileWords / 32);
  }
  // A column of a 32x32 float tile: word 32 i + c, all in bank c (32 wavefronts); of a 32x33
  // tile: word 33 i + c, bank (i + c) % 32, all different (1).
  {
    const Gpu100EmuMetrics m =
        measure([&] { k_tile_column<32><<<1, 32>>>(reinterpret_cast<float*>(out), 5); });
    expect("column of a 32x32 tile", "shared_load_wavefronts", m.shared_load_wavefronts, 32);
  }
  {
    const Gpu100EmuMetrics m =
        measure([&] { k_tile_column<33><<<1, 32>>>(reinterpret_cast<float*>(out), 5); });
    expect("column of a 32x33 tile", "shared_load_wavefronts", m.shared_load_wavefronts, 1);
    expect("column of a 32x33 tile", "shared_store_wavefronts", m.shared_store_wavefronts, 33);
  }
  // ldmatrix.x4, a 16-byte row per lane in quarter-warp phases. Rows 16 bytes apart: each phase
  // reads 128 contiguous bytes (4 wavefronts in all). 64 bytes apart: a phase's rows start in
  // banks 0, 16, 0, 16, ...: banks 0-3 and 16-19 four words each (16 in all). 80 bytes apart:
  // rows start in banks 0, 20, 8, 28, 16, 4, 24, 12, all disjoint (4).
  {
    const Gpu100EmuMetrics m = measure([&] { k_ldmatrix<16><<<1, 32>>>(out); });
    expect("ldmatrix.x4 rows 16 B apart", "shared_load_requests", m.shared_load_requests, 1);
    expect("ldmatrix.x4 rows 16 B apart", "shared_load_wavefronts", m.shared_load_wavefronts, 4);
    expect("ldmatrix.x4 rows 16 B apart", "shared_load_ideal_wavefronts", m.shared_load_ideal_wavefronts, 4);
  }
  {
    const Gpu100EmuMetrics m = measure([&] { k_ldmatrix<64><<<1, 32>>>(out); });
    expect("ldmatrix.x4 rows 64 B apart", "shared_load_wavefronts", m.shared_load_wavefronts, 16);
  }
  {
    const Gpu100EmuMetrics m = measure([&] { k_ldmatrix<80><<<1, 32>>>(out); });
    expect("ldmatrix.x4 rows 80 B apart", "shared_load_wavefronts", m.shared_load_wavefronts, 4);
  }
  CUDA_CHECK(cudaFree(out));
}

// ---------------------------------------------------------------------------------------------
// cp.async: 16 bytes a lane from consecutive global addresses: one request of 16 sectors.
// ---------------------------------------------------------------------------------------------
__global__ void k_cp_async16(const float4* in, float4* out) {
  __shared__ float4 tile[32];
  const uint32_t s = uint32_t(__cvta_generic_to_shared(&tile[threadIdx.x]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(in + threadIdx.x) : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  out[threadIdx.x] = tile[threadIdx.x];
}

// ---------------------------------------------------------------------------------------------
// Atomics: one atom/red per thread.
// ---------------------------------------------------------------------------------------------
__global__ void k_atomic_global(unsigned* counters) { atomicAdd(&counters[threadIdx.x % 4], 1u); }

__global__ void k_atomic_shared(unsigned* counters) {
  __shared__ unsigned bins[4];
  if (threadIdx.x < 4) bins[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&bins[threadIdx.x % 4], 1u);
  __syncthreads();
  // One block writes the result: plain stores of every block to the same words would race.
  if (blockIdx.x == 0 && threadIdx.x < 4) counters[threadIdx.x] = bins[threadIdx.x];
}

// ---------------------------------------------------------------------------------------------
// Instructions and branches. Each kernel runs one inline-PTX block; pairs of kernels differ only
// in that block, so the difference of their counts is the block's.
// ---------------------------------------------------------------------------------------------
#define ADD8 \
  "add.u32 %0, %0, 1;\n add.u32 %0, %0, 3;\n add.u32 %0, %0, 5;\n add.u32 %0, %0, 7;\n" \
  "add.u32 %0, %0, 11;\n add.u32 %0, %0, 13;\n add.u32 %0, %0, 17;\n add.u32 %0, %0, 19;\n"
#define PADD8 \
  "@p add.u32 %0, %0, 1;\n @p add.u32 %0, %0, 3;\n @p add.u32 %0, %0, 5;\n @p add.u32 %0, %0, 7;\n" \
  "@p add.u32 %0, %0, 11;\n @p add.u32 %0, %0, 13;\n @p add.u32 %0, %0, 17;\n @p add.u32 %0, %0, 19;\n"

// MODE 0: no extra instructions; 1: 8 adds skipped by the lanes that take the branch; 2: 8 adds
// predicated off in those lanes (no branch around them). `skip` is 1 in the lanes that skip.
template <int MODE>
__global__ void k_inst(unsigned* out, int half) {
  unsigned v = threadIdx.x;
  const unsigned skip = half ? unsigned((threadIdx.x & 31) >= 16) : 0u;
  if constexpr (MODE == 0)
    asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %1, 0;\n @p bra END;\n END:\n }" : "+r"(v) : "r"(skip));
  if constexpr (MODE == 1)
    asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %1, 0;\n @p bra END;\n" ADD8 " END:\n }" : "+r"(v) : "r"(skip));
  if constexpr (MODE == 2)
    asm volatile("{\n .reg .pred p;\n setp.eq.u32 p, %1, 0;\n bra END;\n END:\n" PADD8 " }" : "+r"(v) : "r"(skip));
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

void instruction_tests() {
  unsigned* out;
  CUDA_CHECK(cudaMalloc(&out, 4096 * sizeof(unsigned)));
  // 2 blocks of 40 threads: 4 warps, two of them with 8 lanes; 80 threads.
  auto run = [&](void (*k)(unsigned*, int), int half) {
    return measure([&] { k<<<2, 40>>>(out, half); });
  };
  const Gpu100EmuMetrics base = run(k_inst<0>, 0), base_half = run(k_inst<0>, 1);
  const Gpu100EmuMetrics all = run(k_inst<1>, 0), half = run(k_inst<1>, 1);
  const Gpu100EmuMetrics pred = run(k_inst<2>, 1);
  // The same instructions, the same count: the kernel is deterministic.
  expect("k_inst<0>", "warp_instructions (same kernel twice)", base.warp_instructions, base_half.warp_instructions);
  // Every lane runs the 8 adds: 4 warps x 8, 80 threads x 8.
  expect("8 adds, all lanes", "warp_instructions - base", all.warp_instructions - base.warp_instructions, 4 * 8);
  expect("8 adds, all lanes", "thread_instructions - base", all.thread_instructions - base.thread_instructions, 80 * 8);
  // Lanes 16-31 branch around them: the full warps run them for 16 lanes, the 8-lane warps for
  // all 8 (their lanes are 0-7).
  expect("8 adds, lanes 0-15", "warp_instructions - base", half.warp_instructions - base_half.warp_instructions, 4 * 8);
  expect("8 adds, lanes 0-15", "thread_instructions - base", half.thread_instructions - base_half.thread_instructions, (16 + 16 + 8 + 8) * 8);
  // Predicated off instead: every thread is counted, as smsp__thread_inst_executed counts it.
  expect("8 predicated adds", "thread_instructions - base", pred.thread_instructions - base_half.thread_instructions, 80 * 8);
  // Branches: one bra per warp in each kernel. It splits the full warps of `half` (lanes 16-31
  // jump) and nothing else: a branch all active lanes take, or none, does not diverge.
  expect("bra, no lane jumps", "branches", base.branches, 4);
  expect("bra, no lane jumps", "divergent_branches", base.divergent_branches, 0);
  expect("bra, lanes 16-31 jump", "branches", half.branches, 4);
  expect("bra, lanes 16-31 jump", "divergent_branches", half.divergent_branches, 2);
  expect("bra, unguarded", "divergent_branches", pred.divergent_branches, 0);
  expect("bra, unguarded", "branches", pred.branches, 4);
  CUDA_CHECK(cudaFree(out));
}

void other_tests() {
  float4 *in, *out;
  CUDA_CHECK(cudaMalloc(&in, 32 * sizeof(float4)));
  CUDA_CHECK(cudaMalloc(&out, 32 * sizeof(float4)));
  CUDA_CHECK(cudaMemset(in, 0, 32 * sizeof(float4)));
  {
    const Gpu100EmuMetrics m = measure([&] { k_cp_async16<<<1, 32>>>(in, out); });
    expect("cp.async 16 B a lane", "global_load_requests", m.global_load_requests, 1);
    expect("cp.async 16 B a lane", "global_load_sectors", m.global_load_sectors, 16);
  }
  unsigned* counters;
  CUDA_CHECK(cudaMalloc(&counters, 4 * sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(counters, 0, 4 * sizeof(unsigned)));
  {
    const Gpu100EmuMetrics m = measure([&] { k_atomic_global<<<kBlocks, kThreads>>>(counters); });
    expect("atomicAdd global", "global_atomic_requests", m.global_atomic_requests, kWarps);
    expect("atomicAdd global", "global_atomic_threads", m.global_atomic_threads, kBlocks * kThreads);
    expect("atomicAdd global", "global_load_requests", m.global_load_requests, 0);
    expect("atomicAdd global", "global_store_requests", m.global_store_requests, 0);
    expect("atomicAdd global", "shared_atomic_requests", m.shared_atomic_requests, 0);
  }
  {
    const Gpu100EmuMetrics m = measure([&] { k_atomic_shared<<<kBlocks, kThreads>>>(counters); });
    expect("atomicAdd shared", "shared_atomic_requests", m.shared_atomic_requests, kWarps);
    expect("atomicAdd shared", "shared_atomic_threads", m.shared_atomic_threads, kBlocks * kThreads);
    expect("atomicAdd shared", "global_atomic_requests", m.global_atomic_requests, 0);
  }
  // Device memory: what cudaMalloc holds now, and the most it held at once.
  {
    g_reset_peak();
    const Gpu100EmuMetrics start = read_metrics();
    void *a, *b;
    CUDA_CHECK(cudaMalloc(&a, 1000));
    CUDA_CHECK(cudaMalloc(&b, 3000));
    CUDA_CHECK(cudaFree(a));
    const Gpu100EmuMetrics mid = read_metrics();
    expect("cudaMalloc 1000 + 3000, free 1000", "device_bytes_live - start", mid.device_bytes_live - start.device_bytes_live, 3000);
    expect("cudaMalloc 1000 + 3000, free 1000", "device_bytes_peak - start", mid.device_bytes_peak - start.device_bytes_live, 4000);
    CUDA_CHECK(cudaFree(b));
    g_reset_peak();
    const Gpu100EmuMetrics end = read_metrics();
    expect("after reset_peak", "device_bytes_peak - start", end.device_bytes_peak - start.device_bytes_live, 0);
  }
  CUDA_CHECK(cudaFree(counters));
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
}

}  // namespace

int main(int argc, char** argv) {
  bool plant = argc > 1 && !std::strcmp(argv[1], "--plant");
  g_plant = plant ? 1 : 0;
  g_read = reinterpret_cast<Gpu100EmuMetricsFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_METRICS_SYMBOL));
  g_reset_peak = reinterpret_cast<Gpu100EmuResetPeakFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_RESET_PEAK_SYMBOL));
  if (!g_read || !g_reset_peak) {
    std::printf("SKIP: not running under the gpu100 emulator (the metrics are its own)\n");
    return 77;
  }
  conf_require_device();
  global_tests();
  shared_tests();
  instruction_tests();
  other_tests();
  if (plant) {
    const bool all_failed = conf_failures() == conf_checks();
    std::printf("metrics --plant: %d of %d checks failed on an expected value one too high%s\n",
                conf_failures(), conf_checks(), all_failed ? "" : " (each should have)");
    return all_failed ? 0 : 1;
  }
  return conf_finish("metrics");
}
