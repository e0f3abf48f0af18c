// Parsed function -> Kernel: registers numbered, labels resolved to instruction indices, symbols
// resolved to addresses, and each instruction handed to the family that decodes it by the opcode
// table (kOpcodes), which also gives what the metrics, the checks and the debugger read of it.
#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "exec/metrics.h"
#include "exec/ops.h"
#include "exec/sanitizer.h"
#include "exec/texture.h"

namespace emu {

namespace {

SReg sreg_of(const std::string& name, bool* ok) {
  static const std::map<std::string, uint32_t> table = {
      {"%tid.x", sr_tid_x}, {"%tid.y", sr_tid_y}, {"%tid.z", sr_tid_z},
      {"%ntid.x", sr_ntid_x}, {"%ntid.y", sr_ntid_y}, {"%ntid.z", sr_ntid_z},
      {"%ctaid.x", sr_ctaid_x}, {"%ctaid.y", sr_ctaid_y}, {"%ctaid.z", sr_ctaid_z},
      {"%nctaid.x", sr_nctaid_x}, {"%nctaid.y", sr_nctaid_y}, {"%nctaid.z", sr_nctaid_z},
      {"%laneid", sr_laneid}, {"%warpid", sr_warpid}, {"%nwarpid", sr_nwarpid},
      {"%smid", sr_smid}, {"%nsmid", sr_nsmid}, {"%lanemask_eq", sr_lanemask_eq},
      {"%lanemask_le", sr_lanemask_le}, {"%lanemask_lt", sr_lanemask_lt},
      {"%lanemask_ge", sr_lanemask_ge}, {"%lanemask_gt", sr_lanemask_gt},
      {"%clock", sr_clock}, {"%clock64", sr_clock64}, {"%globaltimer", sr_globaltimer},
      {"%gridid", sr_gridid}, {"%dynamic_smem_size", sr_dynamic_smem_size},
      {"%total_smem_size", sr_total_smem_size}};
  auto it = table.find(name);
  if (it != table.end()) { *ok = true; return SReg(it->second); }
  if (uint32_t id; cluster_sreg_of(name, &id)) { *ok = true; return SReg(id); }
  if (name.rfind("%envreg", 0) == 0) {
    *ok = true;
    return SReg(sr_envreg0 + std::atoi(name.c_str() + 7));
  }
  *ok = false;
  return sr_count;
}

// ---------------------------------------------------------------------------------------------
// The opcode table: every opcode the emulator decodes, the families whose decoders take it, and
// what the metrics, the checks and the debugger need to know of it. The decoder copies the
// latter into the instruction (Inst::metric, san_class, op_flags, and the memory semantics bits
// of Inst::flags), so that nothing else looks at opcode strings.

// The families, in the order their decoders are tried where several take forms of one opcode
// (add: alu's integer forms, float's floating-point ones).
enum Family : uint16_t {
  fCluster = 1u << 0, fControl = 1u << 1, fAlu = 1u << 2, fFloat = 1u << 3, fCvt = 1u << 4,
  fMem = 1u << 5, fWarp = 1u << 6, fTensor = 1u << 7, fTexture = 1u << 8, fAsync = 1u << 9,
  fWgmma = 1u << 10,
  fBranch = 1u << 15,  // bra, brx: decode_function resolves the label itself
};
using FamilyDecoder = bool (*)(DecodeCtx& d, const PInstr& p, Inst& in);
constexpr FamilyDecoder kFamilies[] = {decode_cluster, decode_control, decode_alu,    decode_float,
                                       decode_cvt,     decode_mem,     decode_warp,   decode_tensor,
                                       decode_texture, decode_async,   decode_wgmma};

// Rules that the modifiers of some opcodes add to the table's fields (table_fields).
enum Rule : uint8_t { rNone, rLd, rLdu, rSt, rAtom, rRed, rWmma };

struct Opcode {
  const char* name;
  uint16_t families;
  uint8_t metric;     // metrics::Kind
  uint8_t san_class;  // san::OpClass
  uint8_t op_flags;   // kOpNoDest, kOpDest4, kOpDest5
  Rule rule;
};

using enum metrics::Kind;
using enum san::OpClass;
constexpr uint8_t kNoDest = kOpNoDest;
constexpr Opcode kOpcodes[] = {
    // name            families          metric      san_class   op_flags   rule
    {"abs",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"activemask",     fWarp,            kNone,      opUseDest,  0,         rNone},
    {"add",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"addc",           fAlu,             kNone,      opPure,     0,         rNone},
    {"and",            fAlu,             kNone,      opAnd,      0,         rNone},
    {"applypriority",  fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"atom",           fMem,             kAtomic,    opUseDest,  0,         rAtom},
    {"bar",            fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"barrier",        fCluster | fControl, kNone,   opUse,      kNoDest,   rNone},
    {"bfe",            fAlu,             kNone,      opPure,     0,         rNone},
    {"bfi",            fAlu,             kNone,      opPure,     0,         rNone},
    {"bfind",          fAlu,             kNone,      opPure,     0,         rNone},
    {"bmsk",           fAlu,             kNone,      opPure,     0,         rNone},
    {"bra",            fBranch,          kNone,      opUse,      kNoDest,   rNone},
    {"brev",           fAlu,             kNone,      opPure,     0,         rNone},
    {"brx",            fBranch,          kNone,      opUse,      kNoDest,   rNone},
    {"call",           fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"clz",            fAlu,             kNone,      opPure,     0,         rNone},
    {"cnot",           fAlu,             kNone,      opPure,     0,         rNone},
    {"copysign",       fFloat,           kNone,      opPure,     0,         rNone},
    {"cos",            fFloat,           kNone,      opPure,     0,         rNone},
    {"cp",             fMem | fAsync,    kCpAsync,   opUse,      kNoDest,   rNone},
    {"cvt",            fAlu | fCvt,      kNone,      opPure,     0,         rNone},
    {"cvta",           fMem,             kNone,      opPure,     0,         rNone},
    {"discard",        fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"div",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"dp2a",           fAlu,             kNone,      opPure,     0,         rNone},
    {"dp4a",           fAlu,             kNone,      opPure,     0,         rNone},
    {"elect",          fWgmma,           kNone,      opUse,      0,         rNone},
    {"ex2",            fFloat,           kNone,      opPure,     0,         rNone},
    {"exit",           fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"fence",          fControl | fAsync, kNone,     opUse,      kNoDest,   rNone},
    {"fma",            fFloat,           kNone,      opPure,     0,         rNone},
    {"getctarank",     fCluster,         kNone,      opUseDest,  0,         rNone},
    {"griddepcontrol", fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"isspacep",       fMem,             kNone,      opUseDest,  0,         rNone},
    {"ld",             fMem,             kLoad,      opLoad,     0,         rLd},
    {"ldmatrix",       fTensor,          kLdmatrix,  opUseDest,  0,         rNone},
    {"ldu",            fMem,             kLoad,      opLoad,     0,         rLdu},
    {"lg2",            fFloat,           kNone,      opPure,     0,         rNone},
    {"lop3",           fAlu,             kNone,      opPure,     0,         rNone},
    {"mad",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"mad24",          fAlu,             kNone,      opPure,     0,         rNone},
    {"madc",           fAlu,             kNone,      opPure,     0,         rNone},
    {"mapa",           fCluster,         kNone,      opUseDest,  0,         rNone},
    {"match",          fWarp,            kNone,      opUseDest,  kOpDest5,  rNone},
    {"max",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"mbarrier",       fAsync,           kNone,      opUse,      kNoDest,   rNone},
    {"membar",         fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"min",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"mma",            fTensor,          kNone,      opUseDest,  0,         rNone},
    {"mov",            fAlu,             kNone,      opPure,     0,         rNone},
    {"mul",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"mul24",          fAlu,             kNone,      opPure,     0,         rNone},
    {"nanosleep",      fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"neg",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"not",            fAlu,             kNone,      opPure,     0,         rNone},
    {"or",             fAlu,             kNone,      opOr,       0,         rNone},
    {"pmevent",        fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"popc",           fAlu,             kNone,      opPure,     0,         rNone},
    {"prefetch",       fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"prefetchu",      fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"prmt",           fAlu,             kNone,      opPure,     0,         rNone},
    {"rcp",            fFloat,           kNone,      opPure,     0,         rNone},
    {"red",            fMem,             kAtomic,    opUse,      kNoDest,   rRed},
    {"redux",          fWarp,            kNone,      opUseDest,  0,         rNone},
    {"rem",            fAlu,             kNone,      opPure,     0,         rNone},
    {"ret",            fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"rsqrt",          fFloat,           kNone,      opPure,     0,         rNone},
    {"sad",            fAlu,             kNone,      opPure,     0,         rNone},
    {"selp",           fAlu,             kNone,      opSelp,     0,         rNone},
    {"setmaxnreg",     fWgmma,           kNone,      opUse,      0,         rNone},
    {"setp",           fAlu,             kNone,      opSetp,     kOpDest4,  rNone},
    {"shf",            fAlu,             kNone,      opPure,     0,         rNone},
    {"shfl",           fWarp,            kNone,      opUseDest,  kOpDest5,  rNone},
    {"shl",            fAlu,             kNone,      opPure,     0,         rNone},
    {"shr",            fAlu,             kNone,      opPure,     0,         rNone},
    {"sin",            fFloat,           kNone,      opPure,     0,         rNone},
    {"sqrt",           fFloat,           kNone,      opPure,     0,         rNone},
    {"st",             fMem,             kStore,     opUse,      kNoDest,   rSt},
    {"stmatrix",       fWgmma,           kNone,      opUse,      kNoDest,   rNone},
    {"sub",            fAlu | fFloat,    kNone,      opPure,     0,         rNone},
    {"subc",           fAlu,             kNone,      opPure,     0,         rNone},
    {"suld",           fTexture,         kNone,      opUseDest,  0,         rNone},
    {"suq",            fTexture,         kNone,      opUseDest,  0,         rNone},
    {"sust",           fTexture,         kNone,      opUse,      kNoDest,   rNone},
    {"szext",          fAlu,             kNone,      opPure,     0,         rNone},
    {"tanh",           fFloat,           kNone,      opPure,     0,         rNone},
    {"testp",          fFloat,           kNone,      opPure,     0,         rNone},
    {"tex",            fTexture,         kNone,      opUseDest,  0,         rNone},
    {"tld4",           fTexture,         kNone,      opUseDest,  0,         rNone},
    {"trap",           fControl,         kNone,      opUse,      kNoDest,   rNone},
    {"txq",            fTexture,         kNone,      opUseDest,  0,         rNone},
    {"vote",           fWarp,            kNone,      opUseDest,  0,         rNone},
    {"wgmma",          fWgmma,           kNone,      opUse,      0,         rNone},
    {"wmma",           fTensor,          kNone,      opUseDest,  0,         rWmma},
    {"xor",            fAlu,             kNone,      opPure,     0,         rNone},
};

const Opcode* opcode_of(const std::string& name) {
  static const std::unordered_map<std::string_view, const Opcode*> index = [] {
    std::unordered_map<std::string_view, const Opcode*> m;
    for (const Opcode& o : kOpcodes) m[o.name] = &o;
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

// A modifier, or one of its qualified forms ("param" finds "param::entry").
bool has_mod(const PInstr& p, const char* m) {
  for (const std::string& s : p.mods)
    if (s == m || s.rfind(std::string(m) + "::", 0) == 0) return true;
  return false;
}


// The decoder used to offer an instruction to every family in turn, and four of them set fields
// before they look at the opcode; a family's decoder may rely on what an earlier one set, so an
// instruction still gets these fields from the families before its own.
void pass_family(DecodeCtx& d, const PInstr& p, Inst& in, uint16_t family) {
  if (family == fAlu) {
    in.type = d.last_type(p);
    if (d.has(p, "sat")) in.flags |= kSat;
    if (d.has(p, "hi")) in.flags |= kHi;
    if (d.has(p, "relu")) in.flags |= kRelu;
  } else if (family == fFloat) {
    const Type t = d.last_type(p);
    if (!type_float(t)) return;
    in.type = t;
    in.flags |= d.rounding(p);
    if (d.has(p, "ftz")) in.flags |= kFtz;
    if (d.has(p, "sat")) in.flags |= kSat;
    if (d.has(p, "NaN")) in.flags |= kNaN;
    if (d.has(p, "relu")) in.flags |= kRelu;
  } else if (family == fMem) {
    in.space = space_of(p);
  } else if (family == fWarp) {
    in.type = d.last_type(p);
  }
}

// The memory semantics bits (san::kStrong ...) of ld, ldu, st, atom and red.
uint32_t semantics_of(Rule rule, const DecodeCtx& d, const PInstr& p) {
  uint32_t f = 0;
  if (rule == rAtom || rule == rRed) f |= san::kStrong | san::kAtomic;
  if (d.has(p, "volatile") || d.has(p, "relaxed") || d.has(p, "acquire") || d.has(p, "release") ||
      d.has(p, "acq_rel") || d.has(p, "mmio"))
    f |= san::kStrong;
  if (d.has(p, "acquire") || d.has(p, "acq_rel")) f |= san::kAcquire;
  if (d.has(p, "release") || d.has(p, "acq_rel")) f |= san::kRelease;
  if (d.has(p, "cta")) f |= san::kCta;
  if (rule == rSt) f |= san::kStore;
  if (rule == rAtom && d.has(p, "cas")) f |= san::kCas;
  if (rule == rLd && d.has(p, "nc")) f |= san::kNc;
  return f;
}

// Hands the instruction to the families of its opcode; true when one decoded it.
bool decode_families(DecodeCtx& d, const PInstr& p, Inst& in, const Opcode& op) {
  // Semantics first: a memory decoder may choose its handler by them.
  if (op.rule >= rLd && op.rule <= rRed) in.flags |= semantics_of(op.rule, d, p);
  for (size_t i = 0; i < std::size(kFamilies) && (op.families >> i); ++i) {
    const uint16_t family = uint16_t(1u << i);
    if (!(op.families & family)) pass_family(d, p, in, family);
    else if (kFamilies[i](d, p, in)) return true;
  }
  return false;
}

// The table's fields of a decoded instruction, with the exceptions its modifiers make.
void table_fields(const Opcode& op, const PInstr& p, Inst& in) {
  in.metric = op.metric;
  // Kernel parameters and constants are not served by the LSU pipeline the metrics describe;
  // of cp.async, the metrics count the copies (not the bulk ones, nor commit and wait).
  if ((op.metric == kLoad || op.metric == kStore) &&
      (in.space == Space::param || has_mod(p, "const") || has_mod(p, "param")))
    in.metric = kNone;
  if (op.metric == kCpAsync && (!has_mod(p, "async") || in.o[1].kind == OK::none || has_mod(p, "bulk")))
    in.metric = kNone;
  in.san_class = op.san_class;
  in.op_flags = op.op_flags;
  if (op.rule == rWmma && !p.mods.empty() && p.mods[0] == "store") in.op_flags |= kOpNoDest;
}

}  // namespace

// The state space a modifier names, generic without one.
Space space_of(const PInstr& p) {
  for (const std::string& s : p.mods) {
    if (s == "global") return Space::global;
    if (s == "shared" || s.rfind("shared::", 0) == 0) return Space::shared;
    if (s == "local") return Space::local;
    if (s == "param" || s.rfind("param::", 0) == 0) return Space::param;
    if (s == "const") return Space::konst;
  }
  return Space::generic;
}

int32_t DecodeCtx::reg_index(const std::string& name) {
  for (auto s = scopes.rbegin(); s != scopes.rend(); ++s) {
    auto it = s->find(name);
    if (it != s->end()) return int32_t(it->second);
  }
  return -1;
}

uint64_t DecodeCtx::symbol(const std::string& name, Space* space, bool* found) {
  *found = true;
  if (f.entry)
    for (size_t i = 0; i < f.params.size(); ++i)
      if (f.params[i].name == name) { *space = Space::param; return k.param_offsets[i]; }
  if (auto it = local_vars.find(name); it != local_vars.end()) { *space = Space::local; return it->second; }
  if (auto it = shared_vars.find(name); it != shared_vars.end()) { *space = Space::shared; return it->second; }
  if (auto it = m.var_index.find(name); it != m.var_index.end()) {
    *space = m.vars[it->second].space;
    return reinterpret_cast<uint64_t>(m.vars[it->second].storage);
  }
  for (const PFunc& fn : m.parsed.funcs)  // a kernel's address, for a device-side launch
    if (fn.entry && fn.name == name) { *space = Space::global; return entry_handle(&m, name); }
  *found = false;
  return 0;
}

Operand DecodeCtx::op(const PTok& t, Type hint) {
  Operand o;
  o.neg = t.neg;
  switch (t.kind) {
    case PTok::reg: {
      int32_t r = reg_index(t.text);
      if (r >= 0) { o.kind = OK::reg; o.reg = uint32_t(r); return o; }
      bool ok;
      SReg s = sreg_of(t.text, &ok);
      if (!ok) throw std::runtime_error("unknown register " + t.text);
      o.kind = OK::sreg;
      o.reg = s;
      if (s >= sr_cluster_ctarank) k.uses_cluster = true;
      return o;
    }
    case PTok::imm:
      o.kind = OK::imm;
      o.imm = uint64_t(t.ival);
      return o;
    case PTok::fimm: {
      o.kind = OK::imm;
      // 0fXXXXXXXX is f32 bits, 0d... f64 bits; a typed f64 use of an f32 literal widens it.
      const bool is_f32_literal = t.text.size() > 1 && (t.text[1] == 'f' || t.text[1] == 'F');
      if (is_f32_literal && hint == Type::f64) o.imm = bits_of(double(f32_of(uint64_t(t.ival))));
      else if (!is_f32_literal && hint == Type::f32) o.imm = bits_of(float(f64_of(uint64_t(t.ival))));
      else o.imm = uint64_t(t.ival);
      return o;
    }
    case PTok::name: {
      if (int32_t r = reg_index(t.text); r >= 0) {  // inline-asm registers have no '%'
        o.kind = OK::reg;
        o.reg = uint32_t(r);
        return o;
      }
      if (t.text == "WARP_SZ") {  // the ISA's predefined identifier (what warpSize becomes)
        o.kind = OK::imm;
        o.imm = 32;
        return o;
      }
      Space sp;
      bool found;
      uint64_t v = symbol(t.text, &sp, &found);
      if (!found) throw std::runtime_error("unknown symbol " + t.text);
      o.kind = OK::imm;
      o.imm = v + uint64_t(t.ival);
      return o;
    }
    case PTok::vec: {
      o.kind = OK::vec;
      o.count = uint8_t(t.elems.size());
      o.reg = uint32_t(k.vec_ops.size());
      std::vector<Operand> elems;
      for (const PTok& e : t.elems) elems.push_back(op(e, hint));
      k.vec_ops.insert(k.vec_ops.end(), elems.begin(), elems.end());
      return o;
    }
    case PTok::sink:
      o.kind = OK::sink;
      return o;
    case PTok::pair:
      return op(t.elems[0], hint);
    case PTok::addr:
      break;
  }
  throw std::runtime_error("unexpected operand");
}

Operand DecodeCtx::addr(const PTok& t, Space& space) {
  if (t.kind != PTok::addr) throw std::runtime_error("expected an address operand");
  Operand o;
  o.kind = OK::none;
  o.imm = uint64_t(t.ival);
  if (!t.elems.empty()) {
    const std::string& base = t.elems[0].text;
    int32_t r = reg_index(base);
    if (r >= 0) {
      o.kind = OK::reg;
      o.reg = uint32_t(r);
      const auto type = reg_types.find(base);
      o.addr32 = type != reg_types.end() && type_bytes(type->second) == 4;
      if (o.addr32) o.imm = uint32_t(o.imm);
    } else {
      Space sp;
      bool found;
      uint64_t v = symbol(base, &sp, &found);
      if (!found) throw std::runtime_error("unknown symbol " + base);
      o.imm += v;
      // A symbol names its own space; a generic access to it is an access in that space.
      if (space == Space::generic) space = sp;
      if (space == Space::param && sp == Space::local) space = Space::local;  // call staging
      if (sp == Space::konst && space == Space::konst) space = Space::global;
    }
  }
  return o;
}

void DecodeCtx::fail(const PInstr& p, const std::string& why) const {
  throw std::runtime_error("cannot decode '" + p.text + "' in " + f.name + ": " + why);
}

bool DecodeCtx::has(const PInstr& p, const char* mod) const {
  return std::find(p.mods.begin(), p.mods.end(), mod) != p.mods.end();
}

Type DecodeCtx::last_type(const PInstr& p) const {
  for (auto it = p.mods.rbegin(); it != p.mods.rend(); ++it) {
    Type t = parse_type(*it);
    if (t != Type::none) return t;
  }
  return Type::none;
}

uint32_t DecodeCtx::rounding(const PInstr& p) const {
  uint32_t r = 0;
  for (const auto& s : p.mods) {
    if (s == "rn") r |= kRn;
    else if (s == "rz") r |= kRz;
    else if (s == "rm") r |= kRm;
    else if (s == "rp") r |= kRp;
    else if (s == "rna") r |= kRna;
    else if (s == "rni") r |= kRn | kIntRound;
    else if (s == "rzi") r |= kRz | kIntRound;
    else if (s == "rmi") r |= kRm | kIntRound;
    else if (s == "rpi") r |= kRp | kIntRound;
  }
  return r;
}

namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return a ? (v + a - 1) / a * a : v; }

void decode_function(Module& m, Kernel& k, const PFunc& f, bool is_entry) {
  DecodeCtx d{k, m, f, {}, {}, {}, {}, {}};
  const uint32_t reg_begin = k.nregs, local_begin = k.local_bytes;
  d.scopes.emplace_back();
  d.scopes.back()["%%cc"] = k.nregs++;  // the carry flag of add.cc/addc/sub.cc/subc
  k.reg_names.push_back("%%cc");
  if (!is_entry) {
    // A function's parameters and return values live in the calling thread's local memory.
    auto slots = [&](const std::vector<PParam>& ps) {
      for (const PParam& prm : ps) {
        k.local_bytes = uint32_t(align_up(k.local_bytes, std::max<uint64_t>(8, prm.align)));
        d.local_vars[prm.name] = k.local_bytes;
        k.local_bytes += uint32_t(std::max<uint64_t>(8, prm.bytes));
      }
    };
    slots(f.params);
    slots(f.rets);
    auto& fs = k.funcs[f.name];
    for (const PParam& prm : f.params) fs.params.push_back(d.local_vars[prm.name]);
    fs.ret = f.rets.empty() ? -1 : int64_t(d.local_vars[f.rets[0].name]);
  }
  if (is_entry) {
    uint32_t off = 0;
    for (const PParam& prm : f.params) {
      off = uint32_t(align_up(off, std::max<uint64_t>(1, prm.align)));
      k.param_offsets.push_back(off);
      k.param_sizes.push_back(uint32_t(prm.bytes));
      off += uint32_t(prm.bytes);
    }
    k.param_bytes = off;
  }
  // First pass: labels (pcs) and body-scope variables.
  const uint32_t base_pc = uint32_t(k.code.size());
  uint32_t pc = base_pc;
  // Labels have the scope of their { } block (PTX ISA, "Scope"): inline asm that declares the same
  // label in several blocks of one function branches to its own block's. Block 0 is the body;
  // the others are numbered in order of their '{', and a branch looks outward from its block.
  std::vector<int> block_parent{-1};
  std::vector<std::map<std::string, uint32_t>> block_labels(1);
  int block = 0;
  for (const PStmt& s : f.body) {
    if (s.kind == PStmt::instr) ++pc;
    else if (s.kind == PStmt::open) {
      block_parent.push_back(block);
      block_labels.emplace_back();
      block = int(block_parent.size()) - 1;
    } else if (s.kind == PStmt::close) {
      if (block > 0) block = block_parent[size_t(block)];
    } else if (s.kind == PStmt::label) {
      d.labels[s.name] = pc;
      block_labels[size_t(block)][s.name] = pc;
    }
    else if (s.kind == PStmt::vardecl) {
      const PVar& v = s.var;
      if (v.space == Space::local) {
        k.local_bytes = uint32_t(align_up(k.local_bytes, v.align));
        d.local_vars[v.name] = k.local_bytes;
        k.local_bytes += uint32_t(v.bytes());
      } else if (v.space == Space::shared) {
        k.static_smem = uint32_t(align_up(k.static_smem, v.align));
        d.shared_vars[v.name] = k.static_smem;
        k.static_smem += uint32_t(v.bytes());
      }
    }
  }
  // Module-scope .shared variables this function names (nvcc puts a kernel's __shared__
  // arrays there), laid out after the function's own; extern (dynamic) ones alias the window
  // after all static variables.
  std::set<std::string> names;
  std::function<void(const PTok&)> collect = [&](const PTok& t) {
    if (t.kind == PTok::name) names.insert(t.text);
    for (const PTok& e : t.elems) collect(e);
  };
  for (const PStmt& s : f.body)
    if (s.kind == PStmt::instr)
      for (const PTok& t : s.in.ops) collect(t);
  std::vector<const PVar*> dynamic;
  for (const PVar& v : m.parsed.vars) {
    if (v.space != Space::shared || !names.count(v.name)) continue;
    if (v.is_extern || v.count == 0) { dynamic.push_back(&v); continue; }
    k.static_smem = uint32_t(align_up(k.static_smem, v.align));
    d.shared_vars[v.name] = k.static_smem;
    k.static_smem += uint32_t(v.bytes());
  }
  for (const PVar* v : dynamic) k.smem_align = std::max<uint32_t>(k.smem_align, uint32_t(v->align));
  for (const PVar* v : dynamic)
    d.shared_vars[v->name] = uint32_t(align_up(k.static_smem, k.smem_align));

  // Second pass: registers in scope order, and the instructions.
  int next_block = 0;
  block = 0;
  for (const PStmt& s : f.body) {
    switch (s.kind) {
      case PStmt::open:
        d.scopes.emplace_back();
        block = ++next_block;
        break;
      case PStmt::close:
        d.scopes.pop_back();
        if (block > 0) block = block_parent[size_t(block)];
        break;
      case PStmt::label: break;
      case PStmt::vardecl:
        if (s.var.space == Space::param) {
          // Call-argument staging: give each .param its own slot of local memory.
          k.local_bytes = uint32_t(align_up(k.local_bytes, std::max<uint64_t>(8, s.var.align)));
          d.local_vars[s.var.name] = k.local_bytes;
          k.local_bytes += uint32_t(std::max<uint64_t>(8, s.var.bytes()));
        }
        break;
      case PStmt::regdecl: {
        auto add = [&](const std::string& name) {
          d.scopes.back()[name] = k.nregs++;
          k.reg_names.push_back(name);
          d.reg_types[name] = s.type;
        };
        if (s.count < 0) add(s.name);
        else for (int i = 0; i < s.count; ++i) add(s.name + std::to_string(i));
        break;
      }
      case PStmt::instr: {
        const PInstr& p = s.in;
        Inst in;
        in.src = int32_t(k.source.size());
        k.source.push_back({p.text, p.file, p.line, p.inlined_file, p.inlined_line});
        if (!p.guard.empty()) {
          in.guard = d.reg_index(p.guard);
          in.guard_neg = p.guard_neg;
          if (in.guard < 0) d.fail(p, "unknown guard predicate");
        }
        const Opcode* op = opcode_of(p.opcode);
        // Branch targets are labels; calls name functions.
        if (op && op->families == fBranch) {
          in.ctl = Ctl::bra;
          const std::string& name = p.ops.at(0).text;
          int64_t target = -1;
          for (int b = block; b >= 0 && target < 0; b = block_parent[size_t(b)])
            if (auto it = block_labels[size_t(b)].find(name); it != block_labels[size_t(b)].end()) target = it->second;
          if (target < 0) {
            auto it = d.labels.find(name);
            if (it == d.labels.end()) d.fail(p, "unknown label");
            target = it->second;
          }
          in.target = uint32_t(target);
          in.san_class = op->san_class;
          in.op_flags = op->op_flags;
          k.code.push_back(in);
          break;
        }
        for (const std::string& mod : p.mods)
          if (mod == "shared::cluster") k.uses_cluster = true;
        bool ok = false;
        try {
          ok = op && decode_families(d, p, in, *op);
        } catch (const std::runtime_error& e) {
          // A family's own d.fail already names the statement.
          if (std::string_view(e.what()).starts_with("cannot decode '")) throw;
          d.fail(p, e.what());
        }
        if (!ok) d.fail(p, "instruction not supported by the emulator");
        table_fields(*op, p, in);
        k.code.push_back(in);
        break;
      }
    }
  }
  if (!is_entry) {
    auto& fs = k.funcs[f.name];
    fs.reg_begin = reg_begin;
    fs.reg_end = k.nregs;
    fs.local_begin = local_begin;
    fs.local_end = k.local_bytes;
  }
  if (k.code.size() == base_pc || k.code.back().ctl != Ctl::exit) {
    Inst end;
    end.ctl = is_entry ? Ctl::exit : Ctl::ret;
    end.src = int32_t(k.source.size());
    k.source.push_back({is_entry ? "(end of kernel)" : "(end of function)", 0, 0});
    k.code.push_back(end);
  }
}

}  // namespace

Kernel* Module::kernel(const std::string& name) {
  auto it = kernels.find(name);
  if (it != kernels.end()) return it->second.get();
  const PFunc* f = nullptr;
  for (const PFunc& fn : parsed.funcs)
    if (fn.entry && fn.name == name) f = &fn;
  if (!f) return nullptr;
  auto k = std::make_unique<Kernel>();
  k->name = name;
  k->module = this;
  decode_function(*this, *k, *f, true);
  // The functions it calls, each decoded once after it; calls are then pointed at them.
  for (size_t done = 0; done < k->calls.size(); ++done) {
    CallSite& c = k->calls[done];
    if (!k->func_entry.count(c.callee)) {
      const PFunc* callee = nullptr;
      for (const PFunc& fn : parsed.funcs)
        if (!fn.entry && fn.defined && fn.name == c.callee) callee = &fn;
      if (!callee) throw std::runtime_error("call of " + c.callee + ", which the PTX does not define");
      k->func_entry[c.callee] = uint32_t(k->code.size());
      decode_function(*this, *k, *callee, false);
    }
  }
  for (CallSite& c : k->calls) {
    k->code[c.pc].target = k->func_entry[c.callee];
    const auto& fs = k->funcs[c.callee];
    if (fs.params.size() != c.arg_slots.size())
      throw std::runtime_error("call of " + c.callee + " with the wrong number of arguments");
    c.param_slots = fs.params;
    c.callee_ret_slot = fs.ret;
    c.reg_begin = fs.reg_begin;
    c.reg_end = fs.reg_end;
    c.local_begin = fs.local_begin;
    c.local_end = fs.local_end;
  }
  k->reqntid = f->reqntid[0] ? f->reqntid[0] * std::max(1, f->reqntid[1]) * std::max(1, f->reqntid[2]) : 0;
  for (int i = 0; i < 3; ++i) k->cluster_dims[i] = uint32_t(std::max(0, f->reqnctapercluster[i]));
  if (k->cluster_dims[0] || k->cluster_dims[1] || k->cluster_dims[2])
    for (uint32_t& c : k->cluster_dims) c = std::max(1u, c);
  k->explicit_cluster = f->explicitcluster || k->cluster_dims[0];
  k->max_cluster_rank = f->maxclusterrank;
  k->maxntid = f->maxntid[0] ? f->maxntid[0] * std::max(1, f->maxntid[1]) * std::max(1, f->maxntid[2]) : 0;
  Kernel* raw = k.get();
  kernels[name] = std::move(k);
  return raw;
}

}  // namespace emu
