// elect.sync, setmaxnreg and griddepcontrol, the warpgroup kernels' control instructions (PTX ISA):
//   - elect.sync d|p, membermask elects one thread of membermask: p is true on that thread only,
//     d is the leader's lane on every thread of the mask (the ISA does not say which thread; the
//     checks ask for exactly one leader, in the mask, named the same by all);
//   - setmaxnreg.dec / .inc with counts in 24..256 that are multiples of 8, executed by every warp
//     of a warpgroup (a producer warpgroup giving registers up, a consumer taking them), change no
//     value: the kernel computes the same results after them;
//   - griddepcontrol.launch_dependents and griddepcontrol.wait without a programmatic dependent
//     launch have nothing to wait for: the kernel runs through.
// --plant changes every expected value: every check must then fail.
#include <cstdint>
#include <cstring>
#include <vector>

#include "conf_common.h"

__global__ void __launch_bounds__(256, 1) k_control(uint32_t* elect_full, uint32_t* elect_part, uint32_t* out) {
  const int t = threadIdx.x, lane = t % 32;
  uint32_t d, p;
  asm volatile("{\n.reg .pred q;\nelect.sync %0|q, 0xffffffff;\nselp.u32 %1, 1, 0, q;\n}" : "=r"(d), "=r"(p));
  elect_full[t] = d | (p << 8);
  if (lane % 8 >= 4) {  // members 0xF0F0F0F0
    asm volatile("{\n.reg .pred q;\nelect.sync %0|q, 0xf0f0f0f0;\nselp.u32 %1, 1, 0, q;\n}" : "=r"(d), "=r"(p));
    elect_part[t] = d | (p << 8);
  } else {
    elect_part[t] = 0xFFFF;
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (t < 128) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
  else asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  out[t] = uint32_t(t) * 3u + 1u;
  asm volatile("griddepcontrol.launch_dependents;");
}

int main(int argc, char** argv) {
  conf_require_device();
  const bool plant = argc > 1 && !std::strcmp(argv[1], "--plant");
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  if (major != 9 || minor != 0) {
    std::printf("SKIP: setmaxnreg needs sm_90a (this device is sm_%d%d)\n", major, minor);
    return 77;
  }
  uint32_t *d_full, *d_part, *d_out;
  CUDA_CHECK(cudaMalloc(&d_full, 256 * 4));
  CUDA_CHECK(cudaMalloc(&d_part, 256 * 4));
  CUDA_CHECK(cudaMalloc(&d_out, 256 * 4));
  k_control<<<1, 256>>>(d_full, d_part, d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> full(256), part(256), out(256);
  CUDA_CHECK(cudaMemcpy(full.data(), d_full, 256 * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(part.data(), d_part, 256 * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, 256 * 4, cudaMemcpyDeviceToHost));
  const int bump = plant ? 1 : 0;
  for (int w = 0; w < 8; ++w) {
    for (int which = 0; which < 2; ++which) {
      const uint32_t mask = which ? 0xF0F0F0F0u : 0xFFFFFFFFu;
      const std::vector<uint32_t>& v = which ? part : full;
      int leaders = 0;
      uint32_t named = v[w * 32 + __builtin_ctz(mask)] & 0xFF;
      bool agree = true;
      for (int l = 0; l < 32; ++l) {
        if (!((mask >> l) & 1)) continue;
        const uint32_t x = v[w * 32 + l];
        leaders += (x >> 8) & 1;
        if ((x >> 8) & 1 && (x & 0xFF) != uint32_t(l)) agree = false;
        if ((x & 0xFF) != named) agree = false;
      }
      const bool in_mask = named < 32 && ((mask >> named) & 1);
      conf_check("elect.sync leaders", conf_fmt("warp %d, mask 0x%08x", w, mask), leaders, 1 + bump);
      conf_check("elect.sync d names the leader, in the mask", conf_fmt("warp %d, mask 0x%08x", w, mask),
                 int(agree && in_mask), 1 + bump);
    }
  }
  for (int t = 0; t < 256; ++t)
    conf_check("after setmaxnreg and griddepcontrol", conf_fmt("thread %d", t), out[t], uint32_t(t) * 3u + 1u + bump);
  if (plant) {
    std::printf("warpgroup_control --plant: %d of %d checks failed%s\n", conf_failures(), conf_checks(),
                conf_failures() == conf_checks() ? " (all: good)" : "");
    return conf_failures() == conf_checks() ? 0 : 1;
  }
  return conf_finish("warpgroup_control");
}
