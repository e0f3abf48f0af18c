// The emulator's core types, in the order data flows through them:
//   fatbinary -> PTX text -> parsed module (ptx/) -> decoded kernels -> launches on emulated SMs,
//   warps executing decoded instructions over their active lanes (exec/) -> memory with checks.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace emu {

// ---------------------------------------------------------------------------------------------
// Types and state spaces of PTX
enum class Type : uint8_t {
  none, pred,
  b8, b16, b32, b64, b128,
  u8, u16, u32, u64,
  s8, s16, s32, s64,
  f16, f16x2, bf16, bf16x2, tf32, f32, f64,
  e4m3x2, e5m2x2,
};
int type_bytes(Type t);
bool type_signed(Type t);
bool type_float(Type t);  // f16 .. f64
Type parse_type(const std::string& s);  // "u32" -> Type::u32, unknown -> none
const char* type_name(Type t);

enum class Space : uint8_t { generic, global, shared, local, param, konst };

// Generic addresses of the shared and local windows. Both lie outside the canonical x86-64
// address range, so no host (global) allocation can ever alias them.
constexpr uint64_t kSharedWindow = 0xAA00'0000'0000'0000ull;
constexpr uint64_t kLocalWindow = 0xBB00'0000'0000'0000ull;
constexpr uint64_t kWindowSize = 1ull << 32;

// ---------------------------------------------------------------------------------------------
// Parsed PTX (a faithful, untyped reading of the text; ptx/parser.cpp)
struct PTok {  // one operand as written
  enum Kind : uint8_t { reg, imm, fimm, name, vec, addr, pair, sink } kind = reg;
  std::string text;         // register / symbol / label name
  bool neg = false;         // "!%p"
  int64_t ival = 0;         // immediate bits; address offset
  std::vector<PTok> elems;  // vec: elements; pair: the two halves of "a|b"; addr: base (0 or 1)
};

struct PInstr {
  std::string guard;  // predicate register or ""
  bool guard_neg = false;
  std::string opcode;                 // "ld"
  std::vector<std::string> mods;      // {"global", "nc", "v4", "f32"}
  std::vector<PTok> ops;
  int line = 0, file = 0;             // from the last .loc
  int inlined_line = 0, inlined_file = 0;  // its "inlined_at" call site, if any
  std::string text;                   // the statement as written (for messages)
};

struct PVar {  // .global/.shared/.const/.local variable
  Space space = Space::global;
  std::string name;
  Type type = Type::b8;
  int vec = 1;
  uint64_t align = 1;
  uint64_t count = 1;     // elements (product of the dimensions); 0 for "[]" (extern shared)
  bool is_extern = false;
  std::vector<uint8_t> init;  // initial bytes (empty: zero)
  // Initializers that name other symbols (generic addresses of globals), as offset -> name.
  std::vector<std::pair<uint64_t, std::string>> init_symbols;
  uint64_t bytes() const { return uint64_t(type_bytes(type)) * vec * count; }
};

struct PParam {
  std::string name;
  Type type = Type::b32;
  uint64_t align = 0, bytes = 0;
};

// A body statement: an instruction, a label, a register declaration, or a scope brace.
struct PStmt {
  enum Kind : uint8_t { instr, label, regdecl, open, close, vardecl } kind = instr;
  PInstr in;
  std::string name;  // label / register base name
  Type type = Type::none;
  int count = -1;    // "%r<10>" -> 10; a plain name -> -1
  PVar var;          // body-scope .local/.shared/.param variables
};

struct PFunc {
  bool entry = false;
  bool defined = false;
  std::string name;
  std::vector<PParam> params, rets;
  std::vector<PStmt> body;
  int maxntid[3] = {0, 0, 0}, reqntid[3] = {0, 0, 0};
  int reqnctapercluster[3] = {0, 0, 0};  // .reqnctapercluster (__cluster_dims__)
  bool explicitcluster = false;          // .explicitcluster
  int maxclusterrank = 0;                // .maxclusterrank
};

struct PModule {
  int version_major = 0, version_minor = 0;
  int target_sm = 0;
  std::vector<PVar> vars;
  std::vector<PFunc> funcs;
  std::map<int, std::string> files;
};
PModule parse_ptx(const std::string& text);  // throws std::runtime_error with the line

// ---------------------------------------------------------------------------------------------
// Decoded code (exec/decode.cpp)
enum class OK : uint8_t { none, reg, imm, sreg, vec, sink };
struct Operand {
  OK kind = OK::none;
  bool neg = false;
  uint8_t count = 0;   // vec: elements
  bool addr32 = false; // address [reg+imm] with a 32-bit reg: the sum wraps at 32 bits, as
                       // the ISA's 32-bit address arithmetic does (a shared window offset)
  uint32_t reg = 0;    // reg: index; vec: first index into Kernel::vec_ops; sreg: id
  uint64_t imm = 0;    // imm bits
};

enum SReg : uint32_t {
  sr_tid_x, sr_tid_y, sr_tid_z, sr_ntid_x, sr_ntid_y, sr_ntid_z, sr_ctaid_x, sr_ctaid_y,
  sr_ctaid_z, sr_nctaid_x, sr_nctaid_y, sr_nctaid_z, sr_laneid, sr_warpid, sr_nwarpid, sr_smid,
  sr_nsmid, sr_lanemask_eq, sr_lanemask_le, sr_lanemask_lt, sr_lanemask_ge, sr_lanemask_gt,
  sr_clock, sr_clock64, sr_globaltimer, sr_envreg0, sr_gridid = sr_envreg0 + 32,
  sr_dynamic_smem_size, sr_total_smem_size, sr_clusterid,
  // Clusters (exec/cluster.cpp): the first of them is sr_cluster_ctarank.
  sr_cluster_ctarank, sr_cluster_nctarank, sr_cluster_ctaid_x, sr_cluster_ctaid_y,
  sr_cluster_ctaid_z, sr_cluster_nctaid_x, sr_cluster_nctaid_y, sr_cluster_nctaid_z,
  sr_clusterid_x, sr_clusterid_y, sr_clusterid_z, sr_nclusterid_x, sr_nclusterid_y,
  sr_nclusterid_z, sr_is_explicit_cluster, sr_count
};

