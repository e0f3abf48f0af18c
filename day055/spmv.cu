// Day 055 - spmv: sparse matrix times dense vector, y = A x, in fp32
//
// A sparse matrix stores only its nonzeros, so every multiply-add reads a value, a column index
// and a gathered x[col]: SpMV does two flops per 12 bytes at best and is bound by memory. What
// decides its speed is how the rows map to threads, and real matrices (web graphs, social
// networks, finite elements with hubs) have row lengths that are anything but equal. The program
// generates one of two matrices from the seed (--matrix): "powerlaw", whose row lengths follow a
// Pareto law (shape 1.5: most rows a few nonzeros, a few rows hundreds of times the mean, capped
// at 32x the mean or the width) with an eighth of the rows empty, and "uniform", whose lengths lie
// within a quarter of the mean. Columns are distinct and sorted within a row; values and x are
// uniform in [-1, 1]. The rate is effective bandwidth: the CSR matrix (row offsets, columns,
// values) plus x and y, the bytes any SpMV must move at least, for every version alike.
//
// Versions
//   csr_scalar   one thread per row walks its row. Neighbouring lanes read neighbouring rows,
//                which lie a row length apart: one sector per lane per load, and a warp waits for
//                its longest row while the lanes of short rows idle.
//   csr_vector   one warp per row: lanes read 32 consecutive nonzeros (a few sectors per load)
//                and a shfl.sync tree sums the lanes. Wins on long rows; on rows shorter than 32
//                most lanes have nothing to do.
//   ell          the matrix padded to its longest row and stored column-major (slot k of row r
//                at k * rows + r): thread per row again, but the lanes' k-th loads are adjacent,
//                so they coalesce. Padding (column -1) ends a row. The price is memory: every row
//                takes the longest row's slots, which on the power-law matrix is most of the
//                storage (the padding table says how much).
//   cusparse     cusparseSpMV on the same CSR arrays: the baseline ("x cusparse"), a closed vendor
//                library, so not run under emulation.
//
// Check: y against a CPU SpMV in double, row by row. A product a x of fp32 values is exact in
// double; in fp32 each term goes through at most h rounded operations (its product and the
// additions after it), so |y - ref| <= gamma_h sum |a x| (Higham 4.2; verify.h's summation bound)
// with h = the row length for a sequential sum (and for cuSPARSE, whatever its order: no term of a
// sum of L terms meets more than L - 1 additions), ceil(L / 32) + 5 for the warp's lanes and
// shuffle tree. Empty rows must be exactly 0.
//
// Run:  build/bin/day055 [--rows 1000003 --cols 1000003 --avg 16] [--matrix powerlaw|uniform]
//                        [--kernel csr_vector,ell] [--json f]
#include <cusparse.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

