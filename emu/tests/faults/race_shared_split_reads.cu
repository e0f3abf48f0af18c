// Planted bug: a warp reads shared words, one of which a thread changed a byte of, while another
// warp overwrites them, with no __syncthreads() between the reads and the writes. (A byte written
// alone gives its word a record per byte; this program shows a whole warp's read of such a word,
// after a barrier, is recorded on its bytes, where the later write meets it.)
// Expected: the checks report thread 32 writing word 0 against a read of it by thread 0, and the
// launch fails (cudaErrorLaunchFailure). --fixed: __syncthreads() between the reads and the writes,
// and the reader sees the words as they were, word 0 with its new byte.
#include "fault_common.h"

constexpr int kWarpSize = 32;

__global__ void k_patch(const int* in, int* out, int fixed) {
  __shared__ int s[kWarpSize];
  const int t = threadIdx.x, lane = t % kWarpSize, warp = t / kWarpSize;
  if (warp == 1) s[lane] = in[lane];
  __syncthreads();
  if (t == 0) reinterpret_cast<volatile char*>(s)[1] = 0x5A;
  __syncthreads();
  if (warp == 0) out[lane] = s[lane];  // PARTNER
  if (fixed) __syncthreads();
  if (warp == 1) s[lane] = -1;  // PLANTED
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kWarpSize];
  for (int i = 0; i < kWarpSize; ++i) h[i] = 0x01020304 * (i + 1);
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_patch<<<1, 2 * kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict("race_shared_split_reads", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i) {
    const int want = i == 0 ? int((unsigned(h[0]) & 0xFFFF00FFu) | 0x5A00u) : h[i];
    if (got[i] != want) return fixed_wrong("race_shared_split_reads", "word %d is %d, expected %d", i, got[i], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok("race_shared_split_reads");
}
