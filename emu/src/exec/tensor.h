// emu::tensor - the data movement and arithmetic of PTX's warp-level matrix instructions
// (ldmatrix, mma.sync, wmma.load / wmma.mma / wmma.store) as pure functions over the 32 lanes'
// register values of one warp. Nothing here knows about the emulator's register file or memory:
// the caller gathers each lane's operand registers into a WarpFrag, passes memory accesses in as
// callbacks, and scatters the resulting WarpFrag back.
//
// Register values are raw bit patterns in the low bits of a 64-bit slot: a .f16x2 / .bf16x2
// register holds two 16-bit elements (the lower-indexed element in bits 0-15), a .b32 register of
// .s8 / .u8 / .e4m3 / .e5m2 elements holds four (the lowest-indexed in bits 0-7), an .f32, .tf32
// or .s32 register the 32-bit pattern, an .f64 register the 64-bit pattern. frag[lane][i] is the
// i-th register of the instruction's vector operand for that lane (i.e. the i-th name inside the
// braces of the PTX operand). Bits above a register's width are ignored on input and zero on
// output.
//
// Fragment layouts. Every layout here, the ISA's mma layouts and this emulator's wmma layouts
// alike, is one scheme (g = lane / 4 is the ISA's groupID, t = lane % 4 its threadID_in_group,
// w = elements per .b32 register: 4 for 8-bit, 2 for 16-bit, 1 for 32- and 64-bit types):
//   A (M x K): register r holds the block of 8 rows x 4w columns numbered r, the blocks counted
//              down the columns first (block r is at block row r % (M/8), block column r / (M/8));
//              within it, lane holds row g, columns w*t .. w*t + w-1 (element e at column w*t + e).
//   B (K x N): register r holds the block of 4w rows x 8 columns numbered r, likewise counted
//              down the columns (block row r % (K/(4w)), block column r / (K/(4w))); within it,
//              lane holds column g, rows w*t .. w*t + w-1.
//   C, D (M x N), 32- and 64-bit elements: registers 2j and 2j+1 hold the 8x8 block j (block row
//              j % (M/8), block column j / (M/8)), row g, columns 2t and 2t+1.
//   C, D f16: element e of the accumulator (register e/2, half e%2) is the matrix element that
//              register e of an f32 accumulator holds.
// For mma this reproduces, register by register, the ISA's "Matrix Fragments for mma.m8n8k4
// (.f64)", "mma.m8n8k16", "mma.m16n8k4", "mma.m16n8k8", "mma.m16n8k16 (floating point and
// integer)" and "mma.m16n8k32" sections (the unit tests check it against the ISA's own formulas).
// The fp8 types (.e4m3, .e5m2) share the 8-bit integer layouts: the ISA lists them in the same
// tables as .s8 / .u8 for m16n8k16 and m16n8k32.
// wmma's layout is unspecified by the ISA; this scheme is this emulator's choice for it. Where
// nvcc gives a wmma operand more registers than it has distinct blocks (f16 A and B of some
// shapes), register r holds a copy of register r % blocks: wmma.load writes every copy,
// wmma.mma reads the first. Elementwise operations on fragments (fill, scale, convert) work
// whatever element is where.
//
// Arithmetic (mma and wmma.mma):
//   f16 / bf16 / tf32 multiplicands: every product a*b is exact in double (at most 11+11
// significant bits); the products of one output element and its C value are summed in double
// (C first, then k = 0, 1, ...) and the sum is rounded once, to nearest even, to the destination
// type (f32, or f16 directly from double, without an intermediate f32). e4m3 / e5m2 multiplicands
// (e4m3: bias 7, no infinity, S.1111.111 the only NaN, largest 448; e5m2: bias 15, IEEE-like with
// infinities; subnormals of both are used as they are) are treated the same way: their products
// have at most 4+4 significant bits. That is this emulator's choice: the PTX ISA does not
// specify the accumulation order or the internal precision (for fp8: "at least single
// precision"), and tensor cores differ in the last bits (they truncate partial sums), so results
// can differ from hardware by a few units in the last place of the f32 result (more for f16
// accumulators); the GEMM tolerances used by the days allow for that. NaN results are written
// as the canonical NaN (0x7fffffff for f32, 0x7fff for f16).
//   tf32 operands: the low 13 bits of each .b32 register are ignored, i.e. an f32 value that is
// not a tf32 value is truncated toward zero to one. The ISA says so for wgmma ("will truncate
// lower 13 bits of the 32-bit input data") and leaves mma / wmma silent; a value made by
// cvt.rna.tf32.f32 (wmma::__float_to_tf32) has those bits zero already, so only programs that
// skip the conversion see the difference.
//   f64: as the ISA says, each multiply-add is an .f64 fused multiply-add in the instruction's
// rounding mode (.rn unless .rz / .rm / .rp), applied as d = fma(a_k, b_k, d) for k = 0, 1, ...
// starting from d = c (the order is ours; inputs whose sums are exact give the same result in
// every order). NaN results are the canonical 0x7fffffffffffffff.
//   .s8 / .u8 multiplicands (either signedness for A and B independently in mma; the same for
// both in wmma, as the ISA requires) with .s32 accumulators: exact integer products and sums;
// the final value wraps modulo 2^32, or with .satfinite is clamped to [INT32_MIN, INT32_MAX] (the
// ISA: "on overflow, the accumulated value is limited to the range MIN_INT32..MAX_INT32").
//   The accumulation model (Accum below) can replace the exact sum of floating-point multiplicands
// with .f32 results by a model of the hardware's truncating alignment; exact is the default.
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
using LaneRegs = std::array<uint64_t, kMaxFragRegs>;
using WarpFrag = std::array<LaneRegs, kWarpSize>;

