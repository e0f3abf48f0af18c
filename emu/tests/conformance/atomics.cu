// Atomic and reduction instructions: atom.global / atom.shared add (u32, u64, f32, f64),
// min/max (s32, u32, s64, u64), inc/dec with their wrap value, cas (b32, b64), exch, and/or/xor
// (b32, b64), red.*, scoped/ordered forms, f16/bf16 (scalar and x2) adds, atom.v2.f32, CAS
// loops, a CAS spinlock contended inside warps, and a table of single-thread cases for the exact
// old/new values.
//
// Expected values follow the PTX ISA's definitions:
//   inc(r, s) = (r >= s) ? 0 : r + 1
//   dec(r, s) = (r == 0 || r > s) ? s : r - 1
//   cas(r, s, t) = (r == s) ? t : r ;  exch(r, s) = s ;  d = the old value
// Under contention, results that do not depend on the order (sums of exactly representable
// values, min/max, bitwise ops) are compared exactly, and the returned old values are checked as
// a multiset: for add of 1 they are a permutation of 0..N-1; for inc/dec (the same function
// applied N times) they are exactly the sequence v0, f(v0), f(f(v0)), ... in some order.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "conf_common.h"

namespace {

// ---------------------------------------------------------------------------------------------
// One inline-asm wrapper per operation, for the global (S = 0) and shared (S = 1) state spaces.
// ---------------------------------------------------------------------------------------------
__device__ inline uint32_t smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

#define DEF_ATOM(fname, op, T, c)                                                                  \
  template <int S>                                                                                 \
  __device__ inline T fname(T* p, T b) {                                                           \
    T d;                                                                                           \
    if (S == 0)                                                                                    \
      asm volatile("atom.global." op " %0, [%1], %2;" : "=" c(d) : "l"(p), c(b) : "memory");       \
    else                                                                                           \
      asm volatile("atom.shared." op " %0, [%1], %2;" : "=" c(d) : "r"(smem(p)), c(b) : "memory"); \
    return d;                                                                                      \
  }
#define DEF_CAS(fname, op, T, c)                          \
  template <int S>                                        \
  __device__ inline T fname(T* p, T b, T n) {             \
    T d;                                                  \
    if (S == 0)                                           \
      asm volatile("atom.global." op " %0, [%1], %2, %3;" \
                   : "=" c(d)                             \
                   : "l"(p), c(b), c(n)                   \
                   : "memory");                           \
    else                                                  \
      asm volatile("atom.shared." op " %0, [%1], %2, %3;" \
                   : "=" c(d)                             \
                   : "r"(smem(p)), c(b), c(n)             \
                   : "memory");                           \
    return d;                                             \
  }
#define DEF_RED(fname, op, T, c)                                                   \
  template <int S>                                                                 \
  __device__ inline void fname(T* p, T b) {                                        \
    if (S == 0)                                                                    \
      asm volatile("red.global." op " [%0], %1;" ::"l"(p), c(b) : "memory");       \
    else                                                                           \
      asm volatile("red.shared." op " [%0], %1;" ::"r"(smem(p)), c(b) : "memory"); \
  }

typedef unsigned long long u64;
typedef long long s64;

DEF_ATOM(atom_add_u32, "add.u32", uint32_t, "r")
DEF_ATOM(atom_add_u64, "add.u64", u64, "l")
DEF_ATOM(atom_add_f32, "add.f32", float, "f")
DEF_ATOM(atom_add_f64, "add.f64", double, "d")
DEF_ATOM(atom_min_s32, "min.s32", int, "r")
DEF_ATOM(atom_max_s32, "max.s32", int, "r")
DEF_ATOM(atom_min_u32, "min.u32", uint32_t, "r")
DEF_ATOM(atom_max_u32, "max.u32", uint32_t, "r")
DEF_ATOM(atom_min_s64, "min.s64", s64, "l")
DEF_ATOM(atom_max_s64, "max.s64", s64, "l")
DEF_ATOM(atom_min_u64, "min.u64", u64, "l")
DEF_ATOM(atom_max_u64, "max.u64", u64, "l")
DEF_ATOM(atom_inc_u32, "inc.u32", uint32_t, "r")
DEF_ATOM(atom_dec_u32, "dec.u32", uint32_t, "r")
DEF_ATOM(atom_exch_b32, "exch.b32", uint32_t, "r")
DEF_ATOM(atom_exch_b64, "exch.b64", u64, "l")
DEF_ATOM(atom_and_b32, "and.b32", uint32_t, "r")
DEF_ATOM(atom_or_b32, "or.b32", uint32_t, "r")
DEF_ATOM(atom_xor_b32, "xor.b32", uint32_t, "r")
DEF_ATOM(atom_and_b64, "and.b64", u64, "l")
DEF_ATOM(atom_or_b64, "or.b64", u64, "l")
DEF_ATOM(atom_xor_b64, "xor.b64", u64, "l")
DEF_CAS(atom_cas_b32, "cas.b32", uint32_t, "r")
DEF_CAS(atom_cas_b64, "cas.b64", u64, "l")
DEF_RED(red_add_u32, "add.u32", uint32_t, "r")
DEF_RED(red_add_u64, "add.u64", u64, "l")
DEF_RED(red_add_f32, "add.f32", float, "f")
DEF_RED(red_min_s32, "min.s32", int, "r")
DEF_RED(red_max_u32, "max.u32", uint32_t, "r")
DEF_RED(red_inc_u32, "inc.u32", uint32_t, "r")
DEF_RED(red_dec_u32, "dec.u32", uint32_t, "r")
DEF_RED(red_and_b32, "and.b32", uint32_t, "r")
DEF_RED(red_or_b32, "or.b32", uint32_t, "r")
DEF_RED(red_xor_b32, "xor.b32", uint32_t, "r")

// Host forms of the ISA's definitions.
template <typename U>
U isa_inc(U r, U s) {
  return r >= s ? 0 : r + 1;
}
template <typename U>
U isa_dec(U r, U s) {
  return (r == 0 || r > s) ? s : r - 1;
}

// Per-thread operands (t is the thread's index in the grid).
__host__ __device__ inline uint32_t hash32(uint32_t t) {
  return t * 2654435761u ^ (t >> 3) ^ 0x1b873593u;
}
__host__ __device__ inline u64 hash64(uint32_t t) {
  return (static_cast<u64>(hash32(t)) << 32) ^ (static_cast<u64>(t) * 0x9e3779b97f4a7c15ull);
}

// Wrap values and starting points of the inc/dec counters.
constexpr uint32_t kIncWrap = 9, kDecWrap = 9, kDecStart = 5, kDecBigStart = 100;
constexpr uint32_t kRedIncWrap = 1000, kRedDecWrap = 1000, kRedDecStart = 500;

struct Atoms {
  uint32_t add_u32;
  uint32_t inc, dec, dec_big;
  u64 add_u64;
  float add_f32;
  int min_s32, max_s32;
  double add_f64;
  uint32_t min_u32, max_u32;
  s64 min_s64, max_s64;
  u64 min_u64, max_u64;
  uint32_t cas_cnt, exch;
  u64 cas_sum64;
  uint32_t and32, or32, xor32, scoped;
  u64 and64, or64, xor64, exch64;
  uint32_t red_add;
  float red_f32;
  u64 red_add64;
  int red_min;
  uint32_t red_max, red_inc, red_dec, red_and, red_or, red_xor;
  uint32_t bins[16];
};

Atoms initial_atoms() {
  Atoms a;
  std::memset(&a, 0, sizeof a);
  a.dec = kDecStart;
  a.dec_big = kDecBigStart;
  a.min_s32 = INT32_MAX, a.max_s32 = INT32_MIN;
  a.min_u32 = 0xffffffffu, a.max_u32 = 0;
  a.min_s64 = INT64_MAX, a.max_s64 = INT64_MIN;
  a.min_u64 = ~0ull, a.max_u64 = 0;
  a.and32 = 0xffffffffu, a.and64 = ~0ull;
  a.red_min = INT32_MAX, a.red_dec = kRedDecStart, a.red_and = 0xffffffffu;
  return a;
}

// Old values each thread gets back, kOlds arrays of the launch's thread count.
enum { kOldAdd, kOldF32, kOldInc, kOldDec, kOldDecBig, kOldExch, kOldExch64Lo, kOldF64, kOlds };

template <int S>
__device__ void do_atoms(Atoms* A, uint32_t t, uint32_t slot, uint32_t nslots, uint32_t* olds) {
  olds[kOldAdd * nslots + slot] = atom_add_u32<S>(&A->add_u32, 1u);
  olds[kOldF32 * nslots + slot] = __float_as_uint(atom_add_f32<S>(&A->add_f32, 0.5f));
  olds[kOldF64 * nslots + slot] = static_cast<uint32_t>(atom_add_f64<S>(&A->add_f64, 0.25) * 4.0);
  atom_add_u64<S>(&A->add_u64, (1ull << 33) + t);
  atom_min_s32<S>(&A->min_s32, static_cast<int>(hash32(t)));
  atom_max_s32<S>(&A->max_s32, static_cast<int>(hash32(t)));
  atom_min_u32<S>(&A->min_u32, hash32(t));
  atom_max_u32<S>(&A->max_u32, hash32(t));
  atom_min_s64<S>(&A->min_s64, static_cast<s64>(hash64(t)));
  atom_max_s64<S>(&A->max_s64, static_cast<s64>(hash64(t)));
  atom_min_u64<S>(&A->min_u64, hash64(t));
  atom_max_u64<S>(&A->max_u64, hash64(t));
  olds[kOldInc * nslots + slot] = atom_inc_u32<S>(&A->inc, kIncWrap);
  olds[kOldDec * nslots + slot] = atom_dec_u32<S>(&A->dec, kDecWrap);
  olds[kOldDecBig * nslots + slot] = atom_dec_u32<S>(&A->dec_big, kDecWrap);
  olds[kOldExch * nslots + slot] = atom_exch_b32<S>(&A->exch, t + 1);
  olds[kOldExch64Lo * nslots + slot] = static_cast<uint32_t>(
      atom_exch_b64<S>(&A->exch64, (static_cast<u64>(t + 1) << 32) | (t + 1)) >> 32);
  atom_and_b32<S>(&A->and32, ~hash32(t));  // (~(1 << n) would compile to a rotate)
  atom_or_b32<S>(&A->or32, 1u << (t % 32));
  atom_xor_b32<S>(&A->xor32, hash32(t));
  atom_and_b64<S>(&A->and64, ~hash64(t));
  atom_or_b64<S>(&A->or64, 1ull << (t % 64));
  atom_xor_b64<S>(&A->xor64, hash64(t));
  // CAS loops: a counter and a 64-bit sum.
  uint32_t cur = *reinterpret_cast<volatile uint32_t*>(&A->cas_cnt);
  for (;;) {
    const uint32_t prev = atom_cas_b32<S>(&A->cas_cnt, cur, cur + 1);
    if (prev == cur) break;
    cur = prev;
  }
  u64 cur64 = *reinterpret_cast<volatile u64*>(&A->cas_sum64);
  for (;;) {
    const u64 prev = atom_cas_b64<S>(&A->cas_sum64, cur64, cur64 + hash64(t));
    if (prev == cur64) break;
    cur64 = prev;
  }
  red_add_u32<S>(&A->red_add, t);
  red_add_u64<S>(&A->red_add64, hash64(t) >> 8);
  red_add_f32<S>(&A->red_f32, 0.25f);
  red_min_s32<S>(&A->red_min, static_cast<int>(hash32(t * 3)));
  red_max_u32<S>(&A->red_max, hash32(t * 5));
  red_inc_u32<S>(&A->red_inc, kRedIncWrap);
  red_dec_u32<S>(&A->red_dec, kRedDecWrap);
  red_and_b32<S>(&A->red_and, ~hash32(t * 7 + 1));
  red_or_b32<S>(&A->red_or, 1u << ((t * 7) % 32));
  red_xor_b32<S>(&A->red_xor, hash32(t + 17));
  atomicAdd(&A->bins[t % 16], 1u);
  // Ordered and scoped forms, one per thread, all adding 1.
  uint32_t d;
  if (S == 0) {
    switch (t % 4) {
      case 0:
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                     : "=r"(d)
                     : "l"(&A->scoped)
                     : "memory");
        break;
      case 1:
        asm volatile("atom.relaxed.sys.global.add.u32 %0, [%1], 1;"
                     : "=r"(d)
                     : "l"(&A->scoped)
                     : "memory");
        break;
      case 2:
        asm volatile("atom.add.u32 %0, [%1], 1;" : "=r"(d) : "l"(&A->scoped) : "memory");
        break;  // generic
      default:
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(&A->scoped) : "memory");
        break;
    }
  } else {
    switch (t % 4) {
      case 0:
        asm volatile("atom.acquire.cta.shared::cta.add.u32 %0, [%1], 1;"
                     : "=r"(d)
                     : "r"(smem(&A->scoped))
                     : "memory");
        break;
      case 1:
        asm volatile("atom.relaxed.cta.shared.add.u32 %0, [%1], 1;"
                     : "=r"(d)
                     : "r"(smem(&A->scoped))
                     : "memory");
        break;
      case 2:
        asm volatile("atom.add.u32 %0, [%1], 1;" : "=r"(d) : "l"(&A->scoped) : "memory");
        break;  // generic
      default:
        asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(smem(&A->scoped)) : "memory");
        break;
    }
  }
}