struct Exec;
struct Inst;
using Handler = void (*)(Exec&, const Inst&, uint32_t mask);

// What the scheduler must do with an instruction beyond calling its handler.
enum class Ctl : uint8_t { normal, bra, exit, bar, warpsync, collective, call, ret, trap, wait, cluster };

// Inst::op_flags: the registers an instruction writes, as the debugger shows them.
enum : uint8_t {
  kOpNoDest = 1,  // o[0] is not a destination (stores, barriers, ...)
  kOpDest4 = 2,   // o[4], when a register, is one as well (setp's second predicate)
  kOpDest5 = 4,   // o[5], when a register, is one as well (shfl's and match's predicate)
};

struct Inst {
  Handler fn = nullptr;
  Ctl ctl = Ctl::normal;
  Type type = Type::none, type2 = Type::none;
  Space space = Space::generic;
  uint8_t nops = 0;
  uint8_t vec = 1;
  uint32_t flags = 0;        // instruction-family specific modifier bits
  int32_t guard = -1;        // predicate register, -1 for none
  bool guard_neg = false;
  Operand o[6];
  uint32_t target = 0;       // branch target pc / callee index
  uint32_t aux = 0;          // family specific
  uint8_t member_op = 0xFF;  // collectives: operand holding the member mask (0xFF: the active lanes)
  uint8_t metric = 0;        // what the launch metrics count it as (exec/metrics.h)
  int32_t src = -1;          // index into Kernel::source (for messages)
  // From the decoder's opcode table (exec/decode.cpp), for the checks and the debugger:
  uint8_t san_class = 0;     // what the undefined-value check does with it (san::OpClass)
  uint8_t op_flags = 0;      // kOpNoDest, kOpDest4, kOpDest5
};

struct SourceRef {
  std::string text;
  int file = 0, line = 0;
  int inlined_file = 0, inlined_line = 0;
};

struct GlobalVar {
  std::string name;
  Space space = Space::global;
  uint8_t* storage = nullptr;
  uint64_t bytes = 0;
};

struct Module;

// A call of a .func: the caller's staged argument and return slots, the callee's, in the
// local memory of the calling thread.
struct CallSite {
  std::string callee;
  std::vector<uint32_t> arg_slots, param_slots, sizes;
  int64_t ret_slot = -1, callee_ret_slot = -1;
  uint32_t ret_size = 0;
  uint32_t pc = 0;
  uint32_t reg_begin = 0, reg_end = 0, local_begin = 0, local_end = 0;  // the callee's
};

struct Kernel {
  std::string name;
  std::vector<CallSite> calls;
  Module* module = nullptr;
  std::vector<Inst> code;
  std::vector<Operand> vec_ops;
  std::vector<SourceRef> source;
  uint32_t nregs = 0;
  std::vector<std::string> reg_names;
  uint32_t param_bytes = 0;
  std::vector<uint32_t> param_offsets, param_sizes;
  uint32_t static_smem = 0;   // bytes of .shared variables (module and function scope)
  uint32_t smem_align = 16;   // alignment of the dynamic (extern) window after the static part
  uint32_t local_bytes = 0;   // per thread
  int maxntid = 0, reqntid = 0;
  // From the program's SASS for the emulated architecture (ptxas's EIATTR_REGCOUNT and
  // EIATTR_FRAME_SIZE); regs -1: the program has no SASS for it (the PTX names virtual registers).
  int regs = -1;
  uint32_t sass_frame_bytes = 0;
  bool uses_call = false;
  // Clusters: the dimensions the PTX requires (.reqnctapercluster; 0: none), whether it must be
  // launched as a cluster (.explicitcluster), and whether its code uses cluster features.
  uint32_t cluster_dims[3] = {0, 0, 0};
  bool explicit_cluster = false;
  int max_cluster_rank = 0;
  bool uses_cluster = false;
  // Functions (.func) are decoded into `code` after the entry; calls jump to them.
  std::map<std::string, uint32_t> func_entry;
  // Each function's parameter slots and return slot (-1: none) in local memory, and the
  // registers and local bytes it owns (saved around each call, so recursion works).
  struct FuncInfo {
    std::vector<uint32_t> params;
    int64_t ret = -1;
    uint32_t reg_begin = 0, reg_end = 0, local_begin = 0, local_end = 0;
  };
  std::map<std::string, FuncInfo> funcs;
};

struct Module {
  PModule parsed;
  std::string ptx;
  std::vector<GlobalVar> vars;
  std::map<std::string, size_t> var_index;
  std::map<std::string, std::unique_ptr<Kernel>> kernels;
  Kernel* kernel(const std::string& name);  // decodes on first use
};

// ---------------------------------------------------------------------------------------------
// Faults: thrown by instruction handlers, caught by the launch, turned into a sticky error.
struct Fault {
  int error;              // cudaError_t value
  std::string message;
  uint64_t address = 0;
  int lane = -1;
};

}  // namespace emu