using Addr = uint64_t;
// Memory callbacks. size is 1, 2, 4 or 8 (bytes); values are little-endian, in the low bits. A
// callback may throw (for example on an out-of-bounds address); the exception propagates.
using ReadFn = std::function<uint64_t(Addr addr, unsigned size)>;
using WriteFn = std::function<void(Addr addr, unsigned size, uint64_t value)>;

class TensorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ElemType { F16, BF16, TF32, F32, S8, U8, S32, F64, E4M3, E5M2 };
const char* to_string(ElemType t);
unsigned elem_bytes(ElemType t);

// The rounding modifier of f64 mma / wmma.mma (.rn when none is given).
enum class Rnd { RN, RZ, RM, RP };

// How mma / wmma.mma accumulate floating-point multiplicands (f16, bf16, tf32, e4m3, e5m2) into an
// .f32 result: D[i][j] from the addends C[i][j] and A[i][k] * B[k][j] (k = 0 .. K-1), every
// product exact.
//   Exact (the default): the addends are summed in double and the sum rounded once, to nearest
//     even, to f32 (see "Arithmetic" above).
//   Truncate, bits = N (1 <= N <= 63): a model of the tensor cores' fixed-point accumulation.
//     Let 2^e <= |x| < 2^(e+1) for the largest-magnitude addend x. Every addend is cut to the bits
//     of weight 2^(e-N+1) and above (its magnitude truncated: round toward zero), so the largest
//     addend keeps N significant bits and an addend below 2^(e-N+1) vanishes; the cut addends are
//     summed exactly and the sum converted to f32 rounding toward zero (beyond the largest f32:
//     the largest f32). A NaN addend, or infinities of both signs, give NaN; otherwise an infinite
//     addend gives that infinity. A zero sum is +0, or -0 when every addend is a zero of sign -.
//     Fasi et al. 2021 ("Numerical behavior of NVIDIA tensor cores") measured products that are
//     exact and aligned to the largest exponent with truncation; the DeepSeek-V3 report puts the
//     accumulation of fp8 products on Hopper at about 14 bits. It is a model, not a bit-accurate
//     reproduction of any GPU. Results of type .f16, .f64 and integer results are unaffected.
struct Accum {
  enum class Mode { Exact, Truncate };
  Mode mode = Mode::Exact;
  int bits = 0;  // Truncate: N
};
// Parses "exact" or "truncate:N" (N a decimal integer, 1 <= N <= 63). Returns an empty string and
// sets *out on success, otherwise why the text is not a model (and leaves *out unchanged).
std::string parse_accum(const std::string& text, Accum* out);

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

// ldmatrix in two steps, for callers that read the rows themselves. ldmatrix_check throws the
// TensorError ldmatrix throws before its first read (a bad .num, a misaligned row address);
// ldmatrix_rows then distributes the rows: row[8*j + r][c] is element c of row r of matrix j.
// out_rows[j][lane] receives what out[lane][j] receives from ldmatrix.
void ldmatrix_check(int num, const std::array<Addr, kWarpSize>& row_addr);
void ldmatrix_rows(int num, bool trans, const uint16_t (*row)[8], uint64_t* const* out_rows);