__global__ void k_atoms_global(Atoms* A, uint32_t* olds) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  do_atoms<0>(A, t, t, gridDim.x * blockDim.x, olds);
}

// Every block works on its own copy in shared memory (128 threads contend) and writes it out.
__global__ void k_atoms_shared(const Atoms* init, Atoms* out, uint32_t* olds) {
  __shared__ Atoms A;
  if (threadIdx.x == 0) A = *init;
  __syncthreads();
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  do_atoms<1>(&A, t, t, gridDim.x * blockDim.x, olds);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = A;
}

// The expected final state after the threads [t0, t0 + n) have run do_atoms on `a`.
void expect_atoms(Atoms& a, uint32_t t0, uint32_t n) {
  for (uint32_t t = t0; t < t0 + n; ++t) {
    a.add_u32 += 1;
    a.add_f32 += 0.5f;
    a.add_f64 += 0.25;
    a.add_u64 += (1ull << 33) + t;
    a.min_s32 = std::min(a.min_s32, static_cast<int>(hash32(t)));
    a.max_s32 = std::max(a.max_s32, static_cast<int>(hash32(t)));
    a.min_u32 = std::min(a.min_u32, hash32(t));
    a.max_u32 = std::max(a.max_u32, hash32(t));
    a.min_s64 = std::min(a.min_s64, static_cast<s64>(hash64(t)));
    a.max_s64 = std::max(a.max_s64, static_cast<s64>(hash64(t)));
    a.min_u64 = std::min(a.min_u64, hash64(t));
    a.max_u64 = std::max(a.max_u64, hash64(t));
    a.inc = isa_inc(a.inc, kIncWrap);
    a.dec = isa_dec(a.dec, kDecWrap);
    a.dec_big = isa_dec(a.dec_big, kDecWrap);
    a.and32 &= ~hash32(t);
    a.or32 |= 1u << (t % 32);
    a.xor32 ^= hash32(t);
    a.and64 &= ~hash64(t);
    a.or64 |= 1ull << (t % 64);
    a.xor64 ^= hash64(t);
    a.cas_cnt += 1;
    a.cas_sum64 += hash64(t);
    a.red_add += t;
    a.red_add64 += hash64(t) >> 8;
    a.red_f32 += 0.25f;
    a.red_min = std::min(a.red_min, static_cast<int>(hash32(t * 3)));
    a.red_max = std::max(a.red_max, hash32(t * 5));
    a.red_inc = isa_inc(a.red_inc, kRedIncWrap);
    a.red_dec = isa_dec(a.red_dec, kRedDecWrap);
    a.red_and &= ~hash32(t * 7 + 1);
    a.red_or |= 1u << ((t * 7) % 32);
    a.red_xor ^= hash32(t + 17);
    a.bins[t % 16] += 1;
    a.scoped += 1;
  }
  // exch / exch64 are checked through the old values (the final value is one of the operands).
}

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
uint64_t f64_bits(double f) {
  uint64_t b;
  std::memcpy(&b, &f, 8);
  return b;
}

