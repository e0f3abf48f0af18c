// wgmma.mma_async and its companions (wgmma.fence, wgmma.commit_group, wgmma.wait_group),
// setmaxnreg and elect.sync.
//
// A warpgroup is four consecutive warps of a block (warps 4j .. 4j+3). Warp w of the warpgroup
// owns rows 16w .. 16w+15 of the 64-row accumulator, and the A fragment it supplies from
// registers covers the same rows, so each warp computes its own rows when it executes the
// instruction: its A rows and all of B read from shared memory through the descriptors (exec/
// wgmma.h gives the layouts), C from its registers. The results are written at once, but the
// registers count as in flight until the wgmma.wait_group that covers the instruction's group:
// any other instruction that reads or writes one of them before then (an accumulator, or an A
// register) stops the launch, which is what the ISA leaves undefined. The arithmetic is that of
// mma.sync (exec/tensor.h): exact products, one rounding, or GPU100_EMU_MMA_ACCUM=truncate:N.
#include "exec/wgmma.h"

#include <cstdio>
#include <cstdlib>

#include "exec/metrics.h"
#include "exec/ops.h"
#include "exec/sanitizer.h"
#include "exec/tensor.h"

namespace emu {

// The in-flight state of one warp (Warp::wgmma): which registers the pending wgmma.mma_async
// instructions use, grouped by commit group, and the warp's setmaxnreg executions.
struct WgmmaState {
  std::vector<uint32_t> uses;    // per register: pending instructions that use it
  std::vector<uint32_t> issuer;  // per register: the pc of the last one
  std::vector<uint8_t> is_a;     // per register: used as an A register (1) or accumulator (0)
  std::vector<std::vector<uint32_t>> groups;  // committed, oldest first: registers
  std::vector<uint64_t> group_end;            // per committed group: `issued` at its commit
  std::vector<uint32_t> open;                 // of instructions not yet committed
  uint64_t issued = 0;                        // wgmma.mma_async executed by the warp
  bool counted = false;                       // counted in g_wgmma_pending
  std::vector<std::pair<uint32_t, uint32_t>> setmaxnreg;  // (pc, count), in order
  ~WgmmaState();
};

namespace wgmma {
uint32_t g_pending = 0;  // warps with wgmma.mma_async instructions in flight
}

WgmmaState::~WgmmaState() {
  if (counted) --wgmma::g_pending;
}

namespace {

using tensor::ElemType;

// GPU100_EMU_MMA_ACCUM, read as exec/tensor_ops.cpp reads it for mma.sync.
tensor::Accum parse_accum_env() {
  tensor::Accum a;
  const char* v = std::getenv("GPU100_EMU_MMA_ACCUM");
  if (!v || !*v) return a;
  const std::string why = tensor::parse_accum(v, &a);
  if (!why.empty()) {
    std::fprintf(stderr, "gpu100 emulator: GPU100_EMU_MMA_ACCUM: %s\n", why.c_str());
    std::exit(2);
  }
  return a;
}
const tensor::Accum g_accum = parse_accum_env();

// Inst::flags of wgmma.mma_async: the types of A, B and D (4 bits each), then the modifiers.
constexpr uint32_t kARegs = 1u << 12, kTransA = 1u << 13, kTransB = 1u << 14, kNegA = 1u << 15,
                   kNegB = 1u << 16, kSatfinite = 1u << 17;
ElemType type_at(uint32_t flags, int i) { return ElemType((flags >> (4 * i)) & 0xF); }

bool is_int(ElemType t) { return t == ElemType::S8 || t == ElemType::U8; }
uint32_t k_of(ElemType t) {
  return t == ElemType::TF32 ? 8 : (t == ElemType::F16 || t == ElemType::BF16) ? 16 : 32;
}
int per_reg(ElemType t) { return t == ElemType::TF32 ? 1 : (t == ElemType::F16 || t == ElemType::BF16) ? 2 : 4; }

double decode_elem(ElemType t, uint64_t bits) {
  switch (t) {
    case ElemType::F16: return tensor::f16_to_double(uint16_t(bits));
    case ElemType::BF16: return tensor::bf16_to_double(uint16_t(bits));
    case ElemType::TF32: return tensor::f32_bits_to_double(uint32_t(bits) & 0xFFFFE000u);
    case ElemType::E4M3: return tensor::e4m3_to_double(uint8_t(bits));
    case ElemType::E5M2: return tensor::e5m2_to_double(uint8_t(bits));
    case ElemType::S8: return double(int8_t(bits));
    case ElemType::U8: return double(uint8_t(bits));
    default: return 0.0;
  }
}

WgmmaState& state(Exec& x) {
  if (!x.w->wgmma) x.w->wgmma = std::make_shared<WgmmaState>();
  WgmmaState& s = *x.w->wgmma;
  if (s.uses.size() < x.k->nregs) {
    s.uses.resize(x.k->nregs, 0);
    s.issuer.resize(x.k->nregs, 0);
    s.is_a.resize(x.k->nregs, 0);
  }
  return s;
}

void recount(WgmmaState& s) {
  const bool pending = !s.open.empty() || !s.groups.empty();
  if (pending != s.counted) {
    s.counted = pending;
    if (pending) ++wgmma::g_pending;
    else --wgmma::g_pending;
  }
}

// Warpgroup instructions are .sync.aligned over 128 threads: the warp must be whole and its
// warpgroup must exist in the block.
void require_warpgroup(Exec& x, uint32_t m, const char* what) {
  const uint32_t first = x.w->index / 4 * 4;
  if (first + 4 > x.b->warps.size() || m != 0xFFFFFFFFu)
    x.fail(std::string(what) + " is executed by a whole warpgroup (.sync.aligned: the 128 threads of warps " +
               std::to_string(first) + "-" + std::to_string(first + 3) + "), but the block has " +
               std::to_string(x.b->nthreads) + " threads",
           __builtin_ctz(m | 0x80000000u));
}

uint64_t uniform(Exec& x, const Operand& o, uint32_t m, const char* what) {
  const int lane0 = __builtin_ctz(m);
  const uint64_t v = x.val(o, lane0);
  EMU_FOR_LANES(m)
    if (x.val(o, lane) != v)
      x.fail(std::string("wgmma.mma_async: the threads of the warp give different ") + what, lane);
  EMU_END_LANES
  return v;
}

// Reads the operand's elements through its descriptor, checking that every byte lies in the
// block's shared memory.
struct SmemReader {
  Exec& x;
  const Inst& in;
  int lane;
  const char* which;
  uint64_t raw;
  wgmma::SmemDesc d;
  bool mn_major;
  uint32_t es;

