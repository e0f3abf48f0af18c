// Planted bug: a texture object used after cudaDestroyTextureObject. The handle still sits in
// the kernel's argument, but it names nothing any more. Expected: the launch fails
// (cudaErrorIllegalAddress) and the emulator names the fetch and says the object was destroyed.
// --fixed: the object is destroyed after the kernel, which then copies the data.
#include <vector>

#include "fault_common.h"

constexpr int kN = 64;

// The fetch tex1Dfetch<float> compiles to, written out so that the emulator's message names this
// line rather than the texture header's.
__global__ void k_copy(cudaTextureObject_t t, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x, y, z, w;
  asm volatile("tex.1d.v4.f32.s32 {%0, %1, %2, %3}, [%4, {%5}];" : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "l"(t), "r"(i));  // PLANTED
  out[i] = x + 0.0f * (y + z + w);  // the other channels are unused; this keeps them named
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<float> h(kN);
  for (int i = 0; i < kN; ++i) h[i] = 0.5f * i;
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kN * sizeof(float)));
  CHECK(cudaMalloc(&out, kN * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = in;
  res.res.linear.desc = cudaCreateChannelDesc<float>();
  res.res.linear.sizeInBytes = kN * sizeof(float);
  cudaTextureDesc td{};
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t = 0;
  CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
  if (!fixed) CHECK(cudaDestroyTextureObject(t));  // too early: the kernel below fetches through it
  k_copy<<<1, kN>>>(t, out, kN);
  if (!fixed) return verdict("texture_destroyed", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  CHECK(cudaDestroyTextureObject(t));
  std::vector<float> got(kN);
  CHECK(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  for (int i = 0; i < kN; ++i)
    if (got[i] != h[i]) return fixed_wrong("texture_destroyed", "out[%d] = %g, expected %g", i, got[i], h[i]);
  return fixed_ok("texture_destroyed");
}
