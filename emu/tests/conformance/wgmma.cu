// wgmma.mma_async against a CPU GEMM, for every shape and type family the days use: m64nNk16
// f16 (f16 and f32 accumulators) and bf16, m64nNk8 tf32, m64nNk32 e4m3/e5m2 (f16 and f32
// accumulators) and s8/u8 (s32, with and without .satfinite); A from shared memory through a
// matrix descriptor or from registers, B through a descriptor; every canonical shared-memory
// layout the ISA defines (K-major and, for f16/bf16, MN-major; no swizzle, 32B, 64B, 128B);
// scale-d 0 and 1, imm-scale-a/b of -1, several instructions chained on one accumulator (the
// descriptor's start address advanced along K), then wgmma.commit_group and wgmma.wait_group 0,
// after which one thread overwrites the operands without waiting for the others.
//
// Everything expected comes from the PTX ISA, computed here on the host:
//   - the shared-memory images are written from the canonical layouts ("Shared Memory Matrix
//     Layout", "Canonical Layouts": in elements, T = 16 bytes / element size, c = swizzle bytes /
//     16) followed by the swizzle of "Swizzling modes" (address bits [4, 4+b) XOR bits [7, 7+b));
//     the bytes no layout element occupies hold 0xFF (a NaN or -1), so a wrong address shows;
//   - the descriptor is the ISA's "Matrix Descriptor Format" (start, LBO, SBO as (x & 0x3FFFF)
//     >> 4; swizzle in bits 62-63: 1 128B, 2 64B, 3 32B);
//   - the register fragments are the ISA's figures for the accumulator D and for A: warp w of the
//     warpgroup holds rows 16w .. 16w+15; lane l, g = l/4, t = l%4: accumulator element i at row
//     16w + g + 8((i/2)%2), column 8(i/4) + 2t + i%2; A register r, element e (p elements per
//     register) at row 16w + g + 8(r%2), column (r/2)K/2 + pt + e;
//   - D = (scale-d ? C : 0) + sum over k of (sa A[i][k]) (sb B[k][j]). The inputs are chosen so
//     that every sum is exact in the accumulator type, whatever the order or internal precision,
//     so the comparison is bit-exact on the emulator and on a GPU alike; tf32 inputs carry junk in
//     their low 13 bits, which the ISA says wgmma ignores.
// Under the emulator (found through dlsym, as conf_metrics does) each launch's metrics must also
// count the instructions (one per warpgroup) and their 2 M N K operations.
// --plant changes one expected element (and the expected metrics) of every case: every case must
// then fail (the program exits 0 only if they all do).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <dlfcn.h>

#include "conf_common.h"
#include "gpu100_emu_metrics.h"

namespace {

// ---- the wgmma forms used (one struct per instruction form; run() issues one instruction) ----
template <int SA, int SB, int TA, int TB>
struct F32F16_N8 {
  static constexpr int N = 8, K = 16, R = 4;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, %7, %8, %9, %10;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TA), "n"(TB));
  }
};

template <int SA, int SB, int TA, int TB>
struct F32F16_N16 {
  static constexpr int N = 16, K = 16, R = 8;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\nwgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, %11, %12, %13, %14;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TA), "n"(TB));
  }
};

template <int SA, int SB, int TA, int TB>
struct F32F16_N24 {
  static constexpr int N = 24, K = 16, R = 12;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %14, 0;\nwgmma.mma_async.sync.aligned.m64n24k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, %12, %13, p, %15, %16, %17, %18;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TA), "n"(TB));
  }
};

template <int SA, int SB, int TA, int TB>
struct F32F16_N64 {
  static constexpr int N = 64, K = 16, R = 32;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, %35, %36, %37, %38;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TA), "n"(TB));
  }
};

template <int SA, int SB, int TA, int TB>
struct F32F16_N256 {
  static constexpr int N = 256, K = 16, R = 128;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\nwgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, %131, %132, %133, %134;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]), "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]), "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]), "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TA), "n"(TB));
  }
};

