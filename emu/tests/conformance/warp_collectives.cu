// Warp-level collectives: shfl.sync (all modes, the c operand's clamp and segment mask, the
// predicate output, partial member masks in divergent code), vote.sync, match.sync (b32/b64),
// redux.sync, activemask, bar.warp.sync / __syncwarp under divergence, %laneid and %lanemask_*.
//
// Every expected value is computed on the host from the PTX ISA's definition of the instruction
// (shfl.sync's pseudo-code is transcribed in shfl_model below) or, for the __shfl_*_sync width
// argument, from the CUDA programming guide's description of the intrinsics, which is an
// independent statement of the same thing.
#include <vector>

#include "conf_common.h"

namespace {

constexpr uint32_t kFull = 0xffffffffu;

// A distinct, irregular 32-bit value per lane (multiplying by an odd constant is a bijection).
__host__ __device__ inline uint32_t lane_value(uint32_t lane) {
  return (lane + 1) * 0x9E3779B1u ^ 0x5A5A0000u;
}

// ---------------------------------------------------------------------------------------------
// shfl.sync
// ---------------------------------------------------------------------------------------------
enum ShflMode { kUp = 0, kDown = 1, kBfly = 2, kIdx = 3 };
const char* const kModeName[4] = {"up", "down", "bfly", "idx"};

// The PTX ISA's shfl.sync semantics, with every lane active and in membermask.
void shfl_model(int mode, const uint32_t a[32], uint32_t b, uint32_t c, uint32_t lane, uint32_t* d,
                uint32_t* p) {
  const int bval = b & 31, cval = c & 31, segmask = (c >> 8) & 31;
  const int maxLane = (lane & segmask) | (cval & ~segmask);
  const int minLane = lane & segmask;
  int j = 0;
  bool pval = false;
  switch (mode) {
    case kUp:
      j = static_cast<int>(lane) - bval;
      pval = j >= maxLane;
      break;
    case kDown:
      j = static_cast<int>(lane) + bval;
      pval = j <= maxLane;
      break;
    case kBfly:
      j = static_cast<int>(lane) ^ bval;
      pval = j <= maxLane;
      break;
    default:
      j = minLane | (bval & ~segmask);
      pval = j <= maxLane;
      break;
  }
  if (!pval) j = static_cast<int>(lane);
  *d = a[j];
  *p = pval ? 1u : 0u;
}

template <int MODE>
__device__ inline uint32_t shfl_raw(uint32_t a, uint32_t b, uint32_t c, uint32_t mask,
                                    uint32_t* p) {
  uint32_t d, pr;
  // The mode is part of the opcode, so each needs its own asm string.
#define SHFL_RAW(MODE_NAME)                                           \
  asm volatile("{ .reg .pred pq; shfl.sync." MODE_NAME                \
               ".b32 %0|pq, %2, %3, %4, %5; selp.u32 %1, 1, 0, pq; }" \
               : "=r"(d), "=r"(pr)                                    \
               : "r"(a), "r"(b), "r"(c), "r"(mask))
  if (MODE == kUp)
    SHFL_RAW("up");
  else if (MODE == kDown)
    SHFL_RAW("down");
  else if (MODE == kBfly)
    SHFL_RAW("bfly");
  else
    SHFL_RAW("idx");
#undef SHFL_RAW
  *p = pr;
  return d;
}

// (b, c) pairs run through all four modes with b and c in registers.
struct ShflCase {
  uint32_t b, c;
};
const ShflCase kShflCases[] = {
    {0, 0x1f},  // c = 0x1f: one 32-lane segment, clamp at 31
    {1, 0x1f},
    {5, 0x1f},
    {31, 0x1f},
    {33, 0x1f},           // only b[4:0] counts: 33 acts as 1
    {0xffffffe3u, 0x1f},  // ... and 0xffffffe3 as 3
    {1, 0x0},             // c = 0: the form __shfl_up_sync uses for width 32
    {3, 0x0},
    {16, 0x0},
    {1, 0x1807},   // segmask 0x18 (8-lane segments), clamp 7: width 8, down/bfly/idx form
    {1, 0x1800},   // width 8, up form
    {3, 0x1007},   // segmask 0x10 with clamp 7: a clamp inside a 16-lane segment
    {9, 0x1807},   // width 8, b beyond the segment
    {2, 0x100f},   // width 16
    {7, 0x1000},   // width 16, up form
    {12, 0x1c03},  // width 4
    {3, 0x0a},     // no segments, clamp at lane 10
    {4, 0x0a},
    {11, 0x0a},
    {6, 0x1b04},       // a non-contiguous segmask (0x1b), clamp 4: the formula still applies
    {2, 0xabcd001fu},  // bits of c above bit 12 are ignored
};
constexpr int kNumShflCases = sizeof(kShflCases) / sizeof(kShflCases[0]);

__global__ void k_shfl_raw(const ShflCase* cases, int n, uint32_t* d_out, uint32_t* p_out) {
  const uint32_t lane = threadIdx.x;
  const uint32_t a = lane_value(lane);
  for (int i = 0; i < n; ++i) {
    const uint32_t b = cases[i].b, c = cases[i].c;
    uint32_t *d = d_out + i * 4 * 32 + lane, *p = p_out + i * 4 * 32 + lane;
    d[kUp * 32] = shfl_raw<kUp>(a, b, c, kFull, &p[kUp * 32]);
    d[kDown * 32] = shfl_raw<kDown>(a, b, c, kFull, &p[kDown * 32]);
    d[kBfly * 32] = shfl_raw<kBfly>(a, b, c, kFull, &p[kBfly * 32]);
    d[kIdx * 32] = shfl_raw<kIdx>(a, b, c, kFull, &p[kIdx * 32]);
  }
}

// The same instruction with b and c as immediates (the form nvcc itself emits).
constexpr int kNumImm = 4;
const int kImmMode[kNumImm] = {kBfly, kUp, kDown, kIdx};
const ShflCase kImmCase[kNumImm] = {{0x10, 0x1f}, {2, 0x1800}, {5, 0x0f}, {9, 0x181f}};
__global__ void k_shfl_imm(uint32_t* d_out, uint32_t* p_out) {
  const uint32_t lane = threadIdx.x, a = lane_value(lane);
  uint32_t d, p;
  asm volatile(
      "{ .reg .pred pq; shfl.sync.bfly.b32 %0|pq, %2, 0x10, 0x1f, 0xffffffff; selp.u32 %1, 1, 0, "
      "pq; }"
      : "=r"(d), "=r"(p)
      : "r"(a));
  d_out[0 * 32 + lane] = d, p_out[0 * 32 + lane] = p;
  asm volatile(
      "{ .reg .pred pq; shfl.sync.up.b32 %0|pq, %2, 2, 0x1800, -1; selp.u32 %1, 1, 0, pq; }"
      : "=r"(d), "=r"(p)
      : "r"(a));
  d_out[1 * 32 + lane] = d, p_out[1 * 32 + lane] = p;
  asm volatile(
      "{ .reg .pred pq; shfl.sync.down.b32 %0|pq, %2, 5, 0x0f, 0xffffffff; selp.u32 %1, 1, 0, pq; }"
      : "=r"(d), "=r"(p)
      : "r"(a));
  d_out[2 * 32 + lane] = d, p_out[2 * 32 + lane] = p;
  // No predicate destination.
  asm volatile("shfl.sync.idx.b32 %0, %1, 9, 0x181f, 0xffffffff;" : "=r"(d) : "r"(a));
  d_out[3 * 32 + lane] = d, p_out[3 * 32 + lane] = 2;  // 2: not produced, not checked
}

// The intrinsics with their width argument. Expected values follow the programming guide:
//   __shfl_sync:      lane (lane & ~(w-1)) + srcLane % w
//   __shfl_up_sync:   lane - delta when lane % w >= delta, else own value
//   __shfl_down_sync: lane + delta when lane % w + delta < w, else own value
//   __shfl_xor_sync:  lane ^ m unless that lies in a later group of w lanes, else own value
constexpr int kNumIntrin = 15;
__global__ void k_shfl_intrin(uint32_t* out, unsigned long long* out64, double* outd) {
  const uint32_t lane = threadIdx.x, a = lane_value(lane);
  uint32_t* o = out + lane;
  o[0 * 32] = __shfl_sync(kFull, a, 7);
  o[1 * 32] = __shfl_sync(kFull, a, 13, 8);
  o[2 * 32] = __shfl_sync(kFull, a, 5, 16);
  o[3 * 32] = __shfl_up_sync(kFull, a, 3, 8);
  o[4 * 32] = __shfl_up_sync(kFull, a, 5, 16);
  o[5 * 32] = __shfl_down_sync(kFull, a, 3, 8);
  o[6 * 32] = __shfl_down_sync(kFull, a, 9, 16);
  o[7 * 32] = __shfl_xor_sync(kFull, a, 5, 8);
  o[8 * 32] = __shfl_xor_sync(kFull, a, 8, 8);  // reaches into other groups
  o[9 * 32] = __shfl_xor_sync(kFull, a, 16, 16);
  o[10 * 32] = __shfl_up_sync(kFull, a, 1);
  o[11 * 32] = __shfl_down_sync(kFull, a, 31);
  o[12 * 32] = __shfl_sync(kFull, a, (lane * 7) % 32);
  o[13 * 32] = __shfl_sync(kFull, a, (lane * 5 + 3) % 32, 4);
  o[14 * 32] = __shfl_xor_sync(kFull, a, 31);
  const unsigned long long v64 =
      (static_cast<unsigned long long>(lane_value(lane + 100)) << 32) | a;
  out64[lane] = __shfl_xor_sync(kFull, v64, 3);
  outd[lane] = __shfl_down_sync(kFull, static_cast<double>(lane) * 1.25, 4, 8);
}

uint32_t intrin_source(int i, uint32_t lane) {
  auto idx = [&](uint32_t src, uint32_t w) { return (lane & ~(w - 1)) + src % w; };
  auto up = [&](uint32_t d, uint32_t w) { return lane % w >= d ? lane - d : lane; };
  auto down = [&](uint32_t d, uint32_t w) { return lane % w + d < w ? lane + d : lane; };
  auto xr = [&](uint32_t m, uint32_t w) {
    uint32_t j = lane ^ m;
    return j < (lane / w + 1) * w ? j : lane;
  };
  switch (i) {
    case 0:
      return idx(7, 32);
    case 1:
      return idx(13, 8);
    case 2:
      return idx(5, 16);
    case 3:
      return up(3, 8);
    case 4:
      return up(5, 16);
    case 5:
      return down(3, 8);
    case 6:
      return down(9, 16);
    case 7:
      return xr(5, 8);
    case 8:
      return xr(8, 8);
    case 9:
      return xr(16, 16);
    case 10:
      return up(1, 32);
    case 11:
      return down(31, 32);
    case 12:
      return idx((lane * 7) % 32, 32);
    case 13:
      return idx((lane * 5 + 3) % 32, 4);
    default:
      return xr(31, 32);
  }
}

// Partial member masks: the two halves of the warp take different branches and shuffle among
// themselves only; odd lanes alone shuffle while even lanes skip; a 20-lane warp (the block's
// second warp) shuffles with the 20 lanes that exist.
constexpr int kNumPartial = 6;
__global__ void k_shfl_partial(uint32_t* out) {
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint32_t a = lane_value(lane);
  uint32_t r[kNumPartial];
  for (int i = 0; i < kNumPartial; ++i) r[i] = 0xdeadbeefu;
  if (warp == 0) {
    if (lane < 16) {
      r[0] = __shfl_sync(0x0000ffffu, a, 15 - lane);
      r[1] = __shfl_down_sync(0x0000ffffu, a, 2, 16);
      r[2] = shfl_raw<kIdx>(a, (lane + 1) & 15, 0x1f, 0x0000ffffu, &r[3]);
      r[4] = shfl_raw<kDown>(a, 4, 0x0f, 0x0000ffffu, &r[5]);  // clamp at 15: lanes 12..15 p=0
    } else {
      r[0] = __shfl_xor_sync(0xffff0000u, a, 1);
      r[1] = __shfl_up_sync(0xffff0000u, a, 3, 16);
      r[2] = shfl_raw<kBfly>(a, 6, 0x1f, 0xffff0000u, &r[3]);
      r[4] = shfl_raw<kUp>(a, 4, 0x1010, 0xffff0000u, &r[5]);  // minimum lane 16: lanes 16..19 p=0
    }
  } else if (warp == 1) {
    if (lane & 1) r[0] = __shfl_xor_sync(0xaaaaaaaau, a, 2);
    if ((lane & 1) == 0) r[1] = __shfl_sync(0x55555555u, a, 30 - lane);
  } else {
    // Only lanes 0..19 exist in this warp.
    r[0] = __shfl_sync(0x000fffffu, a, (lane + 1) % 20);
    r[1] = shfl_raw<kDown>(a, 1, 0x13, 0x000fffffu, &r[2]);  // clamp at lane 19
  }
  for (int i = 0; i < kNumPartial; ++i) out[(warp * kNumPartial + i) * 32 + lane] = r[i];
}

void expect_partial(uint32_t warp, uint32_t lane, uint32_t e[kNumPartial]) {
  uint32_t a[32];
  for (uint32_t l = 0; l < 32; ++l) a[l] = lane_value(l);
  for (int i = 0; i < kNumPartial; ++i) e[i] = 0xdeadbeefu;
  if (warp == 0) {
    if (lane < 16) {
      e[0] = a[15 - lane];
      e[1] = lane % 16 + 2 < 16 ? a[lane + 2] : a[lane];
      shfl_model(kIdx, a, (lane + 1) & 15, 0x1f, lane, &e[2], &e[3]);
      shfl_model(kDown, a, 4, 0x0f, lane, &e[4], &e[5]);
    } else {
      e[0] = a[lane ^ 1];
      e[1] = lane % 16 >= 3 ? a[lane - 3] : a[lane];
      shfl_model(kBfly, a, 6, 0x1f, lane, &e[2], &e[3]);
      shfl_model(kUp, a, 4, 0x1010, lane, &e[4], &e[5]);
    }
  } else if (warp == 1) {
    if (lane & 1) e[0] = a[lane ^ 2];
    if ((lane & 1) == 0) e[1] = a[30 - lane];
  } else {
    e[0] = a[(lane + 1) % 20];
    shfl_model(kDown, a, 1, 0x13, lane, &e[1], &e[2]);
  }
}

void test_shfl() {
  // Raw shfl.sync over the case table.
  ShflCase* d_cases;
  uint32_t *d_d, *d_p;
  const size_t n = static_cast<size_t>(kNumShflCases) * 4 * 32;
  CUDA_CHECK(cudaMalloc(&d_cases, sizeof kShflCases));
  CUDA_CHECK(cudaMalloc(&d_d, n * 4));
  CUDA_CHECK(cudaMalloc(&d_p, n * 4));
  CUDA_CHECK(cudaMemcpy(d_cases, kShflCases, sizeof kShflCases, cudaMemcpyHostToDevice));
  k_shfl_raw<<<1, 32>>>(d_cases, kNumShflCases, d_d, d_p);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> got_d(n), got_p(n);
  CUDA_CHECK(cudaMemcpy(got_d.data(), d_d, n * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(got_p.data(), d_p, n * 4, cudaMemcpyDeviceToHost));
  uint32_t a[32];
  for (uint32_t l = 0; l < 32; ++l) a[l] = lane_value(l);
  for (int i = 0; i < kNumShflCases; ++i)
    for (int m = 0; m < 4; ++m)
      for (uint32_t lane = 0; lane < 32; ++lane) {
        uint32_t ed, ep;
        shfl_model(m, a, kShflCases[i].b, kShflCases[i].c, lane, &ed, &ep);
        const size_t k = (static_cast<size_t>(i) * 4 + m) * 32 + lane;
        ConfStr in = conf_fmt("b=0x%x c=0x%x lane %u", kShflCases[i].b, kShflCases[i].c, lane);
        char name[64];
        std::snprintf(name, sizeof name, "shfl.sync.%s.b32 d", kModeName[m]);
        conf_check(name, in, got_d[k], ed);
        std::snprintf(name, sizeof name, "shfl.sync.%s.b32 p", kModeName[m]);
        conf_check(name, in, got_p[k], ep);
      }
  CUDA_CHECK(cudaFree(d_cases));

  // Immediate operands.
  k_shfl_imm<<<1, 32>>>(d_d, d_p);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(got_d.data(), d_d, kNumImm * 32 * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(got_p.data(), d_p, kNumImm * 32 * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kNumImm; ++i)
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t ed, ep;
      shfl_model(kImmMode[i], a, kImmCase[i].b, kImmCase[i].c, lane, &ed, &ep);
      ConfStr in = conf_fmt("immediate b=0x%x c=0x%x lane %u", kImmCase[i].b, kImmCase[i].c, lane);
      conf_check(kModeName[kImmMode[i]], in, got_d[i * 32 + lane], ed);
      if (got_p[i * 32 + lane] != 2)
        conf_check(kModeName[kImmMode[i]], in, got_p[i * 32 + lane], ep);
    }
  CUDA_CHECK(cudaFree(d_d));
  CUDA_CHECK(cudaFree(d_p));

  // Intrinsics with width.
  uint32_t* d_o;
  unsigned long long* d_o64;
  double* d_od;
  CUDA_CHECK(cudaMalloc(&d_o, kNumIntrin * 32 * 4));
  CUDA_CHECK(cudaMalloc(&d_o64, 32 * 8));
  CUDA_CHECK(cudaMalloc(&d_od, 32 * 8));
  k_shfl_intrin<<<1, 32>>>(d_o, d_o64, d_od);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> go(kNumIntrin * 32);
  std::vector<unsigned long long> go64(32);
  std::vector<double> god(32);
  CUDA_CHECK(cudaMemcpy(go.data(), d_o, go.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(go64.data(), d_o64, 32 * 8, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(god.data(), d_od, 32 * 8, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kNumIntrin; ++i)
    for (uint32_t lane = 0; lane < 32; ++lane)
      conf_check("__shfl_*_sync(width)", conf_fmt("case %d lane %u", i, lane), go[i * 32 + lane],
                 a[intrin_source(i, lane)]);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t j = lane ^ 3;
    const unsigned long long e =
        (static_cast<unsigned long long>(lane_value(j + 100)) << 32) | a[j];
    conf_check("__shfl_xor_sync(u64, 3)", conf_fmt("lane %u", lane), go64[lane], e);
    const uint32_t jd = lane % 8 + 4 < 8 ? lane + 4 : lane;
    const double ed = static_cast<double>(jd) * 1.25;
    uint64_t gb, eb;
    std::memcpy(&gb, &god[lane], 8);
    std::memcpy(&eb, &ed, 8);
    conf_check_bits("__shfl_down_sync(f64, 4, 8)", conf_fmt("lane %u", lane), gb, eb, 64);
  }
  CUDA_CHECK(cudaFree(d_o));
  CUDA_CHECK(cudaFree(d_o64));
  CUDA_CHECK(cudaFree(d_od));

  // Partial masks: 3 warps, the last with 20 lanes.
  uint32_t* d_part;
  const int nw = 3;
  CUDA_CHECK(cudaMalloc(&d_part, nw * kNumPartial * 32 * 4));
  CUDA_CHECK(cudaMemset(d_part, 0xee, nw * kNumPartial * 32 * 4));
  k_shfl_partial<<<1, 84>>>(d_part);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> gp(nw * kNumPartial * 32);
  CUDA_CHECK(cudaMemcpy(gp.data(), d_part, gp.size() * 4, cudaMemcpyDeviceToHost));
  for (uint32_t w = 0; w < nw; ++w)
    for (uint32_t lane = 0; lane < (w == 2 ? 20u : 32u); ++lane) {
      uint32_t e[kNumPartial];
      expect_partial(w, lane, e);
      for (int i = 0; i < kNumPartial; ++i)
        conf_check("shfl.sync partial membermask",
                   conf_fmt("warp %u lane %u result %d", w, lane, i),
                   gp[(w * kNumPartial + i) * 32 + lane], e[i]);
    }
  CUDA_CHECK(cudaFree(d_part));
}

// ---------------------------------------------------------------------------------------------
// vote.sync
// ---------------------------------------------------------------------------------------------
constexpr int kNumPreds = 6;
__host__ __device__ inline bool pred_pattern(int k, uint32_t lane) {
  switch (k) {
    case 0:
      return true;
    case 1:
      return false;
    case 2:
      return lane % 3 == 0;
    case 3:
      return lane == 17;
    case 4:
      return lane != 5;
    default:
      return (lane & 0x12) != 0;
  }
}

// Outputs per pattern: all, any, uni, ballot (intrinsics), ballot (raw vote.sync.ballot.b32),
// then the same five for the divergent half-warp form.
constexpr int kVoteOuts = 10;

// __all_sync, __any_sync, __uni_sync and __ballot_sync of pred over mask, 32 words apart.
__device__ inline void vote_intrinsics(uint32_t* o, uint32_t mask, int pred) {
  o[0 * 32] = __all_sync(mask, pred) ? 1 : 0;
  o[1 * 32] = __any_sync(mask, pred) ? 1 : 0;
  o[2 * 32] = __uni_sync(mask, pred) ? 1 : 0;
  o[3 * 32] = __ballot_sync(mask, pred);
}

__global__ void k_vote(uint32_t* out) {
  const uint32_t lane = threadIdx.x;
  for (int k = 0; k < kNumPreds; ++k) {
    const int pr = pred_pattern(k, lane);
    uint32_t* o = out + k * kVoteOuts * 32 + lane;
    vote_intrinsics(o, kFull, pr);
    uint32_t b;
    asm volatile("{ .reg .pred pq; setp.ne.u32 pq, %1, 0; vote.sync.ballot.b32 %0, pq, %2; }"
                 : "=r"(b)
                 : "r"(pr), "r"(kFull));
    o[4 * 32] = b;
    // Divergent halves, each voting over its own 16 lanes; the upper half votes on the negation.
    if (lane < 16) {
      vote_intrinsics(o + 5 * 32, 0x0000ffffu, pr);
      uint32_t v;
      asm volatile(
          "{ .reg .pred pq; setp.ne.u32 pq, %1, 0; vote.sync.all.pred pq, pq, %2; selp.u32 %0, 1, "
          "0, pq; }"
          : "=r"(v)
          : "r"(pr), "r"(0x0000ffffu));
      o[9 * 32] = v;
    } else {
      vote_intrinsics(o + 5 * 32, 0xffff0000u, !pr);
      uint32_t v;
      asm volatile(
          "{ .reg .pred pq; setp.ne.u32 pq, %1, 0; vote.sync.any.pred pq, !pq, %2; selp.u32 %0, 1, "
          "0, pq; }"
          : "=r"(v)
          : "r"(pr), "r"(0xffff0000u));
      o[9 * 32] = v;
    }
  }
}

void test_vote() {
  uint32_t* d_out;
  const size_t n = kNumPreds * kVoteOuts * 32;
  CUDA_CHECK(cudaMalloc(&d_out, n * 4));
  k_vote<<<1, 32>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(n);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
  const char* names[kVoteOuts] = {"vote.sync.all",
                                  "vote.sync.any",
                                  "vote.sync.uni",
                                  "vote.sync.ballot (__ballot_sync)",
                                  "vote.sync.ballot.b32",
                                  "vote.sync.all (half warp)",
                                  "vote.sync.any (half warp)",
                                  "vote.sync.uni (half warp)",
                                  "vote.sync.ballot (half warp)",
                                  "vote.sync.all/any raw (half warp)"};
  for (int k = 0; k < kNumPreds; ++k) {
    uint32_t ballot = 0;
    for (uint32_t l = 0; l < 32; ++l) ballot |= (pred_pattern(k, l) ? 1u : 0u) << l;
    const uint32_t lo = ballot & 0xffffu, hi = ~ballot & 0xffff0000u;  // upper half votes on !pred
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t e[kVoteOuts];
      e[0] = ballot == kFull;
      e[1] = ballot != 0;
      e[2] = ballot == kFull || ballot == 0;
      e[3] = e[4] = ballot;
      const uint32_t mm = lane < 16 ? 0x0000ffffu : 0xffff0000u;
      const uint32_t bb = lane < 16 ? lo : hi;
      e[5] = bb == mm;
      e[6] = bb != 0;
      e[7] = bb == mm || bb == 0;
      e[8] = bb;
      e[9] = lane < 16 ? e[5] : e[6];
      for (int i = 0; i < kVoteOuts; ++i)
        conf_check(names[i], conf_fmt("pattern %d lane %u", k, lane),
                   g[(k * kVoteOuts + i) * 32 + lane], e[i]);
    }
  }
  CUDA_CHECK(cudaFree(d_out));
}

// ---------------------------------------------------------------------------------------------
// match.sync
// ---------------------------------------------------------------------------------------------
constexpr int kNumMatch = 7;  // value patterns
__host__ __device__ inline uint64_t match_value(int k, uint32_t lane) {
  switch (k) {
    case 0:
      return lane / 4;
    case 1:
      return lane % 3;
    case 2:
      return 42;
    case 3:
      return (static_cast<uint64_t>(lane & 1) << 40) | 0x1234u;  // differ in the high word only
    case 4:
      return 0x8000000000000007ull;
    case 5:
      return lane;
    default:
      return (static_cast<uint64_t>(lane % 5) << 32) | (lane % 2);
  }
}

// Per pattern: any.b32, all.b32 d, all.b32 p, any.b64, all.b64 d, all.b64 p (the b32 forms use
// the low word of the value).
__global__ void k_match(uint32_t* out, uint32_t* part) {
  const uint32_t lane = threadIdx.x;
  for (int k = 0; k < kNumMatch; ++k) {
    const uint64_t v = match_value(k, lane);
    const uint32_t v32 = static_cast<uint32_t>(v);
    uint32_t d, p;
    uint32_t* o = out + k * 6 * 32 + lane;
    asm volatile("match.any.sync.b32 %0, %1, %2;" : "=r"(d) : "r"(v32), "r"(kFull));
    o[0] = d;
    asm volatile("{ .reg .pred pq; match.all.sync.b32 %0|pq, %2, %3; selp.u32 %1, 1, 0, pq; }"
                 : "=r"(d), "=r"(p)
                 : "r"(v32), "r"(kFull));
    o[32] = d, o[64] = p;
    asm volatile("match.any.sync.b64 %0, %1, %2;" : "=r"(d) : "l"(v), "r"(kFull));
    o[96] = d;
    asm volatile("{ .reg .pred pq; match.all.sync.b64 %0|pq, %2, %3; selp.u32 %1, 1, 0, pq; }"
                 : "=r"(d), "=r"(p)
                 : "l"(v), "r"(kFull));
    o[128] = d, o[160] = p;
  }
  // Divergent subset: lanes with lane % 4 != 3 (mask 0x77777777) match among themselves.
  uint32_t r0 = 0xdeadbeefu, r1 = 0xdeadbeefu, r2 = 0xdeadbeefu, r3 = 0xdeadbeefu;
  if (lane % 4 != 3) {
    const uint32_t v = lane / 8;
    r0 = __match_any_sync(0x77777777u, v);
    int pred = 0;
    r1 = __match_all_sync(0x77777777u, static_cast<unsigned long long>(v), &pred);
    r2 = pred;
    r3 = __match_all_sync(0x77777777u, 5u, &pred) | (pred ? 0 : 1);  // all equal: mask, pred=1
  }
  part[lane] = r0, part[32 + lane] = r1, part[64 + lane] = r2, part[96 + lane] = r3;
}

void test_match() {
  uint32_t *d_out, *d_part;
  const size_t n = kNumMatch * 6 * 32;
  CUDA_CHECK(cudaMalloc(&d_out, n * 4));
  CUDA_CHECK(cudaMalloc(&d_part, 4 * 32 * 4));
  k_match<<<1, 32>>>(d_out, d_part);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(n), gp(128);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gp.data(), d_part, 128 * 4, cudaMemcpyDeviceToHost));
  const char* names[6] = {"match.any.sync.b32", "match.all.sync.b32 d", "match.all.sync.b32 p",
                          "match.any.sync.b64", "match.all.sync.b64 d", "match.all.sync.b64 p"};
  for (int k = 0; k < kNumMatch; ++k)
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t any32 = 0, any64 = 0;
      for (uint32_t l = 0; l < 32; ++l) {
        if (static_cast<uint32_t>(match_value(k, l)) == static_cast<uint32_t>(match_value(k, lane)))
          any32 |= 1u << l;
        if (match_value(k, l) == match_value(k, lane)) any64 |= 1u << l;
      }
      const bool all32 = any32 == kFull, all64 = any64 == kFull;
      const uint32_t e[6] = {any32, all32 ? kFull : 0u, all32, any64, all64 ? kFull : 0u, all64};
      for (int i = 0; i < 6; ++i)
        conf_check(names[i], conf_fmt("pattern %d lane %u", k, lane), g[(k * 6 + i) * 32 + lane],
                   e[i]);
    }
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t e0 = 0xdeadbeefu, e1 = 0xdeadbeefu, e2 = 0xdeadbeefu, e3 = 0xdeadbeefu;
    if (lane % 4 != 3) {
      e0 = 0;
      for (uint32_t l = 0; l < 32; ++l)
        if (l % 4 != 3 && l / 8 == lane / 8) e0 |= 1u << l;
      e1 = 0, e2 = 0;    // lane / 8 differs across the members
      e3 = 0x77777777u;  // all equal: d = membermask and the predicate set (adds nothing)
    }
    conf_check("__match_any_sync(0x77777777)", conf_fmt("lane %u", lane), gp[lane], e0);
    conf_check("__match_all_sync(0x77777777) d", conf_fmt("lane %u", lane), gp[32 + lane], e1);
    conf_check("__match_all_sync(0x77777777) pred", conf_fmt("lane %u", lane), gp[64 + lane], e2);
    conf_check("__match_all_sync(0x77777777, equal)", conf_fmt("lane %u", lane), gp[96 + lane], e3);
  }
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_part));
}

