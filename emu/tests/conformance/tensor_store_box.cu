// A tile-mode bulk tensor store (cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group,
// sm_90) whose box is wider than the tensor, as a padded shared-memory tile is: the PTX ISA writes
// only the box's elements inside the tensor to global memory, so the padding columns of the tile
// are never stored, and a kernel need not write them. The tensor is 64 x 12 u16 elements in a
// row pitch of 80 elements (the 16 elements after each row, and the rows after the tensor, are a
// guard that must keep its sentinel); the box is {72, 8}, stored at rows 0 and 8 (the second box
// reaches past the last row). Each element's expected value is computed from its coordinates.
// Under the emulator with every check on, the padding the kernel leaves unwritten must not be
// reported as read. --plant changes every expected value.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "conf_common.h"
#include "conf_tensor_map.h"

namespace {

bool g_plant = false;

constexpr int kW = 64, kH = 12, kPitch = 80, kRows = 16;  // allocation: kRows x kPitch
constexpr int kBoxW = 72, kBoxH = 8;
constexpr uint16_t kSentinel = 0xBEEF;

__device__ __host__ uint16_t value(int x, int y) { return uint16_t(1 + x + 100 * y); }

__global__ void k_store(const __grid_constant__ CUtensorMap map) {
  __shared__ alignas(128) uint16_t tile[2][kBoxH * kBoxW];
  // Only the columns inside the tensor are written; columns 64-71 (padding) are left as they are.
  for (int b = 0; b < 2; ++b)
    for (int i = threadIdx.x; i < kBoxH * kW; i += blockDim.x) {
      const int x = i % kW, y = i / kW;
      tile[b][y * kBoxW + x] = value(x, 8 * b + y);
    }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int b = 0; b < 2; ++b)
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                       reinterpret_cast<uint64_t>(&map)),
                   "r"(0), "r"(8 * b), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(tile[b])))
                   : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
  __syncthreads();
}

}  // namespace

int main(int argc, char** argv) {
  g_plant = argc > 1 && std::strcmp(argv[1], "--plant") == 0;
  conf_require_device();
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) {
    std::printf("SKIP: bulk tensor copies need compute capability 9.0\n");
    return 77;
  }
  const auto encode = conf_encode_tiled(ConfLookupCheck::if_missing);
  if (!encode) return conf_finish("tensor_store_box");
  std::vector<uint16_t> host(kRows * kPitch, kSentinel);
  uint16_t* d;
  CUDA_CHECK(cudaMalloc(&d, host.size() * 2));
  CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  alignas(64) CUtensorMap map;
  const uint64_t dims[2] = {kW, kH}, strides[1] = {kPitch * 2};
  const uint32_t box[2] = {kBoxW, kBoxH}, es[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  conf_check("cuTensorMapEncodeTiled", "u16 {64, 12}, pitch 160 bytes, box {72, 8}", int(r), int(CUDA_SUCCESS) + int(g_plant));
  if (r != CUDA_SUCCESS) return conf_finish("tensor_store_box");
  k_store<<<1, 128>>>(map);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(host.data(), d, host.size() * 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d));
  int bad_in = 0, bad_guard = 0;
  for (int y = 0; y < kRows; ++y)
    for (int x = 0; x < kPitch; ++x) {
      const bool in = x < kW && y < kH;
      const uint16_t want = uint16_t((in ? value(x, y) : kSentinel) ^ uint16_t(g_plant));
      if (host[y * kPitch + x] != want) ++(in ? bad_in : bad_guard);
    }
  conf_check("tensor store of a box wider than the tensor", "elements inside the tensor not as stored", bad_in, 0);
  conf_check("tensor store of a box wider than the tensor", "guard elements (outside the tensor) changed", bad_guard, 0);
  if (g_plant) {
    const int failed = conf_failures(), total = conf_checks();
    std::printf("tensor_store_box --plant: %d of %d checks failed\n", failed, total);
    return failed == total && total > 0 ? 0 : 1;
  }
  return conf_finish("tensor_store_box");
}
