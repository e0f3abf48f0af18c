// Texture and surface instructions on bindless objects: tex (1d, 2d, 3d, a1d, a2d; f32 or s32
// coordinates), tld4 (2d), txq, suld.b, sust.b and suq, and the registry of live objects.
//
// Texture fetching follows the CUDA Programming Guide's appendix on it: normalized coordinates
// are scaled by the size, point sampling reads T[floor(x)], linear filtering reads T[i] and
// T[i+1] around xB = x - 0.5 with the weight frac(xB) held in 9-bit fixed point (8 fraction
// bits), and each texel index is then placed by the address mode (wrap and mirror only with
// normalized coordinates; with unnormalized ones they clamp). Every texel is read through the
// same checked path as a global load, so a texture over freed memory faults like one.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "exec/fp.h"
#include "exec/ops.h"
#include "exec/sanitizer.h"
#include "exec/texture.h"

namespace emu::tex {

namespace {
struct Registry {
  std::map<uint64_t, Object> live;
  std::set<uint64_t> destroyed;
  uint64_t next = 1;
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

uint64_t create(const Object& o) {
  Registry& r = registry();
  const uint64_t h = r.next++;
  r.live[h] = o;
  return h;
}

bool destroy(uint64_t handle, bool surface) {
  Registry& r = registry();
  auto it = r.live.find(handle);
  if (it == r.live.end() || it->second.surface != surface) return false;
  r.live.erase(it);
  r.destroyed.insert(handle);
  return true;
}

const Object* find(uint64_t handle, bool surface) {
  Registry& r = registry();
  auto it = r.live.find(handle);
  if (it == r.live.end() || it->second.surface != surface) return nullptr;
  return &it->second;
}

std::string why_not_live(uint64_t handle, bool surface) {
  Registry& r = registry();
  const char* kind = surface ? "surface object" : "texture object";
  const std::string h = std::to_string(handle);
  if (r.destroyed.count(handle))
    return std::string(kind) + " " + h + " was destroyed (" +
           (surface ? "cudaDestroySurfaceObject" : "cudaDestroyTextureObject") + ") before this use";
  auto it = r.live.find(handle);
  if (it != r.live.end())
    return "handle " + h + " is a " + (surface ? "texture" : "surface") + " object, used as a " + kind;
  return "handle " + h + " is not a " + kind + " the runtime created";
}

}  // namespace emu::tex

namespace emu {

namespace {

using tex::Address;
using tex::Object;

enum Geometry : uint32_t { g1d, g2d, g3d, ga1d, ga2d };
enum SurfaceMode : uint32_t { kTrap, kClamp, kZero };

// The coordinates a geometry takes from its vector operand: the layer (or -1) and x, y, z.
int spatial_dims(uint32_t g) { return g == g1d || g == ga1d ? 1 : g == g2d || g == ga2d ? 2 : 3; }
bool layered(uint32_t g) { return g == ga1d || g == ga2d; }

const Object& object_of(Exec& x, uint64_t handle, bool surface, int lane) {
  const Object* o = tex::find(handle, surface);
  if (!o) x.fail_with(700, tex::why_not_live(handle, surface), lane);
  return *o;
}

// Places a texel index by the address mode; false for a border texel (outside the image).
bool place(int64_t& i, int64_t n, Address mode) {
  switch (mode) {
    case Address::wrap: i = ((i % n) + n) % n; return true;
    case Address::mirror: {
      const int64_t p = ((i % (2 * n)) + 2 * n) % (2 * n);
      i = p < n ? p : 2 * n - 1 - p;
      return true;
    }
    case Address::clamp: i = std::clamp<int64_t>(i, 0, n - 1); return true;
    case Address::border: return i >= 0 && i < n;
  }
  return true;
}

// One channel of a texel as the fetch returns it (normalized to [0, 1] or [-1, 1] when the
// texture reads integers as normalized floats).
double channel(const Object& o, const uint8_t* p) {
  const tex::Format& f = o.img.fmt;
  uint64_t raw = 0;
  std::memcpy(&raw, p, f.bits / 8);
  switch (f.kind) {
    case tex::Kind::flt:
      if (f.bits == 16) return fp::f32_from_bits(fp::f16_to_f32(uint16_t(raw)));
      return f32_of(raw);
    case tex::Kind::sint: {
      const int64_t v = int64_t(raw << (64 - f.bits)) >> (64 - f.bits);
      if (!o.read_normalized) return double(v);
      return std::max(double(v) / double((1ll << (f.bits - 1)) - 1), -1.0);
    }
    case tex::Kind::uint:
      if (!o.read_normalized) return double(raw);
      return double(raw) / double((1ull << f.bits) - 1);
  }
  return 0;
}

void read_texel(Exec& x, const Object& o, uint64_t a, int lane, double out[4]) {
  const tex::Format& f = o.img.fmt;
  const uint32_t cb = f.bits / 8;
  for (int c = 0; c < f.channels; ++c) {
    const uint8_t* p = x.addr(Space::global, a + uint64_t(c) * cb, cb, lane, false);
    EMU_SAN_ACCESS(x, x.pc, Space::global, a + uint64_t(c) * cb, cb, lane, san::kRead);
    out[c] = channel(o, p);
  }
}

// The taps of one axis: up to two texel indices with their weights (valid: inside the image,
// or placed there by the address mode).
struct Taps {
  int n = 1;
  int64_t i[2] = {0, 0};
  double w[2] = {1, 0};
  bool valid[2] = {true, true};
};

Taps axis_taps(const Object& o, int axis, int64_t size, bool int_coord, uint64_t bits) {
  Taps t;
  Address mode = o.address[axis];
  if (!o.normalized_coords && (mode == Address::wrap || mode == Address::mirror)) mode = Address::clamp;
  if (int_coord) {
    t.i[0] = int32_t(bits);
    t.valid[0] = place(t.i[0], size, mode);
    return t;
  }
  float c = f32_of(bits);
  if (std::isnan(c)) c = 0;
  float u = o.normalized_coords ? c * float(size) : c;
  u = std::clamp(u, -1e9f, 1e9f);
  if (!o.linear_filter) {
    t.i[0] = int64_t(std::floor(u));
    t.valid[0] = place(t.i[0], size, mode);
    return t;
  }
  const float ub = u - 0.5f;
  const float fl = std::floor(ub);
  // The weight in 9-bit fixed point with 8 fraction bits: 0, 1/256, ..., 1.
  const double alpha = std::nearbyint(double(ub - fl) * 256.0) / 256.0;
  t.n = 2;
  t.i[0] = int64_t(fl);
  t.i[1] = t.i[0] + 1;
  t.w[0] = 1 - alpha;
  t.w[1] = alpha;
  t.valid[0] = place(t.i[0], size, mode);
  t.valid[1] = place(t.i[1], size, mode);
  return t;
}

// tex: o[0] the four results, o[1] the handle, o[2] the coordinates; in.type the result type,
// in.type2 the coordinate type, in.aux the geometry.
void h_tex(Exec& x, const Inst& in, uint32_t m) {
  const bool int_coord = in.type2 == Type::s32;
  const int dims = spatial_dims(in.aux);
  EMU_FOR_LANES(m)
    const Object& o = object_of(x, x.val(in.o[1], lane), false, lane);
    const tex::Image& img = o.img;
    const int first = layered(in.aux) ? 1 : 0;
    double acc[4] = {0, 0, 0, 0};
    if (!img.array && img.dims == 1) {
      // A linear-memory texture (tex1Dfetch): integer texel indices, no filtering; indices
      // outside the resource read as zero, the bytes inside it are checked like a load.
      if (!int_coord || in.aux != g1d)
        x.fail_with(700, "a texture over linear memory is fetched with one integer coordinate (tex1Dfetch)", lane);
      const int64_t i = int32_t(x.val(x.vec(in.o[2], 0), lane));
      if (i >= 0 && i < int64_t(img.width)) read_texel(x, o, img.base + uint64_t(i) * img.fmt.texel_bytes(), lane, acc);
    } else {
      if (uint32_t(dims) != img.dims || layered(in.aux) != (img.layers > 0))
        x.fail_with(700, "a tex." + std::string(in.aux == g1d ? "1d" : in.aux == g2d ? "2d" : in.aux == g3d ? "3d" : in.aux == ga1d ? "a1d" : "a2d") +
                         " fetch from a texture object of " + std::to_string(img.dims) + " dimension(s)" +
                         (img.layers ? ", layered" : ""), lane);
      uint64_t layer_off = 0;
      if (first) {
        const int64_t layer = std::clamp<int64_t>(int32_t(x.val(x.vec(in.o[2], 0), lane)), 0, int64_t(img.layers) - 1);
        layer_off = uint64_t(layer) * img.slice;
      }
      const int64_t sizes[3] = {img.width, img.height, img.depth};
      Taps t[3];
      for (int a = 0; a < dims; ++a) t[a] = axis_taps(o, a, sizes[a], int_coord, x.val(x.vec(in.o[2], first + a), lane));
      for (int kz = 0; kz < (dims > 2 ? t[2].n : 1); ++kz)
        for (int ky = 0; ky < (dims > 1 ? t[1].n : 1); ++ky)
          for (int kx = 0; kx < t[0].n; ++kx) {
            double w = t[0].w[kx];
            bool valid = t[0].valid[kx];
            uint64_t a = img.base + layer_off + uint64_t(t[0].i[kx]) * img.fmt.texel_bytes();
            if (dims > 1) { w *= t[1].w[ky]; valid = valid && t[1].valid[ky]; a += uint64_t(t[1].i[ky]) * img.pitch; }
            if (dims > 2) { w *= t[2].w[kz]; valid = valid && t[2].valid[kz]; a += uint64_t(t[2].i[kz]) * img.slice; }
            if (w == 0) continue;
            double v[4] = {0, 0, 0, 0};
            if (valid) read_texel(x, o, a, lane, v);
            else for (int c = 0; c < 4; ++c) v[c] = o.border[c];
            for (int c = 0; c < 4; ++c) acc[c] += w * v[c];
          }
      for (int c = img.fmt.channels; c < 4; ++c) acc[c] = 0;
    }
    for (int c = 0; c < 4; ++c) {
      const Operand& d = x.vec(in.o[0], c);
      if (d.kind == OK::sink) continue;
      uint64_t bits;
      if (in.type == Type::f32) bits = bits_of(float(acc[c]));
      else bits = uint32_t(int64_t(acc[c]));
      x.set(d, lane, bits);
    }
  EMU_END_LANES
}

// tld4 (tex2Dgather): one component of the four texels a bilinear fetch at the coordinates
// would blend, placed counter-clockwise from the lower left (the PTX ISA): (i, j+1), (i+1, j+1),
// (i+1, j), (i, j). in.aux the component, in.type the result type.
void h_tld4(Exec& x, const Inst& in, uint32_t m) {
  EMU_FOR_LANES(m)
    const Object& o = object_of(x, x.val(in.o[1], lane), false, lane);
    const tex::Image& img = o.img;
    if (img.dims != 2 || img.layers)
      x.fail_with(700, "a tld4.2d gather from a texture object that is not two-dimensional", lane);
    Object footprint = o;
    footprint.linear_filter = true;
    const Taps tx = axis_taps(footprint, 0, img.width, false, x.val(x.vec(in.o[2], 0), lane));
    const Taps ty = axis_taps(footprint, 1, img.height, false, x.val(x.vec(in.o[2], 1), lane));
    const int order[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
    for (int k = 0; k < 4; ++k) {
      const int a = order[k][0], b = order[k][1];
      double v[4] = {0, 0, 0, 0};
      if (tx.valid[a] && ty.valid[b])
        read_texel(x, o, img.base + uint64_t(tx.i[a]) * img.fmt.texel_bytes() + uint64_t(ty.i[b]) * img.pitch, lane, v);
      else
        for (int c = 0; c < 4; ++c) v[c] = o.border[c];
      const double r = in.aux < img.fmt.channels ? v[in.aux] : 0;
      const Operand& d = x.vec(in.o[0], k);
      if (d.kind == OK::sink) continue;
      x.set(d, lane, in.type == Type::f32 ? bits_of(float(r)) : uint64_t(uint32_t(int64_t(r))));
    }
  EMU_END_LANES
}

// txq / suq: in.aux the queried attribute, o[1] the handle.
enum Query : uint32_t { q_width, q_height, q_depth, q_array_size, q_normalized, q_filter };
void h_query(Exec& x, const Inst& in, uint32_t m) {
  const bool surface = in.flags != 0;
  EMU_FOR_LANES(m)
    const Object& o = object_of(x, x.val(in.o[1], lane), surface, lane);
    uint64_t v = 0;
    switch (in.aux) {
      case q_width: v = o.img.width; break;
      case q_height: v = o.img.height; break;
      case q_depth: v = o.img.depth; break;
      case q_array_size: v = o.img.layers; break;
      case q_normalized: v = o.normalized_coords; break;
      case q_filter: v = o.linear_filter; break;
    }
    x.set(in.o[0], lane, v);
  EMU_END_LANES
}

// suld.b / sust.b: in.aux the geometry, in.type the element type (b8..b64), in.vec the
// elements, in.flags the out-of-range mode, in.type2 none for a load and b8 for a store.
// The x coordinate counts bytes, the others rows, slices and layers.
template <bool Store>
void h_surface(Exec& x, const Inst& in, uint32_t m) {
  const uint32_t es = uint32_t(type_bytes(in.type)), total = es * in.vec;
  const int dims = spatial_dims(in.aux);
  const Operand& coords = in.o[2];
  const Operand& data = in.o[0];
  EMU_FOR_LANES(m)
    const Object& o = object_of(x, x.val(in.o[1], lane), true, lane);
    const tex::Image& img = o.img;
    if (uint32_t(dims) != img.dims || layered(in.aux) != (img.layers > 0))
      x.fail_with(700, "a surface access whose geometry differs from the surface's array", lane);
    const int first = layered(in.aux) ? 1 : 0;
    int64_t c[4] = {0, 0, 0, 0};  // x bytes, y, z, layer
    const int64_t limit[4] = {int64_t(img.width) * img.fmt.texel_bytes() - total + 1, img.height, img.depth,
                              std::max<int64_t>(img.layers, 1)};
    for (int a = 0; a < dims; ++a) c[a] = int32_t(x.val(x.vec(coords, first + a), lane));
    if (first) c[3] = int32_t(x.val(x.vec(coords, 0), lane));
    bool inside = true;
    for (int a = 0; a < 4; ++a) inside = inside && c[a] >= 0 && c[a] < limit[a];
    if (!inside) {
      if (in.flags == kZero) {
        if (!Store)
          for (uint32_t i = 0; i < in.vec; ++i) x.set(x.vec(data, int(i)), lane, 0);
        continue;
      }
      if (in.flags == kTrap)
        x.fail_with(700, "surface " + std::string(Store ? "store" : "load") + " of " + std::to_string(total) +
                         " bytes at byte x " + std::to_string(c[0]) + ", y " + std::to_string(c[1]) +
                         ", z " + std::to_string(c[2]) + (first ? ", layer " + std::to_string(c[3]) : "") +
                         " outside the surface's " + std::to_string(img.width) + " x " + std::to_string(img.height) +
                         " x " + std::to_string(img.depth) + " elements of " + std::to_string(img.fmt.texel_bytes()) +
                         " bytes (.trap)", lane);
      for (int a = 0; a < 4; ++a) c[a] = std::clamp<int64_t>(c[a], 0, std::max<int64_t>(limit[a] - 1, 0));
    }
    const uint64_t a = img.base + uint64_t(c[0]) + uint64_t(c[1]) * img.pitch + uint64_t(c[2] + c[3]) * img.slice;
    for (uint32_t i = 0; i < in.vec; ++i) {
      const uint64_t ea = a + uint64_t(i) * es;
      uint8_t* p = x.addr(Space::global, ea, es, lane, Store);
      EMU_SAN_ACCESS(x, x.pc, Space::global, ea, es, lane, Store ? san::kWrite : san::kRead);
      const Operand& e = x.vec(data, int(i));
      if (Store) {
        const uint64_t v = e.kind == OK::sink ? 0 : x.val(e, lane);
        std::memcpy(p, &v, es);
      } else {
        uint64_t v = 0;
        std::memcpy(&v, p, es);
        x.set(e, lane, v);
      }
    }
  EMU_END_LANES
}

bool geometry_of(const std::string& s, uint32_t* g) {
  static const std::map<std::string, uint32_t> table = {
      {"1d", g1d}, {"2d", g2d}, {"3d", g3d}, {"a1d", ga1d}, {"a2d", ga2d}};
  auto it = table.find(s);
  if (it == table.end()) return false;
  *g = it->second;
  return true;
}

// [handle, {coordinates}] -> the handle and the coordinate vector (a lone "[handle]" for queries).
void handle_and_coords(DecodeCtx& d, const PInstr& p, const PTok& t, Inst& in, bool want_coords) {
  if (t.kind != PTok::addr || t.elems.empty()) d.fail(p, "expected [handle, {coordinates}]");
  in.o[1] = d.op(t.elems[0]);
  if (in.o[1].kind != OK::reg) d.fail(p, "texture and surface references by name are not emulated (only objects)");
  if (want_coords) {
    if (t.elems.size() < 2 || t.elems[1].kind != PTok::vec) d.fail(p, "expected coordinates");
    in.o[2] = d.op(t.elems[1]);
  }
}

}  // namespace

bool decode_texture(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  if (op == "tex") {
    if (p.mods.size() != 4 || p.mods[1] != "v4" || !geometry_of(p.mods[0], &in.aux))
      d.fail(p, "only tex.{1d,2d,3d,a1d,a2d}.v4 is emulated (no .level, .grad, cube or f16 forms)");
    in.type = parse_type(p.mods[2]);
    in.type2 = parse_type(p.mods[3]);
    if ((in.type != Type::f32 && in.type != Type::s32 && in.type != Type::u32) ||
        (in.type2 != Type::f32 && in.type2 != Type::s32))
      d.fail(p, "tex results are emulated as f32, s32 or u32 and coordinates as f32 or s32");
    if (p.ops.size() != 2 || p.ops[0].kind != PTok::vec || p.ops[0].elems.size() != 4)
      d.fail(p, "expected four destinations and [handle, {coordinates}] (no predicate destination)");
    in.o[0] = d.op(p.ops[0]);
    handle_and_coords(d, p, p.ops[1], in, true);
    const uint32_t need = (in.aux == g3d || in.aux == ga2d) ? 4 : in.aux == g1d ? 1 : 2;
    if (in.o[2].count < need) d.fail(p, "too few coordinates");
    in.nops = 3;
    in.fn = h_tex;
    return true;
  }
  if (op == "tld4") {
    static const std::map<std::string, uint32_t> comps = {{"r", 0}, {"g", 1}, {"b", 2}, {"a", 3}};
    if (p.mods.size() != 5 || !comps.count(p.mods[0]) || p.mods[1] != "2d" || p.mods[2] != "v4" ||
        parse_type(p.mods[4]) != Type::f32)
      d.fail(p, "only tld4.{r,g,b,a}.2d.v4 with f32 coordinates is emulated");
    in.aux = comps.at(p.mods[0]);
    in.type = parse_type(p.mods[3]);
    if (in.type != Type::f32 && in.type != Type::s32 && in.type != Type::u32) d.fail(p, "tld4 results are f32, s32 or u32");
    if (p.ops.size() != 2 || p.ops[0].kind != PTok::vec || p.ops[0].elems.size() != 4)
      d.fail(p, "expected four destinations and [handle, {x, y}]");
    in.o[0] = d.op(p.ops[0]);
    handle_and_coords(d, p, p.ops[1], in, true);
    if (in.o[2].count < 2) d.fail(p, "too few coordinates");
    in.nops = 3;
    in.fn = h_tld4;
    return true;
  }
  if (op == "txq" || op == "suq") {
    static const std::map<std::string, uint32_t> table = {
        {"width", q_width}, {"height", q_height}, {"depth", q_depth}, {"array_size", q_array_size},
        {"normalized_coords", q_normalized}, {"filter_mode", q_filter}};
    if (p.mods.size() != 2 || !table.count(p.mods[0]) || p.ops.size() != 2)
      d.fail(p, "only the width, height, depth, array_size, normalized_coords and filter_mode queries are emulated");
    in.aux = table.at(p.mods[0]);
    in.flags = op == "suq";
    in.o[0] = d.op(p.ops[0]);
    handle_and_coords(d, p, p.ops[1], in, false);
    in.nops = 2;
    in.fn = h_query;
    return true;
  }
  if (op == "suld" || op == "sust") {
    const bool store = op == "sust";
    if (p.mods.size() < 4 || p.mods[0] != "b" || !geometry_of(p.mods[1], &in.aux))
      d.fail(p, "only suld.b / sust.b on 1d, 2d, 3d, a1d and a2d surfaces are emulated");
    size_t next = 2;
    in.vec = 1;
    if (p.mods[next] == "v2" || p.mods[next] == "v4") in.vec = uint8_t(p.mods[next++][1] - '0');
    in.type = parse_type(p.mods[next++]);
    if (in.type != Type::b8 && in.type != Type::b16 && in.type != Type::b32 && in.type != Type::b64)
      d.fail(p, "surface element types are .b8, .b16, .b32 and .b64");
    if (next >= p.mods.size() || (p.mods[next] != "trap" && p.mods[next] != "clamp" && p.mods[next] != "zero"))
      d.fail(p, "expected .trap, .clamp or .zero");
    in.flags = p.mods[next] == "trap" ? kTrap : p.mods[next] == "clamp" ? kClamp : kZero;
    if (p.ops.size() != 2) d.fail(p, "expected two operands");
    const PTok& data = store ? p.ops[1] : p.ops[0];
    const PTok& where = store ? p.ops[0] : p.ops[1];
    in.o[0] = d.op(data);
    if (in.o[0].kind != OK::vec || in.o[0].count != in.vec) d.fail(p, "the data vector does not match the vector width");
    handle_and_coords(d, p, where, in, true);
    const uint32_t need = (in.aux == g3d || in.aux == ga2d) ? 3 : in.aux == g1d ? 1 : 2;
    if (in.o[2].count < need) d.fail(p, "too few coordinates");
    in.nops = 3;
    in.fn = store ? h_surface<true> : h_surface<false>;
    return true;
  }
  return false;
}

}  // namespace emu
