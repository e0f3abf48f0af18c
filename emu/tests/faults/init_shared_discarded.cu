// Planted bug: a bounds test off by one lets a value read past a shared tile reach the output.
// Each block of 128 threads stages its inputs in shared memory and computes forward differences
// within its tile. Like CUB's merge of sorted runs, every thread loads the next word before it
// tests whether that word is inside the tile (a read the hardware allows: the tile has one spare
// word, never written), and a selp keeps or discards it. The test here counts the spare word
// as inside, so the last thread of each block stores a difference with a word nothing wrote.
// Expected: the checks report thread 127's read of the word at 0x200, naming the store that uses
// it, and the launch fails (cudaErrorLaunchFailure). --fixed: the test excludes the spare word;
// the same read happens, its value is discarded, and nothing is reported.
#include "fault_common.h"

constexpr int kThreads = 128, kN = 1024;

__global__ void k_diff_in_tile(const float* in, float* out, int tile_end, int fixed) {
  __shared__ float s[kThreads + 1];
  const int t = threadIdx.x, i = blockIdx.x * kThreads + t;
  s[t] = in[i];
  __syncthreads();
  const unsigned next_addr = unsigned(__cvta_generic_to_shared(&s[t + 1]));
  float next;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(next) : "r"(next_addr) : "memory");  // PLANTED
  const bool inside = t + 1 < (fixed ? kThreads : tile_end);
  // The next word inside the tile, else the thread's own (a difference of zero), chosen by selp
  // as CUB's merge compiles: the value read is an operand of the selection either way.
  float chosen;
  asm("{\n\t.reg .pred inside;\n\tsetp.ne.s32 inside, %3, 0;\n\tselp.f32 %0, %1, %2, inside;\n\t}"
      : "=f"(chosen) : "f"(next), "f"(s[t]), "r"(int(inside)));
  out[i] = chosen - s[t];  // PARTNER: the use that reports it
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  static float h[kN];
  for (int i = 0; i < kN; ++i) h[i] = float((i * i) % 89);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_diff_in_tile<<<kN / kThreads, kThreads>>>(in, out, kThreads + 1, fixed);
  if (!fixed) return verdict("init_shared_discarded", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  static float got[kN];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) {
    const float want = (i + 1) % kThreads != 0 ? h[i + 1] - h[i] : 0.f;
    if (got[i] != want)
      return fixed_wrong("init_shared_discarded", "out[%d] = %g, expected %g", i, got[i], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("init_shared_discarded");
}
