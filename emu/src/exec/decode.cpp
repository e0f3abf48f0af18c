// Parsed function -> Kernel: registers numbered, labels resolved to instruction indices, symbols
// resolved to addresses, and each instruction handed to the family that decodes it.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "exec/metrics.h"
#include "exec/ops.h"
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

}  // namespace

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
        // Branch targets are labels; calls name functions.
        if (p.opcode == "bra" || p.opcode == "brx") {
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
          k.code.push_back(in);
          break;
        }
        bool ok = false;
        try {
          ok = decode_cluster(d, p, in) || decode_control(d, p, in) || decode_alu(d, p, in) || decode_float(d, p, in) ||
               decode_cvt(d, p, in) || decode_mem(d, p, in) || decode_warp(d, p, in) ||
               decode_tensor(d, p, in) || decode_texture(d, p, in) ||
               decode_async(d, p, in) || decode_wgmma(d, p, in);
        } catch (const std::runtime_error& e) {
          // A family's own d.fail already names the statement.
          if (std::string_view(e.what()).starts_with("cannot decode '")) throw;
          d.fail(p, e.what());
        }
        if (!ok) d.fail(p, "instruction not supported by the emulator");
        in.metric = metrics::classify(p, in);
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
