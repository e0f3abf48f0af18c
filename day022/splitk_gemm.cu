// Day 022 - split-K GEMM: when K is long and M x N is small
//
// A tiled GEMM gives each thread block one tile of C and walks the whole K dimension. That is
// the right shape for 4096^3 (4096 tiles of 64 x 64 keep every SM busy for many waves), and the
// wrong one for C = A * B with M = N = 512 and K = 131072: the same FLOPs as a 1600^3 GEMM, but
// only 64 output tiles, 64 blocks for a GPU of 132 SMs, each running one long serial loop over K.
// Split-K cuts the K loop instead of C: block (tile, s) computes the tile's partial product over
// the s-th slice of K, so tiles x splits blocks run at once. The partials must then be summed,
// and that is the design choice of the day:
//   workspace  every split writes its partial tile to its own slice of a workspace; a second
//              kernel adds the slices in the fixed order 0, 1, ..., S - 1: the same bits on
//              every run, for one extra write + read of S x M x N floats and a second launch.
//   atomic     C is zeroed (cudaMemsetAsync, timed: part of the work) and every split atomicAdds
//              its partial tile into C (atom.global.add.f32): one GEMM launch, no workspace, but
//              the order of the additions, and so the last bits of C, change from run to run.
//
// The tile kernel (shared by all versions): 64 x 64 tile per block of 256 threads, a 4 x 4
// register tile per thread, K in steps of 16 through double-buffered shared memory with register
// prefetch, A stored transposed; 16-byte loads where a row is aligned and the four elements are
// in range, scalar with zero fill otherwise. Split s covers K steps [s kt / S, (s + 1) kt / S).
//
// Versions (TFLOP/s count 2 M N K; the reduction's adds are not counted)
//   no_split          the tile kernel alone (S = 1): the under-filled GPU
//   splitk_workspace  --splits S (default: auto, from a model of waves: auto_splits) + the
//                     ordered reduction
//   splitk_atomic     the same S, atomicAdd into a zeroed C
// A table then runs both split-K versions over split counts 1, 2, 3, 4, 6, ... (every point
// checked). --sweep adds gemm_sweep's square curve of splitk_workspace vs cuBLAS and a K sweep at
// this M x N (K = k/64 ... k) of no_split, splitk_workspace and cuBLAS, every point checked.
// Baseline: cublasSgemm (plain FP32, no TF32), which picks its own strategy for this shape.
//
// Check: CPU double at every entry for --quick, ~4096 sampled entries (corners, last row and
// column, random) at the full size; the reference is computed once and shared. Tolerance:
// gemm_tolerance(K), the random-walk model of a length-K fp32 dot product with 4x margin, which
// holds for any order of the partial sums (the atomic version's order changes from run to run).
//
// Run:  build/bin/day022 [--m 512 --n 512 --k 131072] [--splits 12] [--kernel splitk_atomic]
//                        [--sweep]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpu100/gemm.h"
#include "gpu100/gpu100.h"

