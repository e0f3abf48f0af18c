// A gpu100 program whose check fails: out[i] = in[i] + 1, except for the planted bug, thread 17
// of block 1 adds 2. Under the emulator the report names the device address of the first wrong
// element (out[145]) and the command that re-runs the program with a watch on it; the watch then
// names the store of thread 17 of block 1 (emu/tests/debug/debug_test.py, case hint).
#include <cuda_runtime.h>

#include <vector>

#include "gpu100/gpu100.h"

__global__ void k_offset(const float* in, float* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float step = (blockIdx.x == 1 && threadIdx.x == 17) ? 2.0f : 1.0f;
  out[i] = in[i] + step;  // PLANTED
}

int main(int argc, char** argv) {
  gpu100::Cli cli("out = in + 1, with a planted wrong element (the failed-check hint's test)");
  int64_t n = 1000;
  cli.size("n", n, 1000, "number of elements");
  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    std::vector<float> in(static_cast<size_t>(n)), ref(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      in[size_t(i)] = float(i);
      ref[size_t(i)] = float(i) + 1.0f;
    }
    gpu100::DeviceBuffer<float> d_in(in), d_out{size_t(n)};
    ctx.measure({.name = "offset",
                 .launch = [&](cudaStream_t s) {
                   k_offset<<<unsigned((n + 127) / 128), 128, 0, s>>>(d_in.data(), d_out.data(), n);
                 },
                 .reset = [&] { d_out.poison(); },
                 .check = [&] { return gpu100::compare_exact(d_out.download(), ref); },
                 .work = 8.0 * double(n)});
  });
}
