// Shared helpers for the PTX conformance suite (emu/tests/conformance/*.cu).
//
// Each program runs kernels that execute one instruction over a table of inputs, copies the
// results back and compares them bit-exactly with values computed on the host from the PTX ISA's
// definition. The exit status is the suite's contract with CTest:
//   0   every comparison passed
//   1   any mismatch or CUDA error
//   77  "SKIP: no CUDA device" (cudaGetDeviceCount failed or found none), the skip code the
//       CMakeLists gives the GPU-labelled tests
//
// Typical use:
//   int main() {
//     conf_require_device();                       // exits 77 when there is nothing to run on
//     ...launch, CUDA_CHECK(cudaDeviceSynchronize()), copy back...
//     conf_check("add.s32", "1, 2", got, expected);   // any integer type, compared exactly
//     conf_check("shl.b32", conf_fmt("%u, %u", a, b), got, expected);  // formatted input text
//     conf_check_bits("add.rn.f32", "1.5, 2", got_bits, exp_bits, 32); // floats: raw bits
//     conf_check_text("ex2.approx.f32", "0.5", ok, "1.4142", "within 2 ulp of 1.41421");
//     return conf_finish("int_ops");               // prints a summary, returns 0 or 1
//   }
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

// Any CUDA error is a failure of the whole program (exit 1) with the call and place printed:
// continuing after one would only compare garbage.
#define CUDA_CHECK(call)                                                                        \
  do {                                                                                          \
    cudaError_t conf_err_ = (call);                                                             \
    if (conf_err_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "CUDA error %s (%d) at %s:%d: %s\n", cudaGetErrorString(conf_err_), \
                   static_cast<int>(conf_err_), __FILE__, __LINE__, #call);                     \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

// Number of mismatches seen so far (inline so every translation unit shares one counter).
inline int& conf_failures() {
  static int n = 0;
  return n;
}
inline int& conf_checks() {
  static int n = 0;
  return n;
}

// Exits 77 with "SKIP: no CUDA device" when there is no device to run on.
inline void conf_require_device() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device\n");
    std::exit(77);
  }
}

// Formats into a small buffer, for building the "input" text of a check.
struct ConfStr {
  char s[256];
};
inline ConfStr conf_fmt(const char* fmt, ...) {
  ConfStr r;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(r.s, sizeof r.s, fmt, ap);
  va_end(ap);
  return r;
}

// Records one result; prints "name: input -> got X, expected Y" on a mismatch.
// Integers (any width, signed or unsigned, bool) print in decimal and hex; expected is converted
// to got's type first, so a literal works: conf_check("add.u32", "1, 2", got_u32, 3).
// Returns true when equal. For floats use conf_check_bits (bit-exact, NaN payloads included).
template <typename T, typename U>
inline bool conf_check(const char* name, const char* input, T got, U expected_in) {
  static_assert(std::is_integral<T>::value, "conf_check compares integers; use conf_check_bits");
  const T expected = static_cast<T>(expected_in);
  ++conf_checks();
  if (got == expected) return true;
  ++conf_failures();
  long long g = static_cast<long long>(got), x = static_cast<long long>(expected);
  unsigned long long gm = static_cast<unsigned long long>(got), xm = static_cast<unsigned long long>(expected);
  const unsigned long long mask = ~0ull >> (64 - 8 * sizeof(T));  // the type's own bits in hex
  gm &= mask;
  xm &= mask;
  if (!std::is_signed<T>::value) {  // a u64 above 2^63 should not print as negative
    std::printf("%s: %s -> got %llu (0x%llx), expected %llu (0x%llx)\n", name, input, gm, gm, xm, xm);
  } else {
    std::printf("%s: %s -> got %lld (0x%llx), expected %lld (0x%llx)\n", name, input, g, gm, x, xm);
  }
  return false;
}
template <typename T, typename U>
inline bool conf_check(const char* name, const ConfStr& input, T got, U expected) {
  return conf_check(name, input.s, got, expected);
}

