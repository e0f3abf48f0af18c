// Day 016 - shared-memory bank conflicts in SGEMM: linear, padded and XOR-swizzled tile layouts
//
// Day 015's vectorized kernel (128 x 128 x 8 block tile, 256 threads, an 8 x 8 block of C per
// thread, A stored transposed) reads 4 float4 from shared memory for every 64 FMAs. At that ratio
// the shared-memory pipe is nearly as busy as the FP32 units, so every extra shared-memory cycle
// costs time. This day keeps the kernel and changes only where a tile element lives in shared
// memory: a layout function at(row, col) -> float offset, used for both tiles (As is [k][m], Bs is
// [k][n], both 8 x 128). The program counts, on the host, what each layout costs per warp request
// and prints it next to the timings.
//
// The model: 32 banks of 4 bytes; one wavefront serves at most one word per bank (threads that
// touch the same word share it); a request is served in phases (the whole warp for 4-byte
// accesses, quarter-warps for 16-byte ones) and costs, per phase, the largest number of distinct
// words it touches in one bank. The same index functions drive the kernel and the model, so the
// model counts exactly the kernel's addresses (PROGRESS.md derives each layout's counts).
//
// Versions (layouts), float offset of tile element (row, col), rows of 128 floats:
//   linear       row * 128 + col: day 015's tile, 2-way conflicts on the A store and B fragments.
//   padded_rows  row * 132 + col: the textbook fix, 4 floats of padding per row.
//   padded       row * 148 + col + 4 (col / 32): also 4 floats after every 32 of a row.
//   swizzled     row * 128 + 4 (c ^ ((c >> 3) & 1) ^ (row & 4)) + col % 4, c = col / 4: the
//                16-byte chunk index XORed with two higher bits; no extra memory.
// A static_assert proves each layout maps the 8 x 128 tile one-to-one into its array, keeping
// every group of 4 (a float4) contiguous and 16-byte aligned.
//
// Convention (all of Part II): row-major, C[M x N] = A[M x K] * B[K x N], leading dimensions
// K, N and N; M, N and K arbitrary. Global float4 loads and stores only where the row stride keeps
// 16-byte alignment (K % 4 == 0 for A, N % 4 == 0 for B and C) and the 4 elements are inside the
// matrix; otherwise element by element with bounds checks (day 015).
//
// Check: check_gemm (double reference; every entry at --quick sizes, ~4096 sampled entries incl.
// the last row and column at large ones) with gemm_tolerance(K). Baseline: cublasSgemm (plain
// FP32, no TF32) on the same inputs in the same run, itself checked; the table shows "% of
// cublasSgemm".
//
// Run:  build/bin/day016 [--m 4096 --n 4096 --k 4096] [--kernel linear,swizzled] [--sweep]
//       [--json out.json]      (--sweep: the fastest version vs cuBLAS at 256..8192)
#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int kBM = 128, kBN = 128, kBK = 8;  // block tile
constexpr int kTM = 8, kTN = 8;               // thread tile
constexpr int kThreadsN = kBN / kTN;          // 16 threads along n
constexpr int kThreads = (kBM / kTM) * kThreadsN;  // 256
constexpr int kCols = 128;                    // both tiles are kBK x 128: As[k][m], Bs[k][n]
static_assert(kBM == kCols && kBN == kCols, "one layout serves both tiles");
static_assert(kBM * kBK == 4 * kThreads && kBK * kBN == 4 * kThreads, "one float4 per thread");
// Sizes below 2^30: a tile origin plus a tile edge never overflows a 32-bit int. Element offsets
// (row * K passes 2^31 long before that) are 64-bit.
constexpr int64_t kMaxDim = int64_t(1) << 30;

// ---- kernels ------------------------------------------------------------------------------------
// Layouts: float offset of tile element (row, col), row < kBK, col < kCols; kFloats: array size.
struct Linear {
  static constexpr int kFloats = kBK * kCols;
  __host__ __device__ static constexpr int at(int row, int col) { return row * kCols + col; }
};
struct PaddedRows {
  static constexpr int kStride = kCols + 4;
  static constexpr int kFloats = kBK * kStride;
  __host__ __device__ static constexpr int at(int row, int col) { return row * kStride + col; }
};
struct Padded {
  static constexpr int kStride = kCols + 4 * (kCols / 32) + 4;  // 148
  static constexpr int kFloats = kBK * kStride;
  __host__ __device__ static constexpr int at(int row, int col) {
    return row * kStride + col + 4 * (col >> 5);
  }
};
struct Swizzled {
  static constexpr int kFloats = kBK * kCols;
  __host__ __device__ static constexpr int at(int row, int col) {
    const int c = col >> 2;  // 16-byte chunk
    return row * kCols + ((c ^ ((c >> 3) & 1) ^ (row & 4)) << 2) + (col & 3);
  }
};

