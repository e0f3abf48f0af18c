// Memory instructions and the runtime's memory API: ld/st of every width and vector shape (with
// the sign/zero extension of narrow loads into 32-bit registers and the truncation of wide
// registers by narrow stores), static and dynamic shared memory, generic addressing (cvta,
// isspacep), dynamically indexed local arrays, __constant__ and initialized __device__ variables
// with cudaMemcpyTo/FromSymbol, pitched 2D allocations and copies, cp.async (4/8/16 bytes, zero
// fill, groups), ld.global.nc, volatile accesses and prefetch.
//
// Expected values come from the host copies of the inputs and the PTX ISA's rules: a narrow
// integer loaded into a wider register is sign-extended for .s types and zero-extended for .u
// types; st of a narrow type writes the low bytes of the register; memory is little-endian.
#include <vector>

#include "conf_common.h"

namespace {

__host__ __device__ inline uint8_t pattern_byte(uint32_t i) {
  return static_cast<uint8_t>(i * 37u + 0x81u);
}

template <typename T>
T host_load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Loads and stores of every width, in global, shared and local memory.
// ---------------------------------------------------------------------------------------------
constexpr int kInBytes = 128;
constexpr int kNumLoads = 40;

// Runs the load table against `base` (a generic pointer to kInBytes bytes; `space` selects the
// instruction's state space: 0 global, 1 shared, 2 local; the address is converted with
// cvta.to.<space>). Each result is widened to 64 bits in out[].
template <int SPACE>
__device__ void run_loads(const uint8_t* base, unsigned long long* out) {
  unsigned long long a;
  if (SPACE == 0)
    asm("cvta.to.global.u64 %0, %1;" : "=l"(a) : "l"(base));
  else if (SPACE == 1)
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(base));
  else
    asm("cvta.to.local.u64 %0, %1;" : "=l"(a) : "l"(base));
  uint32_t r0, r1, r2, r3;
  unsigned short h0, h1, h2, h3;
  unsigned long long d0, d1;
  int n = 0;
#define LD1(sp, ty, off)                                                              \
  asm volatile("ld." sp "." ty " %0, [%1+" #off "];" : "=r"(r0) : "l"(a) : "memory"); \
  out[n++] = r0;
#define LDH(sp, ty, off)                                                              \
  asm volatile("ld." sp "." ty " %0, [%1+" #off "];" : "=h"(h0) : "l"(a) : "memory"); \
  out[n++] = h0;
#define LDL(sp, ty, off)                                                              \
  asm volatile("ld." sp "." ty " %0, [%1+" #off "];" : "=l"(d0) : "l"(a) : "memory"); \
  out[n++] = d0;
#define LDV2(sp, ty, off)                                     \
  asm volatile("ld." sp ".v2." ty " {%0, %1}, [%2+" #off "];" \
               : "=r"(r0), "=r"(r1)                           \
               : "l"(a)                                       \
               : "memory");                                   \
  out[n++] = r0;                                              \
  out[n++] = r1;
#define LDV4(sp, ty, off)                                             \
  asm volatile("ld." sp ".v4." ty " {%0, %1, %2, %3}, [%4+" #off "];" \
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)               \
               : "l"(a)                                               \
               : "memory");                                           \
  out[n++] = r0;                                                      \
  out[n++] = r1;                                                      \
  out[n++] = r2;                                                      \
  out[n++] = r3;
#define LOAD_TABLE(sp)                                                                           \
  LD1(sp, "u8", 3)    /* 0 */                                                                    \
  LD1(sp, "s8", 3)    /* 1 */                                                                    \
  LD1(sp, "s8", 4)    /* 2 */                                                                    \
  LD1(sp, "u16", 6)   /* 3 */                                                                    \
  LD1(sp, "s16", 6)   /* 4 */                                                                    \
  LDH(sp, "b16", 10)  /* 5 */                                                                    \
  LDH(sp, "s8", 13)   /* 6: s8 into a 16-bit register */                                         \
  LD1(sp, "u32", 12)  /* 7 */                                                                    \
  LD1(sp, "b32", 20)  /* 8 */                                                                    \
  LD1(sp, "f32", 24)  /* 9 */                                                                    \
  LDL(sp, "u64", 32)  /* 10 */                                                                   \
  LDL(sp, "b64", 40)  /* 11 */                                                                   \
  LDL(sp, "f64", 48)  /* 12 */                                                                   \
  LDV2(sp, "u8", 50)  /* 13, 14 */                                                               \
  LDV2(sp, "s8", 54)  /* 15, 16 */                                                               \
  LDV4(sp, "s8", 56)  /* 17..20 */                                                               \
  LDV4(sp, "u8", 60)  /* 21..24 */                                                               \
  LDV2(sp, "s16", 64) /* 25, 26 */                                                               \
  LDV4(sp, "u16", 72) /* 27..30 */                                                               \
  LDV2(sp, "u32", 80) /* 31, 32 */                                                               \
  LDV4(sp, "b32", 96) /* 33..36 */                                                               \
  asm volatile("ld." sp ".v2.u64 {%0, %1}, [%2+112];" : "=l"(d0), "=l"(d1) : "l"(a) : "memory"); \
  out[n++] = d0; /* 37 */                                                                        \
  out[n++] = d1; /* 38 */                                                                        \
  asm volatile("ld." sp ".v4.b16 {%0, %1, %2, %3}, [%4+88];"                                     \
               : "=h"(h0), "=h"(h1), "=h"(h2), "=h"(h3)                                          \
               : "l"(a)                                                                          \
               : "memory");                                                                      \
  out[n++] = h0 | (static_cast<unsigned long long>(h1) << 16) |                                  \
             (static_cast<unsigned long long>(h2) << 32) |                                       \
             (static_cast<unsigned long long>(h3) << 48); /* 39 */
  if (SPACE == 0) {
    LOAD_TABLE("global")
  } else if (SPACE == 1) {
    LOAD_TABLE("shared")
  } else {
    LOAD_TABLE("local")
  }
#undef LD1
#undef LDH
#undef LDL
#undef LDV2
#undef LDV4
#undef LOAD_TABLE
}

void expected_loads(const uint8_t* m, unsigned long long* e) {
  int n = 0;
  auto u8 = [&](int o) { return static_cast<unsigned long long>(m[o]); };
  auto s8_32 = [&](int o) {
    return static_cast<unsigned long long>(
        static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(m[o]))));
  };
  auto s16_32 = [&](int o) {
    return static_cast<unsigned long long>(
        static_cast<uint32_t>(static_cast<int32_t>(host_load<int16_t>(m + o))));
  };
  e[n++] = u8(3);
  e[n++] = s8_32(3);
  e[n++] = s8_32(4);
  e[n++] = host_load<uint16_t>(m + 6);
  e[n++] = s16_32(6);
  e[n++] = host_load<uint16_t>(m + 10);
  e[n++] = static_cast<uint16_t>(static_cast<int16_t>(static_cast<int8_t>(m[13])));
  e[n++] = host_load<uint32_t>(m + 12);
  e[n++] = host_load<uint32_t>(m + 20);
  e[n++] = host_load<uint32_t>(m + 24);
  e[n++] = host_load<uint64_t>(m + 32);
  e[n++] = host_load<uint64_t>(m + 40);
  e[n++] = host_load<uint64_t>(m + 48);
  e[n++] = u8(50), e[n++] = u8(51);
  e[n++] = s8_32(54), e[n++] = s8_32(55);
  for (int i = 0; i < 4; ++i) e[n++] = s8_32(56 + i);
  for (int i = 0; i < 4; ++i) e[n++] = u8(60 + i);
  e[n++] = s16_32(64), e[n++] = s16_32(66);
  for (int i = 0; i < 4; ++i) e[n++] = host_load<uint16_t>(m + 72 + 2 * i);
  e[n++] = host_load<uint32_t>(m + 80), e[n++] = host_load<uint32_t>(m + 84);
  for (int i = 0; i < 4; ++i) e[n++] = host_load<uint32_t>(m + 96 + 4 * i);
  e[n++] = host_load<uint64_t>(m + 112), e[n++] = host_load<uint64_t>(m + 120);
  e[n++] = host_load<uint64_t>(m + 88);
}

