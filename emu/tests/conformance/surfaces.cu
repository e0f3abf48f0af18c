// Surface objects: surf2Dwrite / surf2Dread round trips on float and uchar4 arrays (the x
// coordinate counts bytes), a surface-written array read back through a texture and by
// cudaMemcpy2DFromArray, surf1Dwrite / surf1Dread on a 1D array, and the out-of-range modes of
// the PTX ISA's suld.b / sust.b: .zero reads zero and drops the store, .clamp reads and writes
// the nearest element.
#include <vector>

#include "conf_common.h"

namespace {

constexpr int kW = 37, kH = 11;  // not multiples of a block: the edge blocks are partial

__global__ void k_write(cudaSurfaceObject_t s, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) surf2Dwrite(float(y * 1000 + x) + 0.5f, s, x * int(sizeof(float)), y);
}

// Reads each element and writes it back doubled, through the same surface.
__global__ void k_double(cudaSurfaceObject_t s, int w, int h, float* copy) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    const float v = surf2Dread<float>(s, x * int(sizeof(float)), y);
    copy[y * w + x] = v;
    surf2Dwrite(2 * v, s, x * int(sizeof(float)), y);
  }
}

__global__ void k_write_uchar4(cudaSurfaceObject_t s, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) surf2Dwrite(make_uchar4(x, y, x ^ y, 255 - x), s, x * 4, y);
}

__global__ void k_read_uchar4(cudaSurfaceObject_t s, int w, int h, uchar4* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = surf2Dread<uchar4>(s, x * 4, y);
}