// Every (row, col) of the tile gets its own float of the array, and every float4 group
// (col % 4 == 0) stays contiguous and 16-byte aligned: what the kernel's float4 accesses need.
template <class L>
constexpr bool layout_is_valid() {
  bool used[L::kFloats] = {};
  for (int r = 0; r < kBK; ++r)
    for (int c = 0; c < kCols; ++c) {
      const int o = L::at(r, c);
      if (o < 0 || o >= L::kFloats || used[o]) return false;
      used[o] = true;
      if (c % 4 == 0 && o % 4 != 0) return false;
      if (c % 4 != 0 && o != L::at(r, c - c % 4) + c % 4) return false;
    }
  return true;
}
static_assert(layout_is_valid<Linear>() && layout_is_valid<PaddedRows>() &&
                  layout_is_valid<Padded>() && layout_is_valid<Swizzled>(),
              "a layout must be one-to-one and keep float4 groups intact");

// Who touches which tile element (thread t = 0..255), per k-tile. Shared by kernel and model.
//   A store   4 requests, 4 bytes:  t writes As[k = 4 (t % 2) + j][m = t / 2], j = 0..3
//                                   (the transposing store of the float4 it read from A)
//   B store   1 request, 16 bytes:  t writes Bs[k = t / 32][n = 4 (t % 32) .. +3]
//   A frag   16 requests, 16 bytes: t reads As[d][8 (t / 16) + 4h .. +3], d = 0..7, h = 0, 1
//   B frag   16 requests, 16 bytes: t reads Bs[d][8 (t % 16) + 4h .. +3]
__host__ __device__ constexpr int a_store_row(int t, int j) { return (t % 2) * 4 + j; }
__host__ __device__ constexpr int a_store_col(int t) { return t / 2; }
__host__ __device__ constexpr int b_store_row(int t) { return t / 32; }
__host__ __device__ constexpr int b_store_col(int t) { return (t % 32) * 4; }
__host__ __device__ constexpr int a_frag_col(int t, int h) { return (t / kThreadsN) * kTM + 4 * h; }
__host__ __device__ constexpr int b_frag_col(int t, int h) { return (t % kThreadsN) * kTN + 4 * h; }

// Four consecutive floats row[col .. col+3] of a row with `cols` columns, zeros past its end;
// one 16-byte load when the row is 16-byte aligned (vec_ok) and all four are inside it.
__device__ __forceinline__ float4 load4(const float* __restrict__ row, int col, int cols,
                                        bool vec_ok) {
  if (vec_ok && col + 3 < cols) return *reinterpret_cast<const float4*>(row + col);
  float4 v;
  v.x = col < cols ? row[col] : 0.0f;
  v.y = col + 1 < cols ? row[col + 1] : 0.0f;
  v.z = col + 2 < cols ? row[col + 2] : 0.0f;
  v.w = col + 3 < cols ? row[col + 3] : 0.0f;
  return v;
}

