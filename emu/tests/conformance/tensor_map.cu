// Tensor maps and bulk tensor copies (sm_90): cuTensorMapEncodeTiled reached through
// cudaGetDriverEntryPointByVersion (and through libcuda.so.1), its argument rules, and
// cp.async.bulk.tensor.{1..5}d tile-mode loads and stores.
//
// Expected values, from the definitions:
// - the driver API's documentation of cuTensorMapEncodeTiled (cuda.h): each rule broken gives
//   CUDA_ERROR_INVALID_VALUE;
// - the PTX ISA ("Tensors", "Tensor copy" and "Swizzling modes"): a tile-mode load reads the box
//   whose first element is at the coordinates (dimension 0 innermost), ceil(boxDim[i] /
//   elementStrides[i]) elements along dimension i > 0 taking every elementStrides[i]-th, and writes
//   them densely, dimension 0 fastest, into shared memory; elements outside the tensor are filled
//   with zero (or a NaN with CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) and count toward
//   the bytes of complete_tx; a store writes only the elements inside the tensor. The box's start
//   along dimension 0 is a multiple of 16 bytes (coordinates that are not fault, as NVIDIA's TMA
//   sample for the CUDA samples shows). With a swizzle
//   of 32, 64 or 128 bytes, the byte at shared address A lands at A with its bits 4.. (the 16-byte
//   chunk within 128 bytes) XORed with bits 7.. over 1, 2 or 3 bits; the shared buffer is 1024-byte
//   aligned, so the table below is computed from the buffer offset.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conf_common.h"
#include "conf_tensor_map.h"

namespace {

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

constexpr int kBufBytes = 16384;

struct Coords {
  int c[5];
};

// Thread 0 loads the box at `co` into a 1024-byte aligned buffer (cleared to 0xAB first); every
// thread then copies the buffer's first `bytes` bytes to out. Block 1 stores the same buffer back
// through `store_map` (if rank > 0 there) at `store_co`.
__global__ void k_load(const __grid_constant__ CUtensorMap map, int rank, Coords co, uint32_t bytes,
                       uint8_t* out, uint32_t* tx_phase) {
  __shared__ alignas(1024) uint8_t buf[kBufBytes];
  __shared__ uint64_t bar;
  for (uint32_t i = threadIdx.x; i < kBufBytes; i += blockDim.x) buf[i] = 0xAB;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(bytes) : "memory");
    const uint32_t d = smem(buf), b = smem(&bar);
    const uint64_t m = reinterpret_cast<uint64_t>(&map);
    switch (rank) {
      case 1:
        asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                     ::"r"(d), "l"(m), "r"(co.c[0]), "r"(b) : "memory");
        break;
      case 2:
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(d), "l"(m), "r"(co.c[0]), "r"(co.c[1]), "r"(b) : "memory");
        break;
      case 3:
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                     ::"r"(d), "l"(m), "r"(co.c[0]), "r"(co.c[1]), "r"(co.c[2]), "r"(b) : "memory");
        break;
      case 4:
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                     ::"r"(d), "l"(m), "r"(co.c[0]), "r"(co.c[1]), "r"(co.c[2]), "r"(co.c[3]), "r"(b) : "memory");
        break;
      default:
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                     ::"r"(d), "l"(m), "r"(co.c[0]), "r"(co.c[1]), "r"(co.c[2]), "r"(co.c[3]), "r"(co.c[4]), "r"(b) : "memory");
    }
  }
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(&bar)) : "memory");
  if (threadIdx.x == 0) {
    uint32_t p1;
    asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 1; selp.u32 %0, 1, 0, p; }"
                 : "=r"(p1) : "r"(smem(&bar)) : "memory");
    *tx_phase = p1;  // 0: phase 0 done, the bytes matched expect_tx exactly
  }
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = buf[i];
}

