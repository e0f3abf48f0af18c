// Day 019 - GEMV: y = A x for a row-major M x N matrix, in fp32 and fp16 (fp32 accumulation)
//
// A matrix-vector product does 2 FLOPs per element of A and reads each element of A exactly once:
// 0.5 FLOP per byte in fp32, far left of any roofline ridge. Unlike the GEMM days, the score is
// bandwidth: GB/s against the HBM peak, and against cuBLAS's own GEMV on the same data. x (N
// values) and y (M values) are small next to A and stay in L2/L1; what matters is streaming A
// with every byte of every fetched sector used and enough bytes in flight to cover DRAM latency.
// The same kernel shapes serve LLM decoding, where every token is a batch of GEMVs.
//
// Convention: A row-major M x N (leading dimension N), x of length N, y of length M; M and N
// arbitrary (1 x 1, odd N, N not a multiple of any vector width). fp16 versions store A, x and y
// in half precision and accumulate in fp32.
//
// Versions
//   fp32_thread_row    one thread per row, looping over the row: the "obvious" kernel.
//   fp32_warp_row      one warp per row: lane l reads columns l, l + 32, ... (coalesced); five
//                      __shfl_xor_sync steps add the 32 partial sums, lane 0 writes y.
//   fp32_warp_row_vec4 the same with 16-byte loads (ld.global.nc.v4.f32), 4 in flight per lane.
//   fp16_warp_row      fp16 A and x with one 2-byte load per lane.
//   fp16_warp_row_vec8 fp16 with 16-byte loads of 8 halves (ld.global.nc.v4.u32, unpacked as
//                      __half2 pairs).
// The vectorized versions split each row into a scalar head up to its first 16-byte boundary, a
// body of aligned vectors and a scalar tail, so every N works (rows start mid-vector otherwise).
//
// Check: CPU reference in double (the fp16 reference uses the exact half values of A and x), per
// entry; tolerance gemm_tolerance(N) for a length-N fp32-accumulated dot product, plus 2^-11 for
// the fp16 rounding of y in the fp16 versions. Baselines (same run, same data, each checked):
// cublasSgemv on the fp32 data (CUBLAS_OP_T on the column-major view; the main table's "% of
// cublasSgemv" divides GB/s), and cublasHSHgemvStridedBatched with one batch for fp16; the table
// "gemv time vs cuBLAS" compares every version's TIME with both.
//
// Run:  build/bin/day019 [--m 16384 --n 16384] [--kernel fp32_warp_row_vec4,fp16_warp_row_vec8]
//       [--json out.json]
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;               // threads per block
constexpr int kWarps = kBlock / 32;       // rows per block in the warp-per-row versions
constexpr int kUnroll = 4;                // 16-byte loads in flight per lane (vectorized versions)
constexpr int64_t kMaxDim = int64_t(1) << 30;  // column and row indices fit an int with room

// ---- CPU reference ------------------------------------------------------------------------------
// Exact float value of an fp16 bit pattern, for all 65536 patterns (the CPU reference multiplies
// what the GPU multiplies).
std::vector<float> half_table() {
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = uint16_t(i);
  std::vector<__half> h(bits.size());
  std::memcpy(h.data(), bits.data(), bits.size() * sizeof(uint16_t));
  return gpu100::half_values(h);
}

// y = A x in double, for the fp32 data and for its fp16 copy, in one pass over A.
struct Reference {
  std::vector<double> fp32, fp16;
};

Reference gemv_cpu(const std::vector<float>& a, const std::vector<float>& x,
                   const std::vector<__half>& a_half, const std::vector<__half>& x_half, int64_t m,
                   int64_t n) {
  Reference ref{std::vector<double>(size_t(m)), std::vector<double>(size_t(m))};
  const auto table = half_table();
  const auto xh = gpu100::half_values(x_half);
  std::vector<uint16_t> row_bits(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    const float* ar = a.data() + size_t(i) * size_t(n);
    std::memcpy(row_bits.data(), a_half.data() + size_t(i) * size_t(n),
                size_t(n) * sizeof(uint16_t));
    double s32 = 0, s16 = 0;
    for (int64_t j = 0; j < n; ++j) {
      s32 += double(ar[j]) * double(x[size_t(j)]);
      s16 += double(table[row_bits[size_t(j)]]) * double(xh[size_t(j)]);
    }
    ref.fp32[size_t(i)] = s32;
    ref.fp16[size_t(i)] = s16;
  }
  return ref;
}

// ---- kernels ------------------------------------------------------------------------------------
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rn(v); }