namespace {

constexpr int kBM = 64, kBN = 64, kBK = 16;  // block tile of C, K step
constexpr int kThreads = 256;                // 16 x 16 threads, a 4 x 4 register tile each
constexpr int kTM = 4, kTN = 4;
constexpr int kAPad = 4;  // As rows of 68 floats: 272 bytes, so float4 reads stay aligned
static_assert(kBM * kBK == 4 * kThreads && kBK * kBN == 4 * kThreads, "one float4 per thread");
static_assert((kBM / kTM) * (kBN / kTN) == kThreads, "the register tiles cover the block tile");
constexpr int64_t kIntMax = 2147483647;  // cuBLAS dimensions are int

// ---- CPU reference ------------------------------------------------------------------------------
struct Reference {
  std::vector<std::pair<int64_t, int64_t>> points;
  std::vector<double> value;
};

// B is transposed first so that each sampled entry is a dot product of two contiguous rows.
// a: row-major m x k, b: row-major k x n (the first m k and k n floats of the arrays).
Reference make_reference(const float* a, const float* b, int64_t m, int64_t n, int64_t k,
                         uint64_t seed) {
  Reference r;
  r.points = gpu100::gemm_check_points(m, n, k, seed);
  std::vector<float> bt(size_t(n) * size_t(k));
  constexpr int64_t kBlock = 64;
  for (int64_t p0 = 0; p0 < k; p0 += kBlock)
    for (int64_t j0 = 0; j0 < n; j0 += kBlock)
      for (int64_t p = p0; p < std::min(p0 + kBlock, k); ++p)
        for (int64_t j = j0; j < std::min(j0 + kBlock, n); ++j)
          bt[size_t(j * k + p)] = b[size_t(p * n + j)];
  r.value.resize(r.points.size());
  for (size_t t = 0; t < r.points.size(); ++t) {
    const float* x = a + size_t(r.points[t].first * k);
    const float* y = bt.data() + size_t(r.points[t].second * k);
    double s[4] = {0, 0, 0, 0};  // four chains: the loop is not one long dependent add
    int64_t p = 0;
    for (; p + 4 <= k; p += 4)
      for (int q = 0; q < 4; ++q) s[q] += double(x[p + q]) * double(y[p + q]);
    for (; p < k; ++p) s[0] += double(x[p]) * double(y[p]);
    r.value[t] = (s[0] + s[1]) + (s[2] + s[3]);
  }
  return r;
}

gpu100::CheckResult check_c(const std::vector<float>& c, const Reference& ref, int64_t n,
                            gpu100::Tolerance tol) {
  gpu100::ErrorStats e(tol);
  for (size_t t = 0; t < ref.points.size(); ++t) {
    const auto [i, j] = ref.points[t];
    e.add(double(c[size_t(i * n + j)]), ref.value[t], i * n + j);
  }
  return e.finish();
}

// ---- kernels ------------------------------------------------------------------------------------
enum class Epilogue { kStore, kAtomic };

// Four consecutive floats p[0..3] of a row, elements at or past `limit` read as 0. `vec`: the row
// is 16-byte aligned here (row stride a multiple of 4 floats, offset a multiple of 4).
__device__ __forceinline__ float4 load4(const float* __restrict__ p, int64_t idx, int64_t limit,
                                        bool vec) {
  if (vec && idx + 3 < limit) return __ldg(reinterpret_cast<const float4*>(p));
  float4 v;
  v.x = idx < limit ? __ldg(p) : 0.0f;
  v.y = idx + 1 < limit ? __ldg(p + 1) : 0.0f;
  v.z = idx + 2 < limit ? __ldg(p + 2) : 0.0f;
  v.w = idx + 3 < limit ? __ldg(p + 3) : 0.0f;
  return v;
}

// Block (blockIdx.x = tile, blockIdx.y = split) multiplies its tile over its slice of K steps.
// kStore writes the partial tile to out + split * slice (slice = 0 and splits = 1: C itself;
// slice = M * N: the split's workspace slice); kAtomic adds it into out (= C, zeroed before).
template <Epilogue kEpilogue>
__global__ void __launch_bounds__(kThreads)
    splitk_tile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ out,
                int64_t M, int64_t N, int64_t K, unsigned tiles_n, int64_t k_steps, int splits,
                int64_t slice) {
  __shared__ __align__(16) float As[2][kBK][kBM + kAPad];
  __shared__ __align__(16) float Bs[2][kBK][kBN];

  const unsigned tile_m = blockIdx.x / tiles_n;  // 32-bit division: tiles < 2^31
  const unsigned tile_n = blockIdx.x - tile_m * tiles_n;
  const int split = int(blockIdx.y);
  const int64_t row0 = int64_t(tile_m) * kBM, col0 = int64_t(tile_n) * kBN;
  const int tid = int(threadIdx.x);

  // Loaders: A tile 64 rows x 16 k (4 threads per row, 64 contiguous bytes), B tile 16 k x 64
  // columns (16 threads per row, 256 contiguous bytes). Compute: rows ty*4.., columns tx*4...
  const int a_row = tid / 4, a_k = (tid % 4) * 4;
  const int b_k = tid / 16, b_col = (tid % 16) * 4;
  const int ty = tid / 16, tx = tid % 16;
  const bool a_vec = (K % 4) == 0, b_vec = (N % 4) == 0;
  const int64_t ar = row0 + a_row, bc = col0 + b_col;

  const int64_t step_begin = int64_t(split) * k_steps / splits;
  const int64_t step_end = int64_t(split + 1) * k_steps / splits;

  float acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = 0.0f;

  float4 ra, rb;
  auto load = [&](int64_t step) {
    const int64_t k0 = step * kBK;
    const int64_t ak = k0 + a_k, bk = k0 + b_k;
    ra = ar < M ? load4(A + ar * K + ak, ak, K, a_vec) : make_float4(0.f, 0.f, 0.f, 0.f);
    rb = bk < K ? load4(B + bk * N + bc, bc, N, b_vec) : make_float4(0.f, 0.f, 0.f, 0.f);
  };
  auto store = [&](int stage) {
    As[stage][a_k + 0][a_row] = ra.x;
    As[stage][a_k + 1][a_row] = ra.y;
    As[stage][a_k + 2][a_row] = ra.z;
    As[stage][a_k + 3][a_row] = ra.w;
    *reinterpret_cast<float4*>(&Bs[stage][b_k][b_col]) = rb;
  };

  // step_begin and step_end depend on blockIdx only: the branch and the loop are uniform over
  // the block, so the barriers inside are reached by every thread.
  if (step_begin < step_end) {
    load(step_begin);
    store(0);
    __syncthreads();
    for (int64_t step = step_begin; step < step_end; ++step) {
      const int stage = int((step - step_begin) & 1);
      const bool more = step + 1 < step_end;
      if (more) load(step + 1);  // in flight while this step's FMAs run
#pragma unroll
      for (int kk = 0; kk < kBK; ++kk) {
        const float4 a = *reinterpret_cast<const float4*>(&As[stage][kk][ty * kTM]);
        const float4 b = *reinterpret_cast<const float4*>(&Bs[stage][kk][tx * kTN]);
        const float av[kTM] = {a.x, a.y, a.z, a.w};
        const float bv[kTN] = {b.x, b.y, b.z, b.w};
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
          for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
      // The other buffer was last read in the previous step, before the barrier that ended it.
      if (more) store(stage ^ 1);
      __syncthreads();
    }
  } else if constexpr (kEpilogue == Epilogue::kAtomic) {
    return;  // an empty split has nothing to add (no barrier follows)
  }

  const int64_t c0 = col0 + tx * kTN;
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int64_t r = row0 + ty * kTM + i;
    if (r >= M) break;
    if constexpr (kEpilogue == Epilogue::kAtomic) {
      float* dst = out + r * N + c0;
#pragma unroll
      for (int j = 0; j < kTN; ++j)
        if (c0 + j < N) atomicAdd(dst + j, acc[i][j]);
    } else {
      float* dst = out + int64_t(split) * slice + r * N + c0;
      if (b_vec && c0 + 3 < N) {  // N % 4 == 0: rows (and M*N-float slices) 16-byte aligned
        *reinterpret_cast<float4*>(dst) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      } else {
#pragma unroll
        for (int j = 0; j < kTN; ++j)
          if (c0 + j < N) dst[j] = acc[i][j];
      }
    }
  }
}

