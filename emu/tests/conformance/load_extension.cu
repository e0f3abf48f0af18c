// Loads into a register wider than the instruction type, in every state space and load form.
//
// PTX ISA, "Operand Size Exceeding Instruction-Type Size": ld, ldu and their vector forms may
// name a destination register wider than the instruction type; the loaded value is then
// sign-extended to the register's width for a signed type (.s8, .s16, .s32) and zero-extended
// for every other type (.u*, .b*). nvcc relies on it: `(long long)x[i]` with `int* x` is one
// `ld.global.s32` into a 64-bit register.
//
// Memory holds a negative and a positive value of each width; each load's result comes back in
// a variable exactly as wide as its register (16, 32 or 64 bits), so the bits above the
// loaded width are checked too.
#include <cstdint>
#include <string>

#include "conf_common.h"

namespace {

// The values, 8-byte aligned: 8-bit ones at bytes 0-3, 16-bit at 8-15, 32-bit at 16-31.
struct alignas(16) Bytes {
  uint8_t b[32];
};
constexpr Bytes kBytes = {{0x80, 0x7F, 0xC0, 0x3F, 0, 0, 0, 0,                        // s8
                           0x85, 0xFF, 0x01, 0x7F, 0x00, 0x80, 0x01, 0x00,            // s16
                           0x05, 0x00, 0x00, 0x80, 0xF0, 0xFF, 0xFF, 0x7F,            // s32
                           0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00}};

constexpr int kMaxResults = 2048;

}  // namespace

__constant__ Bytes c_bytes;

// (type, destination bits, byte offset): both values of every width, into every register width
// at least as wide as the type.
#define SCALAR_CASES(X)                                                                          \
  X(s8, 16, 0) X(s8, 16, 1) X(s8, 32, 0) X(s8, 32, 1) X(s8, 64, 0) X(s8, 64, 1)                  \
  X(u8, 16, 0) X(u8, 32, 0) X(u8, 64, 0) X(u8, 64, 1) X(b8, 16, 0) X(b8, 32, 0) X(b8, 64, 0)     \
  X(s16, 16, 8) X(s16, 32, 8) X(s16, 32, 10) X(s16, 64, 8) X(s16, 64, 10)                        \
  X(u16, 32, 8) X(u16, 64, 8) X(u16, 64, 10) X(b16, 32, 8) X(b16, 64, 8)                         \
  X(s32, 32, 16) X(s32, 64, 16) X(s32, 64, 20) X(u32, 64, 16) X(u32, 64, 20) X(b32, 64, 16)

// (vector, type, destination bits, byte offset).
#define VECTOR_CASES(X)                                                                          \
  X(2, s8, 16, 0) X(2, s8, 32, 0) X(2, s8, 64, 0) X(4, s8, 32, 0) X(4, u8, 32, 0)                \
  X(2, s16, 32, 8) X(4, s16, 64, 8) X(4, u16, 64, 8) X(2, s32, 64, 16) X(4, s32, 64, 16)         \
  X(4, u32, 64, 16)

#define REG16 "=h"
#define REG32 "=r"
#define REG64 "=l"
#define CTYPE16 unsigned short
#define CTYPE32 unsigned int
#define CTYPE64 unsigned long long

