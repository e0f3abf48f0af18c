// The flow of the classic texture sample programs: an image in a CUDA array, a texture object
// with normalized coordinates, wrap addressing and linear filtering, and a kernel that writes the
// image rotated about its centre to global memory, compared with the host.
//
// The expected value of each pixel follows the Programming Guide's bilinear rule (weights in
// 9-bit fixed point). The rotated coordinates are arbitrary floats, which the hardware may hold
// with less precision than the host (and a GPU may fuse the multiply-adds that compute them), so
// each pixel is allowed the change of the image over two 256ths of a texel around its sample:
// filtering is continuous, so a slightly different coordinate or weight moves the result by no
// more than that.
#include <cmath>
#include <vector>

#include "conf_common.h"

namespace {

constexpr int kW = 64, kH = 48;
constexpr float kAngle = 0.5f;  // radians

__global__ void k_rotate(cudaTextureObject_t image, float* out, int w, int h, float angle) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const float u = float(x) / float(w) - 0.5f, v = float(y) / float(h) - 0.5f;
  const float c = cosf(angle), s = sinf(angle);
  const float tu = u * c - v * s + 0.5f, tv = v * c + u * s + 0.5f;
  out[y * w + x] = tex2D<float>(image, tu, tv);
}

float pixel(int x, int y) {
  return 0.5f + 0.4f * std::sin(x * 0.37f) * std::cos(y * 0.23f) + ((x / 8 + y / 8) % 2 ? 0.1f : -0.1f);
}

int wrap(int i, int n) { return ((i % n) + n) % n; }

}  // namespace

int main() {
  conf_require_device();
  std::vector<float> img(kW * kH);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) img[y * kW + x] = pixel(x, y);

  cudaArray_t arr;
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  CUDA_CHECK(cudaMallocArray(&arr, &desc, kW, kH));
  CUDA_CHECK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), kW * sizeof(float), kW * sizeof(float), kH,
                                 cudaMemcpyHostToDevice));
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td{};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeWrap;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  cudaTextureObject_t tex;
  CUDA_CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

  float* out;
  CUDA_CHECK(cudaMalloc(&out, kW * kH * sizeof(float)));
  const dim3 block(16, 8), grid((kW + 15) / 16, (kH + 7) / 8);
  k_rotate<<<grid, block>>>(tex, out, kW, kH, kAngle);
  CUDA_CHECK(cudaGetLastError());
  std::vector<float> got(kW * kH);
  CUDA_CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));

  const double c = std::cos(double(kAngle)), s = std::sin(double(kAngle));
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const double u = double(x) / kW - 0.5, v = double(y) / kH - 0.5;
      const double tu = u * c - v * s + 0.5, tv = v * c + u * s + 0.5;
      // Texel space, less the texel-centre offset; the weights in 9-bit fixed point.
      const double xb = tu * kW - 0.5, yb = tv * kH - 0.5;
      const double fx = std::floor(xb), fy = std::floor(yb);
      const double a = std::round((xb - fx) * 256) / 256, b = std::round((yb - fy) * 256) / 256;
      const int i = int(fx), j = int(fy);
      auto t = [&](int xi, int yj) { return double(img[wrap(yj, kH) * kW + wrap(xi, kW)]); };
      const double expect = (1 - a) * (1 - b) * t(i, j) + a * (1 - b) * t(i + 1, j) + (1 - a) * b * t(i, j + 1) +
                            a * b * t(i + 1, j + 1);
      double lo = 1e9, hi = -1e9;
      for (int dy = -1; dy <= 2; ++dy)
        for (int dx = -1; dx <= 2; ++dx) {
          lo = std::min(lo, t(i + dx, j + dy));
          hi = std::max(hi, t(i + dx, j + dy));
        }
      const double tol = (hi - lo) * 2.0 / 256 + 1e-5;
      const double g = got[y * kW + x];
      conf_check_text("rotated image (tex2D linear, wrap, normalized)", conf_fmt("pixel (%d, %d)", x, y).s,
                      std::fabs(g - expect) <= tol, conf_fmt("%.7f", g).s, conf_fmt("%.7f within %.2g", expect, tol).s);
    }
  CUDA_CHECK(cudaDestroyTextureObject(tex));
  CUDA_CHECK(cudaFreeArray(arr));
  CUDA_CHECK(cudaFree(out));
  return conf_finish("texture_rotation");
}