// C[i] = sum over s = 0, 1, ..., splits - 1 of ws[s * mn + i], always in that order, so the
// result does not depend on scheduling. kVec4 (mn % 4 == 0): every slice is 16-byte aligned.
template <bool kVec4>
__global__ void reduce_splits(const float* __restrict__ ws, float* __restrict__ C, int64_t mn,
                              int splits) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (kVec4) {
    const int64_t n4 = mn / 4;
    const float4* w = reinterpret_cast<const float4*>(ws);
    float4* c = reinterpret_cast<float4*>(C);
    for (int64_t i = first; i < n4; i += stride) {
      float4 sum = w[i];
      for (int s = 1; s < splits; ++s) {
        const float4 v = w[int64_t(s) * n4 + i];
        sum.x += v.x;
        sum.y += v.y;
        sum.z += v.z;
        sum.w += v.w;
      }
      c[i] = sum;
    }
  } else {
    for (int64_t i = first; i < mn; i += stride) {
      float sum = ws[i];
      for (int s = 1; s < splits; ++s) sum += ws[int64_t(s) * mn + i];
      C[i] = sum;
    }
  }
}

// ---- launchers ---------------------------------------------------------------------------------
struct Shape {
  int64_t m, n, k;
  int64_t k_steps() const { return gpu100::ceil_div<int64_t>(k, kBK); }
  unsigned tiles_n() const { return unsigned(gpu100::ceil_div<int64_t>(n, kBN)); }
  unsigned tiles() const {
    return unsigned(gpu100::ceil_div<int64_t>(m, kBM) * gpu100::ceil_div<int64_t>(n, kBN));
  }
};

