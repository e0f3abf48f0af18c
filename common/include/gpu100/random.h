// Reproducible inputs from --seed. A counter-based generator (splitmix64 of seed and index),
// so the same seed gives the same data on every machine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpu100 {

uint64_t mix64(uint64_t x);
// Uniform in [lo, hi).
std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);
// Uniform integers in [lo, hi] (inclusive).
std::vector<int32_t> random_ints(size_t n, uint64_t seed, int32_t lo, int32_t hi);
std::vector<uint8_t> random_bytes(size_t n, uint64_t seed);

}  // namespace gpu100
