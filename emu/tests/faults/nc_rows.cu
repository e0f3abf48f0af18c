// Planted bug: the warps of a block read a table of weights through a const __restrict__ pointer
// (ld.global.nc), a word per lane: warp 0 the first half, warp 1 the second, and after a barrier
// warp 2 the second half again; after another barrier thread 32 rescales its weight for the next
// launch. The barriers order the write after the reads, but the PTX ISA allows ld.global.nc only
// for memory that stays unchanged while the kernel runs. A warp's load of consecutive words covers
// whole 64-byte pieces of the table, which the checks record a piece at a time until a second
// thread's load of a word (warp 2's) needs its two readers: the write is reported against the
// reader that is not the writer.
// Expected: the checks report thread 32's write against thread 64's non-coherent load, and the
// launch fails (cudaErrorLaunchFailure). --fixed: the table is rescaled by a second launch.
#include "fault_common.h"

constexpr int kWarps = 3, kThreads = 32 * kWarps, kTable = 64;

__host__ __device__ int weight_of(int t) { return t < 32 ? t : 32 + t % 32; }

__global__ void k_weigh(const float* __restrict__ weights_in, float* weights, const float* x, float* out,
                        int fixed) {
  const int t = threadIdx.x;
  if (t < 64) out[t] = weights_in[weight_of(t)] * x[t];
  __syncthreads();
  if (t >= 64) out[t] = weights_in[weight_of(t)] * x[t];  // PARTNER
  __syncthreads();
  if (t == 32 && !fixed) weights[32] = weights_in[32] * 0.5f;  // PLANTED
}

__global__ void k_rescale(float* weights) { weights[threadIdx.x] *= 0.5f; }

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  float *weights = nullptr, *x = nullptr, *out = nullptr;
  float w[kTable], xs[kThreads];
  for (int i = 0; i < kTable; ++i) w[i] = float(i + 1);
  for (int i = 0; i < kThreads; ++i) xs[i] = float(i % 3);
  CHECK(cudaMalloc(&weights, sizeof w));
  CHECK(cudaMalloc(&x, sizeof xs));
  CHECK(cudaMalloc(&out, sizeof xs));
  CHECK(cudaMemcpy(weights, w, sizeof w, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x, xs, sizeof xs, cudaMemcpyHostToDevice));
  k_weigh<<<1, kThreads>>>(weights, weights, x, out, fixed);
  if (!fixed) return verdict("nc_rows", launch_result(), cudaErrorLaunchFailure);
  CHECK(launch_result());
  k_rescale<<<1, kTable>>>(weights);
  CHECK(launch_result());
  float got[kThreads], next[kTable];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(next, weights, sizeof next, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kThreads; ++i)
    if (got[i] != w[weight_of(i)] * xs[i]) return fixed_wrong("nc_rows", "out[%d] is %g, expected %g", i, got[i], w[weight_of(i)] * xs[i]);
  for (int i = 0; i < kTable; ++i)
    if (next[i] != w[i] * 0.5f) return fixed_wrong("nc_rows", "weight %d is %g, expected %g", i, next[i], w[i] * 0.5f);
  CHECK(cudaFree(weights));
  CHECK(cudaFree(x));
  CHECK(cudaFree(out));
  return fixed_ok("nc_rows");
}