template <int SA, int SB, int TB>
struct F32F16_N64_R {
  static constexpr int N = 64, K = 16, R = 32;
  static constexpr bool kARegs = true;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, %38, %39, %40;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TB));
  }
};

template <int SA, int SB, int TA, int TB>
struct F16F16_N64 {
  static constexpr int N = 64, K = 16, R = 16;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, %19, %20, %21, %22;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TA), "n"(TB));
  }
};

template <int SA, int SB, int TB>
struct F16F16_N128_R {
  static constexpr int N = 128, K = 16, R = 32;
  static constexpr bool kARegs = true;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, %38, %39, %40;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TB));
  }
};

template <int SA, int SB, int TA, int TB>
struct F32BF16_N32 {
  static constexpr int N = 32, K = 16, R = 16;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, %19, %20, %21, %22;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TA), "n"(TB));
  }
};

template <int SA, int SB, int TA, int TB>
struct F32BF16_N64 {
  static constexpr int N = 64, K = 16, R = 32;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, %35, %36, %37, %38;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TA), "n"(TB));
  }
};

template <int SA, int SB, int TB>
struct F32BF16_N32_R {
  static constexpr int N = 32, K = 16, R = 16;
  static constexpr bool kARegs = true;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\nwgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, %22, %23, %24;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(SB), "n"(TB));
  }
};

template <int SA, int SB>
struct F32TF32_N32 {
  static constexpr int N = 32, K = 8, R = 16;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, %19, %20;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB));
  }
};

template <int SA, int SB>
struct F32TF32_N16_R {
  static constexpr int N = 16, K = 8, R = 8;
  static constexpr bool kARegs = true;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\nwgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, %14, %15;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(SB));
  }
};

template <int SA, int SB>
struct F32E4M3E5M2_N32 {
  static constexpr int N = 32, K = 32, R = 16;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e5m2 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, %19, %20;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB));
  }
};

template <int SA, int SB>
struct F16E5M2E4M3_N16 {
  static constexpr int N = 16, K = 32, R = 4;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n16k32.f16.e5m2.e4m3 {%0, %1, %2, %3}, %4, %5, p, %7, %8;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "l"(da), "l"(db), "r"(scale_d), "n"(SA), "n"(SB));
  }
};

template <int SA, int SB>
struct F32E4M3E4M3_N24_R {
  static constexpr int N = 24, K = 32, R = 12;
  static constexpr bool kARegs = true;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %17, 0;\nwgmma.mma_async.sync.aligned.m64n24k32.f32.e4m3.e4m3 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, %16, p, %18, %19;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(SA), "n"(SB));
  }
};

struct S32S8U8_N32 {
  static constexpr int N = 32, K = 32, R = 16;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.s32.s8.u8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
                 : "l"(da), "l"(db), "r"(scale_d));
  }
};

struct S32U8S8_N16_R {
  static constexpr int N = 16, K = 32, R = 8;
  static constexpr bool kARegs = true;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\nwgmma.mma_async.sync.aligned.m64n16k32.s32.u8.s8 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
  }
};

struct S32S8S8_N48_SAT {
  static constexpr int N = 48, K = 32, R = 24;
  static constexpr bool kARegs = false;
  __device__ static void run(uint32_t* d, const uint32_t* a, uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %26, 0;\nwgmma.mma_async.sync.aligned.m64n48k32.satfinite.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, %24, %25, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23])
                 : "l"(da), "l"(db), "r"(scale_d));
  }
};
// ---- the device side: copy the images to shared memory, issue, wait, store ----
struct Params {
  const uint8_t* img;     // A's image at a_off, B's at b_off (1024-byte aligned offsets)
  uint32_t img_bytes;
  uint32_t a_off, b_off;
  uint64_t a_desc, b_desc;  // without the start address, which the kernel adds
  uint32_t a_step, b_step;  // bytes the start address advances per instruction
  const uint32_t* a_regs;   // [step][thread][4]
  const uint32_t* c;        // [thread][R]
  uint32_t* d;              // [thread][R]
  int ksteps, scale_d;
};

