// PTX text -> PModule. A reading of the text as written: directives, variables, functions and
// their statements; meaning is given later, by the decoder.
#include <algorithm>
#include <cctype>
#include <functional>
#include <cstdlib>

#include "emu.h"

namespace emu {

int type_bytes(Type t) {
  switch (t) {
    case Type::pred: return 1;
    case Type::b8: case Type::u8: case Type::s8: return 1;
    case Type::b16: case Type::u16: case Type::s16: case Type::f16: case Type::bf16:
    case Type::e4m3x2: case Type::e5m2x2: return 2;
    case Type::b32: case Type::u32: case Type::s32: case Type::f32: case Type::f16x2:
    case Type::bf16x2: case Type::tf32: return 4;
    case Type::b64: case Type::u64: case Type::s64: case Type::f64: return 8;
    case Type::b128: return 16;
    default: return 0;
  }
}
bool type_signed(Type t) {
  return t == Type::s8 || t == Type::s16 || t == Type::s32 || t == Type::s64;
}
bool type_float(Type t) {
  return t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2 ||
         t == Type::tf32 || t == Type::f32 || t == Type::f64;
}
static const char* kTypeNames[] = {"none", "pred", "b8",  "b16",  "b32",    "b64",    "b128",
                                   "u8",   "u16",  "u32", "u64",  "s8",     "s16",    "s32",
                                   "s64",  "f16",  "f16x2", "bf16", "bf16x2", "tf32", "f32",
                                   "f64",  "e4m3x2", "e5m2x2"};
const char* type_name(Type t) { return kTypeNames[int(t)]; }
Type parse_type(const std::string& s) {
  for (int i = 1; i < int(sizeof(kTypeNames) / sizeof(kTypeNames[0])); ++i)
    if (s == kTypeNames[i]) return Type(i);
  return Type::none;
}

namespace {

struct Tok {
  enum Kind { ident, number, str, punct, end } kind = end;
  std::string text;
  int line = 0;
};

class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}
  std::vector<Tok> all() {
    std::vector<Tok> out;
    for (;;) {
      Tok t = next();
      out.push_back(t);
      if (t.kind == Tok::end) break;
    }
    return out;
  }

 private:
  static bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' ||
           c == '.';
  }
  Tok next() {
    for (;;) {
      while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) {
        if (s_[i_] == '\n') ++line_;
        ++i_;
      }
      if (i_ + 1 < s_.size() && s_[i_] == '/' && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      if (i_ + 1 < s_.size() && s_[i_] == '/' && s_[i_ + 1] == '*') {
        i_ += 2;
        while (i_ + 1 < s_.size() && !(s_[i_] == '*' && s_[i_ + 1] == '/')) {
          if (s_[i_] == '\n') ++line_;
          ++i_;
        }
        i_ += 2;
        continue;
      }
      break;
    }
    Tok t;
    t.line = line_;
    if (i_ >= s_.size()) return t;
    char c = s_[i_];
    if (c == '"') {
      size_t j = i_ + 1;
      while (j < s_.size() && s_[j] != '"') j += (s_[j] == '\\') ? 2 : 1;
      t.kind = Tok::str;
      t.text = s_.substr(i_ + 1, j - i_ - 1);
      i_ = j + 1;
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i_;
      while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '.'))
        ++j;
      t.kind = Tok::number;
      t.text = s_.substr(i_, j - i_);
      i_ = j;
      return t;
    }
    if (ident_char(c)) {
      size_t j = i_;
      // Qualifiers such as .shared::cta and .L2::evict_last keep their "::".
      while (j < s_.size() && (ident_char(s_[j]) || (s_[j] == ':' && j + 1 < s_.size() && s_[j + 1] == ':' &&
                                                     j + 2 < s_.size() && ident_char(s_[j + 2])))) {
        if (s_[j] == ':') j += 2;
        else ++j;
      }
      t.kind = Tok::ident;
      t.text = s_.substr(i_, j - i_);
      i_ = j;
      return t;
    }
    t.kind = Tok::punct;
    t.text = std::string(1, c);
    ++i_;
    return t;
  }
  const std::string& s_;
  size_t i_ = 0;
  int line_ = 1;
};

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t d = s.find('.', start);
    parts.push_back(s.substr(start, d == std::string::npos ? std::string::npos : d - start));
    if (d == std::string::npos) break;
    start = d + 1;
  }
  return parts;
}