  uint64_t operator()(uint32_t mn, uint32_t k) const {
    const uint32_t a = wgmma::element_address(d, mn_major, es, mn, k);
    const std::vector<uint8_t>& sh = x.b->shared;
    if (uint64_t(a) + es > sh.size()) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "wgmma.mma_async: the shared-memory descriptor of %s (0x%016llx: start 0x%x, "
                    "LBO %u, SBO %u, %s%s) reaches byte 0x%x for element (%u, %u), outside the "
                    "block's %zu bytes of shared memory",
                    which, (unsigned long long)raw, d.start, d.lbo, d.sbo,
                    d.swizzle == 0 ? "no swizzle" : d.swizzle == 32 ? "32B swizzle" : d.swizzle == 64 ? "64B swizzle" : "128B swizzle",
                    mn_major ? ", MN-major" : ", K-major", a, mn, k, sh.size());
      x.fault(700, buf, a, lane);
    }
    if ((a & 15) == 0) EMU_SAN_ACCESS(x, x.pc, Space::shared, a, 16, lane, san::kRead);
    uint64_t v = 0;
    std::memcpy(&v, sh.data() + a, es);
    return v;
  }
};

constexpr int kMaxN = 256, kMaxK = 32;

// A warpgroup's wgmma.mma_async is one operation of its four warps: it completes only once every
// warp has issued it. A warp's wgmma.wait_group therefore also waits until the other warps of the
// warpgroup have issued the instructions of the groups it retires (each warp reads its operands
// when it issues, so no warp passes the wait while another has yet to read shared memory).
constexpr int8_t kParkWgmma = -3;  // Warp::park_bar of lanes suspended in wgmma.wait_group

uint64_t warpgroup_issued(const Exec& x) {
  uint64_t least = ~0ull;
  const uint32_t first = x.w->index / 4 * 4;
  for (uint32_t j = first; j < first + 4 && j < x.b->warps.size(); ++j) {
    const Warp& o = x.b->warps[j];
    least = std::min<uint64_t>(least, o.wgmma ? o.wgmma->issued : 0);
  }
  return least;
}