// ---------------------------------------------------------------------------------------------
// redux.sync
// ---------------------------------------------------------------------------------------------
__host__ __device__ inline uint32_t redux_value(uint32_t lane) {
  return (lane * 2654435761u) ^ (lane << 7);
}

// The forms in the order of their result slots; the names and the asm strings both come from
// this one list so that they cannot drift apart.
#define REDUX_FORMS(X) \
  X("add.u32")         \
  X("add.s32")         \
  X("min.u32")         \
  X("max.u32")         \
  X("min.s32")         \
  X("max.s32")         \
  X("and.b32")         \
  X("or.b32")          \
  X("xor.b32")

#define REDUX_NAME(TYPE) "redux.sync." TYPE,
const char* const kReduxName[] = {REDUX_FORMS(REDUX_NAME)};
#undef REDUX_NAME
constexpr int kNumRedux = sizeof(kReduxName) / sizeof(kReduxName[0]);

__device__ inline void redux_all(uint32_t v, uint32_t m, uint32_t* o, int stride) {
  int k = 0;
#define REDUX_ONE(TYPE)                                                         \
  {                                                                             \
    uint32_t d;                                                                 \
    asm volatile("redux.sync." TYPE " %0, %1, %2;" : "=r"(d) : "r"(v), "r"(m)); \
    o[k++ * stride] = d;                                                        \
  }
  REDUX_FORMS(REDUX_ONE)
#undef REDUX_ONE
}

