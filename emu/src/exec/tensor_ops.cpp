// ldmatrix, mma.sync and wmma: gather the warp's operand registers, run the pure functions of
// exec/tensor.h, scatter the results. All three are collectives over the whole warp (.aligned).
#include "exec/ops.h"
#include "exec/sanitizer.h"
#include "exec/tensor.h"

namespace emu {

namespace {

using tensor::WarpFrag;

void gather(Exec& x, const Operand& v, uint32_t m, WarpFrag& f) {
  EMU_FOR_LANES(m)
    for (int i = 0; i < v.count; ++i) f[lane][i] = uint32_t(x.val(x.vec(v, i), lane));
  EMU_END_LANES
}
void scatter(Exec& x, const Operand& v, uint32_t m, const WarpFrag& f) {
  EMU_FOR_LANES(m)
    for (int i = 0; i < v.count; ++i) x.set(x.vec(v, i), lane, f[lane][i]);
  EMU_END_LANES
}

tensor::ReadFn reader(Exec& x, Space space, int lane) {
  return [&x, space, lane](tensor::Addr a, unsigned size) {
    uint32_t v = 0;
    std::memcpy(&v, x.addr(space, a, size, lane, false), size);
    return v;
  };
}

// For the checks, a wmma tile is its 16 rows (or columns) of 16 contiguous elements, read or
// written by the warp's first lane: the fragment layout, which would say which lane holds which
// element, is opaque to the program.
void wmma_tile_access(Exec& x, Space space, uint64_t base, uint32_t stride, tensor::ElemType t,
                      int lane, uint32_t kind) {
  const uint32_t es = t == tensor::ElemType::F16 || t == tensor::ElemType::BF16 ? 2 : 4;
  for (uint32_t i = 0; i < 16; ++i)
    EMU_SAN_ACCESS(x, x.pc, space, base + uint64_t(i) * stride * es, 16 * es, lane, kind);
}

template <class F>
void guarded(Exec& x, F f) {
  try {
    f();
  } catch (const tensor::TensorError& e) {
    x.fail(e.what());
  }
}

// ldmatrix: o[0] destination vector, o[1] address. aux: matrices (1, 2, 4); flags kTrans.
void h_ldmatrix(Exec& x, const Inst& in, uint32_t m) {
  std::array<tensor::Addr, 32> rows{};
  EMU_FOR_LANES(m)
    rows[lane] = (in.o[1].kind == OK::reg ? x.w->r[in.o[1].reg * 32 + lane] : 0) + in.o[1].imm;
  EMU_END_LANES
  WarpFrag out{};
  // Each row's reads are checked as the lane that supplied the row address.
  Exec* px = &x;
  const Space space = in.space;
  tensor::ReadFn read = [px, space, &rows](tensor::Addr a, unsigned size) {
    int lane = 0;
    for (int l = 0; l < 32; ++l)
      if (a >= rows[l] && a < rows[l] + 16) { lane = l; break; }
    uint32_t v = 0;
    std::memcpy(&v, px->addr(space, a, size, lane, false), size);
    return v;
  };
  guarded(x, [&] { tensor::ldmatrix(int(in.aux), (in.flags & kTrans) != 0, rows, read, out); });
  // Lanes 0-7 give the rows of the first matrix, 8-15 of the second, ...: 16 bytes each.
  for (uint32_t lane = 0; lane < 8 * in.aux; ++lane)
    if ((m >> lane) & 1) EMU_SAN_ACCESS(x, x.pc, space, rows[lane], 16, int(lane), san::kRead);
  scatter(x, in.o[0], m, out);
}

void h_mma(Exec& x, const Inst& in, uint32_t m) {
  tensor::MmaDesc desc;
  desc.shape = in.aux == 8 ? tensor::MmaShape::M16N8K8 : tensor::MmaShape::M16N8K16;
  desc.ab = tensor::ElemType((in.flags >> 0) & 0xF);
  desc.c = tensor::ElemType((in.flags >> 4) & 0xF);
  desc.d = tensor::ElemType((in.flags >> 8) & 0xF);
  WarpFrag a{}, b{}, c{}, d{};
  gather(x, in.o[1], m, a);
  gather(x, in.o[2], m, b);
  gather(x, in.o[3], m, c);
  guarded(x, [&] { tensor::mma_sync(desc, a, b, c, d); });
  scatter(x, in.o[0], m, d);
}

// wmma.load: o[0] fragment, o[1] address, o[2] stride (none: 16). aux: matrix; flags: layout
// (bit 0: col), element type in bits 4..7.
void h_wmma_load(Exec& x, const Inst& in, uint32_t m) {
  const int lane0 = __builtin_ctz(m);
  const uint64_t base = (in.o[1].kind == OK::reg ? x.w->r[in.o[1].reg * 32 + lane0] : 0) + in.o[1].imm;
  const uint32_t stride = in.o[2].kind == OK::none ? 16 : uint32_t(x.val(in.o[2], lane0));
  EMU_FOR_LANES(m)
    const uint64_t b = (in.o[1].kind == OK::reg ? x.w->r[in.o[1].reg * 32 + lane] : 0) + in.o[1].imm;
    if (b != base) x.fail("wmma.load: lanes of the warp give different addresses", lane);
  EMU_END_LANES
  WarpFrag out{};
  guarded(x, [&] {
    tensor::wmma_load(tensor::WmmaMatrix(in.aux), (in.flags & 1) ? tensor::Layout::Col : tensor::Layout::Row,
                      tensor::ElemType((in.flags >> 4) & 0xF), base, stride, reader(x, in.space, lane0), out);
  });
  wmma_tile_access(x, in.space, base, stride, tensor::ElemType((in.flags >> 4) & 0xF), lane0, san::kRead);
  scatter(x, in.o[0], m, out);
}

void h_wmma_store(Exec& x, const Inst& in, uint32_t m) {
  const int lane0 = __builtin_ctz(m);
  const uint64_t base = (in.o[0].kind == OK::reg ? x.w->r[in.o[0].reg * 32 + lane0] : 0) + in.o[0].imm;
  const uint32_t stride = in.o[2].kind == OK::none ? 16 : uint32_t(x.val(in.o[2], lane0));
  WarpFrag d{};
  gather(x, in.o[1], m, d);
  Exec* px = &x;
  const Space space = in.space;
  tensor::WriteFn write = [px, space, lane0](tensor::Addr a, unsigned size, uint32_t v) {
    std::memcpy(px->addr(space, a, size, lane0, true), &v, size);
  };
  guarded(x, [&] {
    tensor::wmma_store((in.flags & 1) ? tensor::Layout::Col : tensor::Layout::Row,
                       tensor::ElemType((in.flags >> 4) & 0xF), base, stride, d, write);
  });
  wmma_tile_access(x, in.space, base, stride, tensor::ElemType((in.flags >> 4) & 0xF), lane0, san::kWrite);
}

void h_wmma_mma(Exec& x, const Inst& in, uint32_t m) {
  WarpFrag a{}, b{}, c{}, d{};
  gather(x, in.o[1], m, a);
  gather(x, in.o[2], m, b);
  gather(x, in.o[3], m, c);
  guarded(x, [&] {
    tensor::wmma_mma(tensor::ElemType(in.flags & 0xF), tensor::ElemType((in.flags >> 4) & 0xF),
                     tensor::ElemType((in.flags >> 8) & 0xF), a, b, c, d);
  });
  scatter(x, in.o[0], m, d);
}

bool elem_type(const std::string& s, tensor::ElemType* t) {
  if (s == "f16") *t = tensor::ElemType::F16;
  else if (s == "bf16") *t = tensor::ElemType::BF16;
  else if (s == "tf32") *t = tensor::ElemType::TF32;
  else if (s == "f32") *t = tensor::ElemType::F32;
  else return false;
  return true;
}

}  // namespace

bool decode_tensor(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  if (op == "ldmatrix") {
    in.ctl = Ctl::collective;
    in.member_op = 0xFE;
    in.space = d.has(p, "shared") || d.has(p, "shared::cta") ? Space::shared : Space::generic;
    in.aux = d.has(p, "x4") ? 4 : d.has(p, "x2") ? 2 : 1;
    if (d.has(p, "trans")) in.flags |= kTrans;
    if (!d.has(p, "b16") || !d.has(p, "m8n8")) d.fail(p, "only ldmatrix.m8n8 .b16 is supported");
    in.o[0] = d.op(p.ops.at(0));
    in.o[1] = d.addr(p.ops.at(1), in.space);
    in.fn = h_ldmatrix;
    return true;
  }
  if (op == "mma") {
    in.ctl = Ctl::collective;
    in.member_op = 0xFE;
    if (d.has(p, "m16n8k16")) in.aux = 16;
    else if (d.has(p, "m16n8k8")) in.aux = 8;
    else d.fail(p, "mma shape not supported");
    if (!d.has(p, "row") || !d.has(p, "col")) d.fail(p, "mma layout must be .row.col");
    // mma...dtype.atype.btype.ctype: the last four modifiers.
    std::vector<tensor::ElemType> types;
    for (const auto& s : p.mods) {
      tensor::ElemType t;
      if (elem_type(s, &t)) types.push_back(t);
    }
    if (types.size() != 4) d.fail(p, "mma types");
    in.flags = uint32_t(types[1]) | (uint32_t(types[3]) << 4) | (uint32_t(types[0]) << 8);
    tensor::MmaDesc desc;
    desc.shape = in.aux == 8 ? tensor::MmaShape::M16N8K8 : tensor::MmaShape::M16N8K16;
    desc.ab = types[1];
    desc.c = types[3];
    desc.d = types[0];
    const std::string why = tensor::mma_unsupported_reason(desc);
    if (!why.empty()) d.fail(p, why);
    for (int i = 0; i < 4; ++i) in.o[i] = d.op(p.ops.at(size_t(i)));
    in.fn = h_mma;
    return true;
  }
  if (op == "wmma") {
    in.ctl = Ctl::collective;
    in.member_op = 0xFE;
    if (!d.has(p, "m16n16k16")) d.fail(p, "only wmma m16n16k16 is supported");
    for (const auto& s : p.mods) {
      if (s == "global") in.space = Space::global;
      if (s == "shared" || s == "shared::cta") in.space = Space::shared;
    }
    if (d.has(p, "load")) {
      in.aux = d.has(p, "a") ? 0 : d.has(p, "b") ? 1 : 2;
      tensor::ElemType t = tensor::ElemType::F16;
      elem_type(p.mods.back(), &t);
      in.flags = (d.has(p, "col") ? 1u : 0u) | (uint32_t(t) << 4);
      in.o[0] = d.op(p.ops.at(0));
      in.o[1] = d.addr(p.ops.at(1), in.space);
      if (p.ops.size() > 2) in.o[2] = d.op(p.ops[2]);
      in.fn = h_wmma_load;
      return true;
    }
    if (d.has(p, "store")) {
      tensor::ElemType t = tensor::ElemType::F32;
      elem_type(p.mods.back(), &t);
      in.flags = (d.has(p, "col") ? 1u : 0u) | (uint32_t(t) << 4);
      in.o[0] = d.addr(p.ops.at(0), in.space);
      in.o[1] = d.op(p.ops.at(1));
      if (p.ops.size() > 2) in.o[2] = d.op(p.ops[2]);
      in.fn = h_wmma_store;
      return true;
    }
    if (d.has(p, "mma")) {
      // wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype (f16) or .f32.bf16.bf16.f32
      std::vector<tensor::ElemType> types;
      for (const auto& s : p.mods) {
        tensor::ElemType t;
        if (elem_type(s, &t)) types.push_back(t);
      }
      tensor::ElemType ab = tensor::ElemType::F16, c, dt;
      if (types.size() == 2) { dt = types[0]; c = types[1]; }
      else if (types.size() == 4) { dt = types[0]; ab = types[1]; c = types[3]; }
      else d.fail(p, "wmma.mma types");
      if (d.has(p, "satfinite")) d.fail(p, "wmma.mma .satfinite is not supported");
      in.flags = uint32_t(ab) | (uint32_t(c) << 4) | (uint32_t(dt) << 8);
      for (int i = 0; i < 4; ++i) in.o[i] = d.op(p.ops.at(size_t(i)));
      in.fn = h_wmma_mma;
      return true;
    }
    d.fail(p, "wmma form");
  }
  return false;
}

}  // namespace emu