// Compares every field but the exch results.
void compare_atoms(const char* where, const Atoms& g, const Atoms& e) {
  auto c = [&](const char* name, auto got, auto exp) { conf_check(name, where, got, exp); };
  c("atom.add.u32 (add 1 from every thread)", g.add_u32, e.add_u32);
  c("atom.add.u64", g.add_u64, e.add_u64);
  conf_check_bits("atom.add.f32 (0.5 from every thread)", where, f32_bits(g.add_f32),
                  f32_bits(e.add_f32), 32);
  conf_check_bits("atom.add.f64 (0.25 from every thread)", where, f64_bits(g.add_f64),
                  f64_bits(e.add_f64), 64);
  c("atom.min.s32", g.min_s32, e.min_s32);
  c("atom.max.s32", g.max_s32, e.max_s32);
  c("atom.min.u32", g.min_u32, e.min_u32);
  c("atom.max.u32", g.max_u32, e.max_u32);
  c("atom.min.s64", g.min_s64, e.min_s64);
  c("atom.max.s64", g.max_s64, e.max_s64);
  c("atom.min.u64", g.min_u64, e.min_u64);
  c("atom.max.u64", g.max_u64, e.max_u64);
  c("atom.inc.u32 (wrap 9)", g.inc, e.inc);
  c("atom.dec.u32 (wrap 9, from 5)", g.dec, e.dec);
  c("atom.dec.u32 (wrap 9, from 100)", g.dec_big, e.dec_big);
  c("atom.and.b32", g.and32, e.and32);
  c("atom.or.b32", g.or32, e.or32);
  c("atom.xor.b32", g.xor32, e.xor32);
  c("atom.and.b64", g.and64, e.and64);
  c("atom.or.b64", g.or64, e.or64);
  c("atom.xor.b64", g.xor64, e.xor64);
  c("atom.cas.b32 loop counter", g.cas_cnt, e.cas_cnt);
  c("atom.cas.b64 loop sum", g.cas_sum64, e.cas_sum64);
  c("red.add.u32", g.red_add, e.red_add);
  c("red.add.u64", g.red_add64, e.red_add64);
  conf_check_bits("red.add.f32 (0.25 from every thread)", where, f32_bits(g.red_f32),
                  f32_bits(e.red_f32), 32);
  c("red.min.s32", g.red_min, e.red_min);
  c("red.max.u32", g.red_max, e.red_max);
  c("red.inc.u32 (wrap 1000)", g.red_inc, e.red_inc);
  c("red.dec.u32 (wrap 1000, from 500)", g.red_dec, e.red_dec);
  c("red.and.b32", g.red_and, e.red_and);
  c("red.or.b32", g.red_or, e.red_or);
  c("red.xor.b32", g.red_xor, e.red_xor);
  for (int i = 0; i < 16; ++i) c("atomicAdd histogram bin", g.bins[i], e.bins[i]);
  c("atom/red with .sem/.scope and generic addressing", g.scoped, e.scoped);
}

