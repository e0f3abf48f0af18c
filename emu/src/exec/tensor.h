// emu::tensor - the data movement and arithmetic of PTX's warp-level matrix instructions
// (ldmatrix, mma.sync, wmma.load / wmma.mma / wmma.store) as pure functions over the 32 lanes'
// register values of one warp. Nothing here knows about the emulator's register file or memory:
// the caller gathers each lane's operand registers into a WarpFrag, passes memory accesses in as
// callbacks, and scatters the resulting WarpFrag back.
//
// Register values are raw 32-bit patterns: a .f16x2 / .bf16x2 register holds two 16-bit elements
// (the lower-indexed element in bits 0-15), an .f32 or .tf32 register holds the IEEE single
// pattern. frag[lane][i] is the i-th register of the instruction's vector operand for that lane
// (i.e. the i-th name inside the braces of the PTX operand).
//
// Arithmetic (mma and wmma.mma): every product a*b of two f16 / bf16 / tf32 values is exact in
// double (at most 11+11 significant bits); the products of one output element and its C value
// are summed in double (C first, then k = 0, 1, ...) and the sum is rounded once, to nearest even,
// to the destination type (f32, or f16 directly from double, without an intermediate f32).
// That is this emulator's choice: the PTX ISA does not specify the accumulation order or the
// internal precision, and tensor cores differ in the last bits (they truncate partial sums), so
// results can differ from hardware by a few units in the last place of the f32 result (more for
// f16 accumulators); the GEMM tolerances used by the days allow for that. NaN results are written
// as the canonical NaN (0x7fffffff for f32, 0x7fff for f16). tf32 operands: the low 13 bits of
// each .b32 register are ignored (a value made by cvt.rna.tf32.f32 has them zero already).
//
// Errors (an unsupported type combination, a misaligned address) throw emu::tensor::TensorError;
// exceptions thrown by the caller's memory callbacks propagate unchanged. Functions write their
// output only after every read has succeeded.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace emu::tensor {

constexpr int kWarpSize = 32;
// The largest number of registers one operand of the instructions below takes per lane.
constexpr int kMaxFragRegs = 8;

// frag[lane][i]: register i of the operand, for each of the 32 lanes. Only the first
// *_regs(...) entries of each lane are read or written; the rest are left untouched on output.
using LaneRegs = std::array<uint32_t, kMaxFragRegs>;
using WarpFrag = std::array<LaneRegs, kWarpSize>;

using Addr = uint64_t;
// Memory callbacks. size is 2 or 4 (bytes); values are little-endian, in the low bits. A callback
// may throw (for example on an out-of-bounds address); the exception propagates to the caller.
using ReadFn = std::function<uint32_t(Addr addr, unsigned size)>;
using WriteFn = std::function<void(Addr addr, unsigned size, uint32_t value)>;

class TensorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ElemType { F16, BF16, TF32, F32 };
const char* to_string(ElemType t);

// ---------------------------------------------------------------------------------------------
// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16
//
// row_addr[lane]: the address operand p of each lane. Lanes 8*j .. 8*j+7 give the start addresses
// of rows 0..7 of matrix j (j < num); the other lanes' addresses are ignored and never read.
// Each row is 8 b16 elements (16 bytes) and must be 16-byte aligned (TensorError otherwise).
// Element c of row r of matrix j is read16 at row_addr[8*j + r] + 2*c, through read(addr, 2).
//
// Result: out[lane][j] for j < num. Without .trans, lane L holds row L/4, columns 2*(L%4) and
// 2*(L%4)+1 of matrix j (lower column in the low half). With .trans, lane L holds the elements at
// rows 2*(L%4) and 2*(L%4)+1 of column L/4 of the matrix as stored (lower row in the low half),
// i.e. the non-.trans fragment of the transposed matrix.
void ldmatrix(int num, bool trans, const std::array<Addr, kWarpSize>& row_addr, const ReadFn& read,
              WarpFrag& out);

// ---------------------------------------------------------------------------------------------
// mma.sync.aligned.{m16n8k8,m16n8k16}.row.col.dtype.atype.btype.ctype d, a, b, c
//
// Supported (as in the PTX ISA for these shapes):
//   m16n8k16: atype=btype f16,  ctype, dtype each f16 or f32
//             atype=btype bf16, ctype=dtype=f32
//   m16n8k8:  atype=btype f16,  ctype, dtype each f16 or f32
//             atype=btype bf16 or tf32, ctype=dtype=f32
// Registers per lane (fragment layouts exactly as in the ISA's "Matrix Fragments for mma.m16n8k8
// / mma.m16n8k16 with floating point type"):
//   A: m16n8k16 f16/bf16: 4 (f16x2) | m16n8k8 f16/bf16: 2 (f16x2) | m16n8k8 tf32: 4 (b32)
//   B: m16n8k16 f16/bf16: 2         | m16n8k8 f16/bf16: 1         | m16n8k8 tf32: 2
//   C, D: f32: 4 | f16: 2 (f16x2)
enum class MmaShape { M16N8K8, M16N8K16 };

struct MmaDesc {
  MmaShape shape = MmaShape::M16N8K16;
  ElemType ab = ElemType::F16;  // atype == btype
  ElemType c = ElemType::F32;
  ElemType d = ElemType::F32;
};