// out[0..]: full warp; out[kNumRedux*32..]: lanes with lane % 3 == 0 only (mask 0x49249249);
// out[2*kNumRedux*32..]: intrinsics __reduce_*_sync over the full warp.
__global__ void k_redux(uint32_t* out) {
  const uint32_t lane = threadIdx.x, v = redux_value(lane);
  redux_all(v, kFull, out + lane, 32);
  if (lane % 3 == 0) redux_all(v, 0x49249249u, out + kNumRedux * 32 + lane, 32);
  uint32_t* o = out + 2 * kNumRedux * 32 + lane;
  o[0] = __reduce_add_sync(kFull, v);
  o[32] = __reduce_min_sync(kFull, static_cast<int>(v));
  o[64] = __reduce_max_sync(kFull, v);
  o[96] = __reduce_and_sync(kFull, v);
  o[128] = __reduce_or_sync(kFull, v);
  o[160] = __reduce_xor_sync(kFull, v);
}

void redux_expect(uint32_t members, uint32_t e[kNumRedux]) {
  uint32_t add = 0, minu = 0xffffffffu, maxu = 0, and_ = 0xffffffffu, or_ = 0, xor_ = 0;
  int32_t mins = INT32_MAX, maxs = INT32_MIN;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!((members >> l) & 1)) continue;
    const uint32_t v = redux_value(l);
    add += v;
    minu = v < minu ? v : minu;
    maxu = v > maxu ? v : maxu;
    mins = static_cast<int32_t>(v) < mins ? static_cast<int32_t>(v) : mins;
    maxs = static_cast<int32_t>(v) > maxs ? static_cast<int32_t>(v) : maxs;
    and_ &= v, or_ |= v, xor_ ^= v;
  }
  const uint32_t r[kNumRedux] = {
      add,  add, minu, maxu, static_cast<uint32_t>(mins), static_cast<uint32_t>(maxs),
      and_, or_, xor_};
  for (int i = 0; i < kNumRedux; ++i) e[i] = r[i];
}

