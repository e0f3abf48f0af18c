// ldmatrix, mma.sync and wmma: gather the warp's operand registers, run the pure functions of
// exec/tensor.h, scatter the results. All three are collectives over the whole warp (.aligned).
#include "exec/ops.h"
#include "exec/sanitizer.h"
#include "exec/tensor.h"

#include <cstdio>
#include <cstdlib>

namespace emu {

namespace {

using tensor::WarpFrag;

// GPU100_EMU_MMA_ACCUM: how mma / wmma.mma accumulate floating-point multiplicands into .f32
// results (tensor.h, Accum): "exact" (the default) or "truncate:N". Read once, when the library
// loads; a value that is not a model stops the program there.
tensor::Accum parse_mma_accum() {
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
const tensor::Accum g_mma_accum = parse_mma_accum();

void gather(Exec& x, const Operand& v, uint32_t m, WarpFrag& f) {
  EMU_FOR_LANES(m)
    for (int i = 0; i < v.count; ++i) f[lane][i] = x.val(x.vec(v, i), lane);
  EMU_END_LANES
}
void scatter(Exec& x, const Operand& v, uint32_t m, const WarpFrag& f) {
  EMU_FOR_LANES(m)
    for (int i = 0; i < v.count; ++i) x.set(x.vec(v, i), lane, f[lane][i]);
  EMU_END_LANES
}

tensor::ReadFn reader(Exec& x, Space space, int lane) {
  return [&x, space, lane](tensor::Addr a, unsigned size) {
    uint64_t v = 0;
    std::memcpy(&v, x.addr(space, a, size, lane, false), size);
    return v;
  };
}

// The modifier bits of mma / wmma.mma in Inst::flags: types a, b, c, d in 4 bits each, then
// .satfinite, then the f64 rounding mode.
constexpr uint32_t kTensorSatfinite = 1u << 16;
constexpr int kTensorRndShift = 17;

uint32_t pack_types(tensor::ElemType a, tensor::ElemType b, tensor::ElemType c, tensor::ElemType d) {
  return uint32_t(a) | (uint32_t(b) << 4) | (uint32_t(c) << 8) | (uint32_t(d) << 12);
}
tensor::ElemType type_at(uint32_t flags, int i) {
  return tensor::ElemType((flags >> (4 * i)) & 0xF);
}

// wmma.load / wmma.store: aux holds the matrix (bits 0..3) and the shape (bits 4..7); flags the
// layout (bit 0: col) and the element type (bits 4..7).
tensor::WmmaMatrix wmma_matrix(const Inst& in) {
  return tensor::WmmaMatrix(in.aux & 0xF);
}
tensor::WmmaShape wmma_shape(const Inst& in) {
  return tensor::WmmaShape((in.aux >> 4) & 0xF);
}
tensor::Layout wmma_layout(const Inst& in) {
  return (in.flags & 1) ? tensor::Layout::Col : tensor::Layout::Row;
}
tensor::ElemType wmma_type(const Inst& in) {
  return tensor::ElemType((in.flags >> 4) & 0xF);
}

// For the checks, a wmma tile is its rows (row major) or columns (col major) of contiguous
// elements, read or written by the warp's first lane: the fragment layout, which would say which
// lane holds which element, is opaque to the program.
void wmma_tile_access(Exec& x, const Inst& in, uint64_t base, uint32_t stride, int lane,
                      uint32_t kind) {
  const uint32_t es = tensor::elem_bytes(wmma_type(in));
  const tensor::RowCol dims = tensor::wmma_dims(wmma_shape(in), wmma_matrix(in));
  const bool row = wmma_layout(in) == tensor::Layout::Row;
  const uint32_t lines = uint32_t(row ? dims.row : dims.col), len = uint32_t(row ? dims.col : dims.row);
  for (uint32_t i = 0; i < lines; ++i)
    EMU_SAN_ACCESS(x, x.pc, in.space, base + uint64_t(i) * stride * es, len * es, lane, kind);
}

uint32_t wmma_stride(Exec& x, const Inst& in, int lane0) {
  if (in.o[2].kind != OK::none) return uint32_t(x.val(in.o[2], lane0));
  return tensor::wmma_default_stride(wmma_shape(in), wmma_matrix(in), wmma_layout(in));
}

template <class F>
void guarded(Exec& x, F f) {
  try {
    f();
  } catch (const tensor::TensorError& e) {
    x.fail(e.what());
  }
}

// The registers of a vector operand as rows of the register file (reg[i][lane]), when every lane
// runs and every element is a register: then the tensor functions read and write the register
// file in place. A source must have at least `regs` registers (the function reads that many), a
// destination exactly `regs` (the WarpFrag path writes zeros to any more). False otherwise: the
// caller gathers into a WarpFrag.
template <class Frag>
bool in_place(Exec& x, const Operand& v, uint32_t m, int regs, bool exact, Frag& f) {
  if (m != 0xffffffffu || v.count > tensor::kMaxFragRegs || v.count < regs) return false;
  if (exact && v.count != regs) return false;
  for (int i = 0; i < v.count; ++i) {
    const Operand& o = x.vec(v, i);
    if (o.kind != OK::reg) return false;
    f.reg[i] = &x.w->r[size_t(o.reg) * 32];
  }
  f.stride = 1;
  return true;
}

// ldmatrix: o[0] destination vector, o[1] address. aux: matrices (1, 2, 4); flags kTrans.
void h_ldmatrix(Exec& x, const Inst& in, uint32_t m) {
  std::array<tensor::Addr, 32> rows{};
  EMU_FOR_LANES(m)
    rows[lane] = x.address(in.o[1], lane);
  EMU_END_LANES
  const int num = int(in.aux);
  guarded(x, [&] { tensor::ldmatrix_check(num, rows); });
  // Each row's reads are checked as the lane that supplied the row address (the lowest lane
  // whose 16 bytes hold the element), element by element in the order of the rows.
  const Space space = in.space;
  uint16_t data[32][8];
  for (int row = 0; row < 8 * num; ++row) {
    const tensor::Addr a = rows[size_t(row)];
    int lane = 0;
    if (a + 16 != 0) {
      // The row's own lane holds the address, and every lower lane gave an aligned address (the
      // check above): the lowest lane whose row holds it is the lowest that gave the same one.
      while (rows[size_t(lane)] != a) ++lane;
    } else {
      for (int l = 0; l < 32; ++l)
        if (a >= rows[size_t(l)] && a < rows[size_t(l)] + 16) { lane = l; break; }
    }
    for (int c = 0; c < 8; ++c) std::memcpy(&data[row][c], x.addr(space, a + 2 * c, 2, lane, false), 2);
  }
  // Lanes 0-7 give the rows of the first matrix, 8-15 of the second, ...: 16 bytes each.
  for (uint32_t lane = 0; lane < 8 * in.aux; ++lane)
    if ((m >> lane) & 1) EMU_SAN_ACCESS(x, x.pc, space, rows[lane], 16, int(lane), san::kRead);
  tensor::FragOut d;
  if (in_place(x, in.o[0], m, num, true, d)) {
    tensor::ldmatrix_rows(num, (in.flags & kTrans) != 0, data, d.reg);
    return;
  }
  uint64_t res[4][32];
  uint64_t* res_rows[4] = {res[0], res[1], res[2], res[3]};
  tensor::ldmatrix_rows(num, (in.flags & kTrans) != 0, data, res_rows);
  WarpFrag out{};
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < num; ++j) out[size_t(lane)][size_t(j)] = res[j][lane];
  scatter(x, in.o[0], m, out);
}

// mma: aux the shape; flags the types, .satfinite and the rounding mode.
void h_mma(Exec& x, const Inst& in, uint32_t m) {
  tensor::MmaDesc desc;
  desc.shape = tensor::MmaShape(in.aux);
  desc.a = type_at(in.flags, 0);
  desc.b = type_at(in.flags, 1);
  desc.c = type_at(in.flags, 2);
  desc.d = type_at(in.flags, 3);
  desc.satfinite = (in.flags & kTensorSatfinite) != 0;
  desc.rnd = tensor::Rnd((in.flags >> kTensorRndShift) & 3);
  desc.accum = g_mma_accum;
  tensor::FragIn fa, fb, fc;
  tensor::FragOut fd;
  if (in_place(x, in.o[1], m, tensor::mma_regs_a(desc), false, fa) &&
      in_place(x, in.o[2], m, tensor::mma_regs_b(desc), false, fb) &&
      in_place(x, in.o[3], m, tensor::mma_regs_c(desc), false, fc) &&
      in_place(x, in.o[0], m, tensor::mma_regs_d(desc), true, fd)) {
    guarded(x, [&] { tensor::mma_sync(desc, fa, fb, fc, fd); });
    return;
  }
  WarpFrag a{}, b{}, c{}, d{};
  gather(x, in.o[1], m, a);
  gather(x, in.o[2], m, b);
  gather(x, in.o[3], m, c);
  guarded(x, [&] { tensor::mma_sync(desc, a, b, c, d); });
  scatter(x, in.o[0], m, d);
}

// wmma.load: o[0] fragment, o[1] address, o[2] stride (none: the shape's default).
void h_wmma_load(Exec& x, const Inst& in, uint32_t m) {
  const int lane0 = __builtin_ctz(m);
  const uint64_t base = x.address(in.o[1], lane0);
  const uint32_t stride = wmma_stride(x, in, lane0);
  EMU_FOR_LANES(m)
    const uint64_t b = x.address(in.o[1], lane);
    if (b != base) x.fail("wmma.load: lanes of the warp give different addresses", lane);
  EMU_END_LANES
  WarpFrag out{};
  guarded(x, [&] {
    tensor::wmma_load(wmma_shape(in), wmma_matrix(in), wmma_layout(in), wmma_type(in), base, stride,
                      reader(x, in.space, lane0), out);
  });
  wmma_tile_access(x, in, base, stride, lane0, san::kRead);
  scatter(x, in.o[0], m, out);
}

void h_wmma_store(Exec& x, const Inst& in, uint32_t m) {
  const int lane0 = __builtin_ctz(m);
  const uint64_t base = x.address(in.o[0], lane0);
  const uint32_t stride = wmma_stride(x, in, lane0);
  WarpFrag d{};
  gather(x, in.o[1], m, d);
  Exec* px = &x;
  const Space space = in.space;
  tensor::WriteFn write = [px, space, lane0](tensor::Addr a, unsigned size, uint64_t v) {
    std::memcpy(px->addr(space, a, size, lane0, true), &v, size);
  };
  guarded(x, [&] {
    tensor::wmma_store(wmma_shape(in), wmma_layout(in), wmma_type(in), base, stride, d, write);
  });
  wmma_tile_access(x, in, base, stride, lane0, san::kWrite);
}

// wmma.mma: aux the shape; flags as for mma (atype == btype).
void h_wmma_mma(Exec& x, const Inst& in, uint32_t m) {
  tensor::WmmaDesc desc;
  desc.shape = tensor::WmmaShape(in.aux);
  desc.ab = type_at(in.flags, 0);
  desc.c = type_at(in.flags, 2);
  desc.d = type_at(in.flags, 3);
  desc.satfinite = (in.flags & kTensorSatfinite) != 0;
  desc.rnd = tensor::Rnd((in.flags >> kTensorRndShift) & 3);
  desc.accum = g_mma_accum;
  tensor::FragIn fa, fb, fc;
  tensor::FragOut fd;
  using tensor::WmmaMatrix;
  if (in_place(x, in.o[1], m, tensor::wmma_regs(desc.shape, WmmaMatrix::A, desc.ab), false, fa) &&
      in_place(x, in.o[2], m, tensor::wmma_regs(desc.shape, WmmaMatrix::B, desc.ab), false, fb) &&
      in_place(x, in.o[3], m, tensor::wmma_regs(desc.shape, WmmaMatrix::C, desc.c), false, fc) &&
      in_place(x, in.o[0], m, tensor::wmma_regs(desc.shape, WmmaMatrix::C, desc.d), true, fd)) {
    guarded(x, [&] { tensor::wmma_mma(desc, fa, fb, fc, fd); });
    return;
  }
  WarpFrag a{}, b{}, c{}, d{};
  gather(x, in.o[1], m, a);
  gather(x, in.o[2], m, b);
  gather(x, in.o[3], m, c);
  guarded(x, [&] { tensor::wmma_mma(desc, a, b, c, d); });
  scatter(x, in.o[0], m, d);
}

bool elem_type(const std::string& s, tensor::ElemType* t) {
  if (s == "f16") *t = tensor::ElemType::F16;
  else if (s == "bf16") *t = tensor::ElemType::BF16;
  else if (s == "tf32") *t = tensor::ElemType::TF32;
  else if (s == "f32") *t = tensor::ElemType::F32;
  else if (s == "s8") *t = tensor::ElemType::S8;
  else if (s == "u8") *t = tensor::ElemType::U8;
  else if (s == "s32") *t = tensor::ElemType::S32;
  else if (s == "f64") *t = tensor::ElemType::F64;
  else if (s == "e4m3") *t = tensor::ElemType::E4M3;
  else if (s == "e5m2") *t = tensor::ElemType::E5M2;
  else return false;
  return true;
}

std::vector<tensor::ElemType> elem_types(const PInstr& p) {
  std::vector<tensor::ElemType> types;
  for (const auto& s : p.mods) {
    tensor::ElemType t;
    if (elem_type(s, &t)) types.push_back(t);
  }
  return types;
}

// .satfinite and the rounding modifier, as Inst::flags bits.
uint32_t tensor_modifiers(DecodeCtx& d, const PInstr& p) {
  uint32_t f = d.has(p, "satfinite") ? kTensorSatfinite : 0;
  const tensor::Rnd rnd = d.has(p, "rz")   ? tensor::Rnd::RZ
                          : d.has(p, "rm") ? tensor::Rnd::RM
                          : d.has(p, "rp") ? tensor::Rnd::RP
                                           : tensor::Rnd::RN;
  return f | (uint32_t(rnd) << kTensorRndShift);
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
    if (d.has(p, "sp") || d.has(p, "sp::ordered_metadata")) d.fail(p, "sparse mma.sp is not supported");
    for (const auto& s : p.mods)
      if (s.rfind("kind::", 0) == 0 || s == "block_scale")
        d.fail(p, "mma ." + s + " (the sm_120 f8f6f4 / block-scaled forms) is not supported");
    static const std::pair<const char*, tensor::MmaShape> shapes[] = {
        {"m16n8k16", tensor::MmaShape::M16N8K16}, {"m16n8k8", tensor::MmaShape::M16N8K8},
        {"m16n8k4", tensor::MmaShape::M16N8K4},   {"m16n8k32", tensor::MmaShape::M16N8K32},
        {"m8n8k16", tensor::MmaShape::M8N8K16},   {"m8n8k4", tensor::MmaShape::M8N8K4}};
    bool found = false;
    for (const auto& [name, shape] : shapes)
      if (d.has(p, name)) in.aux = uint32_t(shape), found = true;
    if (!found) d.fail(p, "mma shape not supported");
    if (!d.has(p, "row") || !d.has(p, "col")) d.fail(p, "mma layout must be .row.col");
    // mma...dtype.atype.btype.ctype: the four type modifiers, in that order.
    const std::vector<tensor::ElemType> types = elem_types(p);
    if (types.size() != 4) d.fail(p, "mma types");
    tensor::MmaDesc desc;
    desc.shape = tensor::MmaShape(in.aux);
    desc.d = types[0];
    desc.a = types[1];
    desc.b = types[2];
    desc.c = types[3];
    in.flags = pack_types(desc.a, desc.b, desc.c, desc.d) | tensor_modifiers(d, p);
    desc.satfinite = (in.flags & kTensorSatfinite) != 0;
    desc.rnd = tensor::Rnd((in.flags >> kTensorRndShift) & 3);
    const std::string why = tensor::mma_unsupported_reason(desc);
    if (!why.empty()) d.fail(p, why);
    for (int i = 0; i < 4; ++i) in.o[i] = d.op(p.ops.at(size_t(i)));
    in.fn = h_mma;
    return true;
  }
  if (op == "wmma") {
    in.ctl = Ctl::collective;
    in.member_op = 0xFE;
    static const std::pair<const char*, tensor::WmmaShape> shapes[] = {
        {"m16n16k16", tensor::WmmaShape::M16N16K16}, {"m32n8k16", tensor::WmmaShape::M32N8K16},
        {"m8n32k16", tensor::WmmaShape::M8N32K16},   {"m16n16k8", tensor::WmmaShape::M16N16K8},
        {"m8n8k4", tensor::WmmaShape::M8N8K4}};
    bool found = false;
    tensor::WmmaShape shape = tensor::WmmaShape::M16N16K16;
    for (const auto& [name, s] : shapes)
      if (d.has(p, name)) shape = s, found = true;
    if (!found) d.fail(p, "wmma shape not supported (m16n16k16, m32n8k16, m8n32k16, m16n16k8, m8n8k4 are)");
    for (const auto& s : p.mods) {
      if (s == "global") in.space = Space::global;
      if (s == "shared" || s == "shared::cta") in.space = Space::shared;
    }
    if (d.has(p, "load") || d.has(p, "store")) {
      const bool load = d.has(p, "load");
      const tensor::WmmaMatrix matrix = !load || d.has(p, "c") ? tensor::WmmaMatrix::C
                                        : d.has(p, "a")        ? tensor::WmmaMatrix::A
                                                               : tensor::WmmaMatrix::B;
      tensor::ElemType t = tensor::ElemType::F16;
      if (!elem_type(p.mods.back(), &t)) d.fail(p, "wmma element type not supported");
      if (tensor::wmma_regs(shape, matrix, t) == 0) {
        d.fail(p, std::string("wmma.") + tensor::to_string(shape) + ": element type " +
                      tensor::to_string(t) + " not supported for this matrix");
      }
      in.aux = uint32_t(matrix) | (uint32_t(shape) << 4);
      in.flags = (d.has(p, "col") ? 1u : 0u) | (uint32_t(t) << 4);
      if (load) {
        in.o[0] = d.op(p.ops.at(0));
        in.o[1] = d.addr(p.ops.at(1), in.space);
        in.fn = h_wmma_load;
      } else {
        in.o[0] = d.addr(p.ops.at(0), in.space);
        in.o[1] = d.op(p.ops.at(1));
        in.fn = h_wmma_store;
      }
      if (p.ops.size() > 2) in.o[2] = d.op(p.ops[2]);
      return true;
    }
    if (d.has(p, "mma")) {
      // wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype (f16 multiplicands) or
      // ....dtype.atype.btype.ctype; integer forms may add .satfinite, f64 a rounding modifier.
      const std::vector<tensor::ElemType> types = elem_types(p);
      tensor::WmmaDesc desc;
      desc.shape = shape;
      if (types.size() == 2) {
        desc.d = types[0];
        desc.c = types[1];
      } else if (types.size() == 4) {
        desc.d = types[0];
        desc.ab = types[1];
        desc.c = types[3];
        if (types[2] != types[1]) d.fail(p, "wmma.mma: the ISA requires .atype and .btype to be the same");
      } else {
        d.fail(p, "wmma.mma types");
      }
      in.aux = uint32_t(shape);
      in.flags = pack_types(desc.ab, desc.ab, desc.c, desc.d) | tensor_modifiers(d, p);
      desc.satfinite = (in.flags & kTensorSatfinite) != 0;
      desc.rnd = tensor::Rnd((in.flags >> kTensorRndShift) & 3);
      const std::string why = tensor::wmma_mma_unsupported_reason(desc);
      if (!why.empty()) d.fail(p, "wmma.mma." + why);
      for (int i = 0; i < 4; ++i) in.o[i] = d.op(p.ops.at(size_t(i)));
      in.fn = h_wmma_mma;
      return true;
    }
    d.fail(p, "wmma form");
  }
  return false;
}

}  // namespace emu