// Resumes the warps of x's warpgroup suspended in a wait whose instructions have all been issued.
void release_waiters(Exec& x) {
  const uint64_t least = warpgroup_issued(x);
  const uint32_t first = x.w->index / 4 * 4;
  for (uint32_t j = first; j < first + 4 && j < x.b->warps.size(); ++j) {
    Warp& o = x.b->warps[j];
    for (uint32_t p = o.parked; p; p &= p - 1) {
      const int lane = __builtin_ctz(p);
      if (o.park_bar[lane] != kParkWgmma || o.park_member[lane] > least) continue;
      o.pc[lane] = o.park_pc[lane] + 1;
      o.parked &= ~(1u << lane);
    }
  }
}

void h_wgmma(Exec& x, const Inst& in, uint32_t m) {
  require_warpgroup(x, m, "wgmma.mma_async");
  const ElemType ta = type_at(in.flags, 0), tb = type_at(in.flags, 1), td = type_at(in.flags, 2);
  const uint32_t N = in.aux, K = k_of(ta);
  const int wi = int(x.w->index % 4);
  const int lane0 = __builtin_ctz(m);
  const bool scale_d = in.o[3].kind == OK::imm ? in.o[3].imm != 0 : x.pred(in.o[3], lane0);
  EMU_FOR_LANES(m)
    const bool s = in.o[3].kind == OK::imm ? in.o[3].imm != 0 : x.pred(in.o[3], lane);
    if (s != scale_d) x.fail("wgmma.mma_async: the threads of the warp give different scale-d", lane);
  EMU_END_LANES

  // A: rows 16 wi .. 16 wi + 15 (local row r), K columns. B: N columns, K rows.
  static thread_local double A[16][kMaxK], B[kMaxK][kMaxN];
  const double sa = (in.flags & kNegA) ? -1.0 : 1.0, sb = (in.flags & kNegB) ? -1.0 : 1.0;
  if (in.flags & kARegs) {
    const int per = per_reg(ta);
    const uint32_t bits = 8 * tensor::elem_bytes(ta);
    EMU_FOR_LANES(m)
      for (int r = 0; r < 4; ++r) {
        const uint64_t v = x.val(x.vec(in.o[1], r), lane);
        for (int e = 0; e < per; ++e) {
          const wgmma::RowCol rc = wgmma::a_coord(0, lane, r, e, int(K), per);
          const uint64_t el = bits == 32 ? v : (v >> (bits * uint32_t(e))) & ((1ull << bits) - 1);
          A[rc.row][rc.col] = sa * decode_elem(ta, el);
        }
      }
    EMU_END_LANES
  } else {
    const uint64_t raw = uniform(x, in.o[1], m, "descriptors of A");
    const SmemReader rd{x, in, lane0, "A", raw, wgmma::decode_desc(raw), (in.flags & kTransA) != 0,
                        tensor::elem_bytes(ta)};
    for (uint32_t r = 0; r < 16; ++r)
      for (uint32_t k = 0; k < K; ++k) A[r][k] = sa * decode_elem(ta, rd(uint32_t(16 * wi) + r, k));
  }
  {
    const uint64_t raw = uniform(x, in.o[2], m, "descriptors of B");
    const SmemReader rd{x, in, lane0, "B", raw, wgmma::decode_desc(raw), (in.flags & kTransB) != 0,
                        tensor::elem_bytes(tb)};
    for (uint32_t n = 0; n < N; ++n)
      for (uint32_t k = 0; k < K; ++k) B[k][n] = sb * decode_elem(tb, rd(n, k));
  }

  // D = A B (+ C): per thread, N/2 elements.
  const Operand& dv = in.o[0];
  const bool f16d = td == ElemType::F16;
  const bool truncate = g_accum.mode == tensor::Accum::Mode::Truncate && td == ElemType::F32 && !is_int(ta);
  EMU_FOR_LANES(m)
    for (uint32_t i = 0; i < N / 2; ++i) {
      const wgmma::RowCol rc = wgmma::acc_coord(0, lane, int(i));
      const Operand& reg = x.vec(dv, int(f16d ? i / 2 : i));
      uint64_t cur = x.val(reg, lane);
      uint64_t out;
      if (is_int(ta)) {
        int64_t s = scale_d ? int64_t(int32_t(uint32_t(cur))) : 0;
        for (uint32_t k = 0; k < K; ++k) s += int64_t(A[rc.row][k]) * int64_t(B[k][rc.col]);
        if (in.flags & kSatfinite) s = std::clamp<int64_t>(s, INT32_MIN, INT32_MAX);
        out = uint32_t(uint64_t(s));
      } else {
        double c = 0.0;
        if (scale_d) {
          c = f16d ? tensor::f16_to_double(uint16_t(cur >> (16 * (i % 2))))
                   : tensor::f32_bits_to_double(uint32_t(cur));
        }
        if (truncate) {
          double addends[kMaxK + 1];
          int n = 0;
          if (scale_d) addends[n++] = c;
          for (uint32_t k = 0; k < K; ++k) addends[n++] = A[rc.row][k] * B[k][rc.col];
          out = tensor::truncate_accumulate_f32(addends, n, g_accum.bits);
        } else {
          double s = c;
          for (uint32_t k = 0; k < K; ++k) s += A[rc.row][k] * B[k][rc.col];
          out = f16d ? tensor::double_to_f16(s) : tensor::double_to_f32_bits(s);
        }
      }
      if (f16d) {
        const uint32_t sh = 16 * (i % 2);
        cur = (cur & ~(0xFFFFull << sh)) | (out << sh);
        x.set(reg, lane, cur & 0xFFFFFFFFu);
      } else {
        x.set(reg, lane, out);
      }
    }
  EMU_END_LANES

  // In flight until the wait_group that covers it.
  WgmmaState& s = state(x);
  auto use = [&](const Operand& o, uint8_t a) {
    if (o.kind != OK::reg) return;
    ++s.uses[o.reg];
    s.issuer[o.reg] = x.pc;
    s.is_a[o.reg] = a;
    s.open.push_back(o.reg);
  };
  for (int i = 0; i < dv.count; ++i) use(x.vec(dv, i), 0);
  if (in.flags & kARegs)
    for (int i = 0; i < in.o[1].count; ++i) use(x.vec(in.o[1], i), 1);
  recount(s);
  ++s.issued;
  if (warpgroup_issued(x) == s.issued) san::threads_sync(*x.b, x.w->index / 4 * 128, 128);
  release_waiters(x);

  if (wi == 0) ++metrics::g_counts.wgmma_instructions;
  metrics::g_counts.wgmma_flops += 2ull * 16 * N * K;
}