void test_redux() {
  uint32_t* d_out;
  const size_t n = 3 * kNumRedux * 32;
  CUDA_CHECK(cudaMalloc(&d_out, n * 4));
  CUDA_CHECK(cudaMemset(d_out, 0, n * 4));
  k_redux<<<1, 32>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(n);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
  uint32_t ef[kNumRedux], ep[kNumRedux];
  redux_expect(kFull, ef);
  redux_expect(0x49249249u, ep);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < kNumRedux; ++i) {
      conf_check(kReduxName[i], conf_fmt("full warp, lane %u", lane), g[i * 32 + lane], ef[i]);
      if (lane % 3 == 0)
        conf_check(kReduxName[i], conf_fmt("mask 0x49249249, lane %u", lane),
                   g[(kNumRedux + i) * 32 + lane], ep[i]);
    }
    const uint32_t* o = &g[2 * kNumRedux * 32 + lane];
    conf_check("__reduce_add_sync", conf_fmt("lane %u", lane), o[0], ef[0]);
    conf_check("__reduce_min_sync(int)", conf_fmt("lane %u", lane), o[32], ef[4]);
    conf_check("__reduce_max_sync(unsigned)", conf_fmt("lane %u", lane), o[64], ef[3]);
    conf_check("__reduce_and_sync", conf_fmt("lane %u", lane), o[96], ef[6]);
    conf_check("__reduce_or_sync", conf_fmt("lane %u", lane), o[128], ef[7]);
    conf_check("__reduce_xor_sync", conf_fmt("lane %u", lane), o[160], ef[8]);
  }
  CUDA_CHECK(cudaFree(d_out));
}