// Sum over the 32 lanes; every lane ends with the total. All 32 lanes must be present.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// fp32_thread_row
template <class T>
__global__ void __launch_bounds__(kBlock)
    gemv_thread_row(const T* __restrict__ A, const T* __restrict__ x, T* __restrict__ y, int M,
                    int N) {
  const int64_t row = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (row >= M) return;  // no barrier or shuffle in this kernel
  const T* a = A + row * N;
  float acc = 0.0f;
  for (int j = 0; j < N; ++j) acc = fmaf(to_float(a[j]), to_float(x[j]), acc);
  store(y + row, acc);
}

// fp32_warp_row, fp16_warp_row: one warp per row, one element per lane per step.
template <class T>
__global__ void __launch_bounds__(kBlock)
    gemv_warp_row(const T* __restrict__ A, const T* __restrict__ x, T* __restrict__ y, int M,
                  int N) {
  const int64_t row = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int lane = int(threadIdx.x % 32);
  if (row >= M) return;  // the whole warp leaves together: warp_sum below sees 32 lanes
  const T* a = A + row * N;
  float acc = 0.0f;
#pragma unroll 4
  for (int j = lane; j < N; j += 32) acc = fmaf(to_float(a[j]), to_float(x[j]), acc);
  acc = warp_sum(acc);
  if (lane == 0) store(y + row, acc);
}

// 16 bytes of T: the load type and how to unpack it into floats.
template <class T>
struct Vec16;
template <>
struct Vec16<float> {
  static constexpr int kCount = 4;
  using Raw = float4;
  __device__ __forceinline__ static void unpack(const float4& v, float (&f)[4]) {
    f[0] = v.x, f[1] = v.y, f[2] = v.z, f[3] = v.w;
  }
};
template <>
struct Vec16<__half> {
  static constexpr int kCount = 8;
  using Raw = uint4;  // 8 halves as 4 words; each word is a __half2
  __device__ __forceinline__ static void unpack(const uint4& v, float (&f)[8]) {
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2 h;
      std::memcpy(&h, &words[i], sizeof(h));
      const float2 p = __half22float2(h);
      f[2 * i] = p.x, f[2 * i + 1] = p.y;
    }
  }
};

// The kCount x values that meet the vector of A at p: one 16-byte load when x is aligned there,
// else kCount scalar loads (served by L1: every warp reads the same x).
template <class T, bool kXAligned>
__device__ __forceinline__ void load_x(const T* __restrict__ p, float (&f)[Vec16<T>::kCount]) {
  using V = Vec16<T>;
  if constexpr (kXAligned) {
    V::unpack(*reinterpret_cast<const typename V::Raw*>(p), f);
  } else {
#pragma unroll
    for (int e = 0; e < V::kCount; ++e) f[e] = to_float(p[e]);
  }
}

// Lane `lane`'s share of the aligned body: vectors lane, lane + 32, ... of a (nvec vectors),
// kUnroll of them loaded before any is used.
template <class T, bool kXAligned>
__device__ __forceinline__ float row_body(const T* __restrict__ a, const T* __restrict__ x,
                                          int nvec, int lane, float acc) {
  using V = Vec16<T>;
  constexpr int kC = V::kCount;
  const auto* av = reinterpret_cast<const typename V::Raw*>(a);
  int i = lane;
  for (; i + 32 * (kUnroll - 1) < nvec; i += 32 * kUnroll) {
    typename V::Raw raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) raw[u] = av[i + 32 * u];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float af[kC], xf[kC];
      V::unpack(raw[u], af);
      load_x<T, kXAligned>(x + (i + 32 * u) * kC, xf);
#pragma unroll
      for (int e = 0; e < kC; ++e) acc = fmaf(af[e], xf[e], acc);
    }
  }
  for (; i < nvec; i += 32) {  // the last < 32 * kUnroll vectors
    float af[kC], xf[kC];
    V::unpack(av[i], af);
    load_x<T, kXAligned>(x + i * kC, xf);
#pragma unroll
    for (int e = 0; e < kC; ++e) acc = fmaf(af[e], xf[e], acc);
  }
  return acc;
}