void h_fence(Exec& x, const Inst&, uint32_t m) { require_warpgroup(x, m, "wgmma.fence"); }


void h_commit(Exec& x, const Inst&, uint32_t m) {
  require_warpgroup(x, m, "wgmma.commit_group");
  WgmmaState& s = state(x);
  s.groups.emplace_back();
  s.groups.back().swap(s.open);
  s.group_end.push_back(s.issued);
  recount(s);
}

void h_wait(Exec& x, const Inst& in, uint32_t m) {
  require_warpgroup(x, m, "wgmma.wait_group");
  WgmmaState& s = state(x);
  const size_t keep = in.aux;
  size_t retire = s.groups.size() > keep ? s.groups.size() - keep : 0;
  if (!retire) return;
  for (size_t g = 0; g < retire; ++g)
    for (uint32_t r : s.groups[g]) --s.uses[r];
  const uint64_t need = s.group_end[retire - 1];
  s.groups.erase(s.groups.begin(), s.groups.begin() + long(retire));
  s.group_end.erase(s.group_end.begin(), s.group_end.begin() + long(retire));
  recount(s);
  if (warpgroup_issued(x) >= need) return;
  // Suspended until the other warps have issued them (release_waiters).
  EMU_FOR_LANES(m)
    x.w->park_pc[lane] = x.pc;
    x.w->park_bar[lane] = kParkWgmma;
    x.w->park_member[lane] = uint32_t(std::min<uint64_t>(need, 0xFFFFFFFFu));
  EMU_END_LANES
  x.w->parked |= m;
}