template <class Op>
__global__ void k_wgmma(Params p) {
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t pad = (1024 - (raw & 1023)) & 1023;  // the swizzle patterns start 1024-aligned
  uint8_t* smem = smem_raw + pad;
  const int tid = threadIdx.x;
  for (uint32_t i = tid; i < p.img_bytes; i += blockDim.x) smem[i] = p.img[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint32_t d[Op::R];
  for (int r = 0; r < Op::R; ++r) d[r] = p.c[tid * Op::R + r];
  const uint32_t base = raw + pad;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int j = 0; j < p.ksteps; ++j) {
    uint32_t a[4] = {0, 0, 0, 0};
    if (Op::kARegs)
      for (int r = 0; r < 4; ++r) a[r] = p.a_regs[(j * 128 + tid) * 4 + r];
    const uint64_t da = p.a_desc | (((base + p.a_off + j * p.a_step) & 0x3FFFF) >> 4);
    const uint64_t db = p.b_desc | (((base + p.b_off + j * p.b_step) & 0x3FFFF) >> 4);
    Op::run(d, a, da, db, j > 0 || p.scale_d);
    if (Op::kARegs) {  // the next iteration rewrites a[]: the ISA asks for the wait first
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  // The warpgroup's instructions are complete once any of its threads returns from the wait: the
  // first thread may overwrite the operands at once, without a barrier, as a loop loading the
  // next tile does.
  if (tid == 0)
    for (uint32_t i = 0; i < p.img_bytes / 4; ++i) reinterpret_cast<uint32_t*>(smem)[i] = 0xFFFFFFFFu;
  for (int r = 0; r < Op::R; ++r) p.d[tid * Op::R + r] = d[r];
}

// ---- host: element types ----
enum class Ty { F16, BF16, TF32, E4M3, E5M2, S8, U8, F32, S32 };
int bytes_of(Ty t) {
  return t == Ty::F16 || t == Ty::BF16 ? 2 : t == Ty::TF32 || t == Ty::F32 || t == Ty::S32 ? 4 : 1;
}
// Encodings of exact small values (the formats' definitions).
uint32_t enc(Ty t, double v) {
  switch (t) {
    case Ty::F16: {  // |v| < 2048 and a multiple of 2^-4 here: exact
      if (v == 0) return 0;
      const uint32_t s = v < 0 ? 0x8000 : 0;
      int e;
      const double m = std::frexp(std::fabs(v), &e);  // v = m 2^e, m in [0.5, 1)
      return s | uint32_t((e - 1 + 15) << 10) | uint32_t(std::lround((m * 2 - 1) * 1024));
    }
    case Ty::BF16:
    case Ty::TF32:
    case Ty::F32: {
      float f = float(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      return t == Ty::BF16 ? u >> 16 : u;
    }
    case Ty::E4M3:
    case Ty::E5M2: {
      if (v == 0) return 0;
      const int mbits = t == Ty::E4M3 ? 3 : 2, bias = t == Ty::E4M3 ? 7 : 15;
      const uint32_t s = v < 0 ? 0x80 : 0;
      int e;
      const double m = std::frexp(std::fabs(v), &e);
      return s | uint32_t((e - 1 + bias) << mbits) | uint32_t(std::lround((m * 2 - 1) * (1 << mbits)));
    }
    case Ty::S8:
    case Ty::U8:
      return uint32_t(int32_t(v)) & 0xFF;
    case Ty::S32:
      return uint32_t(int32_t(v));
  }
  return 0;
}

// Values every type holds exactly, drawn so that sums stay exact (see the header).
double draw(Ty t, Ty dt, std::mt19937& rng) {
  auto pick = [&](std::initializer_list<double> vs) {
    return *(vs.begin() + rng() % vs.size());
  };
  switch (t) {
    case Ty::F16:
    case Ty::BF16:
    case Ty::TF32:
      return double(int(rng() % 7) - 3);
    case Ty::E4M3:
    case Ty::E5M2:
      if (dt == Ty::F16) return pick({-2, -1.5, -1, 0, 1, 1.5, 2, 3});
      return pick({-3.5, -2, -1.25, -0.75, -0.5, 0, 0.25, 0.5, 0.875, 1, 1.5, 2.5, 3});
    case Ty::S8:
      return double(int(rng() % 256) - 128);
    case Ty::U8:
      return double(rng() % 256);
    default:
      return 0;
  }
}

// ---- host: the canonical layouts ----
struct Layout {
  bool mn_major = false;
  int swizzle = 0;  // bytes: 0, 32, 64, 128
  uint32_t lbo = 0, sbo = 0, step = 0, bytes = 0;
};

// A layout for an operand of `mn` rows (M or N) and `kb` bytes along K (32 per instruction), with
// the strides picked here (padding between blocks where the layout allows it).
Layout make_layout(bool mn_major, int swizzle, int mn, int kb, int eb) {
  Layout l;
  l.mn_major = mn_major;
  l.swizzle = swizzle;
  const int T = 16 / eb;
  if (!mn_major && !swizzle) {  // core matrices of 8 rows x 16 bytes; K neighbours LBO apart
    l.lbo = 128;
    l.sbo = uint32_t(kb / 16 * 128 + 64);
    l.step = 2 * l.lbo;
    l.bytes = uint32_t(mn / 8) * l.sbo;
  } else if (!mn_major) {  // rows of `swizzle` bytes, 8-row atoms SBO apart; K advances in the row
    l.lbo = 16;  // not used
    l.sbo = uint32_t(8 * swizzle);
    l.step = 32;
    l.bytes = uint32_t(mn / 8) * l.sbo;
  } else if (!swizzle) {  // core matrices of 8 K-rows x 16 bytes of MN; MN neighbours SBO apart
    l.lbo = 128;
    l.sbo = uint32_t((kb / eb / 8) * 128 + 128);
    l.step = 2 * l.lbo;  // 16 elements of 2 bytes along K per instruction
    l.bytes = uint32_t(mn / T) * l.sbo;
  } else {  // atoms of 8 K-rows x `swizzle` bytes of MN; K neighbours SBO apart, MN ones LBO
    l.sbo = uint32_t(8 * swizzle);
    l.lbo = uint32_t((kb / eb / 8) * l.sbo + 1024);
    l.step = 2 * l.sbo;
    l.bytes = uint32_t(mn * eb / swizzle) * l.lbo;
  }
  return l;
}

// Element (mn, k)'s byte offset from a 1024-aligned start.
uint32_t layout_offset(const Layout& l, int mn, int k, int eb) {
  const int T = 16 / eb, c = l.swizzle ? l.swizzle / 16 : 1;
  uint64_t e;  // elements
  const uint32_t L = l.lbo / eb, S = l.sbo / eb;
  if (!l.mn_major && !l.swizzle) e = (mn % 8) * T + (mn / 8) * S + k % T + (k / T) * L;
  else if (!l.mn_major) e = (mn % 8) * c * T + (mn / 8) * S + k;
  else if (!l.swizzle) e = mn % T + (mn / T) * S + (k % 8) * T + (k / 8) * L;
  else e = mn % T + ((mn / T) % c) * T + (mn / (c * T)) * L + (k % 8) * c * T + (k / 8) * S;
  uint32_t a = uint32_t(e * eb);
  if (l.swizzle) {
    const int b = l.swizzle == 32 ? 1 : l.swizzle == 64 ? 2 : 3;
    a ^= ((a >> 7) & ((1u << b) - 1)) << 4;
  }
  return a;
}
uint64_t desc_bits(const Layout& l) {
  const uint64_t mode = l.swizzle == 128 ? 1 : l.swizzle == 64 ? 2 : l.swizzle == 32 ? 3 : 0;
  return (uint64_t((l.lbo & 0x3FFFF) >> 4) << 16) | (uint64_t((l.sbo & 0x3FFFF) >> 4) << 32) | (mode << 62);
}

bool g_plant = false;
int g_cases = 0, g_failed_cases = 0;

struct Case {
  std::string name;
  Ty at, bt, dt;
  bool a_mn = false, b_mn = false;  // MN-major (imm-trans-a / imm-trans-b = 1)
  int a_sw = 128, b_sw = 128;
  int sa = 1, sb = 1;
  int scale_d = 1;
  int ksteps = 1;
  bool satfinite = false;
};

template <class Op>
void run_case(const Case& cs) {
  constexpr int N = Op::N, K = Op::K, R = Op::R;
  const int ea = bytes_of(cs.at), ebb = bytes_of(cs.bt);
  const int KT = K * cs.ksteps;
  std::mt19937 rng(1234u + uint32_t(g_cases) * 7919u);
  std::vector<double> A(64 * KT), B(size_t(KT) * N), C(64 * N);
  std::vector<uint32_t> Abits(64 * KT), Bbits(size_t(KT) * N);
  for (int i = 0; i < 64 * KT; ++i) {
    A[i] = draw(cs.at, cs.dt, rng);
    Abits[i] = enc(cs.at, A[i]);
    if (cs.at == Ty::TF32) Abits[i] |= rng() & 0x1FFF;  // ignored by wgmma
  }
  for (int i = 0; i < KT * N; ++i) {
    B[i] = draw(cs.bt, cs.dt, rng);
    Bbits[i] = enc(cs.bt, B[i]);
    if (cs.bt == Ty::TF32) Bbits[i] |= rng() & 0x1FFF;
  }
  for (int i = 0; i < 64 * N; ++i) {
    if (cs.dt == Ty::S32) C[i] = cs.satfinite ? double(rng() % 2 ? 2147482000 : -2147482000) + double(int(rng() % 2000) - 1000)
                                              : double(int64_t(rng()) - 2147483648LL);
    else C[i] = double(int(rng() % 33) - 16);
  }
  // Shared-memory images.
  const Layout la = make_layout(cs.a_mn, cs.a_sw, 64, 32 * cs.ksteps, ea);
  const Layout lb = make_layout(cs.b_mn, cs.b_sw, N, 32 * cs.ksteps, ebb);
  const uint32_t a_off = 0, b_off = Op::kARegs ? 0 : (la.bytes + 1023) / 1024 * 1024;
  const uint32_t total = b_off + lb.bytes;
  std::vector<uint8_t> img(total, 0xFF);
  if (!Op::kARegs)
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < KT; ++k) std::memcpy(&img[a_off + layout_offset(la, m, k, ea)], &Abits[m * KT + k], ea);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < KT; ++k) std::memcpy(&img[b_off + layout_offset(lb, n, k, ebb)], &Bbits[k * N + n], ebb);
  // A fragments (per instruction) and C, D registers.
  const int per = 4 / ea;
  std::vector<uint32_t> aregs(size_t(cs.ksteps) * 128 * 4, 0), c(128 * R, 0), expect(128 * R, 0);
  for (int j = 0; j < cs.ksteps; ++j)
    for (int tid = 0; tid < 128; ++tid)
      for (int r = 0; r < 4; ++r)
        for (int e = 0; e < per; ++e) {
          const int w = tid / 32, l = tid % 32;
          const int row = 16 * w + l / 4 + 8 * (r % 2), col = (r / 2) * (K / 2) + per * (l % 4) + e;
          const uint32_t bits = Abits[row * KT + j * K + col];
          aregs[(j * 128 + tid) * 4 + r] |= (ea == 4 ? bits : (bits & ((1u << (8 * ea)) - 1)) << (8 * ea * e));
        }
  const bool f16d = cs.dt == Ty::F16;
  for (int tid = 0; tid < 128; ++tid)
    for (int i = 0; i < N / 2; ++i) {
      const int w = tid / 32, l = tid % 32;
      const int row = 16 * w + l / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
      // Instruction by instruction (.satfinite limits each one's result).
      double s = cs.scale_d ? C[row * N + col] : 0.0;
      for (int j = 0; j < cs.ksteps; ++j) {
        for (int k = j * K; k < (j + 1) * K; ++k) s += (cs.sa * A[row * KT + k]) * (cs.sb * B[k * N + col]);
        if (cs.dt == Ty::S32 && cs.satfinite) s = std::fmin(std::fmax(s, -2147483648.0), 2147483647.0);
      }
      uint32_t cb, db;
      if (cs.dt == Ty::S32) {
        cb = enc(Ty::S32, C[row * N + col]);
        db = uint32_t(uint64_t(int64_t(s)));  // wraps without .satfinite
      } else {
        cb = enc(f16d ? Ty::F16 : Ty::F32, C[row * N + col]);
        db = enc(f16d ? Ty::F16 : Ty::F32, s);
      }
      if (f16d) {
        c[tid * R + i / 2] |= cb << (16 * (i % 2));
        expect[tid * R + i / 2] |= db << (16 * (i % 2));
      } else {
        c[tid * R + i] = cb;
        expect[tid * R + i] = db;
      }
    }
  if (g_plant) expect[5 % (128 * R)] ^= 1;

  uint8_t* d_img;
  uint32_t *d_aregs, *d_c, *d_d;
  CUDA_CHECK(cudaMalloc(&d_img, total));
  CUDA_CHECK(cudaMalloc(&d_aregs, aregs.size() * 4));
  CUDA_CHECK(cudaMalloc(&d_c, c.size() * 4));
  CUDA_CHECK(cudaMalloc(&d_d, c.size() * 4));
  CUDA_CHECK(cudaMemcpy(d_img, img.data(), total, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_aregs, aregs.data(), aregs.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_c, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
  Params p{d_img, total, a_off, b_off, desc_bits(la), desc_bits(lb), la.step, lb.step, d_aregs, d_c, d_d,
           cs.ksteps, cs.scale_d};
  const int smem = int(total) + 1024;
  CUDA_CHECK(cudaFuncSetAttribute(k_wgmma<Op>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  static const auto metrics = reinterpret_cast<Gpu100EmuMetricsFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_METRICS_SYMBOL));
  Gpu100EmuMetrics before = {sizeof before}, after = {sizeof after};
  if (metrics) metrics(&before);
  k_wgmma<Op><<<1, 128, smem>>>(p);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  bool metrics_ok = true;
  if (metrics) {
    metrics(&after);
    gpu100_emu_metrics_diff(&after, &before);
    const unsigned long long want_inst = unsigned(cs.ksteps) + g_plant, want_ops = 2ull * 64 * N * K * cs.ksteps + g_plant;
    if (after.wgmma_instructions != want_inst || after.wgmma_flops != want_ops) {
      metrics_ok = false;
      std::printf("%s: metrics wgmma_instructions=%llu wgmma_flops=%llu, expected %llu and %llu\n", cs.name.c_str(),
                  after.wgmma_instructions, after.wgmma_flops, want_inst, want_ops);
    }
  }
  std::vector<uint32_t> got(c.size());
  CUDA_CHECK(cudaMemcpy(got.data(), d_d, got.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d_img));
  CUDA_CHECK(cudaFree(d_aregs));
  CUDA_CHECK(cudaFree(d_c));
  CUDA_CHECK(cudaFree(d_d));
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == expect[i]) continue;
    if (bad++ < 3)
      std::printf("%s: thread %zu register %zu: got 0x%08x, expected 0x%08x\n", cs.name.c_str(), i / R, i % R,
                  got[i], expect[i]);
  }
  ++g_cases;
  if (!metrics_ok) conf_check_text(cs.name.c_str(), "metrics", false, "differ", "equal");
  if (bad) std::printf("%s: %d of %zu registers differ\n", cs.name.c_str(), bad, got.size());
  if (bad || !metrics_ok) ++g_failed_cases;
  conf_check_text(cs.name.c_str(), "CPU GEMM", bad == 0, bad ? "differs" : "equal", "equal");
}

Case mk(const char* name, Ty at, Ty bt, Ty dt) {
  Case c;
  c.name = name;
  c.at = at;
  c.bt = bt;
  c.dt = dt;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  conf_require_device();
  g_plant = argc > 1 && !std::strcmp(argv[1], "--plant");
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  if (major != 9 || minor != 0) {
    std::printf("SKIP: wgmma needs sm_90a (this device is sm_%d%d)\n", major, minor);
    return 77;
  }
  using T = Ty;
  // f16 -> f32, N = 64: every layout of A and B (K-major and MN-major; none, 32B, 64B, 128B).
  const int sws[] = {0, 32, 64, 128};
  for (int sw : sws) {
    Case c = mk("", T::F16, T::F16, T::F32);
    c.a_sw = c.b_sw = sw;
    c.ksteps = sw == 32 ? 1 : sw == 64 ? 2 : 4;  // K-major swizzled: the K extent of one row
    c.name = "m64n64k16.f32.f16 K-major swizzle " + std::to_string(sw);
    run_case<F32F16_N64<1, 1, 0, 0>>(c);
    c.a_mn = c.b_mn = true;
    c.ksteps = 2;
    c.name = "m64n64k16.f32.f16 MN-major (trans-a, trans-b) swizzle " + std::to_string(sw);
    run_case<F32F16_N64<1, 1, 1, 1>>(c);
    c.a_mn = false;
    c.name = "m64n64k16.f32.f16 A K-major, B MN-major swizzle " + std::to_string(sw);
    c.ksteps = 1;
    run_case<F32F16_N64<1, 1, 0, 1>>(c);
  }
  {  // scale-d 0, negated scales, other N
    Case c = mk("m64n64k16.f32.f16 scale-d 0", T::F16, T::F16, T::F32);
    c.scale_d = 0;
    run_case<F32F16_N64<1, 1, 0, 0>>(c);
    c = mk("m64n64k16.f32.f16 imm-scale-a -1, imm-scale-b 1", T::F16, T::F16, T::F32);
    c.sa = -1;
    run_case<F32F16_N64<-1, 1, 0, 0>>(c);
    c = mk("m64n64k16.f32.f16 imm-scale-a -1, imm-scale-b -1, A M-major", T::F16, T::F16, T::F32);
    c.sa = c.sb = -1;
    c.a_mn = true;
    c.a_sw = 64;
    run_case<F32F16_N64<-1, -1, 1, 0>>(c);
    c = mk("m64n8k16.f32.f16", T::F16, T::F16, T::F32);
    c.b_sw = 0;
    c.ksteps = 2;
    run_case<F32F16_N8<1, 1, 0, 0>>(c);
    c = mk("m64n16k16.f32.f16", T::F16, T::F16, T::F32);
    c.b_sw = 32;
    c.sb = -1;
    run_case<F32F16_N16<1, -1, 0, 0>>(c);
    c = mk("m64n24k16.f32.f16", T::F16, T::F16, T::F32);
    c.ksteps = 4;
    run_case<F32F16_N24<1, 1, 0, 0>>(c);
    c = mk("m64n256k16.f32.f16", T::F16, T::F16, T::F32);
    c.ksteps = 2;
    run_case<F32F16_N256<1, 1, 0, 0>>(c);
  }
  {  // A from registers
    Case c = mk("m64n64k16.f32.f16 A in registers", T::F16, T::F16, T::F32);
    c.ksteps = 4;
    run_case<F32F16_N64_R<1, 1, 0>>(c);
    c = mk("m64n64k16.f32.f16 A in registers, B N-major, imm-scale-b -1", T::F16, T::F16, T::F32);
    c.b_mn = true;
    c.b_sw = 0;
    c.sb = -1;
    c.ksteps = 2;
    run_case<F32F16_N64_R<1, -1, 1>>(c);
  }
  {  // f16 accumulators
    Case c = mk("m64n64k16.f16.f16", T::F16, T::F16, T::F16);
    c.a_sw = 32;
    c.b_sw = 64;
    c.ksteps = 1;
    run_case<F16F16_N64<1, 1, 0, 0>>(c);
    c = mk("m64n64k16.f16.f16 MN-major, scale-d 0", T::F16, T::F16, T::F16);
    c.a_mn = c.b_mn = true;
    c.scale_d = 0;
    run_case<F16F16_N64<1, 1, 1, 1>>(c);
    c = mk("m64n128k16.f16.f16 A in registers", T::F16, T::F16, T::F16);
    c.ksteps = 2;
    run_case<F16F16_N128_R<1, 1, 0>>(c);
  }
  {  // bf16
    Case c = mk("m64n32k16.f32.bf16", T::BF16, T::BF16, T::F32);
    c.ksteps = 4;
    run_case<F32BF16_N32<1, 1, 0, 0>>(c);
    c = mk("m64n64k16.f32.bf16 MN-major, 32B and none", T::BF16, T::BF16, T::F32);
    c.a_mn = c.b_mn = true;
    c.a_sw = 32;
    c.b_sw = 0;
    run_case<F32BF16_N64<1, 1, 1, 1>>(c);
    c = mk("m64n32k16.f32.bf16 A in registers, imm-scale-a -1", T::BF16, T::BF16, T::F32);
    c.sa = -1;
    c.b_sw = 0;
    run_case<F32BF16_N32_R<-1, 1, 0>>(c);
  }
  {  // tf32 (K-major only)
    Case c = mk("m64n32k8.f32.tf32", T::TF32, T::TF32, T::F32);
    c.ksteps = 4;
    run_case<F32TF32_N32<1, 1>>(c);
    c = mk("m64n32k8.f32.tf32 no swizzle, imm-scale-b -1", T::TF32, T::TF32, T::F32);
    c.a_sw = c.b_sw = 0;
    c.sb = -1;
    c.ksteps = 2;
    run_case<F32TF32_N32<1, -1>>(c);
    c = mk("m64n16k8.f32.tf32 A in registers", T::TF32, T::TF32, T::F32);
    c.b_sw = 64;
    c.ksteps = 2;
    run_case<F32TF32_N16_R<1, 1>>(c);
  }
  {  // fp8
    Case c = mk("m64n32k32.f32.e4m3.e5m2", T::E4M3, T::E5M2, T::F32);
    c.ksteps = 4;
    run_case<F32E4M3E5M2_N32<1, 1>>(c);
    c = mk("m64n32k32.f32.e4m3.e5m2 32B swizzle, imm-scale-a -1", T::E4M3, T::E5M2, T::F32);
    c.a_sw = c.b_sw = 32;
    c.sa = -1;
    run_case<F32E4M3E5M2_N32<-1, 1>>(c);
    c = mk("m64n16k32.f16.e5m2.e4m3", T::E5M2, T::E4M3, T::F16);
    c.a_sw = 0;
    c.b_sw = 64;
    c.ksteps = 2;
    run_case<F16E5M2E4M3_N16<1, 1>>(c);
    c = mk("m64n24k32.f32.e4m3.e4m3 A in registers", T::E4M3, T::E4M3, T::F32);
    c.b_sw = 0;
    c.ksteps = 3;
    run_case<F32E4M3E4M3_N24_R<1, 1>>(c);
  }
  {  // 8-bit integers
    Case c = mk("m64n32k32.s32.s8.u8", T::S8, T::U8, T::S32);
    c.ksteps = 4;
    run_case<S32S8U8_N32>(c);
    c = mk("m64n32k32.s32.s8.u8 scale-d 0, no swizzle", T::S8, T::U8, T::S32);
    c.scale_d = 0;
    c.a_sw = c.b_sw = 0;
    run_case<S32S8U8_N32>(c);
    c = mk("m64n16k32.s32.u8.s8 A in registers", T::U8, T::S8, T::S32);
    c.b_sw = 32;
    run_case<S32U8S8_N16_R>(c);
    c = mk("m64n48k32.satfinite.s32.s8.s8", T::S8, T::S8, T::S32);
    c.satfinite = true;
    c.ksteps = 2;
    c.b_sw = 64;
    run_case<S32S8S8_N48_SAT>(c);
  }
  if (g_plant) {
    std::printf("wgmma --plant: %d of %d cases failed on a planted wrong expectation%s\n", g_failed_cases,
                g_cases, g_failed_cases == g_cases ? " (all: good)" : "");
    return g_failed_cases == g_cases ? 0 : 1;
  }
  return conf_finish("wgmma");
}
