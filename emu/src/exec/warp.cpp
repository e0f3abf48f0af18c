// Warp collectives: shfl.sync, vote.sync, match.sync, redux.sync, activemask. The scheduler
// calls a collective's handler once every lane of its member mask has arrived; `m` is then the
// set of participating lanes.
#include "exec/ops.h"

namespace emu {

namespace {

// The low 32 bits of operand o, when they are the same in every lane (an immediate, or a
// register holding one value in all 32 lanes).
inline bool uniform32(const Exec& x, const Operand& o, uint32_t* v) {
  if (o.kind == OK::imm) { *v = uint32_t(o.imm); return true; }
  if (o.kind != OK::reg) return false;
  const uint64_t* row = x.w->r + size_t(o.reg) * 32;
  *v = uint32_t(row[0]);
  return uniform_row(row);
}

// shfl.sync.mode.b32 d{|p}, a, b, c, membermask. c packs the clamp (bits 0-4) and the segment
// mask (bits 8-12); the source lane follows the ISA's pseudocode for each mode.
template <int Mode>  // 0 up, 1 down, 2 bfly, 3 idx
void h_shfl(Exec& x, const Inst& in, uint32_t m) {
  uint32_t b_all, c_all;
  if (m == kFullWarp && in.o[1].kind == OK::reg && in.o[0].kind == OK::reg &&
      uniform32(x, in.o[2], &b_all) && uniform32(x, in.o[3], &c_all)) {
    // The whole warp with one lane operand and one clamp for all lanes: every source lane is one
    // of the 32, so nothing can fail; the sources are read before the destination (which may be
    // the same register) is written.
    const uint32_t b = b_all & 31, c = c_all;
    const uint32_t clamp = c & 0x1F, segmask = (c >> 8) & 0x1F;
    const uint64_t* src = x.w->r + size_t(in.o[1].reg) * 32;
    uint32_t value[32];
    for (int i = 0; i < 32; ++i) value[i] = uint32_t(src[i]);
    uint32_t src_lane[32], ok[32];
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t maxlane = (lane & segmask) | (clamp & ~segmask);
      const uint32_t minlane = lane & segmask;
      uint32_t j;
      bool pval;
      switch (Mode) {
        case 0: j = lane - b; pval = int32_t(j) >= int32_t(maxlane); break;
        case 1: j = lane + b; pval = j <= maxlane; break;
        case 2: j = lane ^ b; pval = j <= maxlane; break;
        default: j = minlane | (b & ~segmask); pval = j <= maxlane; break;
      }
      src_lane[lane] = (pval ? j : lane) & 31;
      ok[lane] = pval;
    }
    uint64_t* d = x.w->r + size_t(in.o[0].reg) * 32;
    for (int lane = 0; lane < 32; ++lane) d[lane] = value[src_lane[lane]];
    if (in.o[5].kind == OK::reg) {  // written after d, as the lane loop leaves a shared register
      uint64_t* pd = x.w->r + size_t(in.o[5].reg) * 32;
      for (int lane = 0; lane < 32; ++lane) pd[lane] = ok[lane];
    }
    return;
  }
  uint32_t value[32];
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int lane = __builtin_ctz(mm);
    value[lane] = uint32_t(x.val(in.o[1], lane));
  }
  EMU_FOR_LANES(m)
    const uint32_t b = uint32_t(x.val(in.o[2], lane)) & 31, c = uint32_t(x.val(in.o[3], lane));
    const uint32_t clamp = c & 0x1F, segmask = (c >> 8) & 0x1F;
    const uint32_t maxlane = (uint32_t(lane) & segmask) | (clamp & ~segmask);
    const uint32_t minlane = uint32_t(lane) & segmask;
    uint32_t j;
    bool pval;
    switch (Mode) {
      case 0: j = uint32_t(lane) - b; pval = int32_t(j) >= int32_t(maxlane); break;
      case 1: j = uint32_t(lane) + b; pval = j <= maxlane; break;
      case 2: j = uint32_t(lane) ^ b; pval = j <= maxlane; break;
      default: j = minlane | (b & ~segmask); pval = j <= maxlane; break;
    }
    if (!pval) j = uint32_t(lane);
    j &= 31;
    if (!((m >> j) & 1))
      x.fail("shfl.sync reads lane " + std::to_string(j) +
                 (((x.w->exited >> j) & 1) ? ", which has exited"
                  : !((x.w->valid >> j) & 1) ? ", which this partial warp does not have"
                                             : ", which is not in the member mask"),
             lane);
    x.set(in.o[0], lane, value[j]);
    if (in.o[5].kind == OK::reg) x.set(in.o[5], lane, pval);
  EMU_END_LANES
}

// vote.sync.{all,any,uni}.pred / vote.sync.ballot.b32; in.aux: 0 all, 1 any, 2 uni, 3 ballot.
void h_vote(Exec& x, const Inst& in, uint32_t m) {
  uint32_t ballot = 0;
  EMU_FOR_LANES(m) if (x.pred(in.o[1], lane)) ballot |= 1u << lane; EMU_END_LANES
  EMU_FOR_LANES(m)
    uint64_t r;
    switch (in.aux) {
      case 0: r = ballot == m; break;
      case 1: r = ballot != 0; break;
      case 2: r = ballot == 0 || ballot == m; break;
      default: r = ballot; break;
    }
    x.set(in.o[0], lane, r);
  EMU_END_LANES
}