// splits = 1 writes C directly; otherwise the splits fill the workspace (>= splits * m * n
// floats) and reduce_splits sums it into C.
void launch_workspace(const Shape& sh, const float* A, const float* B, float* C, float* ws,
                      int splits, cudaStream_t s) {
  const dim3 grid(sh.tiles(), unsigned(splits));
  const int64_t mn = sh.m * sh.n;
  if (splits == 1) {
    splitk_tile<Epilogue::kStore>
        <<<grid, kThreads, 0, s>>>(A, B, C, sh.m, sh.n, sh.k, sh.tiles_n(), sh.k_steps(), 1, 0);
    LAUNCH_CHECK();
    return;
  }
  splitk_tile<Epilogue::kStore><<<grid, kThreads, 0, s>>>(A, B, ws, sh.m, sh.n, sh.k, sh.tiles_n(),
                                                          sh.k_steps(), splits, mn);
  LAUNCH_CHECK();
  constexpr int kBlock = 256;
  if (mn % 4 == 0) {
    static const unsigned g = gpu100::resident_grid(reduce_splits<true>, kBlock);
    const unsigned grid_r =
        unsigned(std::min<int64_t>(g, gpu100::ceil_div<int64_t>(mn / 4, kBlock)));
    reduce_splits<true><<<grid_r, kBlock, 0, s>>>(ws, C, mn, splits);
  } else {
    static const unsigned g = gpu100::resident_grid(reduce_splits<false>, kBlock);
    const unsigned grid_r = unsigned(std::min<int64_t>(g, gpu100::ceil_div<int64_t>(mn, kBlock)));
    reduce_splits<false><<<grid_r, kBlock, 0, s>>>(ws, C, mn, splits);
  }
  LAUNCH_CHECK();
}

void launch_atomic(const Shape& sh, const float* A, const float* B, float* C, int splits,
                   cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(C, 0, size_t(sh.m * sh.n) * sizeof(float), s));
  const dim3 grid(sh.tiles(), unsigned(splits));
  splitk_tile<Epilogue::kAtomic>
      <<<grid, kThreads, 0, s>>>(A, B, C, sh.m, sh.n, sh.k, sh.tiles_n(), sh.k_steps(), splits, 0);
  LAUNCH_CHECK();
}

// The split count from a model of waves: with R blocks resident at once, tiles x S blocks run in
// ceil(tiles S / R) waves of ceil(k_steps / S) K steps each, and their product is the length of
// the busiest block slot's chain of work. The smallest S within 5% of the best S's chain wins
// (each extra split costs a partial tile written and read again), with at least
// kMinStepsPerSplit K steps per split (a split's partial tile, 16 KB written and read again, must
// stay small next to the 8 KB per K step it loads). A "one wave" rule, ceil(R / tiles), would
// be wrong by a wave: R = 528 resident blocks and 64 tiles give S = 9, 576 blocks, and the last
// 48 run alone in a second wave as long as the first; the model picks S = 8 (one wave).
constexpr int64_t kMinStepsPerSplit = 8;
constexpr int64_t kMaxAutoSplits = 128;  // the split table's largest count
int auto_splits(const Shape& sh) {
  static const unsigned resident = gpu100::resident_grid(splitk_tile<Epilogue::kStore>, kThreads);
  const int64_t tiles = sh.tiles(), steps = sh.k_steps();
  const int64_t max_s = std::clamp<int64_t>(steps / kMinStepsPerSplit, 1, kMaxAutoSplits);
  auto chain = [&](int64_t s) {
    return gpu100::ceil_div<int64_t>(tiles * s, resident) * gpu100::ceil_div<int64_t>(steps, s);
  };
  int64_t best = chain(1);
  for (int64_t s = 2; s <= max_s; ++s) best = std::min(best, chain(s));
  for (int64_t s = 1; s <= max_s; ++s)
    if (double(chain(s)) <= 1.05 * double(best)) return int(s);
  return 1;
}