// Checks that `got` equals `want` as multisets; reports the count of differences once.
void check_multiset(const char* name, const char* where, std::vector<uint32_t> got,
                    std::vector<uint32_t> want) {
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  size_t bad = 0, first = got.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      ++bad;
      if (first == got.size()) first = i;
    }
  conf_check_text(name, where, bad == 0,
                  bad ? conf_fmt("%zu of %zu sorted values differ (first at %zu: %u, expected %u)",
                                 bad, got.size(), first, got[first], want[first])
                            .s
                      : "the expected multiset",
                  "the values the ISA's definition produces, in any order");
}

// The old values threads [t0, t0 + n) of a launch got, stored at olds[k * total + t].
void check_olds(const char* where, const std::vector<uint32_t>& olds, uint32_t total, uint32_t t0,
                uint32_t n) {
  auto slice = [&](int k) {
    return std::vector<uint32_t>(olds.begin() + k * total + t0, olds.begin() + k * total + t0 + n);
  };
  std::vector<uint32_t> want(n);
  for (uint32_t i = 0; i < n; ++i) want[i] = i;
  check_multiset("atom.add.u32 old values: a permutation of 0..N-1", where, slice(kOldAdd), want);
  for (uint32_t i = 0; i < n; ++i) want[i] = f32_bits(0.5f * static_cast<float>(i));
  check_multiset("atom.add.f32 old values: 0, 0.5, 1, ...", where, slice(kOldF32), want);
  for (uint32_t i = 0; i < n; ++i) want[i] = i;
  check_multiset("atom.add.f64 old values * 4: 0..N-1", where, slice(kOldF64), want);
  uint32_t v = 0;
  for (uint32_t i = 0; i < n; ++i) want[i] = v, v = isa_inc(v, kIncWrap);
  check_multiset("atom.inc.u32 old values", where, slice(kOldInc), want);
  v = kDecStart;
  for (uint32_t i = 0; i < n; ++i) want[i] = v, v = isa_dec(v, kDecWrap);
  check_multiset("atom.dec.u32 old values (from 5)", where, slice(kOldDec), want);
  v = kDecBigStart;
  for (uint32_t i = 0; i < n; ++i) want[i] = v, v = isa_dec(v, kDecWrap);
  check_multiset("atom.dec.u32 old values (from 100 > wrap)", where, slice(kOldDecBig), want);
}

// exch: the old values plus the final value are the initial 0 plus every thread's operand.
void check_exch(const char* name, const char* where, const std::vector<uint32_t>& olds, int k,
                uint32_t total, uint32_t t0, uint32_t n, uint32_t final_value) {
  std::vector<uint32_t> got(olds.begin() + k * total + t0, olds.begin() + k * total + t0 + n);
  got.push_back(final_value);
  std::vector<uint32_t> want;
  want.push_back(0);
  for (uint32_t t = t0; t < t0 + n; ++t) want.push_back(t + 1);
  check_multiset(name, where, got, want);
}

// Everything one contended run can be checked for: threads [t0, t0 + n) of a launch of `total`
// threads took `init` to `got`.
void check_contended(const char* where, const Atoms& init, const Atoms& got,
                     const std::vector<uint32_t>& olds, uint32_t total, uint32_t t0, uint32_t n) {
  Atoms e = init;
  expect_atoms(e, t0, n);
  compare_atoms(where, got, e);
  check_olds(where, olds, total, t0, n);
  check_exch("atom.exch.b32 old values + final", where, olds, kOldExch, total, t0, n, got.exch);
  check_exch("atom.exch.b64 old values + final (high word)", where, olds, kOldExch64Lo, total, t0,
             n, static_cast<uint32_t>(got.exch64 >> 32));
}

void test_contention() {
  const uint32_t gblocks = 64, gthreads = 256, gn = gblocks * gthreads;
  const Atoms init = initial_atoms();
  Atoms* d_a;
  uint32_t* d_olds;
  CUDA_CHECK(cudaMalloc(&d_a, sizeof(Atoms) * 64));
  CUDA_CHECK(cudaMalloc(&d_olds, sizeof(uint32_t) * kOlds * gn));
  CUDA_CHECK(cudaMemcpy(d_a, &init, sizeof init, cudaMemcpyHostToDevice));
  k_atoms_global<<<gblocks, gthreads>>>(d_a, d_olds);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  Atoms got;
  CUDA_CHECK(cudaMemcpy(&got, d_a, sizeof got, cudaMemcpyDeviceToHost));
  std::vector<uint32_t> olds(static_cast<size_t>(kOlds) * gn);
  CUDA_CHECK(cudaMemcpy(olds.data(), d_olds, olds.size() * 4, cudaMemcpyDeviceToHost));
  check_contended("global, 64 blocks x 256 threads", init, got, olds, gn, 0, gn);
  conf_check("atom.exch.b64 final: both words from one operand", "global",
             static_cast<uint32_t>(got.exch64 >> 32), static_cast<uint32_t>(got.exch64));

  // Shared: 24 blocks of 128 threads, each on its own copy.
  const uint32_t sblocks = 24, sthreads = 128, sn = sblocks * sthreads;
  Atoms* d_init;
  CUDA_CHECK(cudaMalloc(&d_init, sizeof(Atoms)));
  CUDA_CHECK(cudaMemcpy(d_init, &init, sizeof init, cudaMemcpyHostToDevice));
  k_atoms_shared<<<sblocks, sthreads>>>(d_init, d_a, d_olds);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<Atoms> sgot(sblocks);
  CUDA_CHECK(cudaMemcpy(sgot.data(), d_a, sizeof(Atoms) * sblocks, cudaMemcpyDeviceToHost));
  CUDA_CHECK(
      cudaMemcpy(olds.data(), d_olds, sizeof(uint32_t) * kOlds * sn, cudaMemcpyDeviceToHost));
  for (uint32_t b = 0; b < sblocks; ++b)
    check_contended(conf_fmt("shared, block %u of 128 threads", b).s, init, sgot[b], olds, sn,
                    b * sthreads, sthreads);
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_init));
  CUDA_CHECK(cudaFree(d_olds));
}