// ---------------------------------------------------------------------------------------------
// activemask, bar.warp.sync / __syncwarp
// ---------------------------------------------------------------------------------------------
// Block of 48 threads: warp 0 is full, warp 1 has 16 lanes.
// out[tid*4 + 0]: activemask after __syncwarp() (converged): the warp's existing lanes;
// out[tid*4 + 1]: activemask inside `if (lane % 4 == 1)`: must be a subset of that branch's lanes
//                 containing the caller's own lane (which threads are active together there is
//                 the implementation's choice);
// out[tid*4 + 2]: raw activemask.b32 after bar.warp.sync -1 (warp 0 only);
// out[tid*4 + 3]: activemask after __syncwarp(mask) inside the odd-lane branch (subset check).
__global__ void k_activemask(uint32_t* out) {
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncwarp(warp == 0 ? kFull : 0x0000ffffu);
  uint32_t* o = out + threadIdx.x * 4;
  o[0] = __activemask();
  o[1] = 0;
  if (lane % 4 == 1) o[1] = __activemask();
  if (warp == 0) {
    uint32_t m;
    asm volatile("bar.warp.sync -1;\n\tactivemask.b32 %0;" : "=r"(m));
    o[2] = m;
  } else {
    o[2] = 0;
  }
  o[3] = 0;
  if (lane & 1) {
    __syncwarp(warp == 0 ? 0xaaaaaaaau : 0x0000aaaau);
    o[3] = __activemask();
  }
}