// Stores of every width into a kInBytes buffer pre-filled with 0xcc; bytes no store names must
// keep 0xcc.
template <int SPACE>
__device__ void run_stores(uint8_t* base) {
  unsigned long long a;
  if (SPACE == 0)
    asm("cvta.to.global.u64 %0, %1;" : "=l"(a) : "l"(base));
  else if (SPACE == 1)
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(base));
  else
    asm("cvta.to.local.u64 %0, %1;" : "=l"(a) : "l"(base));
  const uint32_t w = 0x1234567fu, x = 0xabcdef12u, y = 0x89abcdefu, z = 0x0badf00du;
  const unsigned short h = 0xbeefu;
  const unsigned long long q = 0xfedcba9876543210ull, q2 = 0x0123456789abcdefull;
#define STORE_TABLE(sp)                                                                        \
  asm volatile("st." sp ".b8 [%0+1], %1;" ::"l"(a), "r"(w) : "memory");  /* low byte 0x7f */   \
  asm volatile("st." sp ".u16 [%0+2], %1;" ::"l"(a), "r"(x) : "memory"); /* low half 0xef12 */ \
  asm volatile("st." sp ".u32 [%0+4], %1;" ::"l"(a), "r"(y) : "memory");                       \
  asm volatile("st." sp ".b64 [%0+8], %1;" ::"l"(a), "l"(q) : "memory");                       \
  asm volatile("st." sp ".b16 [%0+18], %1;" ::"l"(a), "h"(h) : "memory");                      \
  asm volatile("st." sp ".v2.u8 [%0+20], {%1, %2};" ::"l"(a), "r"(w), "r"(x) : "memory");      \
  asm volatile("st." sp ".v4.b8 [%0+24], {%1, %2, %3, %4};" ::"l"(a), "r"(w), "r"(x), "r"(y),  \
               "r"(z)                                                                          \
               : "memory");                                                                    \
  asm volatile("st." sp ".v2.b16 [%0+36], {%1, %2};" ::"l"(a), "r"(y), "r"(z) : "memory");     \
  asm volatile("st." sp ".v4.u16 [%0+40], {%1, %2, %3, %4};" ::"l"(a), "r"(z), "r"(y), "r"(x), \
               "r"(w)                                                                          \
               : "memory");                                                                    \
  asm volatile("st." sp ".v2.u32 [%0+56], {%1, %2};" ::"l"(a), "r"(x), "r"(z) : "memory");     \
  asm volatile("st." sp ".v4.b32 [%0+64], {%1, %2, %3, %4};" ::"l"(a), "r"(y), "r"(w), "r"(z), \
               "r"(x)                                                                          \
               : "memory");                                                                    \
  asm volatile("st." sp ".v2.b64 [%0+96], {%1, %2};" ::"l"(a), "l"(q2), "l"(q) : "memory");    \
  asm volatile("st." sp ".f32 [%0+116], %1;" ::"l"(a), "f"(-2.5f) : "memory");
  if (SPACE == 0) {
    STORE_TABLE("global")
  } else if (SPACE == 1) {
    STORE_TABLE("shared")
  } else {
    STORE_TABLE("local")
  }
#undef STORE_TABLE
}

void expected_stores(uint8_t* m) {
  std::memset(m, 0xcc, kInBytes);
  const uint32_t w = 0x1234567fu, x = 0xabcdef12u, y = 0x89abcdefu, z = 0x0badf00du;
  const uint16_t h = 0xbeef;
  const uint64_t q = 0xfedcba9876543210ull, q2 = 0x0123456789abcdefull;
  auto put = [&](int off, const void* v, size_t n) {
    std::memcpy(m + off, v, n);
  };  // little-endian host
  put(1, &w, 1);
  put(2, &x, 2);
  put(4, &y, 4);
  put(8, &q, 8);
  put(18, &h, 2);
  put(20, &w, 1), put(21, &x, 1);
  put(24, &w, 1), put(25, &x, 1), put(26, &y, 1), put(27, &z, 1);
  put(36, &y, 2), put(38, &z, 2);
  put(40, &z, 2), put(42, &y, 2), put(44, &x, 2), put(46, &w, 2);
  put(56, &x, 4), put(60, &z, 4);
  put(64, &y, 4), put(68, &w, 4), put(72, &z, 4), put(76, &x, 4);
  put(96, &q2, 8), put(104, &q, 8);
  const float f = -2.5f;
  put(116, &f, 4);
}