// ---------------------------------------------------------------------------------------------
// mma.sync.aligned.shape.row.col{.satfinite}{.rnd}.dtype.atype.btype.ctype d, a, b, c
//
// Supported (as in the PTX ISA):
//   m16n8k16: a=b f16, c and d each f16 or f32 | a=b bf16, c=d f32 | a,b each s8/u8, c=d s32 |
//             a,b each e4m3/e5m2, c=d f16 or f32
//   m16n8k8:  a=b f16, c and d each f16 or f32 | a=b bf16 or tf32, c=d f32
//   m16n8k4:  a=b tf32, c=d f32
//   m16n8k32: a,b each s8/u8, c=d s32 | a,b each e4m3/e5m2, c=d f16 or f32
//             (fp8: the ISA's ".f8type" forms, sm_89+; ptxas refuses a .ctype other than .dtype
//             for them, and so does this emulator. The sm_120 ".kind::f8f6f4" forms are not
//             supported.)
//   m8n8k16:  a,b each s8/u8, c=d s32
//   m8n8k4:   a=b=c=d f64 (.rn/.rz/.rm/.rp); the f16 form of m8n8k4 (four products per warp,
//             sm_70's layout) is not supported
// .satfinite only with integer types. Registers per lane (the ISA's fragment tables):
//   A: m16n8k16 f16/bf16 4, 8-bit 2 | m16n8k8 f16/bf16 2, tf32 4 | m16n8k4 tf32 2 |
//      m16n8k32 4 | m8n8k16 1 | m8n8k4 f64 1
//   B: m16n8k16 f16/bf16 2, 8-bit 1 | m16n8k8 f16/bf16 1, tf32 2 | m16n8k4 1 | m16n8k32 2 |
//      m8n8k16 1 | m8n8k4 1
//   C, D: m16n8 f32/s32 4, f16 2 | m8n8 s32/f64 2
enum class MmaShape { M16N8K8, M16N8K16, M16N8K4, M16N8K32, M8N8K16, M8N8K4 };
const char* to_string(MmaShape s);