__global__ void k_texture_read(cudaTextureObject_t t, int w, int h, float* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

// Out-of-range accesses: element coordinates (in elements; the kernel turns x into bytes).
__global__ void k_out_of_range(cudaSurfaceObject_t s, const int2* at, int n, float* zero, float* clamp) {
  const int i = threadIdx.x;
  if (i < n) {
    zero[i] = surf2Dread<float>(s, at[i].x * 4, at[i].y, cudaBoundaryModeZero);
    clamp[i] = surf2Dread<float>(s, at[i].x * 4, at[i].y, cudaBoundaryModeClamp);
  }
}

__global__ void k_1d(cudaSurfaceObject_t s, int n) {
  const int i = threadIdx.x;
  if (i < n) surf1Dwrite(i * 3, s, i * 4);
  // Beyond the end: dropped under .zero.
  if (i == 0) surf1Dwrite(-1, s, n * 4, cudaBoundaryModeZero);
}

__global__ void k_1d_read(cudaSurfaceObject_t s, int n, int* out) {
  const int i = threadIdx.x;
  if (i < n) out[i] = surf1Dread<int>(s, i * 4);
}

cudaSurfaceObject_t surface_of(cudaArray_t a) {
  cudaResourceDesc r{};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = a;
  cudaSurfaceObject_t s = 0;
  CUDA_CHECK(cudaCreateSurfaceObject(&s, &r));
  return s;
}

float element(int x, int y) { return float(y * 1000 + x) + 0.5f; }

bool same_float(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

void float_round_trip() {
  cudaArray_t arr;
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  CUDA_CHECK(cudaMallocArray(&arr, &desc, kW, kH, cudaArraySurfaceLoadStore));
  const cudaSurfaceObject_t s = surface_of(arr);
  const dim3 block(16, 4), grid((kW + 15) / 16, (kH + 3) / 4);
  k_write<<<grid, block>>>(s, kW, kH);
  CUDA_CHECK(cudaGetLastError());
  float* copy;
  CUDA_CHECK(cudaMalloc(&copy, kW * kH * sizeof(float)));
  k_double<<<grid, block>>>(s, kW, kH, copy);
  CUDA_CHECK(cudaGetLastError());
  std::vector<float> read(kW * kH), doubled(kW * kH);
  CUDA_CHECK(cudaMemcpy(read.data(), copy, read.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy2DFromArray(doubled.data(), kW * 4, arr, 0, 0, kW * 4, kH, cudaMemcpyDeviceToHost));
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      conf_check("surf2Dread<float>", conf_fmt("(%d, %d)", x, y), same_float(read[y * kW + x], element(x, y)), true);
      conf_check("surf2Dwrite<float>", conf_fmt("(%d, %d) doubled", x, y),
                 same_float(doubled[y * kW + x], 2 * element(x, y)), true);
    }

  // The same array through a texture (point sampling at texel centres).
  cudaResourceDesc r{};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = arr;
  cudaTextureDesc td{};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t;
  CUDA_CHECK(cudaCreateTextureObject(&t, &r, &td, nullptr));
  k_texture_read<<<grid, block>>>(t, kW, kH, copy);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(read.data(), copy, read.size() * 4, cudaMemcpyDeviceToHost));
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      conf_check("tex2D of a surface-written array", conf_fmt("(%d, %d)", x, y),
                 same_float(read[y * kW + x], 2 * element(x, y)), true);

  // Out of range: .zero reads 0, .clamp the nearest element.
  const std::vector<int2> at = {{-1, 0}, {kW, 3}, {5, -2}, {7, kH}, {kW + 9, kH + 9}, {-100, -100}, {4, 4}};
  int2* dat;
  CUDA_CHECK(cudaMalloc(&dat, at.size() * sizeof(int2)));
  CUDA_CHECK(cudaMemcpy(dat, at.data(), at.size() * sizeof(int2), cudaMemcpyHostToDevice));
  float *zero, *clamp;
  CUDA_CHECK(cudaMalloc(&zero, at.size() * 4));
  CUDA_CHECK(cudaMalloc(&clamp, at.size() * 4));
  k_out_of_range<<<1, 32>>>(s, dat, int(at.size()), zero, clamp);
  CUDA_CHECK(cudaGetLastError());
  std::vector<float> gz(at.size()), gc(at.size());
  CUDA_CHECK(cudaMemcpy(gz.data(), zero, gz.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gc.data(), clamp, gc.size() * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < at.size(); ++i) {
    const bool inside = at[i].x >= 0 && at[i].x < kW && at[i].y >= 0 && at[i].y < kH;
    const int cx = std::min(std::max(at[i].x, 0), kW - 1), cy = std::min(std::max(at[i].y, 0), kH - 1);
    conf_check("surf2Dread cudaBoundaryModeZero", conf_fmt("(%d, %d)", at[i].x, at[i].y),
               same_float(gz[i], inside ? 2 * element(at[i].x, at[i].y) : 0.0f), true);
    conf_check("surf2Dread cudaBoundaryModeClamp", conf_fmt("(%d, %d)", at[i].x, at[i].y),
               same_float(gc[i], 2 * element(cx, cy)), true);
  }
  CUDA_CHECK(cudaDestroyTextureObject(t));
  CUDA_CHECK(cudaDestroySurfaceObject(s));
  CUDA_CHECK(cudaFreeArray(arr));
  CUDA_CHECK(cudaFree(copy));
  CUDA_CHECK(cudaFree(dat));
  CUDA_CHECK(cudaFree(zero));
  CUDA_CHECK(cudaFree(clamp));
}

void uchar4_round_trip() {
  cudaArray_t arr;
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<uchar4>();
  CUDA_CHECK(cudaMallocArray(&arr, &desc, kW, kH, cudaArraySurfaceLoadStore));
  const cudaSurfaceObject_t s = surface_of(arr);
  const dim3 block(16, 4), grid((kW + 15) / 16, (kH + 3) / 4);
  k_write_uchar4<<<grid, block>>>(s, kW, kH);
  CUDA_CHECK(cudaGetLastError());
  uchar4* out;
  CUDA_CHECK(cudaMalloc(&out, kW * kH * sizeof(uchar4)));
  k_read_uchar4<<<grid, block>>>(s, kW, kH, out);
  CUDA_CHECK(cudaGetLastError());
  std::vector<uchar4> got(kW * kH);
  CUDA_CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(uchar4), cudaMemcpyDeviceToHost));
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const uchar4 g = got[y * kW + x];
      const bool ok = g.x == x && g.y == y && g.z == (x ^ y) && g.w == 255 - x;
      conf_check("surf2Dwrite / surf2Dread<uchar4>", conf_fmt("(%d, %d)", x, y), ok, true);
    }
  CUDA_CHECK(cudaDestroySurfaceObject(s));
  CUDA_CHECK(cudaFreeArray(arr));
  CUDA_CHECK(cudaFree(out));
}

void one_dimensional() {
  constexpr int n = 20;
  cudaArray_t arr;
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
  CUDA_CHECK(cudaMallocArray(&arr, &desc, n, 0, cudaArraySurfaceLoadStore));
  const cudaSurfaceObject_t s = surface_of(arr);
  k_1d<<<1, 32>>>(s, n);
  CUDA_CHECK(cudaGetLastError());
  int* out;
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(int)));
  k_1d_read<<<1, 32>>>(s, n, out);
  CUDA_CHECK(cudaGetLastError());
  std::vector<int> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) conf_check("surf1Dwrite / surf1Dread<int>", conf_fmt("%d", i), got[i], i * 3);
  CUDA_CHECK(cudaDestroySurfaceObject(s));
  CUDA_CHECK(cudaFreeArray(arr));
  CUDA_CHECK(cudaFree(out));
}

}  // namespace

int main() {
  conf_require_device();
  float_round_trip();
  uchar4_round_trip();
  one_dimensional();
  return conf_finish("surfaces");
}