// Exchanges through shared memory ordered only by __syncwarp / bar.warp.sync.
// r[0]: the halves write different values in different branches, then one __syncwarp(), then
//       read the other half's slot;
// r[1]: the two halves reach *different* __syncwarp() calls (allowed from sm_70 on), each then
//       reading the other half's slot;
// r[2]: odd lanes only, __syncwarp(0xaaaaaaaa), read the next odd lane's slot;
// r[3]: raw bar.warp.sync with a register mask over lanes 0..7 of a divergent branch.
__global__ void k_syncwarp(uint32_t* out) {
  __shared__ uint32_t s[4][32];
  const uint32_t lane = threadIdx.x;
  if (lane < 16)
    s[0][lane] = lane * 3 + 1;
  else
    s[0][lane] = lane * 5 + 7;
  __syncwarp();
  const uint32_t r0 = s[0][lane ^ 16];

  uint32_t r1;
  if (lane < 16) {
    s[1][lane] = 1000 + lane;
    __syncwarp();
    r1 = s[1][lane + 16];
  } else {
    s[1][lane] = 2000 + lane;
    __syncwarp();
    r1 = s[1][lane - 16];
  }

  uint32_t r2 = 0;
  if (lane & 1) {
    s[2][lane] = lane * lane;
    __syncwarp(0xaaaaaaaau);
    r2 = s[2][(lane + 2) & 31];
  }

  uint32_t r3 = 0;
  if (lane < 8) {
    s[3][lane] = 77 * lane;
    asm volatile("bar.warp.sync %0;" ::"r"(0xffu) : "memory");
    r3 = s[3][7 - lane];
  }
  out[lane] = r0, out[32 + lane] = r1, out[64 + lane] = r2, out[96 + lane] = r3;
}