// setmaxnreg.{inc,dec}.sync.aligned.u32 n: the count must be in 24..256 and a multiple of 8, and
// every warp of the warpgroup must execute the same instruction.
void h_setmaxnreg(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t n = in.aux;
  if (n < 24 || n > 256 || n % 8)
    x.fail("setmaxnreg: register count " + std::to_string(n) +
               " is not in 24..256 or not a multiple of 8 (the ISA's range)",
           __builtin_ctz(m));
  require_warpgroup(x, m, "setmaxnreg");
  WgmmaState& s = state(x);
  const size_t nth = s.setmaxnreg.size();
  s.setmaxnreg.emplace_back(x.pc, n);
  const uint32_t first = x.w->index / 4 * 4;
  for (uint32_t j = first; j < first + 4; ++j) {
    const Warp& o = x.b->warps[j];
    if (j == x.w->index || !o.wgmma || o.wgmma->setmaxnreg.size() <= nth) continue;
    if (o.wgmma->setmaxnreg[nth] != s.setmaxnreg[nth])
      x.fail("setmaxnreg: warp " + std::to_string(j) + " of the same warpgroup executed " +
                 source_of(*x.k, o.wgmma->setmaxnreg[nth].first) + " there (every warp of a " +
                 "warpgroup must execute the same setmaxnreg)",
             __builtin_ctz(m));
  }
}

// elect.sync d|p, membermask: one leader among the member lanes (here the lowest); d its lane
// on every member, p true on the leader only.
void h_elect(Exec& x, const Inst& in, uint32_t m) {
  const int leader = __builtin_ctz(m);
  EMU_FOR_LANES(m)
    x.set(in.o[0], lane, uint32_t(leader));
    x.set(in.o[1], lane, lane == leader ? 1 : 0);
  EMU_END_LANES
}

bool elem_type(const std::string& s, ElemType* t) {
  static const std::pair<const char*, ElemType> names[] = {
      {"f16", ElemType::F16},   {"bf16", ElemType::BF16}, {"tf32", ElemType::TF32},
      {"f32", ElemType::F32},   {"s8", ElemType::S8},     {"u8", ElemType::U8},
      {"s32", ElemType::S32},   {"e4m3", ElemType::E4M3}, {"e5m2", ElemType::E5M2}};
  for (const auto& [n, v] : names)
    if (s == n) return *t = v, true;
  return false;
}

int64_t immediate(DecodeCtx& d, const PInstr& p, size_t i, const char* what) {
  if (i >= p.ops.size() || p.ops[i].kind != PTok::imm) d.fail(p, std::string(what) + " must be an immediate");
  return p.ops[i].ival;
}

