// Planted bug: a bulk tensor copy whose box starts 8 bytes into a row. The 8 x 8 tile of floats
// at column 10 of a 32 x 32 tensor is loaded with coordinates (10, 8): 40 bytes into the row,
// not a multiple of 16, which the tensor memory accelerator refuses (NVIDIA's TMA sample calls
// it a non-recoverable error). Expected: cudaErrorMisalignedAddress and the emulator naming the
// coordinate at the copy. --fixed: the tile at column 8 (32 bytes).
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>

#include "fault_common.h"

__device__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__global__ void k_tile(const __grid_constant__ CUtensorMap map, float* out, int fixed) {
  __shared__ alignas(128) float area[32 + 8 * 8];  // a header, then an 8 x 8 tile
  __shared__ uint64_t bar;
  float* tile = area + 32;
  const int column = fixed ? 8 : 10;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;" ::"r"(smem(&bar)) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(smem(tile)), "l"(reinterpret_cast<uint64_t>(&map)), "r"(column), "r"(8), "r"(smem(&bar)) : "memory");  // PLANTED
  }
  __syncthreads();
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem(&bar)) : "memory");
  out[threadIdx.x] = tile[threadIdx.x];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  float h[32 * 32];
  for (int i = 0; i < 32 * 32; ++i) h[i] = float(i);
  float *in, *out;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, 64 * sizeof(float)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &status));
  if (!fn) return 2;
  alignas(64) CUtensorMap map;
  const cuuint64_t dims[2] = {32, 32}, strides[1] = {32 * sizeof(float)};
  const cuuint32_t box[2] = {8, 8}, es[2] = {1, 1};
  if (reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn)(
          &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, in, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
    return 2;
  k_tile<<<1, 64>>>(map, out, fixed);
  if (!fixed) return verdict("tma_coord_misaligned", launch_result(), cudaErrorMisalignedAddress);
  CHECK(launch_result());
  float got[64];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 64; ++i) {
    const float want = h[(8 + i / 8) * 32 + 8 + i % 8];  // column 8, row 8
    if (got[i] != want) return fixed_wrong("tma_coord_misaligned", "out[%d] = %g, expected %g", i, got[i], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("tma_coord_misaligned");
}