// Thread 0 only: global, shared and local versions of the load and store tables.
__global__ void k_widths(const uint8_t* gin, uint8_t* gst, unsigned long long* out,
                         uint8_t* sh_st_out, uint8_t* loc_st_out) {
  __shared__ __align__(16) uint8_t sh_in[kInBytes];
  __shared__ __align__(16) uint8_t sh_st[kInBytes];
  __align__(16) uint8_t loc_in[kInBytes];
  __align__(16) uint8_t loc_st[kInBytes];
  if (threadIdx.x != 0) return;
  for (int i = 0; i < kInBytes; ++i) {
    sh_in[i] = gin[i];
    loc_in[i] = gin[i];
    sh_st[i] = 0xcc;
    loc_st[i] = 0xcc;
  }
  run_loads<0>(gin, out);
  run_loads<1>(sh_in, out + kNumLoads);
  run_loads<2>(loc_in, out + 2 * kNumLoads);
  run_stores<0>(gst);
  run_stores<1>(sh_st);
  run_stores<2>(loc_st);
  for (int i = 0; i < kInBytes; ++i) {
    sh_st_out[i] = sh_st[i];
    loc_st_out[i] = loc_st[i];
  }
}

void test_widths() {
  uint8_t host_in[kInBytes];
  for (int i = 0; i < kInBytes; ++i) host_in[i] = pattern_byte(i);
  uint8_t *d_in, *d_st, *d_shst, *d_locst;
  unsigned long long* d_out;
  CUDA_CHECK(cudaMalloc(&d_in, kInBytes));
  CUDA_CHECK(cudaMalloc(&d_st, kInBytes));
  CUDA_CHECK(cudaMalloc(&d_shst, kInBytes));
  CUDA_CHECK(cudaMalloc(&d_locst, kInBytes));
  CUDA_CHECK(cudaMalloc(&d_out, 3 * kNumLoads * 8));
  CUDA_CHECK(cudaMemcpy(d_in, host_in, kInBytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_st, 0xcc, kInBytes));
  k_widths<<<1, 32>>>(d_in, d_st, d_out, d_shst, d_locst);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long got[3 * kNumLoads], e[kNumLoads];
  CUDA_CHECK(cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost));
  expected_loads(host_in, e);
  const char* spaces[3] = {"ld.global", "ld.shared", "ld.local"};
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < kNumLoads; ++i)
      conf_check(spaces[s], conf_fmt("load table entry %d", i), got[s * kNumLoads + i], e[i]);
  uint8_t est[kInBytes], gst[3][kInBytes];
  expected_stores(est);
  CUDA_CHECK(cudaMemcpy(gst[0], d_st, kInBytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gst[1], d_shst, kInBytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gst[2], d_locst, kInBytes, cudaMemcpyDeviceToHost));
  const char* sts[3] = {"st.global", "st.shared", "st.local"};
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < kInBytes; ++i)
      conf_check(sts[s], conf_fmt("byte %d", i), gst[s][i], est[i]);
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_st));
  CUDA_CHECK(cudaFree(d_shst));
  CUDA_CHECK(cudaFree(d_locst));
  CUDA_CHECK(cudaFree(d_out));
}

// ---------------------------------------------------------------------------------------------
// Static and dynamic shared memory, %dynamic_smem_size.
// ---------------------------------------------------------------------------------------------
__device__ inline uint32_t dyn_value(uint32_t i) {
  return i * 2654435761u ^ 0xabcdu;
}
uint32_t host_dyn_value(uint32_t i) {
  return i * 2654435761u ^ 0xabcdu;
}

// out[t]: static array read reversed; out[256 + t]: the dynamic words read at a stride;
// out[512]: %dynamic_smem_size; out[513]: dynamic words that differ from what was written.
// Each of the two blocks writes its own copy of the results (out + 514 * blockIdx.x).
__global__ void k_shared(uint32_t* out, uint32_t dyn_words) {
  out += 514 * blockIdx.x;
  __shared__ uint32_t st_s[256];
  extern __shared__ uint32_t dyn[];
  const uint32_t t = threadIdx.x;
  st_s[t] = t * 7 + 1;
  for (uint32_t i = t; i < dyn_words; i += blockDim.x) dyn[i] = dyn_value(i);
  __syncthreads();
  out[t] = st_s[255 - t];
  out[256 + t] = dyn[(t * 97u + 5u) % dyn_words];
  if (t == 0) {
    uint32_t sz;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(sz));
    out[512] = sz;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < dyn_words; ++i) bad += dyn[i] != dyn_value(i);
    for (uint32_t i = 0; i < 256; ++i) bad += st_s[i] != i * 7 + 1;  // static not overwritten
    out[513] = bad;
  }
}

void test_shared() {
  uint32_t* d_out;
  CUDA_CHECK(cudaMalloc(&d_out, 2 * 514 * 4));
  const uint32_t sizes[2] = {5000, 100 * 1024};  // the second needs the opt-in attribute
  CUDA_CHECK(
      cudaFuncSetAttribute(k_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  for (uint32_t bytes : sizes) {
    const uint32_t words = bytes / 4;
    CUDA_CHECK(cudaMemset(d_out, 0xff, 2 * 514 * 4));
    k_shared<<<2, 256, bytes>>>(d_out, words);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<uint32_t> g(2 * 514);
    CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
    for (uint32_t i = 0; i < 514; ++i)
      conf_check("k_shared: block 1 as block 0", conf_fmt("%u dynamic bytes, word %u", bytes, i),
                 g[514 + i], g[i]);
    for (uint32_t t = 0; t < 256; ++t) {
      conf_check("static __shared__", conf_fmt("%u dynamic bytes, thread %u", bytes, t), g[t],
                 (255 - t) * 7 + 1);
      conf_check("extern __shared__", conf_fmt("%u dynamic bytes, thread %u", bytes, t), g[256 + t],
                 host_dyn_value((t * 97u + 5u) % words));
    }
    conf_check("%dynamic_smem_size", conf_fmt("%u bytes at launch", bytes), g[512], bytes);
    conf_check("static + dynamic shared intact", conf_fmt("%u dynamic bytes", bytes), g[513], 0);
  }
  CUDA_CHECK(cudaFree(d_out));
}

// [reg+imm] with a 32-bit register: the address is a 32-bit sum, so an offset that nvcc folds
// into the immediate (a base register that went "negative" modulo 2^32) wraps back into the
// window. out[t] = words[t] read through %r = addr - 65536 (mod 2^32) and +65536.
__global__ void k_shared_wrap(uint32_t* out) {
  __shared__ uint32_t words[32];
  const uint32_t t = threadIdx.x;
  words[t] = t * 3 + 11;
  __syncthreads();
  uint32_t v;
  asm volatile(
      "{ .reg .u32 a; sub.u32 a, %1, 65536; ld.shared.u32 %0, [a+65536]; }"
      : "=r"(v)
      : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&words[t]))));
  out[t] = v;
}