// What the versions run on: the shape, the inputs, C and the workspace of the splits.
struct Operands {
  Shape sh;
  const float *A, *B;
  float *C, *W;
};

struct Version {
  const char* name;
  bool split;   // false: one split (the tile kernel alone)
  bool atomic;  // the partial tiles are atomicAdded into C instead of reduced in order
};
const Version kVersions[] = {
    {"no_split", false, false},
    {"splitk_workspace", true, false},
    {"splitk_atomic", true, true},
};

void launch(const Version& v, const Operands& o, int splits, cudaStream_t s) {
  if (v.atomic)
    launch_atomic(o.sh, o.A, o.B, o.C, splits, s);
  else
    launch_workspace(o.sh, o.A, o.B, o.C, o.W, v.split ? splits : 1, s);
}

// ---- analysis -----------------------------------------------------------------------------------
// The split counts of the table, and the run's own S: up to one split per K step (more would only
// add empty splits).
std::vector<int> split_counts(const Shape& sh, int S) {
  std::vector<int> counts;
  for (int s : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128})
    if (s <= sh.k_steps()) counts.push_back(s);
  if (std::find(counts.begin(), counts.end(), S) == counts.end()) counts.push_back(S);
  std::sort(counts.begin(), counts.end());
  return counts;
}

// A table of measured points and the combined check of all of them (a wrong point fails the day).
struct Points {
  gpu100::Table table;
  gpu100::CheckResult all;
};

// One point: reset, run and check once (a failure is noted), then timed; ignores --kernel.
gpu100::Measured point(gpu100::Context& ctx, Points& p, const std::string& where,
                       std::function<void(cudaStream_t)> launch, std::function<void()> reset,
                       std::function<gpu100::CheckResult()> check, double flops,
                       bool vendor = false) {
  const gpu100::Measured r = ctx.measure({.name = where,
                                          .launch = std::move(launch),
                                          .reset = std::move(reset),
                                          .check = std::move(check),
                                          .work = flops,
                                          .role = gpu100::Role::point,
                                          .vendor = vendor});
  if (!r.ran) return r;
  p.all = gpu100::combine(p.all, r.check);
  if (!r.check.pass) ctx.report().note(fmt::format("{}: {}", where, r.check.describe()));
  return r;
}

// Both split-K versions over the split counts of the table.
Points split_table(gpu100::Context& ctx, const Operands& o, const std::vector<int>& counts,
                   const std::function<void()>& reset,
                   const std::function<gpu100::CheckResult()>& check, double base_rate) {
  Points p;
  p.table.title = "split-K by number of splits (TFLOP/s; % of cublasSgemm)";
  p.table.columns = {"splits",         "workspace ms",  "workspace TFLOP/s",
                     "atomic ms",      "atomic TFLOP/s", "workspace % of cublasSgemm",
                     "atomic % of cublasSgemm"};
  const double flops = gpu100::gemm_flops(o.sh.m, o.sh.n, o.sh.k);
  for (int s : counts) {
    const auto w = point(ctx, p, "split table",
                         [&, s](cudaStream_t st) { launch(kVersions[1], o, s, st); }, reset, check,
                         flops);
    const auto a = point(ctx, p, "split table",
                         [&, s](cudaStream_t st) { launch(kVersions[2], o, s, st); }, reset, check,
                         flops);
    const double pct = base_rate > 0 ? 100.0 / base_rate : 0.0;  // no cuBLAS under the emulator
    p.table.add_row(
        {s, w.time.median_ms, w.rate, a.time.median_ms, a.rate, pct * w.rate, pct * a.rate});
  }
  return p;
}