// One load through an address register (ACON: "l" or "r"), its result appended to out.
#define EMIT(OP, BITS, ACON, ADDR)                                                               \
  {                                                                                              \
    CTYPE##BITS r_;                                                                              \
    asm volatile(OP " %0, [%1];" : REG##BITS(r_) : ACON(ADDR) : "memory");                       \
    out[n++] = r_;                                                                               \
  }
#define EMIT_V2(OP, BITS, ACON, ADDR)                                                            \
  {                                                                                              \
    CTYPE##BITS r0_, r1_;                                                                        \
    asm volatile(OP " {%0, %1}, [%2];" : REG##BITS(r0_), REG##BITS(r1_) : ACON(ADDR) : "memory"); \
    out[n++] = r0_;                                                                              \
    out[n++] = r1_;                                                                              \
  }
#define EMIT_V4(OP, BITS, ACON, ADDR)                                                            \
  {                                                                                              \
    CTYPE##BITS r0_, r1_, r2_, r3_;                                                              \
    asm volatile(OP " {%0, %1, %2, %3}, [%4];"                                                   \
                 : REG##BITS(r0_), REG##BITS(r1_), REG##BITS(r2_), REG##BITS(r3_)                \
                 : ACON(ADDR)                                                                    \
                 : "memory");                                                                    \
    out[n++] = r0_;                                                                              \
    out[n++] = r1_;                                                                              \
    out[n++] = r2_;                                                                              \
    out[n++] = r3_;                                                                              \
  }

// Every case with the load form PREFIX (e.g. "ld.global."), through address BASE + offset.
#define SCALAR_DEV(T, BITS, OFF) EMIT(PREFIX #T, BITS, ACON, BASE + OFF)
#define VECTOR_DEV(V, T, BITS, OFF) EMIT_V##V(PREFIX "v" #V "." #T, BITS, ACON, BASE + OFF)
#define ALL_CASES() SCALAR_CASES(SCALAR_DEV) VECTOR_CASES(VECTOR_DEV)

// The load forms, in the order the host lists them.
static const char* const kForms[] = {
    "ld.global.", "ld.global.nc.", "ld.volatile.global.", "ldu.global.", "ld.shared.",
    "ld.volatile.shared.", "ld.local.", "ld.const.", "ld.param.", "ld. (generic, global)",
    "ld. (generic, shared)", "ld. (generic, local)"};

extern "C" __global__ void k_widening_loads(Bytes param_bytes, const uint8_t* g, uint64_t* out) {
  __shared__ alignas(16) uint8_t s[32];
  alignas(16) uint8_t l[32];
  for (int i = 0; i < 32; ++i) {
    s[i] = g[i];
    l[i] = g[i];
  }
  __syncthreads();
  const uint32_t s_addr = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  uint64_t l_addr, c_addr;
  asm volatile("cvta.to.local.u64 %0, %1;" : "=l"(l_addr) : "l"(l) : "memory");
  asm volatile("cvta.to.const.u64 %0, %1;" : "=l"(c_addr) : "l"(&c_bytes));
  int n = 0;
#define ACON "l"
#define BASE g
#define PREFIX "ld.global."
  ALL_CASES()
#undef PREFIX
#define PREFIX "ld.global.nc."
  ALL_CASES()
#undef PREFIX
#define PREFIX "ld.volatile.global."
  ALL_CASES()
#undef PREFIX
#define PREFIX "ldu.global."
  ALL_CASES()
#undef PREFIX
#undef BASE
#undef ACON
#define ACON "r"
#define BASE s_addr
#define PREFIX "ld.shared."
  ALL_CASES()
#undef PREFIX
#define PREFIX "ld.volatile.shared."
  ALL_CASES()
#undef PREFIX
#undef BASE
#undef ACON
#define ACON "l"
#define BASE l_addr
#define PREFIX "ld.local."
  ALL_CASES()
#undef PREFIX
#undef BASE
#define BASE c_addr
#define PREFIX "ld.const."
  ALL_CASES()
#undef PREFIX
#undef BASE
#undef ACON
  // The kernel's own parameter, by its PTX name.
#define SCALAR_PARAM(T, BITS, OFF)                                                               \
  {                                                                                              \
    CTYPE##BITS r_;                                                                              \
    asm volatile("ld.param." #T " %0, [k_widening_loads_param_0+" #OFF "];" : REG##BITS(r_));    \
    out[n++] = r_;                                                                               \
  }
#define VECTOR_PARAM(V, T, BITS, OFF) VECTOR_PARAM_##V(T, BITS, OFF)
#define VECTOR_PARAM_2(T, BITS, OFF)                                                             \
  {                                                                                              \
    CTYPE##BITS r0_, r1_;                                                                        \
    asm volatile("ld.param.v2." #T " {%0, %1}, [k_widening_loads_param_0+" #OFF "];"            \
                 : REG##BITS(r0_), REG##BITS(r1_));                                              \
    out[n++] = r0_;                                                                              \
    out[n++] = r1_;                                                                              \
  }
#define VECTOR_PARAM_4(T, BITS, OFF)                                                             \
  {                                                                                              \
    CTYPE##BITS r0_, r1_, r2_, r3_;                                                              \
    asm volatile("ld.param.v4." #T " {%0, %1, %2, %3}, [k_widening_loads_param_0+" #OFF "];"    \
                 : REG##BITS(r0_), REG##BITS(r1_), REG##BITS(r2_), REG##BITS(r3_));              \
    out[n++] = r0_;                                                                              \
    out[n++] = r1_;                                                                              \
    out[n++] = r2_;                                                                              \
    out[n++] = r3_;                                                                              \
  }
  SCALAR_CASES(SCALAR_PARAM)
  VECTOR_CASES(VECTOR_PARAM)
  // Generic addresses of each window.
#define ACON "l"
#define PREFIX "ld."
#define BASE g
  ALL_CASES()
#undef BASE
#define BASE reinterpret_cast<const uint8_t*>(s)
  ALL_CASES()
#undef BASE
#define BASE reinterpret_cast<const uint8_t*>(l)
  ALL_CASES()
#undef BASE
#undef PREFIX
#undef ACON
  out[kMaxResults - 1] = uint64_t(n);
}

// What C++ compiles to a widening load: a signed int read into a long long.
__global__ void k_int_to_long(const int* x, long long* y, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) y[i] = static_cast<long long>(x[i]);
}

namespace {

struct Expect {
  std::string name;
  uint64_t bits;
};

// The value a load of type `type` (e.g. "s16") at `offset` leaves in a `bits`-wide register:
// element `elem` of the vector.
uint64_t widened(const char* type, int bits, int offset, int elem) {
  const bool is_signed = type[0] == 's';
  const int size = std::atoi(type + 1) / 8;
  uint64_t raw = 0;
  for (int i = 0; i < size; ++i) raw |= uint64_t(kBytes.b[offset + elem * size + i]) << (8 * i);
  const int shift = 64 - 8 * size;
  uint64_t v = is_signed ? uint64_t(int64_t(raw << shift) >> shift) : raw;
  return bits == 64 ? v : v & ((1ull << bits) - 1);
}

void add_cases(std::vector<Expect>& e, const char* form) {
#define SCALAR_HOST(T, BITS, OFF)                                                                \
  e.push_back({conf_fmt("%s" #T " into a " #BITS "-bit register, bytes %d", form, OFF).s,        \
               widened(#T, BITS, OFF, 0)});
#define VECTOR_HOST(V, T, BITS, OFF)                                                             \
  for (int i = 0; i < V; ++i)                                                                    \
    e.push_back({conf_fmt("%sv" #V "." #T " element %d into a " #BITS "-bit register", form, i).s, \
                 widened(#T, BITS, OFF, i)});
  SCALAR_CASES(SCALAR_HOST)
  VECTOR_CASES(VECTOR_HOST)
}

}  // namespace

int main() {
  conf_require_device();
  std::vector<Expect> expect;
  for (const char* form : kForms) add_cases(expect, form);

  uint8_t* g = nullptr;
  uint64_t* out = nullptr;
  CUDA_CHECK(cudaMalloc(&g, sizeof kBytes));
  CUDA_CHECK(cudaMalloc(&out, kMaxResults * sizeof(uint64_t)));
  CUDA_CHECK(cudaMemcpy(g, kBytes.b, sizeof kBytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpyToSymbol(c_bytes, &kBytes, sizeof kBytes));
  k_widening_loads<<<1, 1>>>(kBytes, g, out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint64_t> got(kMaxResults);
  CUDA_CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  conf_check("loads made", "all forms", got[kMaxResults - 1], expect.size());
  for (size_t i = 0; i < expect.size() && i < kMaxResults - 1; ++i)
    conf_check(expect[i].name.c_str(), "", got[i], expect[i].bits);

  // (long long)x[i]: negative ints stay negative.
  const int kN = 64;
  std::vector<int> x(kN);
  for (int i = 0; i < kN; ++i) x[i] = (i % 2 ? -1 : 1) * (i * 33554393 + 7);
  int* dx = nullptr;
  long long* dy = nullptr;
  CUDA_CHECK(cudaMalloc(&dx, kN * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dy, kN * sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), kN * sizeof(int), cudaMemcpyHostToDevice));
  k_int_to_long<<<1, kN>>>(dx, dy, kN);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<long long> y(kN);
  CUDA_CHECK(cudaMemcpy(y.data(), dy, kN * sizeof(long long), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    conf_check("(long long)x[i]", conf_fmt("x = %d", x[i]), y[i], static_cast<long long>(x[i]));

  CUDA_CHECK(cudaFree(g));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(dx));
  CUDA_CHECK(cudaFree(dy));
  return conf_finish("load_extension");
}
