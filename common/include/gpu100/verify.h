// Comparing a GPU result with the CPU reference (tolerance.h: what passes), element by element
// or bit for bit; error_bounds.h has the checks whose tolerance is derived per problem.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpu100/error_bounds.h"
#include "gpu100/tolerance.h"

namespace gpu100 {

namespace detail {
// Under the emulator, the device address a byte of a host copy was downloaded from (0 on a GPU).
uint64_t device_address_of(const void* host);
// A failed check: where on the device its worst element of `got` (the host copy) came from.
template <class T>
CheckResult located(CheckResult r, const T* got) {
  if (!r.pass && r.worst_index >= 0) {
    r.worst_device_address = device_address_of(got + r.worst_index);
    r.element_bytes = uint32_t(sizeof(T));
  }
  return r;
}
}  // namespace detail

// Compare n elements of got (GPU) with ref (CPU reference).
template <class G, class R>
CheckResult compare(const G* got, const R* ref, size_t n, Tolerance tol) {
  ErrorStats s(tol);
  for (size_t i = 0; i < n; ++i)
    s.add(detail::to_double(got[i]), detail::to_double(ref[i]), int64_t(i));
  return detail::located(s.finish(), got);
}
template <class VG, class VR>
CheckResult compare(const VG& got, const VR& ref, Tolerance tol) {
  if (got.size() != ref.size()) {
    CheckResult r;
    r.checked = true;
    r.tolerance = "size mismatch";
    return r;
  }
  return compare(got.data(), ref.data(), got.size(), tol);
}

namespace detail {
// Bit-exact comparison: integers with ==, floating-point values by their bit patterns (so -0 and
// +0 differ, and a NaN never equals anything).
template <class T>
bool same_bits(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}
}  // namespace detail

template <class T>
CheckResult compare_exact(const T* got, const T* ref, size_t n) {
  CheckResult r;
  r.checked = true;
  r.tolerance = "exact";
  r.count = int64_t(n);
  for (size_t i = 0; i < n; ++i) {
    if (!detail::same_bits(got[i], ref[i])) {
      if (r.mismatches == 0) {
        r.worst_index = int64_t(i);
        r.worst_got = detail::to_double(got[i]);
        r.worst_ref = detail::to_double(ref[i]);
      }
      ++r.mismatches;
    }
  }
  r.rel_err = n ? double(r.mismatches) / double(n) : 0.0;
  r.max_abs_err = r.mismatches ? std::fabs(r.worst_got - r.worst_ref) : 0.0;
  r.pass = r.mismatches == 0 && n > 0;
  return detail::located(r, got);
}
template <class V>
CheckResult compare_exact(const V& got, const V& ref) {
  if (got.size() != ref.size()) {
    CheckResult r;
    r.checked = true;
    r.tolerance = "size mismatch";
    return r;
  }
  return compare_exact(got.data(), ref.data(), got.size());
}

}  // namespace gpu100