void decode_mma_async(DecodeCtx& d, const PInstr& p, Inst& in) {
  if (d.has(p, "sp")) d.fail(p, "sparse wgmma.mma_async.sp is not supported");
  uint32_t M = 0, N = 0, K = 0;
  for (const auto& s : p.mods)
    if (s.size() > 1 && s[0] == 'm' && std::sscanf(s.c_str(), "m%un%uk%u", &M, &N, &K) == 3) break;
  if (M != 64 || N < 8 || N > 256 || N % 8) d.fail(p, "shape: wgmma is m64nNkK with N from 8 to 256 in steps of 8");
  std::vector<ElemType> types;
  for (const auto& s : p.mods) {
    ElemType t;
    if (elem_type(s, &t)) types.push_back(t);
  }
  if (types.size() != 3) d.fail(p, "types: .dtype.atype.btype expected");
  const ElemType td = types[0], ta = types[1], tb = types[2];
  const bool f16 = ta == ElemType::F16 || ta == ElemType::BF16;
  const bool fp8 = ta == ElemType::E4M3 || ta == ElemType::E5M2;
  bool ok;
  if (ta == ElemType::F16) ok = tb == ta && (td == ElemType::F16 || td == ElemType::F32);
  else if (ta == ElemType::BF16 || ta == ElemType::TF32) ok = tb == ta && td == ElemType::F32;
  else if (fp8) ok = (tb == ElemType::E4M3 || tb == ElemType::E5M2) && (td == ElemType::F16 || td == ElemType::F32);
  else if (is_int(ta)) ok = is_int(tb) && td == ElemType::S32;
  else ok = false;
  if (!ok) d.fail(p, "type combination not in the PTX ISA's wgmma.mma_async table");
  if (K != k_of(ta)) d.fail(p, "K must be " + std::to_string(k_of(ta)) + " for ." + tensor::to_string(ta));
  if (is_int(ta) && N > 24 && N % 16) d.fail(p, "integer wgmma.mma_async: N must be 8, 16, 24 or a multiple of 16");
  if (d.has(p, "satfinite") && !is_int(ta)) d.fail(p, ".satfinite is for integer types only");

  in.ctl = Ctl::collective;
  in.member_op = 0xFE;
  in.aux = N;
  in.flags = uint32_t(ta) | (uint32_t(tb) << 4) | (uint32_t(td) << 8);
  if (d.has(p, "satfinite")) in.flags |= kSatfinite;
  if (p.ops.size() < 4) d.fail(p, "operands: d, a, b-desc, scale-d ...");
  in.o[0] = d.op(p.ops[0]);
  const uint32_t dregs = td == ElemType::F16 ? N / 4 : N / 2;
  if (in.o[0].kind != OK::vec || in.o[0].count != dregs)
    d.fail(p, "the accumulator must be a vector of " + std::to_string(dregs) + " registers");
  const bool a_regs = p.ops[1].kind == PTok::vec;
  in.o[1] = d.op(p.ops[1]);
  if (a_regs) {
    in.flags |= kARegs;
    if (in.o[1].count != 4) d.fail(p, "the A fragment must be a vector of 4 registers");
  }
  in.o[2] = d.op(p.ops[2]);
  in.o[3] = d.op(p.ops[3]);
  size_t next = 4;
  if (!is_int(ta)) {
    const int64_t sa = immediate(d, p, next++, "imm-scale-a"), sb = immediate(d, p, next++, "imm-scale-b");
    if ((sa != 1 && sa != -1) || (sb != 1 && sb != -1)) d.fail(p, "imm-scale-a and imm-scale-b must be 1 or -1");
    if (sa < 0) in.flags |= kNegA;
    if (sb < 0) in.flags |= kNegB;
    if (f16) {
      if (!a_regs) {
        const int64_t t = immediate(d, p, next++, "imm-trans-a");
        if (t != 0 && t != 1) d.fail(p, "imm-trans-a must be 0 or 1");
        if (t) in.flags |= kTransA;
      }
      const int64_t t = immediate(d, p, next++, "imm-trans-b");
      if (t != 0 && t != 1) d.fail(p, "imm-trans-b must be 0 or 1");
      if (t) in.flags |= kTransB;
    }
  }
  if (p.ops.size() != next) d.fail(p, "wrong number of operands for this form");
  in.fn = h_wgmma;
}

// stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.b16 [p], {r...} (sm_90): the inverse of
// ldmatrix. Lanes 8j .. 8j + 7 give the 16-byte row addresses of matrix j; register j of lane l
// holds elements 2 (l % 4) and 2 (l % 4) + 1 of row l / 4 of matrix j (low half first), or with
// .trans those of column l / 4, rows 2 (l % 4) and 2 (l % 4) + 1 (the ISA's fragment of ldmatrix).
// o[0] the address, o[1] the registers; aux the matrices; flags kStTrans.
constexpr uint32_t kStTrans = 1u << 0;
void h_stmatrix(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t num = in.aux;
  const bool trans = in.flags & kStTrans;
  uint64_t row[32] = {};
  uint16_t mat[4][8][8] = {};
  EMU_FOR_LANES(mask)
    row[lane] = x.address(in.o[0], lane);
    const uint32_t g = uint32_t(lane) / 4, t = uint32_t(lane) % 4;
    for (uint32_t j = 0; j < num; ++j) {
      const uint32_t v = uint32_t(x.val(x.vec(in.o[1], int(j)), lane));
      if (trans) {
        mat[j][2 * t][g] = uint16_t(v);
        mat[j][2 * t + 1][g] = uint16_t(v >> 16);
      } else {
        mat[j][g][2 * t] = uint16_t(v);
        mat[j][g][2 * t + 1] = uint16_t(v >> 16);
      }
    }
  EMU_END_LANES
  if (mask != 0xFFFFFFFFu)
    x.fail("stmatrix.sync.aligned executed by only some threads of the warp: every thread must execute it",
           __builtin_ctz(mask));
  for (uint32_t j = 0; j < num; ++j)
    for (uint32_t r = 0; r < 8; ++r) {
      const int lane = int(8 * j + r);
      if (row[lane] % 16) x.fault(716, "stmatrix row address not 16-byte aligned", row[lane], lane);
      std::memcpy(x.addr(in.space, row[lane], 16, lane, true), mat[j][r], 16);
      EMU_SAN_ACCESS(x, x.pc, in.space, row[lane], 16, lane, san::kWrite);
    }
}

}  // namespace

