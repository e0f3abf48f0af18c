// Small helpers usable from host and device code.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define GPU100_HD __host__ __device__
#else
#define GPU100_HD
#endif

namespace gpu100 {

// gridDim.y and gridDim.z are at most 65535 on every CUDA GPU (gridDim.x: 2^31 - 1). Kernels whose
// y extent can exceed it cap the grid and loop.
constexpr unsigned kMaxGridDimY = 65535;

template <class T>
GPU100_HD constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

// Blocks needed to cover n items with `block` threads each (what a grid-size computation is).
GPU100_HD constexpr unsigned grid_for(int64_t n, int block) {
  return static_cast<unsigned>(ceil_div<int64_t>(n, block));
}

GPU100_HD constexpr bool is_aligned(const void* p, unsigned bytes) {
  return (reinterpret_cast<uintptr_t>(p) % bytes) == 0;
}

}  // namespace gpu100