void test_shared_wrap() {
  uint32_t* d_out;
  CUDA_CHECK(cudaMalloc(&d_out, 32 * 4));
  k_shared_wrap<<<1, 32>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(32);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  for (uint32_t t = 0; t < 32; ++t)
    conf_check("ld.shared.u32 [%r+65536], %r = addr - 65536 mod 2^32", conf_fmt("thread %u", t),
               g[t], t * 3 + 11);
  CUDA_CHECK(cudaFree(d_out));
}

// ---------------------------------------------------------------------------------------------
// Generic addressing: isspacep, cvta in both directions, a generic store through a pointer into
// whichever space a thread picks.
// ---------------------------------------------------------------------------------------------
__device__ inline uint32_t isspace3(const void* p) {
  uint32_t g, s, l;
  asm volatile("{ .reg .pred pq; isspacep.global pq, %1; selp.u32 %0, 1, 0, pq; }"
               : "=r"(g)
               : "l"(p));
  asm volatile("{ .reg .pred pq; isspacep.shared pq, %1; selp.u32 %0, 1, 0, pq; }"
               : "=r"(s)
               : "l"(p));
  asm volatile("{ .reg .pred pq; isspacep.local pq, %1; selp.u32 %0, 1, 0, pq; }"
               : "=r"(l)
               : "l"(p));
  return g | (s << 1) | (l << 2);
}

// Per thread, 12 words: [0..2] isspacep bits of the global, shared, local pointers;
// [3..5] __isGlobal/__isShared/__isLocal bits likewise; [6] value read through
// cvta.to.shared + ld.shared; [7] cvta.shared of that address == the generic pointer;
// [8] same round trip for global; [9] same for local; [10] value read back after a generic store
// into the space chosen by t % 3; [11] value loaded with ld.global from cvta.to.global.
__global__ void k_generic(uint32_t* g, uint32_t* out, const int* sel) {
  __shared__ uint32_t sh[128];
  uint32_t loc[8];
  const uint32_t t = threadIdx.x;
  sh[t] = 0x5000 + t;
  for (int i = 0; i < 8; ++i) loc[i] = 0x7000 + t * 8 + i;
  g[t] = 0x9000 + t;
  __syncthreads();
  const int k = sel[t] & 7;  // a runtime index keeps loc[] in local memory
  uint32_t* gp = &g[t];
  uint32_t* sp = &sh[t];
  uint32_t* lp = &loc[k];
  uint32_t* o = out + t * 12;
  o[0] = isspace3(gp), o[1] = isspace3(sp), o[2] = isspace3(lp);
  o[3] = __isGlobal(gp) | (__isShared(gp) << 1) | (__isLocal(gp) << 2);
  o[4] = __isGlobal(sp) | (__isShared(sp) << 1) | (__isLocal(sp) << 2);
  o[5] = __isGlobal(lp) | (__isShared(lp) << 1) | (__isLocal(lp) << 2);
  unsigned long long sa, back;
  uint32_t v;
  asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(sa) : "l"(sp));
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "l"(sa) : "memory");
  o[6] = v;
  asm volatile("cvta.shared.u64 %0, %1;" : "=l"(back) : "l"(sa));
  o[7] = back == reinterpret_cast<unsigned long long>(sp);
  asm volatile("cvta.to.global.u64 %0, %1;" : "=l"(sa) : "l"(gp));
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(sa) : "memory");
  o[11] = v;
  asm volatile("cvta.global.u64 %0, %1;" : "=l"(back) : "l"(sa));
  o[8] = back == reinterpret_cast<unsigned long long>(gp);
  asm volatile("cvta.to.local.u64 %0, %1;" : "=l"(sa) : "l"(lp));
  asm volatile("cvta.local.u64 %0, %1;" : "=l"(back) : "l"(sa));
  o[9] = back == reinterpret_cast<unsigned long long>(lp);
  // Generic store through a pointer whose space depends on the thread.
  uint32_t* target = (t % 3 == 0) ? gp : (t % 3 == 1) ? sp : lp;
  *reinterpret_cast<volatile uint32_t*>(target) = 0xc0de0000u + t;
  __syncthreads();
  o[10] = (t % 3 == 0) ? g[t] : (t % 3 == 1) ? sh[t] : loc[k];
}

void test_generic() {
  const int n = 96;
  uint32_t *d_g, *d_out;
  int* d_sel;
  std::vector<int> sel(n);
  for (int t = 0; t < n; ++t) sel[t] = (t * 5 + 3) % 8;
  CUDA_CHECK(cudaMalloc(&d_g, n * 4));
  CUDA_CHECK(cudaMalloc(&d_out, n * 12 * 4));
  CUDA_CHECK(cudaMalloc(&d_sel, n * 4));
  CUDA_CHECK(cudaMemcpy(d_sel, sel.data(), n * 4, cudaMemcpyHostToDevice));
  k_generic<<<1, n>>>(d_g, d_out, d_sel);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(n * 12);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  const char* names[12] = {"isspacep on a global pointer",
                           "isspacep on a shared pointer",
                           "isspacep on a local pointer",
                           "__isGlobal/__isShared/__isLocal (global)",
                           "__is* (shared)",
                           "__is* (local)",
                           "cvta.to.shared + ld.shared",
                           "cvta.shared round trip",
                           "cvta.global round trip",
                           "cvta.local round trip",
                           "generic st into the chosen space",
                           "cvta.to.global + ld.global"};
  for (uint32_t t = 0; t < static_cast<uint32_t>(n); ++t) {
    const uint32_t e[12] = {1, 2, 4, 1, 2, 4, 0x5000 + t, 1, 1, 1, 0xc0de0000u + t, 0x9000 + t};
    for (int i = 0; i < 12; ++i)
      conf_check(names[i], conf_fmt("thread %u", t), g[t * 12 + i], e[i]);
  }
  CUDA_CHECK(cudaFree(d_g));
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_sel));
}

// ---------------------------------------------------------------------------------------------
// Local arrays indexed at run time: each thread owns its copy.
// ---------------------------------------------------------------------------------------------
constexpr int kLocalN = 48;
__global__ void k_local(const int* idx, int nidx, int* out) {
  int arr[kLocalN];
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < kLocalN; ++i) arr[i] = t * 1000 + i * i;
  int s = 0;
  for (int k = 0; k < 8; ++k) s += arr[idx[(t * 8 + k) % nidx]];
  arr[idx[t % nidx]] = -5 - t;  // a store at a run-time index
  uint32_t h = 0;
  for (int i = 0; i < kLocalN; ++i) h = h * 31u + static_cast<uint32_t>(arr[i]);
  out[t * 3 + 0] = s;
  out[t * 3 + 1] = static_cast<int>(h);
  uint32_t isl;
  asm volatile("{ .reg .pred pq; isspacep.local pq, %1; selp.u32 %0, 1, 0, pq; }"
               : "=r"(isl)
               : "l"(&arr[idx[0]]));
  out[t * 3 + 2] = static_cast<int>(isl);
}