struct MmaDesc {
  MmaShape shape = MmaShape::M16N8K16;
  ElemType a = ElemType::F16;
  ElemType b = ElemType::F16;
  ElemType c = ElemType::F32;
  ElemType d = ElemType::F32;
  bool satfinite = false;
  Rnd rnd = Rnd::RN;
  Accum accum;  // floating-point multiplicands with an .f32 result
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

// A fragment seen in place: register i of lane L is reg[i][L * stride] (a WarpFrag is stride
// kMaxFragRegs; the emulator's register file, one row of 32 lanes per register, stride 1). The
// functions taking views read all of a, b and c before they write d, so any of them may alias d.
struct FragIn {
  const uint64_t* reg[kMaxFragRegs];
  int stride;
};
struct FragOut {
  uint64_t* reg[kMaxFragRegs];
  int stride;
};
void mma_sync(const MmaDesc& desc, const FragIn& a, const FragIn& b, const FragIn& c,
              const FragOut& d);

// ---------------------------------------------------------------------------------------------
// wmma.{load.a,load.b,load.c,mma,store.d}.sync.aligned ... .shape
//
// Shapes and element types (as in the PTX ISA; A, B element type / C, D element type):
//   m16n16k16, m32n8k16, m8n32k16: f16 / f16 or f32 | bf16 / f32 | s8 or u8 / s32
//   m16n16k8: tf32 / f32
//   m8n8k4:   f64 / f64
// The layout is the scheme described at the top of this file (A is M x K, B is K x N, C and D
// are M x N). Registers per lane, as nvcc emits them:
//   A: f16 8 | bf16 M*K/64 | s8/u8 M*K/128 | tf32 4 | f64 1
//   B: f16 8 | bf16 K*N/64 | s8/u8 K*N/128 | tf32 4 | f64 1
//   C, D: f32, s32 8 | f16 4 | f64 2
// Memory: element (row, col) of the matrix is at
//   row major: base + (row * stride + col) * elem_size
//   col major: base + (col * stride + row) * elem_size
// with stride in elements (the PTX default, when the instruction gives none, is the leading
// dimension: the column count for row major, the row count for col major; wmma_default_stride).
// As the CUDA programming guide requires of load/store_matrix_sync, base must be 32-byte
// aligned and stride * elem_size a multiple of 16 bytes, or of the fragment's size in bytes
// where that is smaller (the PTX ISA's rule: 4 bytes for the single-register 8-bit fragments);
// TensorError otherwise.
enum class WmmaShape { M16N16K16, M32N8K16, M8N32K16, M16N16K8, M8N8K4 };
const char* to_string(WmmaShape s);
enum class WmmaMatrix { A, B, C };  // C also stands for D (wmma.store.d)
enum class Layout { Row, Col };

struct RowCol {
  int row;
  int col;
};
RowCol wmma_dims(WmmaShape s, WmmaMatrix m);  // {rows, cols} of the operand
uint32_t wmma_default_stride(WmmaShape s, WmmaMatrix m, Layout layout);

int wmma_regs(WmmaShape s, WmmaMatrix m, ElemType t);                 // 0 when unsupported
unsigned wmma_fragment_bytes(WmmaShape s, WmmaMatrix m, ElemType t);  // 0 when unsupported

// The matrix element held by element `elem` (0 .. elements per register - 1) of register reg of
// lane `lane`. Registers that hold copies give the coordinates of the register they copy.
// Throws TensorError for an unsupported combination or an index out of range.
RowCol wmma_element(WmmaShape s, WmmaMatrix m, ElemType t, int lane, int reg, int elem);

// wmma.load.{a,b,c}.sync.aligned.{row,col}.shape{.ss}.type
void wmma_load(WmmaShape s, WmmaMatrix m, Layout layout, ElemType t, Addr base, uint32_t stride,
               const ReadFn& read, WarpFrag& out);

// wmma.store.d.sync.aligned.{row,col}.shape{.ss}.type
void wmma_store(WmmaShape s, Layout layout, ElemType t, Addr base, uint32_t stride,
                const WarpFrag& d, const WriteFn& write);

// wmma.mma.sync.aligned.alayout.blayout.shape{.rnd}.dtype.atype.btype.ctype{.satfinite}
// The alayout/blayout qualifiers only say how A and B were laid out in memory; the loads already
// put the fragments into the layout above, so they do not enter the computation. d may alias c.
struct WmmaDesc {
  WmmaShape shape = WmmaShape::M16N16K16;
  ElemType ab = ElemType::F16;  // atype == btype
  ElemType c = ElemType::F32;
  ElemType d = ElemType::F32;
  bool satfinite = false;  // integer only
  Rnd rnd = Rnd::RN;       // f64 only
  Accum accum;             // floating-point multiplicands with an .f32 result
};
std::string wmma_mma_unsupported_reason(const WmmaDesc& desc);
void wmma_mma(const WmmaDesc& desc, const WarpFrag& a, const WarpFrag& b, const WarpFrag& c,
              WarpFrag& d);
void wmma_mma(const WmmaDesc& desc, const FragIn& a, const FragIn& b, const FragIn& c,
              const FragOut& d);

// The m16n16k16 forms, as before the other shapes were added.
inline int wmma_regs(WmmaMatrix m, ElemType t) {
  return wmma_regs(WmmaShape::M16N16K16, m, t);
}
inline unsigned wmma_fragment_bytes(WmmaMatrix m, ElemType t) {
  return wmma_fragment_bytes(WmmaShape::M16N16K16, m, t);
}
inline RowCol wmma_element(WmmaMatrix m, ElemType t, int lane, int reg, int half) {
  return wmma_element(WmmaShape::M16N16K16, m, t, lane, reg, half);
}
inline void wmma_load(WmmaMatrix m, Layout layout, ElemType t, Addr base, uint32_t stride,
                      const ReadFn& read, WarpFrag& out) {
  wmma_load(WmmaShape::M16N16K16, m, layout, t, base, stride, read, out);
}
inline void wmma_store(Layout layout, ElemType t, Addr base, uint32_t stride, const WarpFrag& d,
                       const WriteFn& write) {
  wmma_store(WmmaShape::M16N16K16, layout, t, base, stride, d, write);
}
inline void wmma_mma(ElemType ab, ElemType ctype, ElemType dtype, const WarpFrag& a,
                     const WarpFrag& b, const WarpFrag& c, WarpFrag& d) {
  WmmaDesc desc;
  desc.ab = ab;
  desc.c = ctype;
  desc.d = dtype;
  wmma_mma(desc, a, b, c, d);
}

// ---------------------------------------------------------------------------------------------
// Scalar helpers used above, exposed for the emulator and the tests.
// Accum::Mode::Truncate for one .f32 result: the exact addends x[0..n) (C, when it is added, and
// the products) cut, summed and rounded as described at Accum; returns the f32 bits.
uint32_t truncate_accumulate_f32(const double* x, int n, int bits);
double f16_to_double(uint16_t bits);
double bf16_to_double(uint16_t bits);
// Rounds to nearest even, overflow to infinity, NaN to 0x7fff.
uint16_t double_to_f16(double v);
// Rounds to nearest even (one rounding), NaN to 0x7fffffff.
uint32_t double_to_f32_bits(double v);
double f32_bits_to_double(uint32_t bits);
// e4m3 / e5m2 (raw 8 bits) as a double, exactly; NaN as a quiet NaN, e5m2 infinities as such.
double e4m3_to_double(uint8_t bits);
double e5m2_to_double(uint8_t bits);

}  // namespace emu::tensor