#define CUSPARSE_CHECK(expr)                                                              \
  do {                                                                                    \
    const cusparseStatus_t status_ = (expr);                                              \
    if (status_ != CUSPARSE_STATUS_SUCCESS)                                               \
      ::gpu100::throw_library_error("cusparse", int(status_), #expr, __FILE__, __LINE__); \
  } while (0)

namespace {

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;
constexpr int kCapPerMean = 32;  // the longest power-law row, in means
constexpr int64_t kMaxRows = int64_t(1) << 26;
constexpr int64_t kMaxIndex = (int64_t(1) << 31) - 1;  // 32-bit offsets and columns

// ---- the matrices -------------------------------------------------------------------------------
enum class Kind { powerlaw, uniform };

struct Csr {
  int64_t rows = 0, cols = 0;
  std::vector<int> row_ptr, col;
  std::vector<float> val;
  int64_t nnz() const { return int64_t(col.size()); }
  int64_t length(int64_t r) const { return row_ptr[size_t(r + 1)] - row_ptr[size_t(r)]; }
};

int64_t longest_allowed(Kind kind, int64_t cols, int64_t avg) {
  return std::min(cols, kind == Kind::powerlaw ? kCapPerMean * avg : avg - avg / 4 + avg / 2);
}

double unit_interval(uint64_t h) {
  return double((h >> 11) + 1) * 0x1p-53;
}  // in (0, 1]

// Row r's length, from the seed alone. Power law: an eighth of the rows empty, the rest Pareto
// with shape 1.5 (mean 3 xm) scaled so that the mean over all rows is about avg before the cap.
// Row 1 is empty and row 2 as long as allowed, so every matrix of three rows has both edges.
int64_t row_length(Kind kind, uint64_t seed, int64_t r, int64_t cols, int64_t avg) {
  const uint64_t h = gpu100::mix64(seed * 0x9E3779B97F4A7C15ull + uint64_t(r));
  const int64_t cap = longest_allowed(kind, cols, avg);
  if (kind == Kind::uniform)
    return std::min(cols, avg - avg / 4 + int64_t(h % uint64_t(avg / 2 + 1)));
  if (r == 1 || h % 8 == 0) return 0;
  if (r == 2) return cap;
  const double xm = double(avg) * 8.0 / 21.0;
  const double len = std::floor(xm * std::pow(unit_interval(h), -2.0 / 3.0));
  return std::clamp<int64_t>(int64_t(std::min(len, 1e18)), 1, cap);
}

// `count` distinct columns of [0, cols), sorted: random draws topped up until distinct, or for a
// row denser than half the width, the complement of cols - count such draws.
void row_columns(uint64_t seed, int64_t count, int64_t cols, std::vector<int>& out) {
  const bool complement = 2 * count > cols;
  const int64_t want = complement ? cols - count : count;
  std::vector<int> pick;
  uint64_t k = 0;
  while (int64_t(pick.size()) < want) {
    while (int64_t(pick.size()) < want)
      pick.push_back(int(gpu100::mix64(seed + 0x632BE59BD9B4E019ull * ++k) % uint64_t(cols)));
    std::sort(pick.begin(), pick.end());
    pick.erase(std::unique(pick.begin(), pick.end()), pick.end());
  }
  if (!complement) {
    out.insert(out.end(), pick.begin(), pick.end());
    return;
  }
  size_t p = 0;
  for (int c = 0; c < int(cols); ++c) {
    if (p < pick.size() && pick[p] == c) {
      ++p;
    } else {
      out.push_back(c);
    }
  }
}

Csr make_matrix(Kind kind, int64_t rows, int64_t cols, int64_t avg, uint64_t seed) {
  Csr a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(size_t(rows + 1), 0);
  for (int64_t r = 0; r < rows; ++r)
    a.row_ptr[size_t(r + 1)] = a.row_ptr[size_t(r)] + int(row_length(kind, seed, r, cols, avg));
  a.col.reserve(size_t(a.row_ptr.back()));
  for (int64_t r = 0; r < rows; ++r)
    row_columns(gpu100::mix64(seed ^ (uint64_t(r) << 20) ^ 0xC0FFEEull), a.length(r), cols, a.col);
  a.val = gpu100::random_floats(a.col.size(), seed + 7, -1.0f, 1.0f);
  return a;
}

// ELL: every row padded to the longest, slot k of row r at k * rows + r; padding is column -1.
struct Ell {
  int64_t width = 0;
  std::vector<int> col;
  std::vector<float> val;
};

Ell to_ell(const Csr& a) {
  Ell e;
  for (int64_t r = 0; r < a.rows; ++r) e.width = std::max(e.width, a.length(r));
  e.col.assign(size_t(e.width * a.rows), -1);
  e.val.assign(size_t(e.width * a.rows), 0.0f);
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t k = 0; k < a.length(r); ++k) {
      const size_t src = size_t(a.row_ptr[size_t(r)] + k), dst = size_t(k * a.rows + r);
      e.col[dst] = a.col[src];
      e.val[dst] = a.val[src];
    }
  }
  return e;
}

// ---- CPU reference ------------------------------------------------------------------------------
// y in double, and per row sum |a x|, the scale of its rounding-error bound.
struct Reference {
  std::vector<double> y, abs_sum;
};