// fp32_warp_row_vec4, fp16_warp_row_vec8: one warp per row, 16-byte loads, scalar head and tail.
template <class T>
__global__ void __launch_bounds__(kBlock)
    gemv_warp_row_vec(const T* __restrict__ A, const T* __restrict__ x, T* __restrict__ y, int M,
                      int N) {
  constexpr int kC = Vec16<T>::kCount;
  const int64_t row = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int lane = int(threadIdx.x % 32);
  if (row >= M) return;  // the whole warp leaves together: warp_sum below sees 32 lanes
  const T* a = A + row * N;
  // Elements before the row's first 16-byte boundary (T-aligned addresses: a whole number).
  const int to_boundary = int(((16 - (reinterpret_cast<uintptr_t>(a) & 15)) & 15) / sizeof(T));
  const int head = min(N, to_boundary);
  const int nvec = (N - head) / kC;
  const int tail = head + nvec * kC;  // first column after the body
  float acc = 0.0f;
  if (lane < head) acc = fmaf(to_float(a[lane]), to_float(x[lane]), acc);
  // Uniform per row (a warp's lanes agree), so no divergence inside the warp.
  if ((reinterpret_cast<uintptr_t>(x + head) & 15) == 0)
    acc = row_body<T, true>(a + head, x + head, nvec, lane, acc);
  else
    acc = row_body<T, false>(a + head, x + head, nvec, lane, acc);
  if (tail + lane < N) acc = fmaf(to_float(a[tail + lane]), to_float(x[tail + lane]), acc);
  acc = warp_sum(acc);
  if (lane == 0) store(y + row, acc);
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Kind { ThreadRow, WarpRow, WarpRowVec };

template <class T>
void launch(Kind kind, const T* A, const T* x, T* y, int64_t m, int64_t n, cudaStream_t s) {
  switch (kind) {
    case Kind::ThreadRow:
      // Only the fp32 version exists: no fp16 instantiation to compile.
      if constexpr (std::is_same_v<T, float>)
        gemv_thread_row<<<gpu100::grid_for(m, kBlock), kBlock, 0, s>>>(A, x, y, int(m), int(n));
      break;
    case Kind::WarpRow:
      gemv_warp_row<T><<<gpu100::grid_for(m, kWarps), kBlock, 0, s>>>(A, x, y, int(m), int(n));
      break;
    case Kind::WarpRowVec:
      gemv_warp_row_vec<T><<<gpu100::grid_for(m, kWarps), kBlock, 0, s>>>(A, x, y, int(m),
                                                                           int(n));
      break;
  }
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  bool fp16;
  Kind kind;
};
const Version kVersions[] = {
    {"fp32_thread_row", false, Kind::ThreadRow},
    {"fp32_warp_row", false, Kind::WarpRow},
    {"fp32_warp_row_vec4", false, Kind::WarpRowVec},
    {"fp16_warp_row", true, Kind::WarpRow},
    {"fp16_warp_row_vec8", true, Kind::WarpRowVec},
};

// The data of both precisions, its CPU answers, and cuBLAS (used only where it can run).
struct Gemv {
  int64_t m, n;
  gpu100::DeviceBuffer<float> a32, x32, y32;
  gpu100::DeviceBuffer<__half> a16, x16, y16;
  Reference ref;
  gpu100::CublasHandle handle;
  // A, x and y once: 4 bytes per element in fp32, 2 in fp16.
  double bytes(bool fp16) const { return (fp16 ? 2.0 : 4.0) * (double(m) * n + double(n) + m); }
};

// Row-major A is the column-major N x M matrix A^T with lda = N, so y = A x is (A^T)^T x.
const float kOne = 1.0f, kZero = 0.0f;
void cublas_sgemv(Gemv& g, cudaStream_t s) {
  g.handle.set_stream(s);
  CUBLAS_CHECK(cublasSgemv(g.handle, CUBLAS_OP_T, int(g.n), int(g.m), &kOne, g.a32.data(),
                           int(g.n), g.x32.data(), 1, &kZero, g.y32.data(), 1));
}
void cublas_hgemv(Gemv& g, cudaStream_t s) {
  g.handle.set_stream(s);
  CUBLAS_CHECK(cublasHSHgemvStridedBatched(g.handle, CUBLAS_OP_T, int(g.n), int(g.m), &kOne,
                                           g.a16.data(), int(g.n), 0, g.x16.data(), 1, 0, &kZero,
                                           g.y16.data(), 1, 0, 1));
}
void launch(const Version& v, Gemv& g, cudaStream_t s) {
  if (v.fp16)
    launch(v.kind, g.a16.data(), g.x16.data(), g.y16.data(), g.m, g.n, s);
  else
    launch(v.kind, g.a32.data(), g.x32.data(), g.y32.data(), g.m, g.n, s);
}

// A GEMV of one precision as ctx.measure takes it: y poisoned before the checked run, compared
// with the CPU after it (gemm_tolerance(N), plus 2^-11 for the fp16 rounding of y).
gpu100::Measure gemv_measure(const char* name, bool fp16, std::function<void(cudaStream_t)> run,
                             Gemv& g, gpu100::Role role = gpu100::Role::version,
                             bool vendor = false) {
  const gpu100::Tolerance tol = gpu100::gemm_tolerance(g.n, fp16 ? 1.0 / 2048.0 : 0.0);
  return {.name = name,
          .launch = std::move(run),
          .reset = [&g, fp16] { fp16 ? g.y16.poison() : g.y32.poison(); },
          .check =
              [&g, fp16, tol] {
                return fp16 ? gpu100::compare(g.y16.download(), g.ref.fp16, tol)
                            : gpu100::compare(g.y32.download(), g.ref.fp32, tol);
              },
          .work = g.bytes(fp16),
          .role = role,
          .vendor = vendor};
}

// ---- analysis -----------------------------------------------------------------------------------
// Every version's time against both cuBLAS GEMVs (x = cuBLAS time / version time: > 1 means faster
// than cuBLAS). own[i] is the result of kVersions[i].
gpu100::Table time_table(const gpu100::Measured& sgemv, const gpu100::Measured& hgemv,
                         const gpu100::Measured* own, double bytes32, double bytes16) {
  gpu100::Table t;
  t.title = "gemv time vs cuBLAS (same data; x = cuBLAS time / version time)";
  t.columns = {"version", "dtype", "median ms", "GB/s", "x cublasSgemv (fp32)",
               "x cublasHSHgemv (fp16)"};
  auto row = [&](const std::string& name, bool fp16, const gpu100::Stats& s) {
    const double ms = s.median_ms;
    t.add_row({name, fp16 ? "fp16" : "fp32", ms, gpu100::gbps(fp16 ? bytes16 : bytes32, ms),
               ms > 0 ? sgemv.time.median_ms / ms : 0.0, ms > 0 ? hgemv.time.median_ms / ms : 0.0});
  };
  row("cublasSgemv", false, sgemv.time);
  row("cublasHSHgemv", true, hgemv.time);
  for (size_t i = 0; i < std::size(kVersions); ++i)
    if (own[i].ran) row(kVersions[i].name, kVersions[i].fp16, own[i].time);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "y = A x (row-major A, M x N), fp32 and fp16 with fp32 accumulation: thread-per-row, "
      "warp-per-row with shuffle reductions, 16-byte vectorized; vs cublasSgemv and cuBLAS HSH "
      "gemv");
  int64_t m = 16384, n = 16384;
  cli.size("m", m, 257, "rows of A, length of y", kMaxDim);
  cli.size("n", n, 131, "columns of A, length of x", kMaxDim);
  cli.kernels_of(kVersions);
  // fp32 and fp16 copies of A, x and y.
  cli.device_bytes([&] { return 6.0 * double(m) * double(n) + 6.0 * (double(m) + double(n)); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("m", double(m));
    report.problem("n", double(n));
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const auto a = gpu100::random_floats(size_t(m) * size_t(n), ctx.seed(), -1.0f, 1.0f);
    const auto x = gpu100::random_floats(size_t(n), ctx.seed() + 1, -1.0f, 1.0f);
    const auto a_half = gpu100::to_half(a), x_half = gpu100::to_half(x);
    Gemv g{m,
           n,
           gpu100::DeviceBuffer<float>(a),
           gpu100::DeviceBuffer<float>(x),
           gpu100::DeviceBuffer<float>(size_t(m)),
           gpu100::DeviceBuffer<__half>(a_half),
           gpu100::DeviceBuffer<__half>(x_half),
           gpu100::DeviceBuffer<__half>(size_t(m)),
           gemv_cpu(a, x, a_half, x_half, m, n)};
    report.intensity(2.0 * double(m) * double(n) / g.bytes(false));

    // The cuBLAS GEMVs are checked like versions (a wrong baseline would make every ratio
    // meaningless); under the emulator they are NOT RUN.
    std::vector<gpu100::Measure> runs{
        gemv_measure("cublasSgemv", false, [&](cudaStream_t s) { cublas_sgemv(g, s); }, g,
                     gpu100::Role::baseline, /*vendor=*/true),
        gemv_measure("cublasHSHgemv", true, [&](cudaStream_t s) { cublas_hgemv(g, s); }, g,
                     gpu100::Role::point, /*vendor=*/true)};
    for (const Version& v : kVersions)
      runs.push_back(gemv_measure(v.name, v.fp16, [&](cudaStream_t s) { launch(v, g, s); }, g));
    const std::vector<gpu100::Measured> r = ctx.measure_all(runs);
    const gpu100::Measured &sgemv = r[0], &hgemv = r[1];
    if (hgemv.ran && !hgemv.check.pass) report.add_check("cublasHSHgemv", hgemv.check);
    report.baseline_as_percent();
    report.note("GB/s counts A, x and y once (4 bytes per element in fp32, 2 in fp16); "
                "% of cublasSgemv compares GB/s (how well the memory system is used), so for "
                "the fp16 versions' speed see the time table");

    if (!sgemv.ran) return;
    report.table(time_table(sgemv, hgemv, r.data() + 2, g.bytes(false), g.bytes(true)));
    report.note("fp16 baseline: cublasHSHgemvStridedBatched with one batch (fp16 A, x, y; fp32 "
                "compute), on the fp16 copy of the same data");
  });
}