// Empty when supported, otherwise why not.
std::string mma_unsupported_reason(const MmaDesc& desc);
int mma_regs_a(const MmaDesc& desc);
int mma_regs_b(const MmaDesc& desc);
int mma_regs_c(const MmaDesc& desc);
int mma_regs_d(const MmaDesc& desc);

// d may alias c (the usual accumulate-in-place form). Throws TensorError when unsupported.
void mma_sync(const MmaDesc& desc, const WarpFrag& a, const WarpFrag& b, const WarpFrag& c,
              WarpFrag& d);

// ---------------------------------------------------------------------------------------------
// wmma.{load.a,load.b,load.c,mma,store.d}.sync.aligned ... .m16n16k16
//
// The ISA leaves the wmma fragment layout unspecified; this emulator's layout is built from
// the mma.m16n8k16 layouts (g = lane/4, t = lane%4; "h" is the half of an f16x2 register):
//   A (16x16, M x K), reg r in 0..3, half h:  row = g + 8*(r%2),         col = 2t + h + 8*(r/2)
//   B (16x16, K x N), reg r in 0..3, half h:  row = 2t + h + 8*(r%2),    col = g + 8*(r/2)
//   C/D f32, reg r in 0..7:                   row = g + 8*((r%4)/2),     col = 2t + r%2 + 8*(r/4)
//   C/D f16, reg r in 0..3, half h: the element of f32 register 2r+h (so element e of an f16
//            accumulator fragment is the same matrix element as element e of an f32 one, and
//            CUDA code converting one accumulator to the other element by element stays right).
// Every element of A, B, C, D is therefore held by exactly one lane, once, in registers 0..3
// (A, B) or in all of the accumulator's registers. nvcc gives .f16 A and B fragments 8 .b32
// registers per lane (512 halves for 256 elements): registers 4..7 of an f16 A/B fragment hold
// a second copy of registers 0..3 (wmma.load writes both; wmma.mma reads only 0..3). .bf16 A/B
// fragments are 4 registers, as nvcc emits them. Elementwise operations on fragments
// (fill, scale, convert) therefore work whatever element is where.
//
// Registers per lane: A, B: f16 8, bf16 4 | C, D: f32 8, f16 4.
// Memory: element (row, col) of the 16x16 matrix is at
//   row major: base + (row * stride + col) * elem_size
//   col major: base + (col * stride + row) * elem_size
// with stride in elements (the default PTX stride is 16; pass 16 when the instruction has none).
// As the CUDA programming guide requires of load/store_matrix_sync, base must be 32-byte
// aligned and stride * elem_size a multiple of 16 bytes; TensorError otherwise.
enum class WmmaMatrix { A, B, C };  // C also stands for D (wmma.store.d)
enum class Layout { Row, Col };

int wmma_regs(WmmaMatrix m, ElemType t);                 // 0 when unsupported
unsigned wmma_fragment_bytes(WmmaMatrix m, ElemType t);  // 0 when unsupported

// The matrix element held by register reg (and half `half`, for 16-bit element types; pass 0
// for f32) of lane `lane` in this emulator's layout. For f16 A/B registers 4..7 give the same
// coordinates as registers 0..3. Throws TensorError for an unsupported combination.
struct RowCol {
  int row;
  int col;
};
RowCol wmma_element(WmmaMatrix m, ElemType t, int lane, int reg, int half);

// wmma.load.{a,b,c}.sync.aligned.{row,col}.m16n16k16{.ss}.{f16,bf16,f32}
//   A, B: t = F16 or BF16; C: t = F16 or F32.
void wmma_load(WmmaMatrix m, Layout layout, ElemType t, Addr base, uint32_t stride,
               const ReadFn& read, WarpFrag& out);

// wmma.store.d.sync.aligned.{row,col}.m16n16k16{.ss}.{f16,f32}
void wmma_store(Layout layout, ElemType t, Addr base, uint32_t stride, const WarpFrag& d,
                const WriteFn& write);

// wmma.mma.sync.aligned.{row,col}.{row,col}.m16n16k16.dtype.ctype            (f16 A, B)
// wmma.mma.sync.aligned.{row,col}.{row,col}.m16n16k16.f32.bf16.bf16.f32      (bf16 A, B)
// The alayout/blayout qualifiers only say how A and B were laid out in memory; the loads already
// put the fragments into the layout above, so they do not enter the computation. ab is F16
// (ctype, dtype each F16 or F32) or BF16 (ctype = dtype = F32). d may alias c.
// .satfinite is not supported (the caller should reject it).
void wmma_mma(ElemType ab, ElemType ctype, ElemType dtype, const WarpFrag& a, const WarpFrag& b,
              const WarpFrag& c, WarpFrag& d);

// ---------------------------------------------------------------------------------------------
// Scalar helpers used above, exposed for the emulator and the tests.
double f16_to_double(uint16_t bits);
double bf16_to_double(uint16_t bits);
// Rounds to nearest even, overflow to infinity, NaN to 0x7fff.
uint16_t double_to_f16(double v);
// Rounds to nearest even (one rounding), NaN to 0x7fffffff.
uint32_t double_to_f32_bits(double v);
double f32_bits_to_double(uint32_t bits);

}  // namespace emu::tensor