// Fills a 1024-aligned buffer with `bytes` bytes from src (generic stores, then the proxy
// fence), and stores the box at `co` of a 2D map.
__global__ void k_store(const __grid_constant__ CUtensorMap map, Coords co, const uint8_t* src, uint32_t bytes) {
  __shared__ alignas(1024) uint8_t buf[kBufBytes];
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) buf[i] = src[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(reinterpret_cast<uint64_t>(&map)), "r"(co.c[0]), "r"(co.c[1]), "r"(smem(buf)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

PFN_cuTensorMapEncodeTiled_v12000 g_encode = nullptr;

CUresult encode(CUtensorMap* m, CUtensorMapDataType t, uint32_t rank, void* a, const uint64_t* dims,
                const uint64_t* strides, const uint32_t* box, const uint32_t* es,
                CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE,
                CUtensorMapFloatOOBfill oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
                CUtensorMapInterleave il = CU_TENSOR_MAP_INTERLEAVE_NONE) {
  return g_encode(m, t, rank, a, dims, strides, box, es, il, sw, CU_TENSOR_MAP_L2_PROMOTION_NONE, oob);
}

// The swizzled offset of byte offset o in a 1024-aligned buffer (the ISA's formula).
uint32_t swizzled(uint32_t o, int bits) { return bits ? o ^ (((o >> 7) & ((1u << bits) - 1)) << 4) : o; }

struct Case {
  const char* name;
  uint32_t rank;
  uint64_t dims[5];
  uint32_t box[5], es[5];
  int co[5];
  uint32_t pad;  // extra bytes of each row stride beyond the packed row (a multiple of 16)
  int swizzle_bits;
  bool nan_fill;
};

// Runs one load case on a tensor of u32 (f32 for the NaN fill) whose element at linear index i
// (in its own dims) is 0x10000 + i, and compares the shared bytes with the definition.
void run_case(const Case& c, uint8_t* d_out, uint32_t* d_phase) {
  // The tensor, with padded strides.
  uint64_t stride[5];
  stride[0] = 4;
  uint64_t row = c.dims[0] * 4;
  row = (row + 15) / 16 * 16 + c.pad;
  stride[1] = row;
  for (uint32_t i = 2; i < c.rank; ++i) stride[i] = stride[i - 1] * c.dims[i - 1];
  uint64_t total_bytes = c.rank == 1 ? c.dims[0] * 4 : stride[c.rank - 1] * c.dims[c.rank - 1];
  std::vector<uint32_t> host(total_bytes / 4, 0xDEADBEEF);
  uint64_t count = 1;
  for (uint32_t i = 0; i < c.rank; ++i) count *= c.dims[i];
  for (uint64_t lin = 0; lin < count; ++lin) {
    uint64_t rem = lin, off = 0;
    for (uint32_t i = 0; i < c.rank; ++i) {
      off += (rem % c.dims[i]) * stride[i];
      rem /= c.dims[i];
    }
    host[off / 4] = uint32_t(0x10000 + lin);
  }
  void* d_t;
  CUDA_CHECK(cudaMalloc(&d_t, total_bytes));
  CUDA_CHECK(cudaMemcpy(d_t, host.data(), total_bytes, cudaMemcpyHostToDevice));
  alignas(64) CUtensorMap map;
  const CUresult r = encode(&map, c.nan_fill ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_UINT32,
                            c.rank, d_t, c.dims, stride + 1, c.box, c.es,
                            CUtensorMapSwizzle(c.swizzle_bits), c.nan_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                                                            : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  conf_check("cuTensorMapEncodeTiled", c.name, int(r), int(CUDA_SUCCESS));
  // The expected shared bytes.
  uint32_t n[5] = {1, 1, 1, 1, 1};
  uint64_t elems = 1;
  for (uint32_t i = 0; i < c.rank; ++i) {
    n[i] = i == 0 ? c.box[0] : (c.box[i] + c.es[i] - 1) / c.es[i];
    elems *= n[i];
  }
  const uint32_t bytes = uint32_t(elems * 4);
  std::vector<uint32_t> want(bytes / 4);
  std::vector<bool> want_nan(bytes / 4, false);
  for (uint64_t k = 0; k < elems; ++k) {
    uint64_t rem = k, lin = 0, mul = 1;
    bool in = true;
    for (uint32_t i = 0; i < c.rank; ++i) {
      const int64_t g = c.co[i] + int64_t(rem % n[i]) * (i == 0 ? 1 : c.es[i]);
      rem /= n[i];
      if (g < 0 || uint64_t(g) >= c.dims[i]) in = false;
      else lin += uint64_t(g) * mul;
      mul *= c.dims[i];
    }
    const uint32_t at = swizzled(uint32_t(k * 4), c.swizzle_bits) / 4;
    want[at] = in ? uint32_t(0x10000 + lin) : 0;
    want_nan[at] = !in && c.nan_fill;
  }
  Coords co;
  for (int i = 0; i < 5; ++i) co.c[i] = c.co[i];
  CUDA_CHECK(cudaMemset(d_phase, 0xFF, 4));
  k_load<<<1, 128>>>(map, int(c.rank), co, bytes, d_out, d_phase);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> got(bytes / 4);
  uint32_t phase;
  CUDA_CHECK(cudaMemcpy(got.data(), d_out, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&phase, d_phase, 4, cudaMemcpyDeviceToHost));
  conf_check(c.name, "complete_tx of the box's bytes completes phase 0 (parity 1 then false)", phase, 0u);
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (want_nan[i]) {
      float f;
      std::memcpy(&f, &got[i], 4);
      ok = std::isnan(f);
    } else {
      ok = got[i] == want[i];
    }
    if (!ok && bad++ < 6) conf_check(c.name, conf_fmt("shared word %zu%s", i, want_nan[i] ? " (a NaN)" : ""), got[i], want[i]);
  }
  conf_check(c.name, conf_fmt("all %u shared words as defined", bytes / 4), bad, 0);
  CUDA_CHECK(cudaFree(d_t));
}

}  // namespace

int main() {
  conf_require_device();
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) {
    std::printf("SKIP: tensor maps need compute capability 9.0\n");
    return 77;
  }
  g_encode = conf_encode_tiled(ConfLookupCheck::always);
  if (!g_encode) return conf_finish("tensor_map");
  cudaDriverEntryPointQueryResult status;
  void* none = reinterpret_cast<void*>(1);
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &none, 11080, cudaEnableDefault, &status));
  conf_check("cudaGetDriverEntryPointByVersion", "cuTensorMapEncodeTiled, 11080: version not sufficient",
             int(status), int(cudaDriverEntryPointVersionNotSufficent));
  conf_check("cudaGetDriverEntryPointByVersion", "11080: no function", none == nullptr, true);

  // --- the documented rules, one broken at a time ----------------------------------------------
  void* d_buf;
  CUDA_CHECK(cudaMalloc(&d_buf, 1 << 20));
  char* base = static_cast<char*>(d_buf);
  alignas(64) CUtensorMap maps[2];
  const uint64_t dims[3] = {64, 32, 4}, strides[2] = {256, 256 * 32};
  const uint32_t box[3] = {16, 8, 2}, es[3] = {1, 1, 1};
  auto rule = [&](const char* what, CUresult r, CUresult want = CUDA_ERROR_INVALID_VALUE) {
    conf_check("cuTensorMapEncodeTiled", what, int(r), int(want));
  };
  const auto u32 = CU_TENSOR_MAP_DATA_TYPE_UINT32;
  rule("valid 3D map", encode(&maps[0], u32, 3, base, dims, strides, box, es), CUDA_SUCCESS);
  rule("tensorMap not 64-byte aligned",
       encode(reinterpret_cast<CUtensorMap*>(reinterpret_cast<char*>(&maps[0]) + 16), u32, 3, base, dims, strides, box, es));
  rule("tensorRank 0", encode(&maps[0], u32, 0, base, dims, strides, box, es));
  {
    const uint64_t d6[6] = {64, 32, 4, 1, 1, 1}, s6[5] = {256, 8192, 32768, 32768, 32768};
    const uint32_t b6[6] = {16, 8, 2, 1, 1, 1}, e6[6] = {1, 1, 1, 1, 1, 1};
    rule("tensorRank 6", encode(&maps[0], u32, 6, base, d6, s6, b6, e6));
  }
  rule("globalAddress not 16-byte aligned", encode(&maps[0], u32, 3, base + 8, dims, strides, box, es));
  {
    const uint64_t d0[3] = {64, 0, 4};
    rule("globalDim[1] = 0", encode(&maps[0], u32, 3, base, d0, strides, box, es));
    const uint64_t dbig[3] = {64, (1ull << 32) + 1, 1};
    rule("globalDim[1] = 2^32 + 1", encode(&maps[0], u32, 3, base, dbig, strides, box, es));
    const uint64_t s8[2] = {264, 264 * 32};
    rule("globalStrides[0] = 264, not a multiple of 16", encode(&maps[0], u32, 3, base, dims, s8, box, es));
    const uint64_t sbig[2] = {256, 1ull << 40};
    rule("globalStrides[1] = 2^40", encode(&maps[0], u32, 3, base, dims, sbig, box, es));
  }
  {
    const uint32_t b0[3] = {16, 0, 2}, b257[3] = {16, 257, 2}, b3[3] = {3, 8, 2};
    rule("boxDim[1] = 0", encode(&maps[0], u32, 3, base, dims, strides, b0, es));
    rule("boxDim[1] = 257", encode(&maps[0], u32, 3, base, dims, strides, b257, es));
    rule("boxDim[0] * 4 = 12 bytes, not a multiple of 16", encode(&maps[0], u32, 3, base, dims, strides, b3, es));
    const uint32_t e0[3] = {1, 0, 1}, e9[3] = {1, 9, 1};
    rule("elementStrides[1] = 0", encode(&maps[0], u32, 3, base, dims, strides, box, e0));
    rule("elementStrides[1] = 9", encode(&maps[0], u32, 3, base, dims, strides, box, e9));
    const uint32_t b64[3] = {64, 8, 2};  // 256 bytes
    rule("boxDim[0] * 4 = 256 bytes > the 128-byte swizzle",
         encode(&maps[0], u32, 3, base, dims, strides, b64, es, CU_TENSOR_MAP_SWIZZLE_128B));
    const uint32_t b16[3] = {16, 8, 2};  // 64 bytes
    rule("boxDim[0] * 4 = 64 bytes > the 32-byte swizzle",
         encode(&maps[0], u32, 3, base, dims, strides, b16, es, CU_TENSOR_MAP_SWIZZLE_32B));
    rule("boxDim[0] * 4 = 64 bytes = the 64-byte swizzle",
         encode(&maps[0], u32, 3, base, dims, strides, b16, es, CU_TENSOR_MAP_SWIZZLE_64B), CUDA_SUCCESS);
  }
  rule("NaN fill of an integer type",
       encode(&maps[0], u32, 3, base, dims, strides, box, es, CU_TENSOR_MAP_SWIZZLE_NONE,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA));
  rule("interleave 16B with tensorRank 2",
       encode(&maps[0], u32, 2, base, dims, strides, box, es, CU_TENSOR_MAP_SWIZZLE_NONE,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, CU_TENSOR_MAP_INTERLEAVE_16B));

  // libcuda.so.1 gives the same function (the driver itself on a GPU, the stand-in emulated).
  if (void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    auto direct = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(dlsym(lib, "cuTensorMapEncodeTiled"));
    conf_check("libcuda.so.1", "exports cuTensorMapEncodeTiled", direct != nullptr, true);
    if (direct) {
      std::memset(maps, 0, sizeof maps);
      rule("through libcuda.so.1: valid 3D map",
           direct(&maps[0], u32, 3, base, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                  CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
           CUDA_SUCCESS);
      encode(&maps[1], u32, 3, base, dims, strides, box, es);
      conf_check("libcuda.so.1", "the same 128 bytes as the runtime's entry point",
                 std::memcmp(&maps[0], &maps[1], sizeof(CUtensorMap)) == 0, true);
      const uint32_t bad_box[3] = {16, 0, 2};
      rule("through libcuda.so.1: boxDim[1] = 0",
           direct(&maps[0], u32, 3, base, dims, strides, bad_box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    }
  } else {
    conf_check("libcuda.so.1", "dlopen", false, true);
  }

  // --- loads: boxes partly outside the tensor in 1 to 5 dimensions, swizzles -------------------
  uint8_t* d_out;
  uint32_t* d_phase;
  CUDA_CHECK(cudaMalloc(&d_out, kBufBytes));
  CUDA_CHECK(cudaMalloc(&d_phase, 4));
  const Case cases[] = {
      {"1d box past the end", 1, {100}, {32}, {1}, {80}, 0, 0, false},
      {"1d box before the start", 1, {100}, {16}, {1}, {-8}, 0, 0, false},
      {"2d box across two edges", 2, {40, 20}, {16, 8}, {1, 1}, {28, -3}, 16, 0, false},
      {"3d box across dims 0 and 2", 3, {12, 5, 6}, {8, 4, 4}, {1, 1, 1}, {8, 3, -1}, 0, 0, false},
      {"3d element strides 2 and 3", 3, {12, 9, 7}, {8, 5, 6}, {1, 2, 3}, {4, 1, 2}, 0, 0, false},
      {"4d box", 4, {6, 3, 3, 3}, {4, 2, 2, 2}, {1, 1, 1, 1}, {4, -1, 2, 1}, 16, 0, false},
      {"5d box", 5, {7, 2, 3, 2, 3}, {4, 2, 2, 2, 2}, {1, 1, 1, 1, 1}, {4, 1, 2, 1, 2}, 0, 0, false},
      {"5d box wholly outside", 5, {8, 2, 3, 2, 3}, {4, 2, 2, 2, 2}, {1, 1, 1, 1, 1}, {0, 0, 3, 0, 0}, 0, 0, false},
      {"2d NaN fill", 2, {20, 10}, {8, 4}, {1, 1}, {16, 8}, 0, 0, true},
      {"2d 32-byte swizzle", 2, {40, 40}, {8, 32}, {1, 1}, {4, 2}, 0, 1, false},
      {"2d 64-byte swizzle", 2, {40, 40}, {16, 32}, {1, 1}, {8, 1}, 0, 2, false},
      {"2d 128-byte swizzle", 2, {40, 40}, {32, 32}, {1, 1}, {0, 0}, 0, 3, false},
      {"3d 128-byte swizzle, out of bounds", 3, {20, 10, 3}, {32, 8, 2}, {1, 1, 1}, {-4, 5, 2}, 0, 3, false},
  };
  for (const Case& c : cases) run_case(c, d_out, d_phase);

  // --- a store: a 16 x 8 box at (28, 15) of a 40 x 20 tensor writes only its 12 x 5 inside --------
  {
    const uint64_t sd[2] = {40, 20}, ss[1] = {160};
    const uint32_t sb[2] = {16, 8}, se[2] = {1, 1};
    std::vector<uint32_t> tensor(40 * 20, 0x5EEDu), src(16 * 8);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint32_t(0xA000 + i);
    void *d_t, *d_src;
    CUDA_CHECK(cudaMalloc(&d_t, tensor.size() * 4));
    CUDA_CHECK(cudaMalloc(&d_src, src.size() * 4));
    CUDA_CHECK(cudaMemcpy(d_t, tensor.data(), tensor.size() * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_src, src.data(), src.size() * 4, cudaMemcpyHostToDevice));
    alignas(64) CUtensorMap map;
    rule("2d store map", encode(&map, u32, 2, d_t, sd, ss, sb, se), CUDA_SUCCESS);
    Coords co{{28, 15, 0, 0, 0}};
    k_store<<<1, 128>>>(map, co, static_cast<const uint8_t*>(d_src), uint32_t(src.size() * 4));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(tensor.size());
    CUDA_CHECK(cudaMemcpy(got.data(), d_t, got.size() * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < 20; ++y)
      for (int x = 0; x < 40; ++x) {
        const int bx = x - 28, by = y - 15;
        const uint32_t want = (bx >= 0 && bx < 16 && by >= 0 && by < 8) ? src[by * 16 + bx] : 0x5EEDu;
        if (got[y * 40 + x] != want && bad++ < 6) conf_check("tensor store", conf_fmt("element (%d, %d)", x, y), got[y * 40 + x], want);
      }
    conf_check("tensor store", "only the box's elements inside the tensor written", bad, 0);
    CUDA_CHECK(cudaFree(d_t));
    CUDA_CHECK(cudaFree(d_src));
  }
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_phase));
  CUDA_CHECK(cudaFree(d_buf));
  return conf_finish("tensor_map");
}