// ---------------------------------------------------------------------------------------------
// atomicAdd from every thread of many blocks to one address, and a CAS spinlock.
// ---------------------------------------------------------------------------------------------
__global__ void k_one_counter(unsigned int* c, unsigned long long* c64) {
  atomicAdd(c, 1u);
  atomicAdd(c64, 3ull);
}

// Every thread takes a global spinlock with atomicCAS, updates two plain counters, releases with
// atomicExch. Threads of one warp contend for the same lock, which needs independent thread
// scheduling (sm_70+) to make progress. The spin is bounded; a thread that gives up counts in
// `gave_up` instead.
__global__ void k_spinlock(int* lock, volatile unsigned int* counters, unsigned int* gave_up) {
  bool done = false;
  for (long long spins = 0; spins < 2000000LL && !done; ++spins) {
    if (atomicCAS(lock, 0, 1) == 0) {
      __threadfence();
      counters[0] = counters[0] + 1;
      counters[1] = counters[1] + threadIdx.x;
      __threadfence();
      atomicExch(lock, 0);
      done = true;
    }
  }
  if (!done) atomicAdd(gave_up, 1u);
}

void test_counter_and_lock() {
  const unsigned blocks = 512, threads = 256;
  unsigned int* d_c;
  unsigned long long* d_c64;
  CUDA_CHECK(cudaMalloc(&d_c, 4));
  CUDA_CHECK(cudaMalloc(&d_c64, 8));
  CUDA_CHECK(cudaMemset(d_c, 0, 4));
  CUDA_CHECK(cudaMemset(d_c64, 0, 8));
  k_one_counter<<<blocks, threads>>>(d_c, d_c64);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned int c;
  unsigned long long c64;
  CUDA_CHECK(cudaMemcpy(&c, d_c, 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&c64, d_c64, 8, cudaMemcpyDeviceToHost));
  conf_check("atomicAdd(u32, 1) from 512 x 256 threads", "", c, blocks * threads);
  conf_check("atomicAdd(u64, 3) from 512 x 256 threads", "", c64, 3ull * blocks * threads);

  int* d_lock;
  unsigned int *d_cnt, *d_gave;
  CUDA_CHECK(cudaMalloc(&d_lock, 4));
  CUDA_CHECK(cudaMalloc(&d_cnt, 8));
  CUDA_CHECK(cudaMalloc(&d_gave, 4));
  CUDA_CHECK(cudaMemset(d_lock, 0, 4));
  CUDA_CHECK(cudaMemset(d_cnt, 0, 8));
  CUDA_CHECK(cudaMemset(d_gave, 0, 4));
  const unsigned lb = 4, lt = 64;
  k_spinlock<<<lb, lt>>>(d_lock, d_cnt, d_gave);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned int cnt[2], gave;
  CUDA_CHECK(cudaMemcpy(cnt, d_cnt, 8, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&gave, d_gave, 4, cudaMemcpyDeviceToHost));
  conf_check("atomicCAS spinlock: threads that gave up", "4 blocks x 64 threads", gave, 0u);
  conf_check("atomicCAS spinlock: critical sections", "4 blocks x 64 threads", cnt[0], lb * lt);
  conf_check("atomicCAS spinlock: sum of threadIdx.x", "4 blocks x 64 threads", cnt[1],
             lb * (lt * (lt - 1) / 2));
  CUDA_CHECK(cudaFree(d_c));
  CUDA_CHECK(cudaFree(d_c64));
  CUDA_CHECK(cudaFree(d_lock));
  CUDA_CHECK(cudaFree(d_cnt));
  CUDA_CHECK(cudaFree(d_gave));
}

// ---------------------------------------------------------------------------------------------
// f16 / bf16 adds (scalar and packed), 256 threads on one address in global and shared memory.
// ---------------------------------------------------------------------------------------------
// res: [0] shared half2 bits, [1] shared bf162 bits, [2] shared f16 | shared bf16 << 16.
// olds[t]: the old value of the global f16 scalar add.
__global__ void k_half_atomics(__half2* gh2, __nv_bfloat162* gb2, unsigned short* gh,
                               unsigned short* gb, uint32_t* res, uint32_t* olds) {
  __shared__ __half2 sh2;
  __shared__ __nv_bfloat162 sb2;
  __shared__ unsigned short sh, sb;
  if (threadIdx.x == 0) {
    sh2 = __floats2half2_rn(0.0f, 0.0f);
    sb2 = __floats2bfloat162_rn(0.0f, 0.0f);
    sh = 0, sb = 0;
  }
  __syncthreads();
  const __half2 one_half = __floats2half2_rn(1.0f, 0.5f);
  const __nv_bfloat162 one_half_b = __floats2bfloat162_rn(1.0f, 0.5f);
  atomicAdd(gh2, one_half);
  atomicAdd(gb2, one_half_b);
  atomicAdd(&sh2, one_half);
  atomicAdd(&sb2, one_half_b);
  const unsigned short h_one = 0x3c00;      // f16 1.0
  const unsigned short b_quarter = 0x3e80;  // bf16 0.25
  unsigned short d;
  asm volatile("atom.global.add.noftz.f16 %0, [%1], %2;"
               : "=h"(d)
               : "l"(gh), "h"(h_one)
               : "memory");
  olds[threadIdx.x] = d;
  asm volatile("atom.global.add.noftz.bf16 %0, [%1], %2;"
               : "=h"(d)
               : "l"(gb), "h"(b_quarter)
               : "memory");
  asm volatile("atom.shared.add.noftz.f16 %0, [%1], %2;"
               : "=h"(d)
               : "r"(smem(&sh)), "h"(h_one)
               : "memory");
  asm volatile("atom.shared.add.noftz.bf16 %0, [%1], %2;"
               : "=h"(d)
               : "r"(smem(&sb)), "h"(b_quarter)
               : "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t w;
    std::memcpy(&w, &sh2, 4);
    res[0] = w;
    std::memcpy(&w, &sb2, 4);
    res[1] = w;
    res[2] = sh | (static_cast<uint32_t>(sb) << 16);
  }
}