// Integer and float literals: 12, 0x1F, 017 (octal), 0f3F800000 (f32 bits), 0d... (f64 bits),
// 1.5 (a decimal float, as f64 bits), with an optional U suffix.
bool parse_number(const std::string& text, int64_t& bits, bool& is_float) {
  is_float = false;
  std::string s = text;
  if (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.pop_back();
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F')) {
    bits = int64_t(std::strtoull(s.c_str() + 2, nullptr, 16));
    is_float = true;
    return true;
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D')) {
    bits = int64_t(std::strtoull(s.c_str() + 2, nullptr, 16));
    is_float = true;
    return true;
  }
  if (s.find('.') != std::string::npos || s.find('e') != std::string::npos) {
    double d = std::strtod(s.c_str(), nullptr);
    std::memcpy(&bits, &d, 8);
    is_float = true;
    return true;
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    bits = int64_t(std::strtoull(s.c_str() + 2, nullptr, 16));
    return true;
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    bits = int64_t(std::strtoull(s.c_str() + 2, nullptr, 2));
    return true;
  }
  if (s.size() > 1 && s[0] == '0') {
    bits = int64_t(std::strtoull(s.c_str(), nullptr, 8));
    return true;
  }
  bits = int64_t(std::strtoull(s.c_str(), nullptr, 10));
  return true;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : toks_(Lexer(text).all()) {}

  PModule module() {
    PModule m;
    while (!at_end()) {
      const Tok& t = peek();
      if (is(";")) { ++p_; continue; }
      if (t.kind != Tok::ident) fail("unexpected '" + t.text + "'");
      const std::string d = t.text;
      if (d == ".version") {
        ++p_;
        std::string v = take().text;
        m.version_major = std::atoi(v.c_str());
        auto dot = v.find('.');
        m.version_minor = dot == std::string::npos ? 0 : std::atoi(v.c_str() + dot + 1);
      } else if (d == ".target") {
        ++p_;
        for (;;) {
          std::string tg = take().text;
          if (tg.rfind("sm_", 0) == 0) m.target_sm = std::atoi(tg.c_str() + 3);
          if (!is(",")) break;
          ++p_;
        }
      } else if (d == ".address_size") {
        p_ += 2;
      } else if (d == ".file") {
        ++p_;
        int id = std::atoi(take().text.c_str());
        std::string name = take().text;
        m.files[id] = name;
        while (is(",")) { p_ += 2; }
      } else if (d == ".section") {
        skip_braced();
      } else if (d == ".pragma") {
        skip_statement();
      } else {
        top_level(m);
      }
    }
    return m;
  }

 private:
  // --- token helpers -------------------------------------------------------------------------
  bool at_end() const { return toks_[p_].kind == Tok::end; }
  const Tok& peek(int k = 0) const {
    size_t i = std::min(p_ + k, toks_.size() - 1);
    return toks_[i];
  }
  bool is(const char* s) const { return toks_[p_].text == s && toks_[p_].kind != Tok::str; }
  Tok take() {
    if (at_end()) fail("unexpected end of PTX");
    return toks_[p_++];
  }
  void expect(const char* s) {
    if (!is(s)) fail(std::string("expected '") + s + "', found '" + peek().text + "'");
    ++p_;
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw std::runtime_error("PTX line " + std::to_string(peek().line) + ": " + msg);
  }
  void skip_statement() {
    while (!at_end() && !is(";")) ++p_;
    if (!at_end()) ++p_;
  }
  void skip_braced() {
    while (!at_end() && !is("{")) ++p_;
    int depth = 0;
    while (!at_end()) {
      if (is("{")) ++depth;
      if (is("}") && --depth == 0) { ++p_; return; }
      ++p_;
    }
  }

  // --- module level --------------------------------------------------------------------------
  void top_level(PModule& m) {
    bool is_extern = false;
    for (;;) {
      const std::string& d = peek().text;
      if (d == ".visible" || d == ".weak" || d == ".common") { ++p_; continue; }
      if (d == ".extern") { is_extern = true; ++p_; continue; }
      break;
    }
    const std::string d = peek().text;
    if (d == ".entry" || d == ".func") {
      function(m, d == ".entry", is_extern);
    } else if (d == ".global" || d == ".shared" || d == ".const" || d == ".local") {
      PVar v = variable(is_extern);
      m.vars.push_back(std::move(v));
    } else {
      fail("unsupported directive '" + d + "'");
    }
  }

  Space space_of(const std::string& d) {
    if (d == ".global") return Space::global;
    if (d == ".shared") return Space::shared;
    if (d == ".const") return Space::konst;
    if (d == ".local") return Space::local;
    if (d == ".param") return Space::param;
    fail("unknown state space " + d);
  }

  // [.space] [.align N] [.vN] .type name [dims] [= init] ;
  PVar variable(bool is_extern) {
    PVar v;
    v.is_extern = is_extern;
    v.space = space_of(take().text);
    for (;;) {
      std::string d = peek().text;
      if (d == ".align") { ++p_; v.align = std::strtoull(take().text.c_str(), nullptr, 0); continue; }
      if (d == ".v2" || d == ".v4" || d == ".v8") { ++p_; v.vec = std::atoi(d.c_str() + 2); continue; }
      if (d == ".ptr" || d == ".attribute") { ++p_; if (is("(")) { while (!is(")")) ++p_; ++p_; } continue; }
      if (!d.empty() && d[0] == '.') {
        Type t = parse_type(d.substr(1));
        if (t == Type::none) fail("unknown type " + d);
        v.type = t;
        ++p_;
        break;
      }
      fail("expected a type in variable declaration");
    }
    v.name = take().text;
    if (v.align == 0 || v.align == 1) v.align = std::max<uint64_t>(1, type_bytes(v.type) * v.vec);
    v.count = 1;
    bool unsized = false;
    while (is("[")) {
      ++p_;
      if (is("]")) { unsized = true; ++p_; continue; }
      v.count *= std::strtoull(take().text.c_str(), nullptr, 0);
      expect("]");
    }
    if (is("=")) {
      ++p_;
      initializer(v);
      if (unsized) {
        uint64_t elem = uint64_t(type_bytes(v.type)) * v.vec;
        v.count = elem ? v.init.size() / elem : 0;
        unsized = false;
      }
    }
    if (unsized) v.count = 0;
    expect(";");
    return v;
  }

  void initializer(PVar& v) {
    int esize = type_bytes(v.type);
    auto put = [&](int64_t bits, bool is_float) {
      if (is_float && v.type == Type::f32) {
        float f;
        if (esize == 4 && (bits >> 32) == 0) {
          uint32_t b = uint32_t(bits);
          std::memcpy(&f, &b, 4);
        } else {
          double dd;
          std::memcpy(&dd, &bits, 8);
          f = float(dd);
        }
        uint32_t b;
        std::memcpy(&b, &f, 4);
        bits = b;
      }
      for (int i = 0; i < esize; ++i) v.init.push_back(uint8_t(uint64_t(bits) >> (8 * i)));
    };
    std::function<void()> value = [&]() {
      if (is("{")) {
        ++p_;
        while (!is("}")) {
          value();
          if (is(",")) ++p_;
        }
        ++p_;
        return;
      }
      bool neg = false;
      if (is("-")) { neg = true; ++p_; }
      const Tok t = take();
      if (t.kind == Tok::number) {
        int64_t bits;
        bool f;
        parse_number(t.text, bits, f);
        if (neg) {
          if (f) bits ^= (v.type == Type::f32 && (bits >> 32) == 0) ? 0x80000000ll : INT64_MIN;
          else bits = -bits;
        }
        put(bits, f);
      } else if (t.kind == Tok::ident) {
        // generic(sym) or sym: the address of another variable, patched at load time.
        std::string name = t.text;
        if (name == "generic" && is("(")) { ++p_; name = take().text; expect(")"); }
        int64_t add = 0;
        if (is("+")) { ++p_; add = std::strtoll(take().text.c_str(), nullptr, 0); }
        v.init_symbols.push_back({v.init.size(), name});
        put(add, false);
      } else {
        fail("bad initializer");
      }
    };
    value();
  }

  PParam param_decl() {
    PParam prm;
    expect(".param");
    for (;;) {
      std::string d = peek().text;
      if (d == ".align") { ++p_; prm.align = std::strtoull(take().text.c_str(), nullptr, 0); continue; }
      if (d == ".ptr" || d == ".global" || d == ".shared" || d == ".const" || d == ".local") { ++p_; continue; }
      if (!d.empty() && d[0] == '.') {
        prm.type = parse_type(d.substr(1));
        if (prm.type == Type::none) fail("unknown param type " + d);
        ++p_;
        break;
      }
      fail("bad parameter declaration");
    }
    prm.name = take().text;
    uint64_t count = 1;
    while (is("[")) {
      ++p_;
      count *= std::strtoull(take().text.c_str(), nullptr, 0);
      expect("]");
    }
    prm.bytes = uint64_t(type_bytes(prm.type)) * count;
    if (prm.align == 0) prm.align = type_bytes(prm.type);
    return prm;
  }

  void function(PModule& m, bool entry, bool is_extern) {
    ++p_;  // .entry / .func
    PFunc f;
    f.entry = entry;
    if (is("(")) {  // return parameters of a .func
      ++p_;
      while (!is(")")) {
        f.rets.push_back(param_decl());
        if (is(",")) ++p_;
      }
      ++p_;
    }
    f.name = take().text;
    if (is("(")) {
      ++p_;
      while (!is(")")) {
        f.params.push_back(param_decl());
        if (is(",")) ++p_;
      }
      ++p_;
    }
    // Performance directives up to the body.
    while (!is("{") && !is(";")) {
      std::string d = take().text;
      int* dims = d == ".maxntid" ? f.maxntid : d == ".reqntid" ? f.reqntid
                  : d == ".reqnctapercluster" ? f.reqnctapercluster : nullptr;
      if (d == ".explicitcluster") f.explicitcluster = true;
      if (d == ".maxclusterrank" && peek().kind == Tok::number) f.maxclusterrank = std::atoi(peek().text.c_str());
      if (dims) {
        for (int i = 0; i < 3; ++i) {
          dims[i] = std::atoi(take().text.c_str());
          if (!is(",")) break;
          ++p_;
        }
      } else {
        // .minnctapersm N, .maxnreg N, .noreturn, .pragma "..." ; etc.
        while (peek().kind == Tok::number || peek().kind == Tok::str || is(",")) ++p_;
        if (is(";") && d == ".pragma") ++p_;
      }
    }
    if (is(";")) {
      ++p_;
      (void)is_extern;
      m.funcs.push_back(std::move(f));
      return;
    }
    f.defined = true;
    body(f);
    m.funcs.push_back(std::move(f));
  }

  void body(PFunc& f) {
    expect("{");
    int depth = 1;
    int loc_file = 0, loc_line = 0, inl_file = 0, inl_line = 0;
    while (depth > 0) {
      if (at_end()) fail("unterminated function body");
      if (is("{")) {
        ++p_;
        ++depth;
        PStmt s;
        s.kind = PStmt::open;
        f.body.push_back(s);
        continue;
      }
      if (is("}")) {
        ++p_;
        if (--depth == 0) break;
        PStmt s;
        s.kind = PStmt::close;
        f.body.push_back(s);
        continue;
      }
      if (is(";")) { ++p_; continue; }
      const Tok& t = peek();
      if (t.kind == Tok::ident && t.text == ".loc") {
        ++p_;
        loc_file = std::atoi(take().text.c_str());
        loc_line = std::atoi(take().text.c_str());
        inl_file = inl_line = 0;
        if (peek().kind == Tok::number) ++p_;
        // ", function_name label + off, inlined_at file line col": code inlined from a header;
        // the call site in the program's own source is what a message should name.
        while (is(",")) {
          ++p_;
          if (peek().text == "inlined_at") {
            ++p_;
            inl_file = std::atoi(take().text.c_str());
            inl_line = std::atoi(take().text.c_str());
          }
          while (!at_end() && peek().line == t.line && !is(",") && !is(";") &&
                 !(peek().kind == Tok::ident && peek().text[0] == '.' && peek().text == ".loc"))
            ++p_;
        }
        continue;
      }
      if (t.kind == Tok::ident && (t.text == ".pragma")) { skip_statement(); continue; }
      if (t.kind == Tok::ident && t.text == ".reg") {
        ++p_;
        Type ty = Type::none;
        int vec = 1;
        for (;;) {
          std::string d = peek().text;
          if (d == ".v2" || d == ".v4") { vec = d[2] - '0'; ++p_; continue; }
          if (d == ".align") { p_ += 2; continue; }
          ty = parse_type(d.substr(1));
          if (ty == Type::none) fail("unknown register type " + d);
          ++p_;
          break;
        }
        (void)vec;
        for (;;) {
          PStmt s;
          s.kind = PStmt::regdecl;
          s.type = ty;
          s.name = take().text;
          if (is("<")) {
            ++p_;
            s.count = std::atoi(take().text.c_str());
            expect(">");
          }
          f.body.push_back(s);
          if (!is(",")) break;
          ++p_;
        }
        expect(";");
        continue;
      }
      if (t.kind == Tok::ident && (t.text == ".local" || t.text == ".shared" || t.text == ".param" ||
                                   t.text == ".global" || t.text == ".const")) {
        PStmt s;
        s.kind = PStmt::vardecl;
        s.var = variable(false);
        f.body.push_back(s);
        continue;
      }
      // A label?
      if (t.kind == Tok::ident && peek(1).text == ":") {
        PStmt s;
        s.kind = PStmt::label;
        s.name = t.text;
        p_ += 2;
        f.body.push_back(s);
        continue;
      }
      PStmt s;
      s.kind = PStmt::instr;
      s.in = instruction();
      s.in.file = loc_file;
      s.in.line = loc_line;
      s.in.inlined_file = inl_file;
      s.in.inlined_line = inl_line;
      f.body.push_back(std::move(s));
    }
  }

  PInstr instruction() {
    PInstr in;
    size_t start = p_;
    if (is("@")) {
      ++p_;
      if (is("!")) { in.guard_neg = true; ++p_; }
      in.guard = take().text;
    }
    Tok op = take();
    if (op.kind != Tok::ident) fail("expected an instruction, found '" + op.text + "'");
    auto parts = split_dots(op.text);
    in.opcode = parts[0];
    in.mods.assign(parts.begin() + 1, parts.end());
    while (!is(";")) {
      in.ops.push_back(operand());
      if (is(",")) ++p_;
      else if (!is(";")) fail("expected ',' or ';' after an operand of " + op.text);
    }
    ++p_;
    for (size_t i = start; i < p_; ++i) {
      const std::string& k = toks_[i].text;
      const bool tight = k == "," || k == ";" || k == "]" || k == ")" || k == "}" || k == "|" ||
                         k == "+" || (i > start && (toks_[i - 1].text == "[" ||
                         toks_[i - 1].text == "(" || toks_[i - 1].text == "{" ||
                         toks_[i - 1].text == "@" || toks_[i - 1].text == "!" ||
                         toks_[i - 1].text == "|" || toks_[i - 1].text == "+" ||
                         toks_[i - 1].text == "-"));
      if (!in.text.empty() && !tight) in.text += ' ';
      in.text += k;
    }
    return in;
  }

  PTok operand() {
    PTok o;
    if (is("{")) {
      ++p_;
      o.kind = PTok::vec;
      while (!is("}")) {
        o.elems.push_back(operand());
        if (is(",")) ++p_;
      }
      ++p_;
      return o;
    }
    if (is("[")) {
      ++p_;
      o.kind = PTok::addr;
      if (peek().kind == Tok::ident) {
        PTok base;
        base.kind = PTok::name;
        base.text = take().text;
        o.elems.push_back(base);
      } else if (peek().kind == Tok::number) {
        int64_t v; bool f;
        parse_number(take().text, v, f);
        o.ival = v;
      }
      while (is("+") || is("-")) {
        bool neg = is("-");
        ++p_;
        if (is("-")) { neg = !neg; ++p_; }
        int64_t v; bool f;
        parse_number(take().text, v, f);
        o.ival += neg ? -v : v;
      }
      if (is(",")) {  // texture and surface operands: [handle, {coordinates}]
        ++p_;
        o.elems.push_back(operand());
      }
      expect("]");
      return o;
    }
    if (is("(")) {  // call argument lists: (a, b)
      ++p_;
      o.kind = PTok::vec;
      while (!is(")")) {
        o.elems.push_back(operand());
        if (is(",")) ++p_;
      }
      ++p_;
      return o;
    }
    bool neg = false;
    if (is("!")) { ++p_; o.neg = true; }
    if (is("-")) { ++p_; neg = true; }
    const Tok t = take();
    if (t.kind == Tok::number) {
      bool f;
      parse_number(t.text, o.ival, f);
      o.kind = f ? PTok::fimm : PTok::imm;
      o.text = t.text;
      if (neg) {
        if (!f) o.ival = -o.ival;
        else if (t.text.size() > 1 && (t.text[1] == 'f' || t.text[1] == 'F')) o.ival ^= 0x80000000ll;
        else o.ival ^= INT64_MIN;
      }
    } else if (t.kind == Tok::ident) {
      o.text = t.text;
      o.kind = t.text == "_" ? PTok::sink : (t.text[0] == '%' ? PTok::reg : PTok::name);
      if (neg) fail("negated name operand");
    } else {
      fail("bad operand '" + t.text + "'");
    }
    if (is("|")) {  // "%r|%p": a value and a predicate destination
      ++p_;
      PTok pair;
      pair.kind = PTok::pair;
      pair.elems.push_back(o);
      pair.elems.push_back(operand());
      return pair;
    }
    if (o.kind == PTok::name && is("+") && peek(1).kind == Tok::number) {  // sym+off
      ++p_;
      int64_t v; bool f;
      parse_number(take().text, v, f);
      o.ival = v;
    }
    return o;
  }

  std::vector<Tok> toks_;
  size_t p_ = 0;
};

}  // namespace

PModule parse_ptx(const std::string& text) { return Parser(text).module(); }

}  // namespace emu