// Day 015's vectorized kernel with the shared-memory layout L for both tiles.
template <class L>
__global__ void __launch_bounds__(kThreads, 2)
    sgemm_layout(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                 int M, int N, int K, int tiles_n, bool a_vec, bool b_vec, bool c_vec) {
  __shared__ __align__(16) float As[L::kFloats];  // [k][m]
  __shared__ __align__(16) float Bs[L::kFloats];  // [k][n]

  const int tile_m = int(blockIdx.x) / tiles_n;
  const int m0 = tile_m * kBM;
  const int n0 = (int(blockIdx.x) - tile_m * tiles_n) * kBN;
  const int tid = int(threadIdx.x);
  const int ty = tid / kThreadsN, tx = tid % kThreadsN;

  float acc[kTM][kTN] = {};

  for (int k0 = 0; k0 < K; k0 += kBK) {
    // A: 4 consecutive k of tile row a_store_col(tid), written down a column of As[k][m].
    const int am = a_store_col(tid), ak = a_store_row(tid, 0);
    float4 va = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (m0 + am < M) va = load4(A + int64_t(m0 + am) * K, k0 + ak, K, a_vec);
    As[L::at(a_store_row(tid, 0), am)] = va.x;
    As[L::at(a_store_row(tid, 1), am)] = va.y;
    As[L::at(a_store_row(tid, 2), am)] = va.z;
    As[L::at(a_store_row(tid, 3), am)] = va.w;
    // B: 4 consecutive n of tile row b_store_row(tid), stored as one float4.
    const int bk = b_store_row(tid), bn = b_store_col(tid);
    float4 vb = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (k0 + bk < K) vb = load4(B + int64_t(k0 + bk) * N, n0 + bn, N, b_vec);
    *reinterpret_cast<float4*>(&Bs[L::at(bk, bn)]) = vb;
    __syncthreads();  // tiles complete before anyone reads them

#pragma unroll
    for (int d = 0; d < kBK; ++d) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[L::at(d, a_frag_col(tid, 0))]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[L::at(d, a_frag_col(tid, 1))]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[L::at(d, b_frag_col(tid, 0))]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[L::at(d, b_frag_col(tid, 1))]);
      const float a[kTM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[kTN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // everyone is done reading before the next tile overwrites them
  }

  // The thread's 8 x 8 block of C: rows ty * 8 + i, columns tx * 8 + h .. +3 (a_frag_col and
  // b_frag_col of h = 0, 1), float4 stores where allowed.
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int gm = m0 + ty * kTM + i;
    if (gm >= M) break;  // no barrier follows
    float* c_row = C + int64_t(gm) * N;
#pragma unroll
    for (int h = 0; h < kTN; h += 4) {
      const int gn = n0 + tx * kTN + h;
      if (c_vec && gn + 3 < N) {
        *reinterpret_cast<float4*>(c_row + gn) =
            make_float4(acc[i][h], acc[i][h + 1], acc[i][h + 2], acc[i][h + 3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (gn + j < N) c_row[gn + j] = acc[i][h + j];
      }
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------
template <class L>
void launch_layout(const gpu100::GemmOperands& o, cudaStream_t s) {
  const auto* A = static_cast<const float*>(o.A);
  const auto* B = static_cast<const float*>(o.B);
  auto* C = static_cast<float*>(o.C);
  const int64_t tiles_m = gpu100::ceil_div<int64_t>(o.m, kBM);
  const int64_t tiles_n = gpu100::ceil_div<int64_t>(o.n, kBN);
  if (tiles_m * tiles_n > int64_t(INT32_MAX))
    throw std::invalid_argument("more 128 x 128 tiles than gridDim.x allows");
  // 16-byte accesses need every row start 16-byte aligned: an aligned base and a row stride that
  // is a multiple of 4 floats.
  const bool a_vec = o.k % 4 == 0 && gpu100::is_aligned(A, 16);
  const bool b_vec = o.n % 4 == 0 && gpu100::is_aligned(B, 16);
  const bool c_vec = o.n % 4 == 0 && gpu100::is_aligned(C, 16);
  sgemm_layout<L><<<unsigned(tiles_m * tiles_n), kThreads, 0, s>>>(
      A, B, C, int(o.m), int(o.n), int(o.k), int(tiles_n), a_vec, b_vec, c_vec);
  LAUNCH_CHECK();
}

using Layout = int (*)(int row, int col);  // L::at: float offset of tile element (row, col)

struct Version {
  const char* name;
  gpu100::GemmLauncher launch;
  Layout at;       // for the bank model
  int smem_bytes;  // both tiles
};
const Version kVersions[] = {
    {"linear", launch_layout<Linear>, Linear::at, 2 * Linear::kFloats * 4},
    {"padded_rows", launch_layout<PaddedRows>, PaddedRows::at, 2 * PaddedRows::kFloats * 4},
    {"padded", launch_layout<Padded>, Padded::at, 2 * Padded::kFloats * 4},
    {"swizzled", launch_layout<Swizzled>, Swizzled::at, 2 * Swizzled::kFloats * 4},
};

std::vector<gpu100::GemmVersion> gemm_versions() {
  std::vector<gpu100::GemmVersion> v;
  for (const Version& x : kVersions) v.push_back({x.name, x.launch});
  return v;
}

// ---- analysis: the bank model -------------------------------------------------------------------
// words[lane]: first 4-byte word the lane accesses; width: words per lane (1 or 4). Returns the
// wavefronts of the request.
int wavefronts(const std::array<int, 32>& words, int width) {
  const int phase = 32 / width;  // lanes served together: 32 for 4-byte, 8 for 16-byte accesses
  int total = 0;
  for (int first = 0; first < 32; first += phase) {
    std::array<std::set<int>, 32> in_bank;  // distinct words per bank
    for (int lane = first; lane < first + phase; ++lane)
      for (int w = 0; w < width; ++w) in_bank[size_t((words[size_t(lane)] + w) % 32)].insert(
          words[size_t(lane)] + w);
    size_t worst = 0;
    for (const auto& s : in_bank) worst = std::max(worst, s.size());
    total += int(worst);
  }
  return total;
}

struct AccessCost {
  double per_request = 0;  // wavefronts, averaged over the 8 warps and all requests of a k-tile
  int requests = 0;        // per warp per k-tile
  int ideal = 0;           // wavefronts per request without conflicts
};

// The four accesses of one k-tile (A store, B store, A frag, B frag) under the layout `at`.
std::array<AccessCost, 4> layout_costs(Layout at) {
  std::array<AccessCost, 4> cost;
  auto add = [&](AccessCost& c, int width, auto word_of_lane) {
    for (int w = 0; w < kThreads / 32; ++w) {
      std::array<int, 32> words{};
      for (int lane = 0; lane < 32; ++lane) words[size_t(lane)] = word_of_lane(32 * w + lane);
      c.per_request += wavefronts(words, width);
    }
    c.ideal = width == 1 ? 1 : 4;
  };
  for (int j = 0; j < 4; ++j)
    add(cost[0], 1, [&](int t) { return at(a_store_row(t, j), a_store_col(t)); });
  cost[0].requests = 4;
  add(cost[1], 4, [&](int t) { return at(b_store_row(t), b_store_col(t)); });
  cost[1].requests = 1;
  for (int d = 0; d < kBK; ++d)
    for (int h = 0; h < 2; ++h) {
      add(cost[2], 4, [&](int t) { return at(d, a_frag_col(t, h)); });
      add(cost[3], 4, [&](int t) { return at(d, b_frag_col(t, h)); });
    }
  cost[2].requests = cost[3].requests = 2 * kBK;
  for (auto& c : cost) c.per_request /= double(c.requests * (kThreads / 32));
  return cost;
}

// Per layout: wavefronts per warp request of each access, and in all per warp per k-tile, next
// to the measured time of that layout.
gpu100::Table bank_table(const gpu100::Report& report) {
  std::vector<std::array<AccessCost, 4>> costs;
  for (const Version& v : kVersions) costs.push_back(layout_costs(v.at));
  gpu100::Table t;
  t.title = "shared-memory wavefronts per warp request (model: 32 banks x 4 B; 16-byte "
            "accesses served by quarter-warps)";
  t.columns = {"access", "bytes/lane", "requests/warp/k-tile", "ideal"};
  for (const Version& v : kVersions) t.columns.push_back(v.name);
  const char* access_names[4] = {"A store (transposing)", "B store", "A frag load",
                                 "B frag load"};
  for (size_t i = 0; i < 4; ++i) {
    const AccessCost& c0 = costs[0][i];
    std::vector<gpu100::Cell> row = {access_names[i], c0.ideal == 1 ? 4 : 16, c0.requests,
                                     c0.ideal};
    for (const auto& c : costs) row.emplace_back(c[i].per_request);
    t.add_row(std::move(row));
  }
  double ideal = 0;
  for (const AccessCost& c : costs[0]) ideal += c.ideal * c.requests;
  std::vector<gpu100::Cell> all = {"all, per warp per k-tile", "", "", ideal};
  for (const auto& cost : costs) {
    double sum = 0;
    for (const AccessCost& c : cost) sum += c.per_request * c.requests;
    all.emplace_back(sum);
  }
  t.add_row(std::move(all));
  std::vector<gpu100::Cell> smem = {"shared memory per block (bytes)", "", "", ""};
  for (const Version& v : kVersions) smem.emplace_back(v.smem_bytes);
  t.add_row(std::move(smem));
  std::vector<gpu100::Cell> measured = {"measured median ms", "", "", ""};
  for (const Version& v : kVersions) {
    const gpu100::VersionResult* r = report.find(v.name);
    measured.push_back(r && r->time.valid() ? gpu100::Cell(r->time.median_ms) : gpu100::Cell("-"));
  }
  t.add_row(std::move(measured));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "C = A * B in fp32 (row-major), day 015's vectorized kernel with linear, row-padded, padded "
      "and XOR-swizzled shared-memory tiles; bank conflicts counted by a model; vs cublasSgemm");
  gpu100::GemmArgs args;  // --m --n --k --sweep
  args.add_to(cli, kMaxDim);
  cli.kernels_of(kVersions);

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    gpu100::GemmProblem problem(ctx, args.m, args.n, args.k);
    problem.run(gemm_versions(), args.sweep);
    ctx.report().table(bank_table(ctx.report()));
    ctx.report().note("bank model: computed on the host from the kernel's own index functions; a "
                      "profiler's l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st} counts "
                      "what the chip did");
  });
}