void test_active_and_syncwarp() {
  uint32_t* d_out;
  CUDA_CHECK(cudaMalloc(&d_out, 48 * 4 * 4));
  k_activemask<<<1, 48>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(48 * 4);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  for (uint32_t t = 0; t < 48; ++t) {
    const uint32_t lane = t % 32, warp = t / 32;
    const uint32_t existing = warp == 0 ? kFull : 0x0000ffffu;
    conf_check("activemask (converged)", conf_fmt("thread %u", t), g[t * 4 + 0], existing);
    if (lane % 4 == 1) {
      const uint32_t m = g[t * 4 + 1], branch = 0x22222222u & existing;
      const bool ok = (m & ~branch) == 0 && ((m >> lane) & 1);
      conf_check_text("activemask (lane % 4 == 1 branch)", conf_fmt("thread %u", t).s, ok,
                      conf_fmt("0x%08x", m).s,
                      conf_fmt("a subset of 0x%08x holding lane %u", branch, lane).s);
    }
    if (warp == 0)
      conf_check("activemask.b32 after bar.warp.sync -1", conf_fmt("thread %u", t), g[t * 4 + 2],
                 kFull);
    if (lane & 1) {
      const uint32_t m = g[t * 4 + 3], branch = 0xaaaaaaaau & existing;
      const bool ok = (m & ~branch) == 0 && ((m >> lane) & 1);
      conf_check_text("activemask (odd lanes after __syncwarp)", conf_fmt("thread %u", t).s, ok,
                      conf_fmt("0x%08x", m).s,
                      conf_fmt("a subset of 0x%08x holding lane %u", branch, lane).s);
    }
  }
  CUDA_CHECK(cudaFree(d_out));

  CUDA_CHECK(cudaMalloc(&d_out, 128 * 4));
  k_syncwarp<<<1, 32>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  g.resize(128);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, 128 * 4, cudaMemcpyDeviceToHost));
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t o = lane ^ 16;
    conf_check("__syncwarp after divergent stores", conf_fmt("lane %u", lane), g[lane],
               o < 16 ? o * 3 + 1 : o * 5 + 7);
    conf_check("__syncwarp at two different call sites", conf_fmt("lane %u", lane), g[32 + lane],
               lane < 16 ? 2000 + lane + 16 : 1000 + lane - 16);
    const uint32_t n2 = (lane + 2) & 31;
    conf_check("__syncwarp(0xaaaaaaaa) odd lanes", conf_fmt("lane %u", lane), g[64 + lane],
               (lane & 1) ? n2 * n2 : 0u);
    conf_check("bar.warp.sync 0xff", conf_fmt("lane %u", lane), g[96 + lane],
               lane < 8 ? 77 * (7 - lane) : 0u);
  }
  CUDA_CHECK(cudaFree(d_out));
}

