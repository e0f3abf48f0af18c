#include "gpu100/random.h"

namespace gpu100 {

uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

namespace {
inline uint64_t bits(uint64_t seed, size_t i) { return mix64(mix64(seed) ^ (i * 0xD6E8FEB86659FD93ull)); }
inline double unit(uint64_t b) { return double(b >> 11) * 0x1.0p-53; }  // [0, 1)
}  // namespace

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    float x = float(lo + (double(hi) - lo) * unit(bits(seed, i)));
    v[i] = x < hi ? x : lo;  // rounding to float can reach hi; keep the interval half-open
  }
  return v;
}

std::vector<int32_t> random_ints(size_t n, uint64_t seed, int32_t lo, int32_t hi) {
  std::vector<int32_t> v(n);
  const uint64_t span = uint64_t(int64_t(hi) - int64_t(lo)) + 1;
  for (size_t i = 0; i < n; ++i) v[i] = int32_t(int64_t(lo) + int64_t(bits(seed, i) % span));
  return v;
}

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(bits(seed, i) >> 56);
  return v;
}

}  // namespace gpu100
