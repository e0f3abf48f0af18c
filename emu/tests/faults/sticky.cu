// Planted bug: carrying on after a kernel fault. An off-by-one kernel reads past its buffer
// (block 0, thread 64 of a 64-element buffer) and the program goes on as if nothing happened.
// A fault inside a kernel is sticky: every later runtime call returns it. Expected: the launch
// reports cudaErrorIllegalAddress, then cudaMemcpy, cudaMalloc, a correct launch and
// cudaGetLastError (twice: it does not clear a sticky error) return the same error. --fixed: the
// kernel stays inside the buffer and all of those calls succeed.
#include "fault_common.h"

constexpr int kN = 64;

__global__ void k_negate(const int* in, int* out, int count) {
  const int i = threadIdx.x;
  // The planted bug: count = n + 1 reads in[n].
  if (i < count) out[i] = -in[i];  // PLANTED
}

// Where the per-call lines go: stderr for the planted run (the test reads them there), stdout
// for --fixed (whose stderr must hold only its "ok").
static FILE* g_log = stderr;

// One runtime call after the faulting launch: prints what it returned; true when that is `want`.
static bool same(const char* call, cudaError_t got, cudaError_t want) {
  std::fprintf(g_log, "sticky: %s returned %s\n", call, cudaGetErrorName(got));
  return got == want;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  if (fixed) g_log = stdout;
  int h[kN];
  for (int i = 0; i < kN; ++i) h[i] = i + 10;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, (kN + 1) * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_negate<<<1, kN + 1>>>(in, out, fixed ? kN : kN + 1);
  const cudaError_t want = fixed ? cudaSuccess : cudaErrorIllegalAddress;
  bool ok = same("the launch", launch_result(), want);
  int got[kN] = {};
  ok &= same("cudaMemcpy", cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost), want);
  int* more = nullptr;
  ok &= same("cudaMalloc", cudaMalloc(&more, 16), want);
  k_negate<<<1, kN>>>(in, out, kN);  // a correct launch cannot clear it either
  ok &= same("a correct launch", cudaGetLastError(), want);
  ok &= same("cudaGetLastError", cudaGetLastError(), want);
  ok &= same("cudaDeviceSynchronize", cudaDeviceSynchronize(), want);
  if (!fixed) {
    if (!ok) return 2;
    std::fprintf(stderr, "sticky: %s from every call\n", cudaGetErrorName(want));
    return 1;
  }
  if (!ok) return 2;
  for (int i = 0; i < kN; ++i)
    if (got[i] != -h[i])
      return fixed_wrong("sticky", "out[%d] = %d, expected %d", i, got[i], -h[i]);
  return fixed_ok("sticky");
}