// ---------------------------------------------------------------------------------------------
// %laneid and %lanemask_* in a 2D block (8 x 12: three warps)
// ---------------------------------------------------------------------------------------------
__global__ void k_lane_regs(uint32_t* out) {
  const uint32_t t = threadIdx.y * blockDim.x + threadIdx.x;
  uint32_t lane, lt, le, eq, ge, gt;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm volatile("mov.u32 %0, %%lanemask_le;" : "=r"(le));
  asm volatile("mov.u32 %0, %%lanemask_eq;" : "=r"(eq));
  asm volatile("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
  asm volatile("mov.u32 %0, %%lanemask_gt;" : "=r"(gt));
  uint32_t* o = out + t * 6;
  o[0] = lane, o[1] = lt, o[2] = le, o[3] = eq, o[4] = ge, o[5] = gt;
}

void test_lane_regs() {
  uint32_t* d_out;
  const int n = 96;
  CUDA_CHECK(cudaMalloc(&d_out, n * 6 * 4));
  k_lane_regs<<<1, dim3(8, 12)>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> g(n * 6);
  CUDA_CHECK(cudaMemcpy(g.data(), d_out, g.size() * 4, cudaMemcpyDeviceToHost));
  const char* names[6] = {"%laneid",      "%lanemask_lt", "%lanemask_le",
                          "%lanemask_eq", "%lanemask_ge", "%lanemask_gt"};
  for (uint32_t t = 0; t < static_cast<uint32_t>(n); ++t) {
    const uint32_t lane = t % 32;
    const uint32_t lt = (1u << lane) - 1, eq = 1u << lane, le = lt | eq;
    const uint32_t e[6] = {lane, lt, le, eq, ~lt, ~le};
    for (int i = 0; i < 6; ++i)
      conf_check(names[i], conf_fmt("linear thread %u", t), g[t * 6 + i], e[i]);
  }
  CUDA_CHECK(cudaFree(d_out));
}

}  // namespace

int main() {
  conf_require_device();
  test_shfl();
  test_vote();
  test_match();
  test_redux();
  test_active_and_syncwarp();
  test_lane_regs();
  return conf_finish("warp_collectives");
}