void test_local() {
  const int nidx = 37, blocks = 3, threads = 64, n = blocks * threads;
  std::vector<int> idx(nidx);
  for (int i = 0; i < nidx; ++i) idx[i] = (i * 29 + 11) % kLocalN;
  int *d_idx, *d_out;
  CUDA_CHECK(cudaMalloc(&d_idx, nidx * 4));
  CUDA_CHECK(cudaMalloc(&d_out, n * 3 * 4));
  CUDA_CHECK(cudaMemcpy(d_idx, idx.data(), nidx * 4, cudaMemcpyHostToDevice));
  k_local<<<blocks, threads>>>(d_idx, nidx, d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> g(n * 3);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  for (int t = 0; t < n; ++t) {
    int arr[kLocalN];
    for (int i = 0; i < kLocalN; ++i) arr[i] = t * 1000 + i * i;
    int s = 0;
    for (int k = 0; k < 8; ++k) s += arr[idx[(t * 8 + k) % nidx]];
    arr[idx[t % nidx]] = -5 - t;
    uint32_t h = 0;
    for (int i = 0; i < kLocalN; ++i) h = h * 31u + static_cast<uint32_t>(arr[i]);
    conf_check("local array, run-time index load", conf_fmt("thread %d", t), g[t * 3], s);
    conf_check("local array, run-time index store", conf_fmt("thread %d", t), g[t * 3 + 1],
               static_cast<int>(h));
    conf_check("isspacep.local on a local array", conf_fmt("thread %d", t), g[t * 3 + 2], 1);
  }
  CUDA_CHECK(cudaFree(d_idx));
  CUDA_CHECK(cudaFree(d_out));
}

// ---------------------------------------------------------------------------------------------
// __constant__ and __device__ variables.
// ---------------------------------------------------------------------------------------------
__constant__ int c_tab[64];
__constant__ int c_init[5] = {3, -1, 4, -1, 5};
__constant__ double c_dbl[2] = {1.5, -2.25};

struct Mixed {
  char c;
  short s;
  int i;
  long long l;
};
__device__ int g_arr[6] = {10, -20, 30, -40, 50, 0x7fffffff};
__device__ unsigned long long g_u64 = 0xfedcba9876543210ull;
__device__ double g_dbl = -3.0625;
__device__ float g_flt[3] = {0.5f, -1.25f, 1e-3f};
__device__ Mixed g_mixed = {'x', -300, 123456, -9876543210LL};
__device__ int g_counter = 5;
__device__ int g_zero[4];  // no initializer: zero

// out[t] = c_tab[idx[t]] + c_init[t % 5]; outd[t] = c_dbl[t & 1] * t.
__global__ void k_const(const int* idx, int* out, double* outd) {
  const int t = threadIdx.x;
  out[t] = c_tab[idx[t]] + c_init[t % 5];
  outd[t] = c_dbl[t & 1] * t;
}

// Reads every initialized __device__ variable into out64 (as raw words), then adds to g_counter.
__global__ void k_device_globals(unsigned long long* out64) {
  const int t = threadIdx.x;
  if (t == 0 && blockIdx.x == 0) {  // one writer; both blocks add to the counter below
    int n = 0;
    for (int i = 0; i < 6; ++i) out64[n++] = static_cast<unsigned int>(g_arr[i]);
    out64[n++] = g_u64;
    out64[n++] = __double_as_longlong(g_dbl);
    for (int i = 0; i < 3; ++i) out64[n++] = __float_as_uint(g_flt[i]);
    out64[n++] = static_cast<unsigned char>(g_mixed.c);
    out64[n++] = static_cast<unsigned short>(g_mixed.s);
    out64[n++] = static_cast<unsigned int>(g_mixed.i);
    out64[n++] = static_cast<unsigned long long>(g_mixed.l);
    for (int i = 0; i < 4; ++i) out64[n++] = static_cast<unsigned int>(g_zero[i]);
  }
  atomicAdd(&g_counter, t + 1);
}

void test_symbols() {
  // __constant__: whole copy, then a partial copy at an offset.
  int tab[64], part[8];
  for (int i = 0; i < 64; ++i) tab[i] = i * i - 100;
  for (int i = 0; i < 8; ++i) part[i] = -1000 - i;
  CUDA_CHECK(cudaMemcpyToSymbol(c_tab, tab, sizeof tab));
  CUDA_CHECK(cudaMemcpyToSymbol(c_tab, part, sizeof part, 16 * sizeof(int)));
  for (int i = 0; i < 8; ++i) tab[16 + i] = part[i];
  int back[64], init_back[5];
  CUDA_CHECK(cudaMemcpyFromSymbol(back, c_tab, sizeof back));
  for (int i = 0; i < 64; ++i)
    conf_check("cudaMemcpyFromSymbol(c_tab)", conf_fmt("element %d", i), back[i], tab[i]);
  CUDA_CHECK(cudaMemcpyFromSymbol(init_back, c_init, sizeof init_back));
  const int c_init_h[5] = {3, -1, 4, -1, 5};
  for (int i = 0; i < 5; ++i)
    conf_check("__constant__ initializer via FromSymbol", conf_fmt("element %d", i), init_back[i],
               c_init_h[i]);
  int tail[3];
  CUDA_CHECK(cudaMemcpyFromSymbol(tail, c_tab, sizeof tail, 61 * sizeof(int)));
  for (int i = 0; i < 3; ++i)
    conf_check("cudaMemcpyFromSymbol with offset", conf_fmt("element %d", 61 + i), tail[i],
               tab[61 + i]);

  const int n = 64;
  int idx[n];
  for (int t = 0; t < n; ++t) idx[t] = (t * 23 + 7) % 64;
  int *d_idx, *d_out;
  double* d_outd;
  CUDA_CHECK(cudaMalloc(&d_idx, sizeof idx));
  CUDA_CHECK(cudaMalloc(&d_out, n * 4));
  CUDA_CHECK(cudaMalloc(&d_outd, n * 8));
  CUDA_CHECK(cudaMemcpy(d_idx, idx, sizeof idx, cudaMemcpyHostToDevice));
  k_const<<<1, n>>>(d_idx, d_out, d_outd);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  int g[n];
  double gd[n];
  CUDA_CHECK(cudaMemcpy(g, d_out, sizeof g, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gd, d_outd, sizeof gd, cudaMemcpyDeviceToHost));
  const double c_dbl_h[2] = {1.5, -2.25};
  for (int t = 0; t < n; ++t) {
    conf_check("ld.const (run-time index)", conf_fmt("thread %d", t), g[t],
               tab[idx[t]] + c_init_h[t % 5]);
    const double e = c_dbl_h[t & 1] * t;
    uint64_t gb, eb;
    std::memcpy(&gb, &gd[t], 8);
    std::memcpy(&eb, &e, 8);
    conf_check_bits("__constant__ double", conf_fmt("thread %d", t), gb, eb, 64);
  }
  CUDA_CHECK(cudaFree(d_idx));
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_outd));

  // __device__ variables with initializers, read by a kernel and through the runtime.
  unsigned long long* d_o64;
  const int nv = 19;
  CUDA_CHECK(cudaMalloc(&d_o64, nv * 8));
  k_device_globals<<<2, 32>>>(d_o64);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long o64[nv];
  CUDA_CHECK(cudaMemcpy(o64, d_o64, sizeof o64, cudaMemcpyDeviceToHost));
  const float fl[3] = {0.5f, -1.25f, 1e-3f};
  const double dbl = -3.0625;
  unsigned long long e64[nv];
  int n2 = 0;
  const int arr_h[6] = {10, -20, 30, -40, 50, 0x7fffffff};
  for (int i = 0; i < 6; ++i) e64[n2++] = static_cast<unsigned int>(arr_h[i]);
  e64[n2++] = 0xfedcba9876543210ull;
  std::memcpy(&e64[n2++], &dbl, 8);
  for (int i = 0; i < 3; ++i) {
    uint32_t b;
    std::memcpy(&b, &fl[i], 4);
    e64[n2++] = b;
  }
  e64[n2++] = static_cast<unsigned char>('x');
  e64[n2++] = static_cast<unsigned short>(-300);
  e64[n2++] = 123456u;
  e64[n2++] = static_cast<unsigned long long>(-9876543210LL);
  for (int i = 0; i < 4; ++i) e64[n2++] = 0;
  for (int i = 0; i < nv; ++i)
    conf_check("initialized __device__ variable", conf_fmt("value %d", i), o64[i], e64[i]);
  int counter;
  CUDA_CHECK(cudaMemcpyFromSymbol(&counter, g_counter, sizeof counter));
  conf_check("__device__ g_counter after 2x32 atomicAdd(t+1)", "5 + 2*528", counter, 5 + 2 * 528);
  Mixed mx;
  CUDA_CHECK(cudaMemcpyFromSymbol(&mx, g_mixed, sizeof mx));
  conf_check("cudaMemcpyFromSymbol(struct).s", "", mx.s, -300);
  conf_check("cudaMemcpyFromSymbol(struct).l", "", mx.l, -9876543210LL);
  void* p_arr = nullptr;
  size_t sz = 0;
  CUDA_CHECK(cudaGetSymbolAddress(&p_arr, g_arr));
  CUDA_CHECK(cudaGetSymbolSize(&sz, g_arr));
  conf_check("cudaGetSymbolSize(g_arr)", "", sz, sizeof(int) * 6);
  int arr_back[6];
  CUDA_CHECK(cudaMemcpy(arr_back, p_arr, sizeof arr_back, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 6; ++i)
    conf_check("cudaMemcpy from cudaGetSymbolAddress(g_arr)", conf_fmt("element %d", i),
               arr_back[i], arr_h[i]);
  CUDA_CHECK(cudaFree(d_o64));
}