// Bit-exact compare for floating-point results given as raw bits (f16/bf16 in 16, f32 in 32,
// f64 in 64). Prints the bits and, for 32/64-bit, the value too.
inline bool conf_check_bits(const char* name, const char* input, uint64_t got, uint64_t expected,
                            int width_bits) {
  ++conf_checks();
  if (got == expected) return true;
  ++conf_failures();
  if (width_bits == 32) {
    float gf, xf;
    uint32_t g32 = static_cast<uint32_t>(got), x32 = static_cast<uint32_t>(expected);
    std::memcpy(&gf, &g32, 4);
    std::memcpy(&xf, &x32, 4);
    std::printf("%s: %s -> got %.9g (0x%08x), expected %.9g (0x%08x)\n", name, input, gf, g32, xf, x32);
  } else if (width_bits == 64) {
    double gd, xd;
    std::memcpy(&gd, &got, 8);
    std::memcpy(&xd, &expected, 8);
    std::printf("%s: %s -> got %.17g (0x%016llx), expected %.17g (0x%016llx)\n", name, input, gd,
                static_cast<unsigned long long>(got), xd, static_cast<unsigned long long>(expected));
  } else {
    std::printf("%s: %s -> got 0x%0*llx, expected 0x%0*llx\n", name, input, width_bits / 4,
                static_cast<unsigned long long>(got), width_bits / 4,
                static_cast<unsigned long long>(expected));
  }
  return false;
}

inline bool conf_check_bits(const char* name, const ConfStr& input, uint64_t got, uint64_t expected,
                            int width_bits) {
  return conf_check_bits(name, input.s, got, expected, width_bits);
}

// Records a check whose pass/fail was decided by the caller (tolerance compares, predicates),
// with got/expected already formatted as text.
inline bool conf_check_text(const char* name, const char* input, bool ok, const char* got,
                            const char* expected) {
  ++conf_checks();
  if (ok) return true;
  ++conf_failures();
  std::printf("%s: %s -> got %s, expected %s\n", name, input, got, expected);
  return false;
}

// ---- one kernel per op (int_ops, float_ops, convert_ops) ----
//
// Those programs instantiate a kernel template once per op, so each kernel holds just its own
// instruction and an instruction the emulator cannot load fails only its own launch. Each kernel
// reads n cases and writes one 64-bit result word per case:
//   const auto kKernels =
//       conf_kernel_table<Case, OP_COUNT>([](auto op) { return &k_op<decltype(op)::value>; });
//   std::vector<uint64_t> got = conf_run(kKernels[op], "add.s32", cases);

template <typename Case>
using ConfKernel = void (*)(const Case*, uint64_t*, int);

template <typename Case, typename Pick, int... I>
std::array<ConfKernel<Case>, sizeof...(I)> conf_kernel_table_of(Pick pick,
                                                                std::integer_sequence<int, I...>) {
  return {{pick(std::integral_constant<int, I>{})...}};
}

// {pick(0), ..., pick(N - 1)}, each index passed as a std::integral_constant so that pick can
// name the instantiation.
template <typename Case, int N, typename Pick>
std::array<ConfKernel<Case>, N> conf_kernel_table(Pick pick) {
  return conf_kernel_table_of<Case>(pick, std::make_integer_sequence<int, N>{});
}

// Runs kernel over cases and returns the result words. A refused launch counts as one failure
// of `name` and returns no words, so the program goes on with its other ops.
template <typename Case>
std::vector<uint64_t> conf_run(ConfKernel<Case> kernel, const char* name,
                               const std::vector<Case>& cases) {
  Case* din = nullptr;
  uint64_t* dout = nullptr;
  // + 1: never a zero-byte allocation, even for an empty list
  CUDA_CHECK(cudaMalloc(&din, cases.size() * sizeof(Case) + 1));
  CUDA_CHECK(cudaMalloc(&dout, cases.size() * sizeof(uint64_t) + 1));
  CUDA_CHECK(cudaMemcpy(din, cases.data(), cases.size() * sizeof(Case), cudaMemcpyHostToDevice));
  kernel<<<(unsigned)((cases.size() + 127) / 128), 128>>>(din, dout, (int)cases.size());
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) {
    conf_check_text(name, "(kernel launch)", false, cudaGetErrorString(launch),
                    "a launched kernel");
    CUDA_CHECK(cudaFree(din));
    CUDA_CHECK(cudaFree(dout));
    return {};
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint64_t> got(cases.size());
  CUDA_CHECK(cudaMemcpy(got.data(), dout, got.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(din));
  CUDA_CHECK(cudaFree(dout));
  return got;
}

// Prints the summary and returns the exit status: 0 when all passed, 1 otherwise.
inline int conf_finish(const char* program) {
  std::printf("%s: %d checks, %d failures\n", program, conf_checks(), conf_failures());
  return conf_failures() == 0 ? 0 : 1;
}
