// emu::wgmma - the layouts of wgmma.mma_async (PTX ISA, "Asynchronous Warpgroup Level Matrix
// Multiply-Accumulate"): the register fragments of a warpgroup and the shared-memory matrix
// descriptor with its canonical layouts. Pure functions; exec/wgmma.cpp runs the instructions.
//
// Register fragments (warp w = 0..3 of the warpgroup, lane l, g = l / 4, t = l % 4):
//   D (and C): element i = 0 .. N/2 - 1 of a thread (register i for .f32 / .s32; for .f16
//     register i / 2, the lower half holding the even i) is at
//       row 16w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2t + i % 2.
//   A from registers (four .b32 registers, p elements each: 2 for f16/bf16 (K 16), 1 for tf32
//     (K 8), 4 for 8-bit types (K 32), the lowest-indexed element in the lowest bits): element e
//     of register r is at row 16w + g + 8 (r % 2), column (r / 2) K/2 + p t + e.
//
// Matrix descriptor (64 bits): bits 0-13 start address, 16-29 leading dimension byte offset
// (LBO), 32-45 stride dimension byte offset (SBO), each stored as (x & 0x3FFFF) >> 4; bits 49-51
// base offset; bits 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B).
//
// Canonical layouts (the ISA's "Canonical Layouts", in elements; T = 16 bytes / element size,
// c = swizzle bytes / 16, 1 without swizzle; mn is the row of A (M) or the column of B (N), k
// the index along K; LBO and SBO converted to elements):
//   K-major,  no swizzle: (mn%8) T + (mn/8) SBO + k%T + (k/T) LBO
//   K-major,  swizzled:   (mn%8) cT + (mn/8) SBO + k                       (LBO not used)
//   MN-major, no swizzle: mn%T + (mn/T) SBO + (k%8) T + (k/8) LBO
//   MN-major, swizzled:   mn%T + ((mn/T)%c) T + (mn/(cT)) LBO + (k%8) cT + (k/8) SBO
// The byte address start + offset is then swizzled as the ISA's swizzling modes define: bits
// [4, 4+b) are XORed with bits [7, 7+b), b = 1, 2, 3 for 32B, 64B, 128B (the 16-byte chunk within
// a 32/64/128-byte line XORed with the line index mod 2/4/8). The line index counts from the start
// of the repeating pattern (256, 512, 1024-byte aligned); a pattern that starts elsewhere is
// described by the base offset, (pattern start >> 7) & 7, which is subtracted from the line
// index.
#pragma once

#include <cstdint>

namespace emu::wgmma {

struct SmemDesc {
  uint32_t start = 0;  // bytes
  uint32_t lbo = 0;    // bytes
  uint32_t sbo = 0;    // bytes
  uint32_t base_offset = 0;
  uint32_t swizzle = 0;  // 0, 32, 64 or 128 (bytes)
};

inline SmemDesc decode_desc(uint64_t d) {
  SmemDesc s;
  s.start = uint32_t(d & 0x3FFF) << 4;
  s.lbo = uint32_t((d >> 16) & 0x3FFF) << 4;
  s.sbo = uint32_t((d >> 32) & 0x3FFF) << 4;
  s.base_offset = uint32_t((d >> 49) & 7);
  static const uint32_t modes[4] = {0, 128, 64, 32};
  s.swizzle = modes[(d >> 62) & 3];
  return s;
}

// The shared-memory byte address of element (mn, k) of an operand described by d.
inline uint32_t element_address(const SmemDesc& d, bool mn_major, uint32_t elem_bytes, uint32_t mn,
                                uint32_t k) {
  const uint32_t T = 16 / elem_bytes;
  const uint32_t c = d.swizzle ? d.swizzle / 16 : 1;
  uint64_t off;  // bytes
  if (!mn_major) {
    if (!d.swizzle)
      off = uint64_t((mn % 8) * T + k % T) * elem_bytes + (mn / 8) * uint64_t(d.sbo) + (k / T) * uint64_t(d.lbo);
    else
      off = uint64_t((mn % 8) * c * T + k) * elem_bytes + (mn / 8) * uint64_t(d.sbo);
  } else {
    if (!d.swizzle)
      off = uint64_t(mn % T + (k % 8) * T) * elem_bytes + (mn / T) * uint64_t(d.sbo) + (k / 8) * uint64_t(d.lbo);
    else
      off = uint64_t(mn % T + ((mn / T) % c) * T + (k % 8) * c * T) * elem_bytes +
            (mn / (c * T)) * uint64_t(d.lbo) + (k / 8) * uint64_t(d.sbo);
  }
  uint64_t a = d.start + off;
  if (d.swizzle) {
    const uint32_t bits = d.swizzle == 32 ? 1 : d.swizzle == 64 ? 2 : 3;
    const uint64_t mask = (1u << bits) - 1;
    const uint64_t line = ((a >> 7) - d.base_offset) & mask;
    a ^= line << 4;
  }
  return a > 0xFFFFFFFFull ? 0xFFFFFFFFu : uint32_t(a);
}

struct RowCol {
  int row, col;
};

// Element i of a thread's accumulator (the 32-bit element index; see above).
inline RowCol acc_coord(int warp, int lane, int i) {
  return {16 * warp + lane / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (lane % 4) + i % 2};
}

// Element e of A-fragment register r; k is the instruction's K, per the elements per register.
inline RowCol a_coord(int warp, int lane, int r, int e, int k, int per) {
  return {16 * warp + lane / 4 + 8 * (r % 2), (r / 2) * (k / 2) + per * (lane % 4) + e};
}

}  // namespace emu::wgmma
