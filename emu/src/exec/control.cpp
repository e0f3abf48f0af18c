// Control: exit, ret, barriers, fences, sleep, trap, and calls (device printf through vprintf),
// with what the scheduler does at a call of a device function and at its return.
#include <algorithm>
#include <cstdio>

#include "exec/ops.h"
#include "exec/sanitizer.h"

namespace emu {

namespace {

void h_nop(Exec&, const Inst&, uint32_t) {}
// Memory ordering is what the checks see of fences and bar.warp.sync (execution has no caches).
void h_fence(Exec& x, const Inst&, uint32_t mask) { if (san::g_checks) san::fence(x, mask); }
void h_warpsync(Exec& x, const Inst&, uint32_t mask) { if (san::g_checks) san::warp_sync(x, mask); }

// vprintf(format, args): the format is a generic address of a global string, the arguments a
// packed buffer in local memory, each aligned to its own size (as the CUDA ABI lays them out).
void h_vprintf(Exec& x, const Inst& in, uint32_t mask) {
  EMU_FOR_LANES(mask)
    const uint64_t fmt_param = x.val(in.o[1], lane);
    const uint64_t args_param = x.val(in.o[2], lane);
    // The operands are the addresses of the staged .param slots (local memory).
    uint64_t fmt_addr, args_addr;
    std::memcpy(&fmt_addr, x.addr(Space::local, fmt_param, 8, lane, false), 8);
    std::memcpy(&args_addr, x.addr(Space::local, args_param, 8, lane, false), 8);
    std::string fmt;
    for (uint64_t a = fmt_addr;; ++a) {
      char c = char(*x.addr(Space::generic, a, 1, lane, false));
      if (!c) break;
      fmt += c;
    }
    std::string out;
    size_t argoff = 0;
    auto next_arg = [&](uint32_t size) {
      argoff = (argoff + size - 1) / size * size;
      uint64_t v = 0;
      std::memcpy(&v, x.addr(Space::generic, args_addr + argoff, size, lane, false), size);
      argoff += size;
      return v;
    };
    for (size_t i = 0; i < fmt.size(); ++i) {
      if (fmt[i] != '%') { out += fmt[i]; continue; }
      size_t j = i + 1;
      if (j < fmt.size() && fmt[j] == '%') { out += '%'; i = j; continue; }
      while (j < fmt.size() && std::strchr("-+ #0123456789.*", fmt[j])) ++j;
      std::string lenmod;
      while (j < fmt.size() && std::strchr("hlLqjzt", fmt[j])) lenmod += fmt[j++];
      if (j >= fmt.size()) break;
      const char conv = fmt[j];
      std::string spec = fmt.substr(i, j - i + 1);
      char buf[512];
      if (std::strchr("fFeEgGaA", conv)) {
        double d = f64_of(next_arg(8));
        std::snprintf(buf, sizeof buf, spec.c_str(), d);
      } else if (conv == 's') {
        uint64_t sa = next_arg(8);
        std::string str;
        for (uint64_t a = sa;; ++a) {
          char c = char(*x.addr(Space::generic, a, 1, lane, false));
          if (!c) break;
          str += c;
        }
        std::snprintf(buf, sizeof buf, "%s", str.c_str());
      } else if (conv == 'p') {
        std::snprintf(buf, sizeof buf, "%p", reinterpret_cast<void*>(next_arg(8)));
      } else if (conv == 'c') {
        std::snprintf(buf, sizeof buf, spec.c_str(), int(next_arg(4)));
      } else {
        const bool wide = lenmod.find('l') != std::string::npos || lenmod == "q" ||
                          lenmod == "j" || lenmod == "z" || lenmod == "t";
        std::string plain = spec.substr(0, spec.size() - 1 - lenmod.size());
        plain += "ll";
        plain += conv;
        long long v = wide ? (long long)next_arg(8) : (long long)(int32_t)next_arg(4);
        if (!wide && std::strchr("uxXo", conv)) v = (long long)(uint32_t)v;
        std::snprintf(buf, sizeof buf, plain.c_str(), v);
      }
      out += buf;
      i = j;
    }
    std::fputs(out.c_str(), stdout);
    if (in.o[0].kind == OK::imm) {  // the .param slot of the return value
      const uint32_t n = uint32_t(out.size());
      std::memcpy(x.addr(Space::local, in.o[0].imm, 4, lane, true), &n, 4);
    }
  EMU_END_LANES
  std::fflush(stdout);
}

// The string at a generic address (a device-side char*), read through the memory checks.
std::string device_string(Exec& x, uint64_t a, int lane) {
  std::string out;
  for (;; ++a) {
    const char c = char(*x.addr(Space::generic, a, 1, lane, false));
    if (!c || out.size() > 4096) break;
    out += c;
  }
  return out;
}

void h_assertfail(Exec& x, const Inst& in, uint32_t mask) {
  const int lane = __builtin_ctz(mask);
  auto slot = [&](int i, uint32_t size) {
    uint64_t v = 0;
    std::memcpy(&v, x.addr(Space::local, in.o[i].imm, size, lane, false), size);
    return v;
  };
  const std::string message = device_string(x, slot(0, 8), lane);
  const std::string file = device_string(x, slot(1, 8), lane);
  const uint32_t line = uint32_t(slot(2, 4));
  const std::string function = device_string(x, slot(3, 8), lane);
  x.fail_with(710, "device-side assertion failed: " + file + ":" + std::to_string(line) + ": " +
                       function + ": Assertion `" + message + "` failed",
              lane);
}

}  // namespace

// A call of a device function: each calling lane saves the callee's registers and local bytes
// (every activation of a recursive function has its own), copies the caller's staged argument
// slots into the callee's parameters, and jumps to it.
void call_lanes(Exec& x, const Inst& in, uint32_t mask, uint32_t active) {
  Warp& w = *x.w;
  const Kernel& k = *x.k;
  const uint32_t pc = x.pc;
  for (uint32_t m = mask; m; m &= m - 1) {
    int lane = __builtin_ctz(m);
    if ((active >> lane) & 1) {
      // Arguments: the caller's staged .param slots into the callee's.
      const CallSite& c = k.calls[in.aux];
      uint8_t* local = w.local + size_t(lane) * k.local_bytes;
      if (w.ret_stack(lane).size() > 1000) x.fail("call depth beyond 1000", lane);
      std::vector<uint64_t>& saved = w.saved(lane);
      for (uint32_t r = c.reg_begin; r < c.reg_end; ++r) saved.push_back(w.r[r * 32 + lane]);
      for (uint32_t b = c.local_begin; b < c.local_end; b += 8) {
        uint64_t v = 0;
        std::memcpy(&v, local + b, std::min<uint32_t>(8, c.local_end - b));
        saved.push_back(v);
      }
      // Arguments go in after the save: they belong to the new activation.
      for (size_t i = 0; i < c.arg_slots.size(); ++i)
        std::memmove(local + c.param_slots[i], local + c.arg_slots[i], c.sizes[i]);
      w.ret_stack(lane).push_back(pc + 1);
      w.pc[lane] = in.target;
    } else {
      w.pc[lane] = pc + 1;
    }
  }
}

// ret of a device function: each returning lane takes its return value, restores the caller's
// view of the callee's registers and local bytes, and goes back after its call. A ret of the
// kernel itself (no call to return from) exits the lane.
void return_lanes(Exec& x, const Inst&, uint32_t mask, uint32_t active) {
  Warp& w = *x.w;
  const Kernel& k = *x.k;
  const uint32_t pc = x.pc;
  for (uint32_t m = mask; m; m &= m - 1) {
    int lane = __builtin_ctz(m);
    if ((active >> lane) & 1) {
      if (w.ret_stack(lane).empty()) {  // ret from the kernel itself
        w.exited |= 1u << lane;
        ++x.b->exited_threads;
      } else {
        const uint32_t back = w.ret_stack(lane).back();
        w.ret_stack(lane).pop_back();
        const CallSite& c = k.calls[k.code[back - 1].aux];
        uint8_t* local = w.local + size_t(lane) * k.local_bytes;
        uint64_t value = 0;
        if (c.callee_ret_slot >= 0) std::memcpy(&value, local + c.callee_ret_slot, 8);
        // Restore the caller's view of the callee's registers and local bytes.
        std::vector<uint64_t>& saved = w.saved(lane);
        const size_t words = (c.reg_end - c.reg_begin) + (c.local_end - c.local_begin + 7) / 8;
        size_t at = saved.size() - words;
        for (uint32_t r = c.reg_begin; r < c.reg_end; ++r) w.r[r * 32 + lane] = saved[at++];
        for (uint32_t b = c.local_begin; b < c.local_end; b += 8)
          std::memcpy(local + b, &saved[at++], std::min<uint32_t>(8, c.local_end - b));
        saved.resize(saved.size() - words);
        if (c.ret_slot >= 0 && c.callee_ret_slot >= 0) std::memcpy(local + c.ret_slot, &value, 8);
        w.pc[lane] = back;
      }
    } else {
      w.pc[lane] = pc + 1;
    }
  }
}

bool decode_control(DecodeCtx& d, const PInstr& p, Inst& in) {
  const std::string& op = p.opcode;
  if (op == "exit") { in.ctl = Ctl::exit; return true; }
  if (op == "ret") {
    in.ctl = d.f.entry ? Ctl::exit : Ctl::ret;
    return true;
  }
  if (op == "trap") { in.ctl = Ctl::trap; return true; }
  // fence.proxy.* orders the async and generic proxies' views, not threads.
  if (op == "membar" || (op == "fence" && !d.has(p, "proxy"))) {
    in.fn = h_fence;
    return true;
  }
  if (op == "fence" && d.has(p, "proxy") && d.has(p, "async")) return false;  // exec/async_copy.cpp
  if (op == "membar" || op == "fence" || op == "nanosleep" || op == "prefetch" ||
      op == "prefetchu" || op == "pmevent" || op == "griddepcontrol" || op == "discard" ||
      op == "applypriority") {
    in.fn = h_nop;
    return true;
  }
  if (op == "bar" || op == "barrier") {
    // bar.sync a{, b} / bar.arrive a, b / bar.red.popc.u32 d, a{, b}, {!}p / barrier.sync.aligned
    in.ctl = Ctl::bar;
    bool red = d.has(p, "red");
    if (d.has(p, "warp")) {  // bar.warp.sync mask
      in.ctl = Ctl::warpsync;
      in.o[0] = d.op(p.ops.at(0));
      in.member_op = 0;
      in.fn = h_warpsync;
      return true;
    }
    in.aux = d.has(p, "arrive") ? 1 : red ? 2 : 0;
    if (op == "bar" || d.has(p, "aligned")) in.flags |= kAligned;
    size_t i = 0;
    if (red) {
      in.flags = d.has(p, "popc") ? 1 : d.has(p, "and") ? 2 : 3;  // low bits: the reduction
      in.o[0] = d.op(p.ops.at(i++));
    }
    in.o[1] = d.op(p.ops.at(i++));
    const size_t remaining = p.ops.size() - i;
    if ((red && remaining == 2) || (!red && remaining == 1)) in.o[2] = d.op(p.ops.at(i++));
    if (red) in.o[3] = d.op(p.ops.at(i++));
    return true;
  }
  if (op == "call") {
    // call{.uni} (ret), func, (args);  or  call func, (args);
    size_t i = 0;
    Operand ret;
    if (p.ops.size() == 3) ret = d.op(p.ops.at(i++).elems.at(0));
    else ret.kind = OK::sink;
    const std::string& callee = p.ops.at(i++).text;
    if (callee == "__assertfail") {  // assert(): message, file, line, function, char size
      const PTok& args = p.ops.at(i);
      for (int a = 0; a < 4; ++a) in.o[a] = d.op(args.elems.at(size_t(a)));
      in.fn = h_assertfail;
      return true;
    }
    if (callee == "vprintf") {
      const PTok& args = p.ops.at(i);
      in.o[0] = ret;
      // The argument names are .param slots of the caller (staged in local memory).
      in.o[1] = d.op(args.elems.at(0));
      in.o[2] = d.op(args.elems.at(1));
      in.fn = h_vprintf;
      return true;
    }
    if (decode_device_runtime_call(d, callee, ret, i < p.ops.size() ? &p.ops[i] : nullptr, in))
      return true;
    bool defined = false;
    for (const PFunc& fn : d.m.parsed.funcs)
      if (!fn.entry && fn.defined && fn.name == callee) defined = true;
    if (!defined) throw std::runtime_error("call of " + callee + ", which the emulator does not provide");
    CallSite c;
    c.callee = callee;
    c.pc = uint32_t(d.k.code.size());
    auto slot = [&](const PTok& t, uint32_t* size) {
      Space sp;
      bool found;
      const uint64_t off = d.symbol(t.text, &sp, &found);
      if (!found || sp != Space::local) throw std::runtime_error("call argument " + t.text + " is not a .param");
      *size = 8;
      return uint32_t(off);
    };
    if (ret.kind != OK::sink) {
      uint32_t sz;
      c.ret_slot = slot(p.ops.at(0).elems.at(0), &sz);
      c.ret_size = sz;
    }
    if (i < p.ops.size())
      for (const PTok& a : p.ops[i].elems) {
        uint32_t sz;
        c.arg_slots.push_back(slot(a, &sz));
        c.sizes.push_back(sz);
      }
    in.ctl = Ctl::call;
    in.aux = uint32_t(d.k.calls.size());
    d.k.calls.push_back(std::move(c));
    return true;
  }
  return false;
}

}  // namespace emu
