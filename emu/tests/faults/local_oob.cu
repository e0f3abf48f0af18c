// Planted bug: a local array indexed out of range. Each thread counts its four keys into an
// 8-bin histogram held in a local array; the keys run 0..8 and nothing clamps 8, so thread 37 of
// block 0 (the only thread given a key of 8) touches bins[8], past the thread's 32 bytes of
// local memory. Expected: cudaErrorIllegalAddress and the emulator naming that local access.
// --fixed: keys above 7 are clamped into the last bin and the histograms match the host's.
#include <algorithm>
#include <vector>

#include "fault_common.h"

constexpr int kThreads = 64;
constexpr int kKeys = 4;
constexpr int kBins = 8;

__global__ void k_histogram(const int* keys, int* out, int fixed) {
  const int t = threadIdx.x;
  int bins[kBins] = {};
  for (int j = 0; j < kKeys; ++j) {
    int k = keys[t * kKeys + j];
    if (fixed) k = min(k, kBins - 1);
    // The planted bug: k == 8 is one past the array.
    bins[k] += 1;  // PLANTED
  }
  for (int b = 0; b < kBins; ++b) out[t * kBins + b] = bins[b];
}

int main(int argc, char** argv) {
  require_device();
  const bool fixed = wants_fixed(argc, argv);
  std::vector<int> keys(kThreads * kKeys);
  for (int i = 0; i < kThreads * kKeys; ++i) keys[i] = (i * 5) % kBins;  // 0..7
  keys[37 * kKeys + 2] = kBins;                                          // the one out-of-range key
  int *d_keys = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&d_keys, keys.size() * sizeof(int)));
  CHECK(cudaMalloc(&out, kThreads * kBins * sizeof(int)));
  CHECK(cudaMemcpy(d_keys, keys.data(), keys.size() * sizeof(int), cudaMemcpyHostToDevice));
  k_histogram<<<1, kThreads>>>(d_keys, out, fixed);
  if (!fixed) return verdict("local_oob", launch_result(), cudaErrorIllegalAddress);
  CHECK(launch_result());
  std::vector<int> got(kThreads * kBins);
  CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    int want[kBins] = {};
    for (int j = 0; j < kKeys; ++j) want[std::min(keys[t * kKeys + j], kBins - 1)] += 1;
    for (int b = 0; b < kBins; ++b)
      if (got[t * kBins + b] != want[b])
        return fixed_wrong("local_oob", "thread %d bin %d = %d, expected %d", t, b,
                           got[t * kBins + b], want[b]);
  }
  return fixed_ok("local_oob");
}