// match.any.sync.bN d, a, mask: lanes holding the same value. match.all: mask if all equal.
void h_match(Exec& x, const Inst& in, uint32_t m) {
  uint64_t v[32];
  const uint64_t wmask = in.type == Type::b64 ? ~0ull : 0xFFFFFFFFull;
  EMU_FOR_LANES(m) v[lane] = x.val(in.o[1], lane) & wmask; EMU_END_LANES
  EMU_FOR_LANES(m)
    uint32_t same = 0;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      int j = __builtin_ctz(mm);
      if (v[j] == v[lane]) same |= 1u << j;
    }
    if (in.aux == 0) {
      x.set(in.o[0], lane, same);
    } else {
      const bool all = same == m;
      x.set(in.o[0], lane, all ? m : 0);
      if (in.o[5].kind == OK::reg) x.set(in.o[5], lane, all);
    }
  EMU_END_LANES
}

// redux.sync.op.type d, a, mask.
void h_redux(Exec& x, const Inst& in, uint32_t m) {
  const bool s = in.type == Type::s32;
  int64_t acc = 0;
  bool first = true;
  EMU_FOR_LANES(m)
    const uint32_t u = uint32_t(x.val(in.o[1], lane));
    const int64_t v = s ? int64_t(int32_t(u)) : int64_t(u);
    if (first) { acc = v; first = false; continue; }
    switch (in.aux) {
      case 0: acc = int64_t(uint32_t(acc) + uint32_t(v)); break;
      case 1: acc = std::min(acc, v); break;
      case 2: acc = std::max(acc, v); break;
      case 3: acc &= v; break;
      case 4: acc |= v; break;
      case 5: acc ^= v; break;
    }
  EMU_END_LANES
  EMU_FOR_LANES(m) x.set(in.o[0], lane, uint32_t(acc)); EMU_END_LANES
}

void h_activemask(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m) x.set(in.o[0], lane, m); EMU_END_LANES
}

}  // namespace

bool decode_warp(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  const Type t = d.last_type(p);
  in.type = t;
  if (op == "shfl") {
    if (!d.has(p, "sync")) d.fail(p, "shfl without .sync is not supported on sm_70+");
    in.ctl = Ctl::collective;
    const PTok& dst = p.ops.at(0);
    in.o[0] = d.op(dst);
    if (dst.kind == PTok::pair) in.o[5] = d.op(dst.elems[1]);
    in.o[1] = d.op(p.ops.at(1));
    in.o[2] = d.op(p.ops.at(2));
    in.o[3] = d.op(p.ops.at(3));
    in.o[4] = d.op(p.ops.at(4));
    in.member_op = 4;
    if (d.has(p, "up")) in.fn = h_shfl<0>;
    else if (d.has(p, "down")) in.fn = h_shfl<1>;
    else if (d.has(p, "bfly")) in.fn = h_shfl<2>;
    else in.fn = h_shfl<3>;
    return true;
  }
  if (op == "vote") {
    if (!d.has(p, "sync")) d.fail(p, "vote without .sync is not supported on sm_70+");
    in.ctl = Ctl::collective;
    in.o[0] = d.op(p.ops.at(0));
    in.o[1] = d.op(p.ops.at(1));
    in.o[2] = d.op(p.ops.at(2));
    in.member_op = 2;
    in.aux = d.has(p, "all") ? 0 : d.has(p, "any") ? 1 : d.has(p, "uni") ? 2 : 3;
    in.fn = h_vote;
    return true;
  }
  if (op == "match") {
    in.ctl = Ctl::collective;
    const PTok& dst = p.ops.at(0);
    in.o[0] = d.op(dst);
    if (dst.kind == PTok::pair) in.o[5] = d.op(dst.elems[1]);
    in.o[1] = d.op(p.ops.at(1));
    in.o[2] = d.op(p.ops.at(2));
    in.member_op = 2;
    in.aux = d.has(p, "all") ? 1 : 0;
    in.fn = h_match;
    return true;
  }
  if (op == "redux") {
    in.ctl = Ctl::collective;
    in.o[0] = d.op(p.ops.at(0));
    in.o[1] = d.op(p.ops.at(1));
    in.o[2] = d.op(p.ops.at(2));
    in.member_op = 2;
    static const char* names[] = {"add", "min", "max", "and", "or", "xor"};
    for (uint32_t i = 0; i < 6; ++i)
      if (d.has(p, names[i])) in.aux = i;
    if (t != Type::u32 && t != Type::s32 && t != Type::b32) d.fail(p, "redux type");
    in.fn = h_redux;
    return true;
  }
  if (op == "activemask") {
    in.o[0] = d.op(p.ops.at(0));
    in.fn = h_activemask;
    return true;
  }
  return false;
}

}  // namespace emu