// The shape split-K is for: this run's M x N, K from k/64 up to k. The first m K' and K' n floats
// of A and B are a valid row-major m x K' and K' x n pair (other values, same distribution), so no
// new inputs are needed; each point is checked at sampled entries against its own CPU reference.
// The workspace holds the splits: auto picks at most min(k_steps / 8, 128), never more than the
// split table's largest count. C and the workspace are poisoned before every point.
Points k_sweep(gpu100::Context& ctx, const Operands& o, const std::vector<float>& a,
               const std::vector<float>& b, const Reference& ref,
               const std::function<void()>& reset, const gpu100::GemmLauncher& cublas,
               gpu100::DeviceBuffer<float>& d_c) {
  const int64_t m = o.sh.m, n = o.sh.n, k = o.sh.k;
  Points p;
  p.table.title = "K sweep at this M x N: no_split vs splitk_workspace (auto splits) vs cuBLAS";
  p.table.columns = {"K",          "no_split TFLOP/s",        "splitk TFLOP/s",
                     "cublasSgemm TFLOP/s",                   "splitk % of cublasSgemm",
                     "splitk / no_split", "splits"};
  std::vector<int64_t> ks;
  for (int64_t div : {64, 16, 4, 1}) {
    const int64_t kk = std::max<int64_t>(1, k / div);
    if (ks.empty() || ks.back() != kk) ks.push_back(kk);
  }
  for (const int64_t kk : ks) {
    const Operands q{{m, n, kk}, o.A, o.B, o.C, o.W};
    const int sq = auto_splits(q.sh);
    const Reference rq =
        kk == k ? ref : make_reference(a.data(), b.data(), m, n, kk, ctx.seed());
    const gpu100::Tolerance tq = gpu100::gemm_tolerance(kk);
    auto check = [&] { return check_c(d_c.download(), rq, n, tq); };
    const std::string where = fmt::format("K sweep at K = {}", kk);
    const double fl = gpu100::gemm_flops(m, n, kk);
    const auto r0 = point(ctx, p, where,
                          [&](cudaStream_t st) { launch(kVersions[0], q, sq, st); }, reset, check,
                          fl);
    const auto r1 = point(ctx, p, where,
                          [&](cudaStream_t st) { launch(kVersions[1], q, sq, st); }, reset, check,
                          fl);
    // cuBLAS is checked at every K too: its rate is the column the split version is judged by.
    const gpu100::GemmOperands opq{m, n, kk, o.A, o.B, o.C};
    const auto rb = point(ctx, p, where, [&](cudaStream_t st) { cublas(opq, st); }, reset, check,
                          fl, /*vendor=*/true);
    p.table.add_row({kk, r0.rate, r1.rate, rb.rate, rb.rate > 0 ? 100.0 * r1.rate / rb.rate : 0.0,
                     r0.rate > 0 ? r1.rate / r0.rate : 0.0, std::to_string(sq)});
  }
  return p;
}