// ---------------------------------------------------------------------------------------------
// Pitched 2D memory.
// ---------------------------------------------------------------------------------------------
__global__ void k_pitch_add(uint8_t* p, size_t pitch, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height)
    p[y * pitch + x] = static_cast<uint8_t>(p[y * pitch + x] + y * 3 + x);
}

void test_pitch() {
  const int W = 100, H = 7;
  uint8_t* dp;
  size_t pitch = 0;
  CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&dp), &pitch, W, H));
  conf_check_text("cudaMallocPitch pitch >= width", conf_fmt("width %d", W).s,
                  pitch >= static_cast<size_t>(W), conf_fmt("%zu", pitch).s, ">= 100");
  CUDA_CHECK(cudaMemset2D(dp, pitch, 0xab, W, H));
  // A 50 x 4 block from a host image with a 120-byte pitch, written at (row 1, col 10).
  const int hp = 120, SW = 50, SH = 4;
  std::vector<uint8_t> src(hp * SH);
  for (int i = 0; i < hp * SH; ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  CUDA_CHECK(
      cudaMemcpy2D(dp + 1 * pitch + 10, pitch, src.data(), hp, SW, SH, cudaMemcpyHostToDevice));
  k_pitch_add<<<dim3(1, H), 128>>>(dp, pitch, W, H);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> expect(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      uint8_t v = 0xab;
      if (y >= 1 && y < 1 + SH && x >= 10 && x < 10 + SW) v = src[(y - 1) * hp + (x - 10)];
      expect[y * W + x] = static_cast<uint8_t>(v + y * 3 + x);
    }
  // Back to a host image with a 130-byte pitch; the 30 bytes after each row stay 0x11.
  const int dpitch = 130;
  std::vector<uint8_t> dst(dpitch * H, 0x11);
  CUDA_CHECK(cudaMemcpy2D(dst.data(), dpitch, dp, pitch, W, H, cudaMemcpyDeviceToHost));
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < dpitch; ++x)
      conf_check("cudaMemset2D/cudaMemcpy2D/kernel", conf_fmt("row %d byte %d", y, x),
                 dst[y * dpitch + x], x < W ? expect[y * W + x] : 0x11);
  // Device to device into a second pitched allocation (a 60 x 5 window), then back packed.
  uint8_t* dq;
  size_t qpitch = 0;
  CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&dq), &qpitch, 64, 5));
  CUDA_CHECK(cudaMemset2D(dq, qpitch, 0, 64, 5));
  CUDA_CHECK(
      cudaMemcpy2D(dq + 2, qpitch, dp + 2 * pitch + 30, pitch, 60, 5, cudaMemcpyDeviceToDevice));
  std::vector<uint8_t> packed(64 * 5);
  CUDA_CHECK(cudaMemcpy2D(packed.data(), 64, dq, qpitch, 64, 5, cudaMemcpyDeviceToHost));
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 64; ++x) {
      const uint8_t e = (x >= 2 && x < 62) ? expect[(y + 2) * W + 30 + x - 2] : 0;
      conf_check("cudaMemcpy2D device to device", conf_fmt("row %d byte %d", y, x),
                 packed[y * 64 + x], e);
    }
  CUDA_CHECK(cudaFree(dp));
  CUDA_CHECK(cudaFree(dq));
}

