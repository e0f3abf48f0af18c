// A kernel the emulator cannot run: it holds an instruction the emulator does not decode
// (multimem.red, a reduction through an NVLink multicast object, which it does not emulate; a
// GPU decodes it). The launch fails before any thread
// runs, so nothing the kernel should write is written. A program that checks only
// cudaDeviceSynchronize, or reads its results without checking at all, must still learn of it:
// the failure is sticky, as a fault is. Expected: the emulator names the instruction, and
// cudaDeviceSynchronize, cudaGetLastError (twice: it does not clear it) and cudaMemcpy all
// return cudaErrorInvalidPtx. --fixed: the same kernel without the instruction; every call
// succeeds and the values are there.
#include <cstdint>

#include "fault_common.h"

constexpr int kN = 64;

__global__ void k_fill_with_multimem(int* out, int use_multimem) {
  const int t = threadIdx.x;
  // Never executed (use_multimem is 0), but the emulator decodes a kernel before it runs it.
  if (use_multimem && t == 0)
    asm volatile("multimem.red.relaxed.sys.global.add.u32 [%0], %1;" ::"l"(out), "r"(kN)
                 : "memory");  // PLANTED
  out[t] = 3 * t + 1;
}

__global__ void k_fill(int* out) {
  const int t = threadIdx.x;
  out[t] = 3 * t + 1;
}

// Where the per-call lines go: stderr for the planted run (the test reads them there), stdout
// for --fixed (whose stderr must hold only its "ok").
static FILE* g_log = stderr;

static bool g_unnoticed = false;  // a call returned success after the failed launch

static bool same(const char* call, cudaError_t got, cudaError_t want) {
  std::fprintf(g_log, "undecodable: %s returned %s\n", call, cudaGetErrorName(got));
  if (got == cudaSuccess) g_unnoticed = true;
  return got == want;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  if (fixed) g_log = stdout;
  int* out = nullptr;
  CHECK(cudaMalloc(&out, kN * sizeof(int)));
  CHECK(cudaMemset(out, 0, kN * sizeof(int)));
  if (fixed) k_fill<<<1, kN>>>(out);
  else k_fill_with_multimem<<<1, kN>>>(out, 0);
  const cudaError_t want = fixed ? cudaSuccess : cudaErrorInvalidPtx;
  bool ok = same("cudaDeviceSynchronize", cudaDeviceSynchronize(), want);
  ok &= same("cudaGetLastError", cudaGetLastError(), want);
  ok &= same("cudaGetLastError", cudaGetLastError(), want);
  int got[kN] = {};
  ok &= same("cudaMemcpy", cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost), want);
  if (!fixed) {
    if (!ok) return g_unnoticed ? 0 : 2;  // 0: a call said all was well, the failure went unnoticed
    std::fprintf(stderr, "undecodable: %s from every call\n", cudaGetErrorName(want));
    return 1;
  }
  if (!ok) return 2;
  for (int t = 0; t < kN; ++t)
    if (got[t] != 3 * t + 1) return fixed_wrong("undecodable", "out[%d] = %d, expected %d", t, got[t], 3 * t + 1);
  CHECK(cudaFree(out));
  return fixed_ok("undecodable");
}