namespace wgmma {

// Before each warp-instruction while g_pending != 0: an instruction other than the wgmma ones
// touching a register of an in-flight wgmma.mma_async of its warp stops the launch.
void step(Exec& x, const Inst& in) {
  if (!x.w->wgmma) return;
  WgmmaState& s = *x.w->wgmma;
  if (!s.counted || in.fn == h_wgmma || in.fn == h_wait || in.fn == h_commit || in.fn == h_fence) return;
  auto check = [&](const Operand& o) {
    if (o.kind != OK::reg || o.reg >= s.uses.size() || !s.uses[o.reg]) return;
    const std::string name = o.reg < x.k->reg_names.size() ? x.k->reg_names[o.reg] : "?";
    x.fail("register " + name + " is " + (s.is_a[o.reg] ? "an A-fragment register" : "an accumulator") +
               " of the wgmma.mma_async " + source_of(*x.k, s.issuer[o.reg]) +
               ", read or written before the wgmma.wait_group that covers it (the ISA leaves "
               "this undefined: commit the group and wait for it first)",
           -1);
  };
  for (const Operand& o : in.o) {
    if (o.kind == OK::vec)
      for (int i = 0; i < o.count; ++i) check(x.vec(o, i));
    else
      check(o);
  }
  if (in.guard >= 0) {
    Operand g;
    g.kind = OK::reg;
    g.reg = uint32_t(in.guard);
    check(g);
  }
}

}  // namespace wgmma

bool decode_wgmma(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  if (op == "stmatrix") {
    if (!d.has(p, "m8n8") || !d.has(p, "b16")) d.fail(p, "only stmatrix.m8n8 .b16 (sm_90) is supported");
    in.ctl = Ctl::collective;
    in.member_op = 0xFE;
    in.space = d.has(p, "shared") || d.has(p, "shared::cta") ? Space::shared : Space::generic;
    in.aux = d.has(p, "x4") ? 4 : d.has(p, "x2") ? 2 : 1;
    if (d.has(p, "trans")) in.flags |= kStTrans;
    in.o[0] = d.addr(p.ops.at(0), in.space);
    in.o[1] = d.op(p.ops.at(1));
    if (in.o[1].count != in.aux) d.fail(p, "stmatrix needs one register per matrix");
    in.fn = h_stmatrix;
    return true;
  }
  if (op == "wgmma") {
    if (d.has(p, "mma_async")) {
      decode_mma_async(d, p, in);
      return true;
    }
    in.ctl = Ctl::collective;
    in.member_op = 0xFE;
    if (d.has(p, "fence")) in.fn = h_fence;
    else if (d.has(p, "commit_group")) in.fn = h_commit;
    else if (d.has(p, "wait_group")) {
      in.aux = uint32_t(immediate(d, p, 0, "wgmma.wait_group's N"));
      in.ctl = Ctl::wait;  // may suspend the warp (h_wait)
      in.fn = h_wait;
    } else {
      d.fail(p, "wgmma form not supported");
    }
    return true;
  }
  if (op == "setmaxnreg") {
    if (!d.has(p, "inc") && !d.has(p, "dec")) d.fail(p, "setmaxnreg needs .inc or .dec");
    in.ctl = Ctl::collective;
    in.member_op = 0xFE;
    in.aux = uint32_t(immediate(d, p, 0, "setmaxnreg's register count"));
    in.fn = h_setmaxnreg;
    return true;
  }
  if (op == "elect") {
    // elect.sync d|p, membermask
    if (p.ops.size() != 2 || p.ops[0].kind != PTok::pair || p.ops[0].elems.size() != 2)
      d.fail(p, "elect.sync d|p, membermask expected");
    in.ctl = Ctl::collective;
    in.o[0] = d.op(p.ops[0].elems[0]);
    in.o[1] = d.op(p.ops[0].elems[1]);
    in.o[2] = d.op(p.ops[1]);
    in.member_op = 2;
    in.fn = h_elect;
    return true;
  }
  return false;
}

}  // namespace emu