// ---------------------------------------------------------------------------------------------
// cp.async
// ---------------------------------------------------------------------------------------------
// Each thread owns an 80-byte slot of shared memory (pre-filled with 0xee) and the matching
// 80 bytes of the global source. Layout of a slot:
//   [0,4)   ca 4            group 0
//   [4,8)   untouched
//   [8,16)  ca 8            group 0
//   [16,32) ca 16           group 0
//   [32,48) cg 16, src-size = t % 17 (register)   group 1
//   [48,56) ca 8, src-size 3 (immediate)          group 1
//   [56,60) ca 4, src-size 0                      group 1
//   [60,64) untouched
//   [64,80) ca 16, ignore-src = (t odd)           after wait_group 0, then wait_all
// early[t*32 ..]: the slot's first 32 bytes read right after cp.async.wait_group 1 (group 0 is
// then complete for this thread); slots[]: every slot after wait_all and a CTA barrier, read by
// the thread's neighbour (t + 1) % n.
constexpr int kSlot = 80;
__global__ void k_cp_async(const uint8_t* src, uint8_t* early, uint8_t* slots) {
  __shared__ __align__(16) uint8_t sm[64 * kSlot];
  const uint32_t t = threadIdx.x, n = blockDim.x;
  uint8_t* slot = sm + t * kSlot;
  for (int i = 0; i < kSlot; ++i) slot[i] = 0xee;
  const uint8_t* g = src + t * kSlot;
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(slot));
  const uint32_t srcsize = t % 17;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(g) : "memory");
  asm volatile("cp.async.ca.shared.global [%0+8], [%1+8], 8;" ::"r"(s), "l"(g) : "memory");
  asm volatile("cp.async.ca.shared.global [%0+16], [%1+16], 16;" ::"r"(s), "l"(g) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.cg.shared.global [%0+32], [%1+32], 16, %2;" ::"r"(s), "l"(g), "r"(srcsize)
               : "memory");
  asm volatile("cp.async.ca.shared.global [%0+48], [%1+48], 8, 3;" ::"r"(s), "l"(g) : "memory");
  asm volatile("cp.async.ca.shared.global [%0+56], [%1+56], 4, 0;" ::"r"(s), "l"(g) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 1;" ::: "memory");
  for (int i = 0; i < 32; ++i) early[t * 32 + i] = slot[i];
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  asm volatile(
      "{ .reg .pred pq; setp.ne.u32 pq, %2, 0;\n\t"
      "cp.async.ca.shared.global [%0+64], [%1+64], 16, pq; }" ::"r"(s),
      "l"(g), "r"(t & 1)
      : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  const uint32_t nb = (t + 1) % n;
  for (int i = 0; i < kSlot; ++i) slots[nb * kSlot + i] = sm[nb * kSlot + i];
}

void test_cp_async() {
  const int n = 64;
  std::vector<uint8_t> src(n * kSlot);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 13 + 5) | 1;  // never 0
  uint8_t *d_src, *d_early, *d_slots;
  CUDA_CHECK(cudaMalloc(&d_src, src.size()));
  CUDA_CHECK(cudaMalloc(&d_early, n * 32));
  CUDA_CHECK(cudaMalloc(&d_slots, n * kSlot));
  CUDA_CHECK(cudaMemcpy(d_src, src.data(), src.size(), cudaMemcpyHostToDevice));
  k_cp_async<<<1, n>>>(d_src, d_early, d_slots);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> early(n * 32), slots(n * kSlot);
  CUDA_CHECK(cudaMemcpy(early.data(), d_early, early.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(slots.data(), d_slots, slots.size(), cudaMemcpyDeviceToHost));
  for (int t = 0; t < n; ++t) {
    const uint8_t* g = &src[t * kSlot];
    uint8_t e[kSlot];
    for (int i = 0; i < kSlot; ++i) {
      uint8_t v = 0xee;
      if (i < 4 || (i >= 8 && i < 32))
        v = g[i];
      else if (i >= 32 && i < 48)
        v = (i - 32 < t % 17) ? g[i] : 0;
      else if (i >= 48 && i < 56)
        v = (i - 48 < 3) ? g[i] : 0;
      else if (i >= 56 && i < 60)
        v = 0;
      else if (i >= 64)
        v = (t & 1) ? 0 : g[i];
      e[i] = v;
    }
    for (int i = 0; i < 32; ++i)
      conf_check("cp.async group 0 after wait_group 1", conf_fmt("thread %d byte %d", t, i),
                 early[t * 32 + i], e[i]);
    for (int i = 0; i < kSlot; ++i)
      conf_check("cp.async (zero fill, groups, wait_all)", conf_fmt("thread %d byte %d", t, i),
                 slots[t * kSlot + i], e[i]);
  }
  CUDA_CHECK(cudaFree(d_src));
  CUDA_CHECK(cudaFree(d_early));
  CUDA_CHECK(cudaFree(d_slots));
}

// ---------------------------------------------------------------------------------------------
// ld.global.nc, cache operators, volatile, prefetch.
// ---------------------------------------------------------------------------------------------
constexpr int kMiscOut = 16;
// Per thread t (inputs g[] of 32-bit words, g[i] = word_value(i)):
//  [0] ld.global.nc.u32 g[t]           [1] __ldg(&g[t + 1])
//  [2..5] ld.global.nc.v4.u32 g[4*(t/4) ..]
//  [6] ld.global.nc.s16 of the low half of g[t] (sign-extended)
//  [7] ld.global.cg.u32 g[t]  [8] ld.global.cs.u32  [9] ld.global.lu.u32  [10] ld.global.cv.u32
//  [11] ld.volatile.global.u32 g[t] after the prefetches
//  [12] ld.volatile.shared.u32 of the neighbour's st.volatile.shared value (after bar.sync)
//  [13] st.global.wt/cs/cg then ld.volatile: the last store's value
//  [14] lane 0 spins on a flag that lane 1 sets with st.volatile (independent thread scheduling
//       lets lane 1 run while lane 0 waits): the data lane 1 wrote first; other lanes 0
//  [15] generic ld.volatile of the same flag: 1 on lane 0, else 0
__host__ __device__ inline uint32_t word_value(uint32_t i) {
  return 0x80008001u * (i + 3) ^ (i << 20);
}

__global__ void k_misc(const uint32_t* g, uint32_t* scratch, uint32_t* out) {
  __shared__ uint32_t sh[64];
  __shared__ uint32_t flag_data[2];
  const uint32_t t = threadIdx.x, lane = t % 32;
  uint32_t* o = out + t * kMiscOut;
  uint32_t v, a0, a1, a2, a3;
  asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(g + t));
  o[0] = v;
  o[1] = __ldg(&g[t + 1]);
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
               : "l"(g + 4 * (t / 4)));
  o[2] = a0, o[3] = a1, o[4] = a2, o[5] = a3;
  asm volatile("ld.global.nc.s16 %0, [%1];" : "=r"(v) : "l"(g + t));
  o[6] = v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(g + t));
  o[7] = v;
  asm volatile("ld.global.cs.u32 %0, [%1];" : "=r"(v) : "l"(g + t));
  o[8] = v;
  asm volatile("ld.global.lu.u32 %0, [%1];" : "=r"(v) : "l"(g + t));
  o[9] = v;
  asm volatile("ld.global.cv.u32 %0, [%1];" : "=r"(v) : "l"(g + t));
  o[10] = v;
  uint32_t loc[4] = {t, t, t, t};
  asm volatile("prefetch.global.L1 [%0];" ::"l"(g + t));
  asm volatile("prefetch.global.L2 [%0];" ::"l"(g + t));
  asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(g + t));
  asm volatile("prefetch.L1 [%0];" ::"l"(&sh[t]));  // generic address of shared: no operation
  asm volatile("prefetchu.L1 [%0];" ::"l"(g + t));
  asm volatile("{ .reg .u64 la; cvta.to.local.u64 la, %0; prefetch.local.L2 [la]; }" ::"l"(loc));
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(g + t) : "memory");
  o[11] = v + (loc[t & 3] - t);  // prefetch of local memory leaves it unchanged too
  {
    const uint32_t sa = static_cast<uint32_t>(__cvta_generic_to_shared(&sh[t]));
    asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(sa), "r"(t * 11 + 3) : "memory");
    __syncthreads();
    const uint32_t na = static_cast<uint32_t>(__cvta_generic_to_shared(&sh[(t + 1) % blockDim.x]));
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(na) : "memory");
    o[12] = v;
  }
  asm volatile("st.global.wt.u32 [%0], %1;" ::"l"(scratch + t), "r"(1u) : "memory");
  asm volatile("st.global.cs.u32 [%0], %1;" ::"l"(scratch + t), "r"(2u) : "memory");
  asm volatile("st.global.cg.u32 [%0], %1;" ::"l"(scratch + t), "r"(0x600d0000u + t) : "memory");
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(scratch + t) : "memory");
  o[13] = v;
  // Intra-warp spin in warp 0: lane 1 publishes, lane 0 waits. Bounded so a failure terminates.
  if (t == 0) flag_data[0] = 0, flag_data[1] = 0;
  __syncthreads();
  o[14] = 0, o[15] = 0;
  if (t == 1) {
    volatile uint32_t* fd = flag_data;
    fd[1] = 0xfeed0001u;
    __threadfence_block();
    asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(&flag_data[0]))),
                 "r"(1u)
                 : "memory");
  } else if (t == 0) {
    const uint32_t fa = static_cast<uint32_t>(__cvta_generic_to_shared(&flag_data[0]));
    uint32_t f = 0;
    for (long long spins = 0; spins < 10000000LL; ++spins) {
      asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(f) : "r"(fa) : "memory");
      if (f) break;
    }
    __threadfence_block();
    o[14] = f ? reinterpret_cast<volatile uint32_t*>(flag_data)[1] : 0xbadu;
    asm volatile("ld.volatile.u32 %0, [%1];" : "=r"(v) : "l"(&flag_data[0]) : "memory");
    o[15] = v;
  }
  (void)lane;
}

