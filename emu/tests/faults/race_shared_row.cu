// Planted bug: a warp reads a row of 16 shared words, lanes 0-15 and lanes 16-31 each the whole row
// (as two rows of threads read a tile's row), after one lane, the peeker, has looked at word 4 on
// its own; then lane 20 overwrites word 4 with no __syncwarp() between. Lanes of a warp are not
// ordered by running together: lane 4's read races with lane 20's write. (The checks settle such
// a warp's reads a word at a time. Built twice: with the peeker lane 4 (race_shared_row_first),
// the word's first read slot holds lane 4's earlier read, and takes lane 4's read of the row; with
// the peeker lane 20 (race_shared_row_second), it holds lane 20's own earlier read, and lane 4's
// read of the row is still kept.)
// Expected: the checks report lane 20's write against lane 4's read, and the launch fails
// (cudaErrorLaunchFailure). --fixed: __syncwarp() before the write, and the outputs are the ones
// expected.
#include "fault_common.h"

constexpr int kWarpSize = 32, kRow = 16, kPeeker = PEEKER, kWriter = 20;

__global__ void k_row(const int* in, int* out, int fixed) {
  __shared__ int s[kRow + 1];  // the row, and a word only an impossible peek would read
  const int lane = threadIdx.x;
  if (lane < kRow) s[lane] = in[lane];
  __syncthreads();
  int peek = 0;
  if (lane == kPeeker) peek = *(volatile int*)&s[4];
  const int v = s[peek == -1 ? kRow : lane % kRow];  // PARTNER (after the peek: its address depends on it)
  if (fixed) __syncwarp();
  if (lane == kWriter) s[4] = v + peek;  // PLANTED
  out[lane] = v + peek;
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  int h[kRow];
  for (int i = 0; i < kRow; ++i) h[i] = 3 * i + 2;
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof h));
  CHECK(cudaMalloc(&out, kWarpSize * sizeof(int)));
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  k_row<<<1, kWarpSize>>>(in, out, fixed);
  if (!fixed) return verdict(FAULT_NAME, launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  int got[kWarpSize];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWarpSize; ++i) {
    const int want = h[i % kRow] + (i == kPeeker ? h[4] : 0);
    if (got[i] != want) return fixed_wrong(FAULT_NAME, "lane %d got %d, expected %d", i, got[i], want);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return fixed_ok(FAULT_NAME);
}