Reference spmv_cpu(const Csr& a, const std::vector<float>& x) {
  Reference ref{std::vector<double>(size_t(a.rows)), std::vector<double>(size_t(a.rows))};
  for (int64_t r = 0; r < a.rows; ++r) {
    double s = 0, abs_s = 0;
    for (int j = a.row_ptr[size_t(r)]; j < a.row_ptr[size_t(r + 1)]; ++j) {
      const double p = double(a.val[size_t(j)]) * double(x[size_t(a.col[size_t(j)])]);
      s += p;
      abs_s += std::fabs(p);
    }
    ref.y[size_t(r)] = s;
    ref.abs_sum[size_t(r)] = abs_s;
  }
  return ref;
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void __launch_bounds__(kBlock)
    spmv_csr_scalar(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col,
                    const float* __restrict__ val, const float* __restrict__ x,
                    float* __restrict__ y) {
  const int r = int(blockIdx.x) * kBlock + int(threadIdx.x);
  if (r >= rows) return;
  const int end = row_ptr[r + 1];
  float sum = 0.0f;
  for (int j = row_ptr[r]; j < end; ++j) sum += val[j] * x[col[j]];
  y[r] = sum;
}

__global__ void __launch_bounds__(kBlock)
    spmv_csr_vector(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col,
                    const float* __restrict__ val, const float* __restrict__ x,
                    float* __restrict__ y) {
  const int r = int(blockIdx.x) * kWarpsPerBlock + int(threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  if (r >= rows) return;  // the whole warp: rows are per warp, so the shuffles below see 32 lanes
  const int end = row_ptr[r + 1];
  float sum = 0.0f;
  for (int j = row_ptr[r] + lane; j < end; j += 32) sum += val[j] * x[col[j]];
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[r] = sum;
}

__global__ void __launch_bounds__(kBlock)
    spmv_ell(int rows, int width, const int* __restrict__ col, const float* __restrict__ val,
             const float* __restrict__ x, float* __restrict__ y) {
  const int r = int(blockIdx.x) * kBlock + int(threadIdx.x);
  if (r >= rows) return;
  float sum = 0.0f;
  for (int k = 0; k < width; ++k) {
    const int64_t slot = int64_t(k) * rows + r;
    const int c = col[slot];
    if (c < 0) break;  // padding starts: the rest of the row is padding too
    sum += val[slot] * x[c];
  }
  y[r] = sum;
}

// ---- cuSPARSE -----------------------------------------------------------------------------------
// Descriptors and workspace made once (outside the timed runs); only where vendor libraries run.
class CusparseSpmv {
 public:
  CusparseSpmv(const Csr& a, const int* row_ptr, const int* col, const float* val, const float* x,
               float* y) {
    CUSPARSE_CHECK(cusparseCreate(&handle_));
    CUSPARSE_CHECK(cusparseCreateConstCsr(&mat_, a.rows, a.cols, a.nnz(), row_ptr, col, val,
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CUSPARSE_CHECK(cusparseCreateConstDnVec(&x_, a.cols, x, CUDA_R_32F));
    CUSPARSE_CHECK(cusparseCreateDnVec(&y_, a.rows, y, CUDA_R_32F));
    size_t bytes = 0;
    CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, mat_,
                                           x_, &beta_, y_, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT,
                                           &bytes));
    work_ = gpu100::DeviceBuffer<char>(std::max<size_t>(bytes, 1));
  }
  ~CusparseSpmv() {
    if (y_) cusparseDestroyDnVec(y_);
    if (x_) cusparseDestroyDnVec(x_);
    if (mat_) cusparseDestroySpMat(mat_);
    if (handle_) cusparseDestroy(handle_);
  }
  CusparseSpmv(const CusparseSpmv&) = delete;
  CusparseSpmv& operator=(const CusparseSpmv&) = delete;

  // y = 1 A x + 0 y. Whether a NaN in y survives 0 y is the library's business, so its y is
  // zeroed, not poisoned, before the checked run (the day's own kernels get NaN).
  void run(cudaStream_t s) {
    CUSPARSE_CHECK(cusparseSetStream(handle_, s));
    CUSPARSE_CHECK(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, mat_, x_,
                                &beta_, y_, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, work_.data()));
  }

 private:
  cusparseHandle_t handle_ = nullptr;
  cusparseConstSpMatDescr_t mat_ = nullptr;
  cusparseConstDnVecDescr_t x_ = nullptr;
  cusparseDnVecDescr_t y_ = nullptr;
  gpu100::DeviceBuffer<char> work_;
  float alpha_ = 1.0f, beta_ = 0.0f;
};

// ---- launchers ----------------------------------------------------------------------------------
struct DeviceMatrix {
  int rows, width;
  const int *row_ptr, *col, *ell_col;
  const float *val, *ell_val, *x;
  float* y;
};

enum class Shape { thread_per_row, warp_per_row, ell };

struct Version {
  const char* name;
  Shape shape;
};
const Version kVersions[] = {
    {"csr_scalar", Shape::thread_per_row},
    {"csr_vector", Shape::warp_per_row},
    {"ell", Shape::ell},
};

unsigned grid_of(const Version& v, int64_t rows) {
  return v.shape == Shape::warp_per_row ? gpu100::grid_for(rows, kWarpsPerBlock)
                                        : gpu100::grid_for(rows, kBlock);
}

void launch(const Version& v, unsigned grid, const DeviceMatrix& m, cudaStream_t s) {
  switch (v.shape) {
    case Shape::thread_per_row:
      spmv_csr_scalar<<<grid, kBlock, 0, s>>>(m.rows, m.row_ptr, m.col, m.val, m.x, m.y);
      break;
    case Shape::warp_per_row:
      spmv_csr_vector<<<grid, kBlock, 0, s>>>(m.rows, m.row_ptr, m.col, m.val, m.x, m.y);
      break;
    case Shape::ell:
      spmv_ell<<<grid, kBlock, 0, s>>>(m.rows, m.width, m.ell_col, m.ell_val, m.x, m.y);
      break;
  }
  LAUNCH_CHECK();
}

// Rounded operations a term of a row of `len` nonzeros goes through on its way into y.
double rounding_steps(Shape shape, int64_t len) {
  if (shape == Shape::warp_per_row) return double((len + 31) / 32 + 5);
  return double(len);  // sequential sums, and any order of summation at all
}

// ---- analysis -----------------------------------------------------------------------------------
// Row by row: |y - ref| <= gamma_h(row) sum |a x| (plus the double reference's own error); rows
// with no terms must be exactly 0.
gpu100::CheckResult check_spmv(const std::vector<float>& got, const Reference& ref, const Csr& a,
                               Shape shape) {
  gpu100::CheckResult c;
  c.checked = true;
  c.tolerance = "per-row summation bound";
  c.count = int64_t(got.size());
  double diff2 = 0, ref2 = 0;
  bool within = true;
  for (int64_t r = 0; r < a.rows; ++r) {
    const size_t i = size_t(r);
    const int64_t len = a.length(r);
    const double err = std::fabs(double(got[i]) - ref.y[i]);
    const double bound =
        len == 0 ? 0.0
                 : ref.abs_sum[i] * gpu100::summation_error_bound(rounding_steps(shape, len), len);
    if (!std::isfinite(got[i])) ++c.nonfinite;
    if (!(err <= bound)) within = false;
    if (err > c.max_abs_err || (c.worst_index < 0 && !std::isfinite(err))) {
      c.max_abs_err = err;
      c.worst_index = int64_t(i);
      c.worst_got = got[i];
      c.worst_ref = ref.y[i];
    }
    c.max_ref = std::max(c.max_ref, std::fabs(ref.y[i]));
    diff2 += err * err;
    ref2 += ref.y[i] * ref.y[i];
  }
  c.rel_err = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.pass = within && c.nonfinite == 0 && c.count > 0;
  return c;
}

// What a thread-per-row kernel pays for the longest row of its warp: lanes busy over lanes
// that the warp's loop keeps (the emulated "lane utilization" of the scalar versions, in closed
// form), and the ELL storage next to the CSR storage.
gpu100::Table shape_table(const Csr& a, const Ell& e, const char* matrix) {
  int64_t empty = 0, longest = 0, warp_slots = 0;
  for (int64_t w = 0; w < a.rows; w += 32) {
    int64_t warp_max = 0;
    for (int64_t r = w; r < std::min(a.rows, w + 32); ++r)
      warp_max = std::max(warp_max, a.length(r));
    warp_slots += 32 * warp_max;
  }
  for (int64_t r = 0; r < a.rows; ++r) {
    empty += a.length(r) == 0;
    longest = std::max(longest, a.length(r));
  }
  const double csr_bytes = 4.0 * double(a.rows + 1) + 8.0 * double(a.nnz());
  const double ell_bytes = 8.0 * double(e.width) * double(a.rows);
  gpu100::Table t{fmt::format("matrix shape ({})", matrix),
                  {"rows", "nnz", "mean row", "longest row", "empty rows", "ELL slots",
                   "ELL padding %", "ELL bytes / CSR bytes", "thread-per-row lanes busy %"},
                  {}};
  const double slots = double(e.width) * double(a.rows);
  t.add_row({a.rows, a.nnz(), double(a.nnz()) / double(a.rows), longest, empty, slots,
             slots > 0 ? 100.0 * (slots - double(a.nnz())) / slots : 0.0,
             csr_bytes > 0 ? ell_bytes / csr_bytes : 0.0,
             warp_slots > 0 ? 100.0 * double(a.nnz()) / double(warp_slots) : 0.0});
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("Sparse matrix-vector product: CSR scalar, CSR vector, ELL; cuSPARSE baseline");
  int64_t rows = 1000003, cols = 1000003;
  int avg = 16;
  std::string matrix = "powerlaw";
  cli.size("rows", rows, 3001, "rows of the sparse matrix", kMaxRows);
  cli.size("cols", cols, 2999, "columns of the sparse matrix (length of x)", kMaxIndex);
  cli.option("avg", avg, "mean nonzeros per row the generator aims at", 1, 4096);
  cli.option("matrix", matrix, {"powerlaw", "uniform"},
             "row lengths: power law with empty rows, or within a quarter of --avg");
  cli.kernels_of(kVersions);
  const auto kind = [&] { return matrix == "uniform" ? Kind::uniform : Kind::powerlaw; };
  // Every row at its longest: an upper bound on the nonzeros, which must fit 32-bit offsets.
  const auto max_nnz = [&] { return double(rows) * double(longest_allowed(kind(), cols, avg)); };
  cli.validate([&]() -> std::string {
    if (max_nnz() > double(kMaxIndex))
      return fmt::format(
          "--rows {} with rows of up to {} nonzeros may exceed {} nonzeros (32-bit "
          "offsets); use fewer rows or a smaller --avg",
          rows, longest_allowed(kind(), cols, avg), kMaxIndex);
    return "";
  });
  // CSR and ELL at worst (every row at its longest), x, y.
  cli.device_bytes(
      [&] { return 16.0 * max_nnz() + 4.0 * double(rows + 1) + 4.0 * double(cols + rows); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");

    const Csr a = make_matrix(kind(), rows, cols, avg, ctx.seed());
    const Ell e = to_ell(a);
    const auto x = gpu100::random_floats(size_t(cols), ctx.seed() + 1, -1.0f, 1.0f);
    const Reference ref = spmv_cpu(a, x);
    report.problem("nnz", double(a.nnz()));
    report.problem("ell_width", double(e.width));
    // Two flops per nonzero over the bytes below: far left on the roofline.
    const double bytes = 4.0 * double(rows + 1) + 8.0 * double(a.nnz()) + 4.0 * double(cols + rows);
    report.intensity(2.0 * double(a.nnz()) / bytes);

    // At least one element each, so that an empty matrix still has valid pointers.
    auto padded = [](auto v) {
      if (v.empty()) v.resize(1);
      return v;
    };
    gpu100::DeviceBuffer<int> d_row_ptr(a.row_ptr), d_col(padded(a.col)), d_ell_col(padded(e.col));
    gpu100::DeviceBuffer<float> d_val(padded(a.val)), d_ell_val(padded(e.val)), d_x(x),
        d_y{size_t(rows)};
    const DeviceMatrix dm{int(rows),        int(e.width),     d_row_ptr.data(),
                          d_col.data(),     d_ell_col.data(), d_val.data(),
                          d_ell_val.data(), d_x.data(),       d_y.data()};

    std::unique_ptr<CusparseSpmv> vendor;
    if (ctx.vendor_libraries())
      vendor = std::make_unique<CusparseSpmv>(a, d_row_ptr.data(), d_col.data(), d_val.data(),
                                              d_x.data(), d_y.data());

    std::vector<gpu100::Measure> runs;
    runs.push_back(
        {.name = "cusparse",
         .launch = [&](cudaStream_t s) { vendor->run(s); },
         .reset = [&] { d_y.zero(); },
         .check = [&] { return check_spmv(d_y.download(), ref, a, Shape::thread_per_row); },
         .work = bytes,
         .role = gpu100::Role::baseline,
         .vendor = true});
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch = [&, grid = grid_of(v, rows)](cudaStream_t s) { launch(v, grid, dm, s); },
           .reset = [&] { d_y.poison(); },
           .check = [&] { return check_spmv(d_y.download(), ref, a, v.shape); },
           .work = bytes});
    }
    ctx.measure_all(runs);

    report.table(shape_table(a, e, matrix.c_str()));
    report.note(fmt::format(
        "GB/s counts the CSR matrix, x and y ({:.0f} bytes) for every version; ELL moves more",
        bytes));
  });
}