// gemm_sweep's square sizes, splitk_workspace (auto splits) vs cuBLAS. Square is the shape
// split-K is NOT for: once the tiles alone fill the GPU (2048^3 and up with ~500 resident blocks)
// auto_splits returns 1, and the curve measures the plain 64 x 64 tile kernel (day 014's level of
// design) against cuBLAS. Only at 256 to 1024 (16 to 256 tiles) do a few splits help fill the SMs.
void square_sweep(gpu100::Context& ctx, const gpu100::GemmLauncher& cublas) {
  gpu100::DeviceBuffer<float> sweep_ws;
  int64_t ws_for = -1;  // the size whose first call has been made
  gpu100::GemmSweep sw;
  sw.version = "splitk_workspace";
  sw.launch = [&](const gpu100::GemmOperands& o, cudaStream_t s) {
    const Shape q{o.m, o.n, o.k};
    const int qs = auto_splits(q);
    const size_t need = qs > 1 ? size_t(qs) * size_t(q.m) * size_t(q.n) : 0;
    // gemm_sweep's first call of a size is its checked, untimed run (it poisons C only): grow
    // the workspace there, never while timing, and poison it like the main run does, so a
    // split that forgets its slice fails the check instead of reusing an older size's data.
    if (o.m != ws_for) {
      ws_for = o.m;
      if (need > sweep_ws.size()) sweep_ws = gpu100::DeviceBuffer<float>(need);
      if (sweep_ws.size() > 0) sweep_ws.poison();
    }
    launch_workspace(q, static_cast<const float*>(o.A), static_cast<const float*>(o.B),
                     static_cast<float*>(o.C), sweep_ws.data(), qs, s);
  };
  sw.baseline = "cublasSgemm";
  sw.baseline_launch = cublas;
  gpu100::gemm_sweep(ctx, sw);
}

