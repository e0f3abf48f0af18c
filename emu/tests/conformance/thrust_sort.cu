// thrust::sort, as a third-party program calls it: CUB's radix sort for plain keys, its merge
// sort for a comparator of the program's own (which CUDA 13 launches through
// cudaLaunchKernelExC). Each result is compared with std::sort of the same keys on the host.
// --merge-passes adds a merge sort of several tiles, which runs CUB's partition and merge
// kernels (see the CMakeLists for the checks it runs under).
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conf_common.h"

// A strict total order different from <: by the low byte first, then by value.
struct LowByteFirst {
  __host__ __device__ bool operator()(uint32_t a, uint32_t b) const {
    const uint32_t la = a & 0xFFu, lb = b & 0xFFu;
    return la != lb ? la < lb : a < b;
  }
};

std::vector<uint32_t> random_keys(int n, uint32_t seed) {
  std::vector<uint32_t> keys(n);
  uint32_t x = seed;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;  // a linear congruential generator (Numerical Recipes)
    keys[i] = x ^ (x >> 13);
  }
  return keys;
}

template <typename Compare>
void check_sort(const char* name, int n, uint32_t seed, Compare compare, bool use_compare) {
  std::vector<uint32_t> keys = random_keys(n, seed);
  thrust::device_vector<uint32_t> d(keys.begin(), keys.end());
  if (use_compare) {
    thrust::sort(d.begin(), d.end(), compare);
  } else {
    thrust::sort(d.begin(), d.end());
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> got(n);
  thrust::copy(d.begin(), d.end(), got.begin());
  std::sort(keys.begin(), keys.end(), compare);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += got[i] != keys[i];
  conf_check(name, conf_fmt("%d keys, seed %u: positions wrong", n, seed), wrong, 0);
}

int main(int argc, char** argv) {
  conf_require_device();
  // One tile, then (radix) enough keys for the multi-pass sort's histogram and scatter kernels.
  check_sort("thrust::sort (radix)", 3000, 1u, thrust::less<uint32_t>(), false);
  check_sort("thrust::sort (radix)", 20000, 4u, thrust::less<uint32_t>(), false);
  check_sort("thrust::sort (merge, comparator)", 257, 3u, LowByteFirst(), true);
  check_sort("thrust::sort (merge, comparator)", 3000, 2u, LowByteFirst(), true);
  if (argc > 1 && std::strcmp(argv[1], "--merge-passes") == 0)
    check_sort("thrust::sort (merge, comparator)", 20000, 5u, LowByteFirst(), true);
  return conf_finish("thrust_sort");
}