void test_misc() {
  const int n = 64;
  std::vector<uint32_t> words(n + 8);
  for (size_t i = 0; i < words.size(); ++i) words[i] = word_value(static_cast<uint32_t>(i));
  uint32_t *d_g, *d_scratch, *d_out;
  CUDA_CHECK(cudaMalloc(&d_g, words.size() * 4));
  CUDA_CHECK(cudaMalloc(&d_scratch, n * 4));
  CUDA_CHECK(cudaMalloc(&d_out, n * kMiscOut * 4));
  CUDA_CHECK(cudaMemcpy(d_g, words.data(), words.size() * 4, cudaMemcpyHostToDevice));
  k_misc<<<1, n>>>(d_g, d_scratch, d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(n * kMiscOut);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  const char* names[kMiscOut] = {"ld.global.nc.u32",
                                 "__ldg",
                                 "ld.global.nc.v4.u32 [0]",
                                 "ld.global.nc.v4.u32 [1]",
                                 "ld.global.nc.v4.u32 [2]",
                                 "ld.global.nc.v4.u32 [3]",
                                 "ld.global.nc.s16",
                                 "ld.global.cg",
                                 "ld.global.cs",
                                 "ld.global.lu",
                                 "ld.global.cv",
                                 "ld.volatile.global after prefetch",
                                 "st/ld.volatile.shared",
                                 "st.global.wt/cs/cg",
                                 "ld.volatile spin within a warp",
                                 "generic ld.volatile"};
  for (uint32_t t = 0; t < static_cast<uint32_t>(n); ++t) {
    const uint32_t b = 4 * (t / 4);
    const uint32_t e[kMiscOut] = {
        words[t],
        words[t + 1],
        words[b],
        words[b + 1],
        words[b + 2],
        words[b + 3],
        static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(words[t] & 0xffffu))),
        words[t],
        words[t],
        words[t],
        words[t],
        words[t],
        ((t + 1) % n) * 11 + 3,
        0x600d0000u + t,
        t == 0 ? 0xfeed0001u : 0u,
        t == 0 ? 1u : 0u};
    for (int i = 0; i < kMiscOut; ++i)
      conf_check(names[i], conf_fmt("thread %u", t), g[t * kMiscOut + i], e[i]);
  }
  CUDA_CHECK(cudaFree(d_g));
  CUDA_CHECK(cudaFree(d_scratch));
  CUDA_CHECK(cudaFree(d_out));
}

}  // namespace

int main() {
  conf_require_device();
  test_widths();
  test_shared();
  test_shared_wrap();
  test_generic();
  test_local();
  test_symbols();
  test_pitch();
  test_cp_async();
  test_misc();
  return conf_finish("memory_ops");
}