// Same inputs, two runs of splitk_atomic: how many entries did the arrival order of the splits
// change?
size_t atomic_bits_that_differ(const Operands& o, int splits, gpu100::DeviceBuffer<float>& d_c) {
  auto run_once = [&] {
    launch_atomic(o.sh, o.A, o.B, o.C, splits, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    return d_c.download();
  };
  const auto first = run_once();
  const auto second = run_once();
  size_t differ = 0;
  for (size_t i = 0; i < first.size(); ++i) differ += std::memcmp(&first[i], &second[i], 4) != 0;
  return differ;
}

// A, B, C and the splits' workspace on the device, and the operands the launchers take.
struct DeviceGemm {
  DeviceGemm(const std::vector<float>& a, const std::vector<float>& b, const Shape& sh,
             int max_splits)
      : d_a(a),
        d_b(b),
        d_c(size_t(sh.m) * size_t(sh.n)),
        d_ws(d_c.size() * size_t(max_splits)),
        o{sh, d_a.data(), d_b.data(), d_c.data(), d_ws.data()} {}
  // Poisoning the workspace too: a split that forgets its slice then fails the check.
  void poison() {
    d_c.poison();
    d_ws.poison();
  }
  gpu100::DeviceBuffer<float> d_a, d_b, d_c, d_ws;
  Operands o;
};

gpu100::Measure measure_version(const Version& v, DeviceGemm& g, int splits,
                                const std::function<gpu100::CheckResult()>& check) {
  return {.name = v.name,
          .launch = [&v, &g, splits](cudaStream_t s) { launch(v, g.o, splits, s); },
          .reset = [&g] { g.poison(); },
          .check = check,
          .work = gpu100::gemm_flops(g.o.sh.m, g.o.sh.n, g.o.sh.k)};
}

std::string atomic_note(DeviceGemm& g, int splits) {
  return fmt::format("splitk_atomic run twice: {} of {} entries differ in their bits (the order in "
                     "which {} splits arrive is up to the scheduler; splitk_workspace always adds "
                     "them in order 0..{})",
                     atomic_bits_that_differ(g.o, splits, g.d_c), g.d_c.size(), splits,
                     splits - 1);
}

// --sweep: splitk_workspace vs cuBLAS over square sizes, then over K at this M x N.
void sweeps(gpu100::Context& ctx, const gpu100::GemmLauncher& cublas, DeviceGemm& g,
            const std::vector<float>& a, const std::vector<float>& b, const Reference& ref,
            const std::function<void()>& reset) {
  square_sweep(ctx, cublas);
  ctx.report().note(
      "square sweep: split-K's shape is small M x N with long K, not square; once the tiles "
      "fill the GPU auto picks 1 split and the curve is the plain tile kernel vs cuBLAS "
      "(expected to fall well behind it at large sizes); the K sweep table shows split-K's "
      "own regime");
  Points ks = k_sweep(ctx, g.o, a, b, ref, reset, cublas, g.d_c);
  ctx.report().table(std::move(ks.table));
  ctx.report().add_check("K sweep (every point)", ks.all);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "split-K fp32 GEMM for long K: one tile kernel, partials reduced through a workspace or "
      "with atomics, vs cublasSgemm");
  int64_t m = 512, n = 512, k = 131072;
  int splits = 0;
  bool sweep = false;
  cli.size("m", m, 67, "rows of A and C", kIntMax);
  cli.size("n", n, 93, "columns of B and C", kIntMax);
  cli.size("k", k, 20001, "columns of A, rows of B (the long dimension)", kIntMax);
  cli.option("splits", splits, "K slices of the split-K versions (0: auto, one full wave)", 0,
             4096);
  cli.flag("sweep", sweep, "after the run, splitk_workspace vs cuBLAS over square sizes");
  cli.kernels_of(kVersions);
  cli.validate([&]() -> std::string {
    if (double(gpu100::ceil_div<int64_t>(m, kBM)) * double(gpu100::ceil_div<int64_t>(n, kBN)) >
        double(kIntMax))
      return "m x n has more than 2^31 - 1 tiles of 64 x 64 (gridDim.x)";
    return "";
  });
  // A, B, C, and a workspace for up to max(splits, 128) slices of m x n (the split table).
  cli.device_bytes([&] {
    const double slices = double(std::max(splits, 128));
    return 4.0 * (double(m) * k + double(k) * n + double(m) * n * (1.0 + slices)) +
           double(64 << 20);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("m", double(m));
    report.problem("n", double(n));
    report.problem("k", double(k));
    report.unit("TFLOP/s");
    report.limit("fp32_tflops", ctx.device().peak_fp32_tflops(), "FP32 peak");
    report.baseline_as_percent();

    const Shape sh{m, n, k};
    const int S = splits > 0 ? splits : auto_splits(sh);
    report.problem("splits", double(S));

    const auto a = gpu100::random_floats(size_t(m) * size_t(k), ctx.seed());
    const auto b = gpu100::random_floats(size_t(k) * size_t(n), ctx.seed() + 1);
    const Reference ref = make_reference(a.data(), b.data(), m, n, k, ctx.seed());
    const gpu100::Tolerance tol = gpu100::gemm_tolerance(k);  // any order of the additions

    const std::vector<int> table_splits = split_counts(sh, S);
    const int max_splits = std::max(S, table_splits.back());

    DeviceGemm g(a, b, sh, max_splits);
    const auto reset = [&g] { g.poison(); };
    const auto check = [&] { return check_c(g.d_c.download(), ref, n, tol); };

    gpu100::CublasHandle h;
    const gpu100::GemmLauncher cublas = gpu100::cublas_sgemm_launcher(h);
    const gpu100::Stats base = gpu100::gemm_baseline(
        ctx, "cublasSgemm", cublas, gpu100::GemmOperands{m, n, k, g.o.A, g.o.B, g.o.C}, reset,
        check, gpu100::sgemm_baseline_note());
    const double base_rate = gpu100::tflops(gpu100::gemm_flops(m, n, k), base.median_ms);

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) runs.push_back(measure_version(v, g, S, check));
    const std::vector<gpu100::Measured> measured = ctx.measure_all(runs);
    const gpu100::Measured& atomic = gpu100::measured_of("splitk_atomic", runs, measured);
    if (atomic.ran && atomic.check.checked) report.note(atomic_note(g, S));
    if (ctx.want("splitk_workspace") || ctx.want("splitk_atomic")) {
      Points t = split_table(ctx, g.o, table_splits, reset, check, base_rate);
      report.table(std::move(t.table));
      report.add_check("split table (every point)", t.all);
    }
    report.note(fmt::format("{} tiles of 64 x 64, {} K steps of 16; splits = {} ({}); {} SMs",
                            sh.tiles(), sh.k_steps(), S,
                            splits > 0 ? "--splits" : "auto: the wave model of auto_splits()",
                            ctx.device().sm_count));
    if (sweep) sweeps(ctx, cublas, g, a, b, ref, reset);
  });
}