// atom.global.v2.f32.add (sm_90): 256 threads add (1.0, 0.25); olds[t], olds[256 + t] are the
// old values of the two elements (each element is atomic on its own).
__global__ void k_atom_v2(float* gv2, uint32_t* olds) {
  float o0, o1;
  asm volatile("atom.global.v2.f32.add {%0, %1}, [%2], {%3, %4};"
               : "=f"(o0), "=f"(o1)
               : "l"(gv2), "f"(1.0f), "f"(0.25f)
               : "memory");
  olds[threadIdx.x] = __float_as_uint(o0);
  olds[256 + threadIdx.x] = __float_as_uint(o1);
}

void test_half_atomics() {
  __half2* gh2;
  __nv_bfloat162* gb2;
  unsigned short *gh, *gb;
  uint32_t *res, *d_olds;
  CUDA_CHECK(cudaMalloc(&gh2, 4));
  CUDA_CHECK(cudaMalloc(&gb2, 4));
  CUDA_CHECK(cudaMalloc(&gh, 2));
  CUDA_CHECK(cudaMalloc(&gb, 2));
  CUDA_CHECK(cudaMalloc(&res, 4 * 4));
  CUDA_CHECK(cudaMalloc(&d_olds, 512 * 4));
  CUDA_CHECK(cudaMemset(gh2, 0, 4));
  CUDA_CHECK(cudaMemset(gb2, 0, 4));
  CUDA_CHECK(cudaMemset(gh, 0, 2));
  CUDA_CHECK(cudaMemset(gb, 0, 2));
  CUDA_CHECK(cudaMemset(res, 0, 4 * 4));
  k_half_atomics<<<1, 256>>>(gh2, gb2, gh, gb, res, d_olds);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  uint32_t r[4], h2, b2;
  unsigned short h, b;
  CUDA_CHECK(cudaMemcpy(r, res, sizeof r, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&h2, gh2, 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&b2, gb2, 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&h, gh, 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&b, gb, 2, cudaMemcpyDeviceToHost));
  // 256 x (1.0, 0.5) = (256, 128); every partial sum is exact in f16 and bf16.
  // f16: 256 = 0x5c00, 128 = 0x5800; bf16: 256 = 0x4380, 128 = 0x4300; bf16 64 (256 x 0.25) =
  // 0x4280.
  const uint32_t eh2 = 0x5c00u | (0x5800u << 16), eb2 = 0x4380u | (0x4300u << 16);
  conf_check_bits("atomicAdd(__half2) global", "256 x (1.0, 0.5)", h2, eh2, 32);
  conf_check_bits("atomicAdd(__nv_bfloat162) global", "256 x (1.0, 0.5)", b2, eb2, 32);
  conf_check_bits("atomicAdd(__half2) shared", "256 x (1.0, 0.5)", r[0], eh2, 32);
  conf_check_bits("atomicAdd(__nv_bfloat162) shared", "256 x (1.0, 0.5)", r[1], eb2, 32);
  conf_check_bits("atom.global.add.noftz.f16", "256 x 1.0", h, 0x5c00, 16);
  conf_check_bits("atom.global.add.noftz.bf16", "256 x 0.25", b, 0x4280, 16);
  conf_check_bits("atom.shared.add.noftz.f16", "256 x 1.0", r[2] & 0xffffu, 0x5c00, 16);
  conf_check_bits("atom.shared.add.noftz.bf16", "256 x 0.25", r[2] >> 16, 0x4280, 16);
  std::vector<uint32_t> olds(512);
  CUDA_CHECK(cudaMemcpy(olds.data(), d_olds, 256 * 4, cudaMemcpyDeviceToHost));
  std::vector<uint32_t> want_h(256), want0(256), want1(256);
  for (int k = 0; k < 256; ++k) {
    want_h[k] = __half_as_ushort(__float2half_rn(static_cast<float>(k)));  // host conversion, exact
    want0[k] = f32_bits(static_cast<float>(k));
    want1[k] = f32_bits(0.25f * static_cast<float>(k));
  }
  check_multiset("atom.global.add.noftz.f16 old values: 0..255", "",
                 std::vector<uint32_t>(olds.begin(), olds.begin() + 256), want_h);

  float* gv2;
  CUDA_CHECK(cudaMalloc(&gv2, 8));
  CUDA_CHECK(cudaMemset(gv2, 0, 8));
  k_atom_v2<<<1, 256>>>(gv2, d_olds);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  uint32_t v2[2];
  CUDA_CHECK(cudaMemcpy(v2, gv2, 8, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(olds.data(), d_olds, 512 * 4, cudaMemcpyDeviceToHost));
  conf_check_bits("atom.global.v2.f32.add [0]", "256 x 1.0", v2[0], f32_bits(256.0f), 32);
  conf_check_bits("atom.global.v2.f32.add [1]", "256 x 0.25", v2[1], f32_bits(64.0f), 32);
  check_multiset("atom.global.v2.f32.add [0] old values", "",
                 std::vector<uint32_t>(olds.begin(), olds.begin() + 256), want0);
  check_multiset("atom.global.v2.f32.add [1] old values", "",
                 std::vector<uint32_t>(olds.begin() + 256, olds.end()), want1);
  CUDA_CHECK(cudaFree(gh2));
  CUDA_CHECK(cudaFree(gb2));
  CUDA_CHECK(cudaFree(gh));
  CUDA_CHECK(cudaFree(gb));
  CUDA_CHECK(cudaFree(gv2));
  CUDA_CHECK(cudaFree(res));
  CUDA_CHECK(cudaFree(d_olds));
}

// ---------------------------------------------------------------------------------------------
// Single-thread table: exact old and new values at the edges of each definition.
// ---------------------------------------------------------------------------------------------
enum Op { kAdd, kInc, kDec, kMinS, kMaxS, kMinU, kMaxU, kAnd, kOr, kXor, kExch, kCas, kAddF };
const char* const kOpName32[] = {"add.u32",  "inc.u32", "dec.u32", "min.s32", "max.s32",
                                 "min.u32",  "max.u32", "and.b32", "or.b32",  "xor.b32",
                                 "exch.b32", "cas.b32", "add.f32"};
const char* const kOpName64[] = {"add.u64",  "",        "",        "min.s64", "max.s64",
                                 "min.u64",  "max.u64", "and.b64", "or.b64",  "xor.b64",
                                 "exch.b64", "cas.b64", "add.f64"};
struct Case32 {
  int op;
  uint32_t init, b, c;
};
struct Case64 {
  int op;
  u64 init, b, c;
};

uint32_t fbits(float f) {
  return f32_bits(f);
}
u64 dbits(double d) {
  return f64_bits(d);
}

const Case32 kCases32[] = {
    {kAdd, 0xffffffffu, 2, 0},
    {kAdd, 0x7fffffffu, 1, 0},
    {kInc, 0, 0, 0},
    {kInc, 5, 5, 0},
    {kInc, 6, 5, 0},
    {kInc, 4, 5, 0},
    {kInc, 0xffffffffu, 0xffffffffu, 0},
    {kInc, 7, 0xffffffffu, 0},
    {kInc, 100, 7, 0},
    {kDec, 0, 5, 0},
    {kDec, 6, 5, 0},
    {kDec, 3, 5, 0},
    {kDec, 0, 0, 0},
    {kDec, 1, 0, 0},
    {kDec, 5, 5, 0},
    {kDec, 0, 0xffffffffu, 0},
    {kDec, 0xffffffffu, 0xfffffffeu, 0},
    {kMinS, 0x80000000u, 1, 0},
    {kMinS, 5, 0xffffffffu, 0},
    {kMaxS, 0x80000000u, 1, 0},
    {kMaxS, 0xfffffffeu, 0xffffffffu, 0},
    {kMinU, 0x80000000u, 1, 0},
    {kMaxU, 0x80000000u, 1, 0},
    {kAnd, 0xf0f0f0f0u, 0xff00ff00u, 0},
    {kOr, 0xf0f0f0f0u, 0xff00ff00u, 0},
    {kXor, 0xf0f0f0f0u, 0xff00ff00u, 0},
    {kExch, 123, 456, 0},
    {kCas, 5, 5, 9},
    {kCas, 5, 4, 9},
    {kCas, 0xffffffffu, 0xffffffffu, 0},
    {kAddF, fbits(1.0f), fbits(5.9604645e-8f), 0},   // 1 + 2^-24: a tie, rounds to even (1.0)
    {kAddF, fbits(1.0f), fbits(1.78813934e-7f), 0},  // 1 + 3 * 2^-24: a tie, rounds to 1 + 2^-22
    {kAddF, fbits(16777216.0f), fbits(1.0f), 0},     // 2^24 + 1: a tie, stays 2^24
    {kAddF, fbits(-0.0f), fbits(0.0f), 0},           // -0 + +0 = +0
    {kAddF, fbits(3.5f), fbits(-1.25f), 0},
};
constexpr int kNum32 = sizeof(kCases32) / sizeof(kCases32[0]);

const Case64 kCases64[] = {
    {kAdd, ~0ull, 2, 0},
    {kAdd, 0x00000000ffffffffull, 1, 0},
    {kMinS, 0x8000000000000000ull, 1, 0},
    {kMaxS, 0x8000000000000000ull, 1, 0},
    {kMinS, 0xffffffff00000000ull, 0x00000000ffffffffull, 0},
    {kMinU, 0x8000000000000000ull, 1, 0},
    {kMaxU, 0x8000000000000000ull, 1, 0},
    {kMaxU, 0x00000001ffffffffull, 0x0000000200000000ull, 0},
    {kAnd, 0xf0f0f0f0f0f0f0f0ull, 0xff00ff00ff00ff00ull, 0},
    {kOr, 0xf0f0f0f0f0f0f0f0ull, 0x00ff00ff00ff00ffull, 0},
    {kXor, 0xf0f0f0f0f0f0f0f0ull, 0xffffffff00000000ull, 0},
    {kExch, 0x1111111122222222ull, 0x3333333344444444ull, 0},
    {kCas, 0x0000000100000005ull, 0x0000000200000005ull,
     7},  // differs only in the high word: no swap
    {kCas, 0x0000000100000005ull, 0x0000000100000005ull, 0xabcdef0123456789ull},
    {kAddF, dbits(1.0), dbits(1.1102230246251565e-16), 0},  // 1 + 2^-53: tie, stays 1
    {kAddF, dbits(1.0), dbits(3.3306690738754696e-16),
     0},  // 1 + 3 * 2^-53: tie, rounds up to 1 + 2^-51
    {kAddF, dbits(0.1), dbits(0.2), 0},
};
constexpr int kNum64 = sizeof(kCases64) / sizeof(kCases64[0]);

template <int S>
__device__ void run_case32(const Case32& c, uint32_t* m, uint32_t* out) {
  *m = c.init;
  uint32_t d = 0;
  switch (c.op) {
    case kAdd:
      d = atom_add_u32<S>(m, c.b);
      break;
    case kInc:
      d = atom_inc_u32<S>(m, c.b);
      break;
    case kDec:
      d = atom_dec_u32<S>(m, c.b);
      break;
    case kMinS:
      d = static_cast<uint32_t>(atom_min_s32<S>(reinterpret_cast<int*>(m), static_cast<int>(c.b)));
      break;
    case kMaxS:
      d = static_cast<uint32_t>(atom_max_s32<S>(reinterpret_cast<int*>(m), static_cast<int>(c.b)));
      break;
    case kMinU:
      d = atom_min_u32<S>(m, c.b);
      break;
    case kMaxU:
      d = atom_max_u32<S>(m, c.b);
      break;
    case kAnd:
      d = atom_and_b32<S>(m, c.b);
      break;
    case kOr:
      d = atom_or_b32<S>(m, c.b);
      break;
    case kXor:
      d = atom_xor_b32<S>(m, c.b);
      break;
    case kExch:
      d = atom_exch_b32<S>(m, c.b);
      break;
    case kCas:
      d = atom_cas_b32<S>(m, c.b, c.c);
      break;
    default:
      d = __float_as_uint(atom_add_f32<S>(reinterpret_cast<float*>(m), __uint_as_float(c.b)));
      break;
  }
  out[0] = d;
  out[1] = *m;
}

template <int S>
__device__ void run_case64(const Case64& c, u64* m, u64* out) {
  *m = c.init;
  u64 d = 0;
  switch (c.op) {
    case kAdd:
      d = atom_add_u64<S>(m, c.b);
      break;
    case kMinS:
      d = static_cast<u64>(atom_min_s64<S>(reinterpret_cast<s64*>(m), static_cast<s64>(c.b)));
      break;
    case kMaxS:
      d = static_cast<u64>(atom_max_s64<S>(reinterpret_cast<s64*>(m), static_cast<s64>(c.b)));
      break;
    case kMinU:
      d = atom_min_u64<S>(m, c.b);
      break;
    case kMaxU:
      d = atom_max_u64<S>(m, c.b);
      break;
    case kAnd:
      d = atom_and_b64<S>(m, c.b);
      break;
    case kOr:
      d = atom_or_b64<S>(m, c.b);
      break;
    case kXor:
      d = atom_xor_b64<S>(m, c.b);
      break;
    case kExch:
      d = atom_exch_b64<S>(m, c.b);
      break;
    case kCas:
      d = atom_cas_b64<S>(m, c.b, c.c);
      break;
    default:
      d = static_cast<u64>(__double_as_longlong(atom_add_f64<S>(
          reinterpret_cast<double*>(m), __longlong_as_double(static_cast<s64>(c.b)))));
      break;
  }
  out[0] = d;
  out[1] = *m;
}

__global__ void k_single(const Case32* c32, int n32, const Case64* c64, int n64, uint32_t* gm32,
                         u64* gm64, uint32_t* out32, u64* out64) {
  __shared__ uint32_t sm32;
  __shared__ u64 sm64;
  if (threadIdx.x != 0) return;
  for (int i = 0; i < n32; ++i) {
    run_case32<0>(c32[i], gm32 + i, out32 + 4 * i);
    run_case32<1>(c32[i], &sm32, out32 + 4 * i + 2);
  }
  for (int i = 0; i < n64; ++i) {
    run_case64<0>(c64[i], gm64 + i, out64 + 4 * i);
    run_case64<1>(c64[i], &sm64, out64 + 4 * i + 2);
  }
}

// The ISA's old value d and new memory value m of one single-thread case, 32- or 64-bit (inc and
// dec have no 64-bit form, so the 64-bit table holds no such case).
template <typename Case, typename U>
void expect(const Case& c, U* d, U* m) {
  using S = typename std::make_signed<U>::type;
  using F = typename std::conditional<sizeof(U) == 4, float, double>::type;
  const U r = c.init, s = c.b;
  *d = r;
  switch (c.op) {
    case kAdd:
      *m = r + s;
      break;
    case kInc:
      *m = isa_inc(r, s);
      break;
    case kDec:
      *m = isa_dec(r, s);
      break;
    case kMinS:
      *m = static_cast<U>(std::min(static_cast<S>(r), static_cast<S>(s)));
      break;
    case kMaxS:
      *m = static_cast<U>(std::max(static_cast<S>(r), static_cast<S>(s)));
      break;
    case kMinU:
      *m = std::min(r, s);
      break;
    case kMaxU:
      *m = std::max(r, s);
      break;
    case kAnd:
      *m = r & s;
      break;
    case kOr:
      *m = r | s;
      break;
    case kXor:
      *m = r ^ s;
      break;
    case kExch:
      *m = s;
      break;
    case kCas:
      *m = r == s ? c.c : r;
      break;
    default: {
      F a, b;
      std::memcpy(&a, &r, sizeof a);
      std::memcpy(&b, &s, sizeof b);
      const F sum = a + b;  // the host rounds to nearest even, as atom.add.f32/.f64 does
      std::memcpy(m, &sum, sizeof sum);
    }
  }
}

ConfStr show_case(const Case32& c) {
  return conf_fmt("[a]=0x%08x b=0x%08x c=0x%08x", c.init, c.b, c.c);
}
ConfStr show_case(const Case64& c) {
  return conf_fmt("[a]=0x%016llx b=0x%016llx c=0x%016llx", c.init, c.b, c.c);
}

// got holds, per case, the old value and the new [a] from global memory, then from shared.
template <typename Case, int N, typename U>
void check_single(const Case (&cases)[N], const char* const* op_names, const std::vector<U>& got) {
  const char* const space[2] = {"atom.global.", "atom.shared."};
  for (int i = 0; i < N; ++i) {
    U ed, em;
    expect(cases[i], &ed, &em);
    const ConfStr in = show_case(cases[i]);
    for (int sp = 0; sp < 2; ++sp) {
      char name[64];
      std::snprintf(name, sizeof name, "%s%s", space[sp], op_names[cases[i].op]);
      conf_check(name, conf_fmt("%s: old", in.s), got[4 * i + 2 * sp], ed);
      conf_check(name, conf_fmt("%s: new [a]", in.s), got[4 * i + 2 * sp + 1], em);
    }
  }
}

void test_single() {
  Case32* d_c32;
  Case64* d_c64;
  uint32_t *d_m32, *d_o32;
  u64 *d_m64, *d_o64;
  CUDA_CHECK(cudaMalloc(&d_c32, sizeof kCases32));
  CUDA_CHECK(cudaMalloc(&d_c64, sizeof kCases64));
  CUDA_CHECK(cudaMalloc(&d_m32, kNum32 * 4));
  CUDA_CHECK(cudaMalloc(&d_m64, kNum64 * 8));
  CUDA_CHECK(cudaMalloc(&d_o32, kNum32 * 4 * 4));
  CUDA_CHECK(cudaMalloc(&d_o64, kNum64 * 4 * 8));
  CUDA_CHECK(cudaMemcpy(d_c32, kCases32, sizeof kCases32, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_c64, kCases64, sizeof kCases64, cudaMemcpyHostToDevice));
  k_single<<<1, 32>>>(d_c32, kNum32, d_c64, kNum64, d_m32, d_m64, d_o32, d_o64);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> o32(kNum32 * 4);
  std::vector<u64> o64(kNum64 * 4);
  CUDA_CHECK(cudaMemcpy(o32.data(), d_o32, o32.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(o64.data(), d_o64, o64.size() * 8, cudaMemcpyDeviceToHost));
  check_single(kCases32, kOpName32, o32);
  check_single(kCases64, kOpName64, o64);
  CUDA_CHECK(cudaFree(d_c32));
  CUDA_CHECK(cudaFree(d_c64));
  CUDA_CHECK(cudaFree(d_m32));
  CUDA_CHECK(cudaFree(d_m64));
  CUDA_CHECK(cudaFree(d_o32));
  CUDA_CHECK(cudaFree(d_o64));
}

}  // namespace

int main() {
  conf_require_device();
  test_single();
  test_contention();
  test_counter_and_lock();
  test_half_atomics();  // last: its atom.v2 kernel is the newest instruction form here
  return conf_finish("atomics");
}
