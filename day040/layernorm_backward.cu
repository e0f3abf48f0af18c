// Day 040 - layer normalization, backward: dx, dgamma and dbeta from dy
//
// The forward (day 039) computed y = xhat gamma + beta with xhat = (x - mean) rstd and kept each
// row's mean and rstd. Going back, with dnorm = dy gamma:
//   dx     = rstd (dnorm - mean_c(dnorm) - xhat mean_c(dnorm xhat))   two reductions along a row
//   dgamma = sum_rows dy xhat,   dbeta = sum_rows dy                  reductions down each column
// (the mean over the row's C columns; the two means are the gradient flowing through mean and
// rstd). The row part is day 039's pattern: a warp per row, shuffles. The column part is the new
// problem: C sums over all rows. One thread per column looping over every row reads coalesced
// rows, but gives the GPU only C threads and adds rows values one after another. The two-stage
// reduction splits the rows into chunks: stage one, a block per (column tile, row chunk), writes
// one partial per chunk and column; stage two adds the partials of each column. Every sum is in a
// fixed order, so the result is the same on every run (no atomics).
//
// Versions (dx by the same warp-per-row kernel in both)
//   column_loop  dgamma and dbeta by one thread per column over all rows.
//   two_stage    dgamma and dbeta by chunks of kChunkRows rows, then a sum over the chunks.
// The rate counts the bytes of an ideal single pass (x and dy read once, dx written, gamma,
// dgamma, dbeta, mean and rstd once); both versions read x and dy twice, once per kernel, which
// the % of copy shows.
//
// Check: a CPU backward in double from the same fp32 inputs (mean and rstd as the forward stored
// them), itself checked against central finite differences of the CPU forward on a 2 x 3 case
// (x, gamma and beta all perturbed). The GPU results are compared element by element with the
// worst-case error of each version's order of additions: gamma_h times the sum of the magnitudes
// summed, plus a few roundings per element (gpu100::compare_within). The inputs include two
// zero-variance rows (xhat = 0 exactly; rstd = 1/sqrt(eps) magnifies dnorm - mean(dnorm)).
//
// Run:  build/bin/day040 [--rows 8191 --cols 4097] [--kernel two_stage]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr double kEps = 1e-5;
constexpr int kWarpBlock = 256;  // dx: 8 rows per block
constexpr int kColBlock = 256;   // column kernels: 256 columns per block
constexpr int kChunkRows = 64;   // two_stage: rows per partial sum

// ---- CPU reference ------------------------------------------------------------------------------
// The forward over [x; gamma; beta] (rows x cols, cols, cols), for the finite differences.
std::vector<double> layernorm_forward_d(const std::vector<double>& p, int64_t rows, int64_t cols) {
  const double* x = p.data();
  const double* gamma = x + rows * cols;
  const double* beta = gamma + cols;
  std::vector<double> y(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= double(cols);
    for (int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    const double rstd = 1.0 / std::sqrt(var / double(cols) + kEps);
    for (int64_t c = 0; c < cols; ++c)
      y[size_t(r * cols + c)] = (x[r * cols + c] - mean) * rstd * gamma[c] + beta[c];
  }
  return y;
}

struct Grads {
  std::vector<double> dx, dgamma, dbeta;
  // Per element, for the error bounds: sum_c |dnorm|, sum_c |dnorm xhat| of its row ...
  std::vector<double> row_abs_dn, row_abs_dnx;
  // ... and sum_r |dy xhat|, sum_r |dy| of its column.
  std::vector<double> col_abs_dgamma, col_abs_dbeta;
};

// The backward in double from the given mean and rstd (as the forward stored them).
Grads layernorm_backward_d(const std::vector<double>& x, const std::vector<double>& dy,
                           const std::vector<double>& gamma, const std::vector<double>& mean,
                           const std::vector<double>& rstd, int64_t rows, int64_t cols) {
  Grads g{std::vector<double>(x.size()),          std::vector<double>(size_t(cols), 0.0),
          std::vector<double>(size_t(cols), 0.0), std::vector<double>(size_t(rows), 0.0),
          std::vector<double>(size_t(rows), 0.0), std::vector<double>(size_t(cols), 0.0),
          std::vector<double>(size_t(cols), 0.0)};
  for (int64_t r = 0; r < rows; ++r) {
    double a = 0, b = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = size_t(r * cols + c);
      const double xhat = (x[i] - mean[size_t(r)]) * rstd[size_t(r)];
      const double dn = dy[i] * gamma[size_t(c)];
      a += dn;
      b += dn * xhat;
      g.row_abs_dn[size_t(r)] += std::fabs(dn);
      g.row_abs_dnx[size_t(r)] += std::fabs(dn * xhat);
      g.dgamma[size_t(c)] += dy[i] * xhat;
      g.dbeta[size_t(c)] += dy[i];
      g.col_abs_dgamma[size_t(c)] += std::fabs(dy[i] * xhat);
      g.col_abs_dbeta[size_t(c)] += std::fabs(dy[i]);
    }
    a /= double(cols);
    b /= double(cols);
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = size_t(r * cols + c);
      const double xhat = (x[i] - mean[size_t(r)]) * rstd[size_t(r)];
      g.dx[i] = rstd[size_t(r)] * (dy[i] * gamma[size_t(c)] - a - xhat * b);
    }
  }
  return g;
}

// The statistics of the forward in double (the backward's inputs are these, rounded to fp32).
void row_stats_d(const std::vector<float>& x, int64_t rows, int64_t cols, std::vector<float>& mean,
                 std::vector<float>& rstd) {
  mean.assign(size_t(rows), 0.0f);
  rstd.assign(size_t(rows), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c) m += x[size_t(r * cols + c)];
    m /= double(cols);
    for (int64_t c = 0; c < cols; ++c)
      v += (x[size_t(r * cols + c)] - m) * (x[size_t(r * cols + c)] - m);
    mean[size_t(r)] = float(m);
    rstd[size_t(r)] = float(1.0 / std::sqrt(v / double(cols) + kEps));
  }
}

// ---- kernels ------------------------------------------------------------------------------------
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}

// dx, a warp per row: the two row means by shuffles, then the element-wise formula.
__global__ void layernorm_dx_warp(const float* __restrict__ x, const float* __restrict__ dy,
                                  const float* __restrict__ gamma, const float* __restrict__ mean,
                                  const float* __restrict__ rstd, float* __restrict__ dx,
                                  int64_t rows, int64_t cols) {
  const int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  if (r >= rows) return;  // whole warps leave together
  const float m = mean[r], s = rstd[r];
  const float* xr = x + r * cols;
  const float* dyr = dy + r * cols;
  float a = 0.0f, b = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) {
    const float dn = dyr[c] * gamma[c];
    a += dn;
    b += dn * ((xr[c] - m) * s);
  }
  a = warp_sum(a) / float(cols);
  b = warp_sum(b) / float(cols);
  for (int64_t c = lane; c < cols; c += 32)
    dx[r * cols + c] = s * (dyr[c] * gamma[c] - a - ((xr[c] - m) * s) * b);
}

// Column sums of dy xhat and dy over rows [row0, row1), one thread per column: a warp reads 32
// consecutive floats of a row, coalesced, and every thread adds its rows in order.
__device__ __forceinline__ void column_sums(const float* __restrict__ x,
                                            const float* __restrict__ dy,
                                            const float* __restrict__ mean,
                                            const float* __restrict__ rstd, int64_t row0,
                                            int64_t row1, int64_t cols, int64_t c, float& dg,
                                            float& db) {
  dg = 0.0f;
  db = 0.0f;
  for (int64_t r = row0; r < row1; ++r) {
    const float g = dy[r * cols + c];
    dg += g * ((x[r * cols + c] - mean[r]) * rstd[r]);
    db += g;
  }
}

__global__ void dgamma_dbeta_column_loop(const float* __restrict__ x, const float* __restrict__ dy,
                                         const float* __restrict__ mean,
                                         const float* __restrict__ rstd, float* __restrict__ dgamma,
                                         float* __restrict__ dbeta, int64_t rows, int64_t cols) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float dg, db;
  column_sums(x, dy, mean, rstd, 0, rows, cols, c, dg, db);
  dgamma[c] = dg;
  dbeta[c] = db;
}

// Stage one: block (blockIdx.x, y) sums rows [y kChunkRows, (y + 1) kChunkRows) of its 256
// columns into partial[y][c] (dgamma) and partial[chunks + y][c] (dbeta), for y = blockIdx.y,
// blockIdx.y + gridDim.y, ... (the grid's y dimension stops at 65535 chunks).
__global__ void dgamma_dbeta_partials(const float* __restrict__ x, const float* __restrict__ dy,
                                      const float* __restrict__ mean,
                                      const float* __restrict__ rstd, float* __restrict__ partial,
                                      int64_t rows, int64_t cols, int64_t chunks) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  for (int64_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    const int64_t row0 = chunk * kChunkRows;
    const int64_t row1 = row0 + kChunkRows < rows ? row0 + kChunkRows : rows;
    float dg, db;
    column_sums(x, dy, mean, rstd, row0, row1, cols, c, dg, db);
    partial[chunk * cols + c] = dg;
    partial[(chunks + chunk) * cols + c] = db;
  }
}

// Stage two: each column adds its chunks' partials, in chunk order.
__global__ void dgamma_dbeta_finish(const float* __restrict__ partial, float* __restrict__ dgamma,
                                    float* __restrict__ dbeta, int64_t chunks, int64_t cols) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float dg = 0.0f, db = 0.0f;
  for (int64_t k = 0; k < chunks; ++k) {
    dg += partial[k * cols + c];
    db += partial[(chunks + k) * cols + c];
  }
  dgamma[c] = dg;
  dbeta[c] = db;
}

// ---- launchers ----------------------------------------------------------------------------------
enum class Columns { loop, two_stage };

struct Version {
  const char* name;
  Columns columns;
};
const Version kVersions[] = {
    {"column_loop", Columns::loop},
    {"two_stage", Columns::two_stage},
};

int64_t chunks_of(int64_t rows) {
  return (rows + kChunkRows - 1) / kChunkRows;
}

struct Args {
  const float *x, *dy, *gamma, *mean, *rstd;
  float *dx, *dgamma, *dbeta, *partial;
  int64_t rows, cols;
};

// The launch shapes, computed once (not inside the timed launches).
struct Grids {
  unsigned dx, columns;  // blocks of the dx kernel; blocks of 256 columns
  int64_t chunks;        // row chunks of the two-stage reduction
  unsigned chunk_grid;   // the partials grid's y dimension: at most 65535, the kernel loops past it
};

Grids grids_of(int64_t rows, int64_t cols) {
  const int64_t chunks = chunks_of(rows);
  return {gpu100::grid_for(rows, kWarpBlock / 32), gpu100::grid_for(cols, kColBlock), chunks,
          unsigned(std::min<int64_t>(chunks, 65535))};
}

void launch(const Version& v, const Grids& g, const Args& a, cudaStream_t s) {
  layernorm_dx_warp<<<g.dx, kWarpBlock, 0, s>>>(a.x, a.dy, a.gamma, a.mean, a.rstd, a.dx, a.rows,
                                                a.cols);
  LAUNCH_CHECK();
  if (v.columns == Columns::loop) {
    dgamma_dbeta_column_loop<<<g.columns, kColBlock, 0, s>>>(a.x, a.dy, a.mean, a.rstd, a.dgamma,
                                                             a.dbeta, a.rows, a.cols);
    LAUNCH_CHECK();
  } else {
    dgamma_dbeta_partials<<<dim3(g.columns, g.chunk_grid), kColBlock, 0, s>>>(
        a.x, a.dy, a.mean, a.rstd, a.partial, a.rows, a.cols, g.chunks);
    LAUNCH_CHECK();
    dgamma_dbeta_finish<<<g.columns, kColBlock, 0, s>>>(a.partial, a.dgamma, a.dbeta, g.chunks,
                                                        a.cols);
    LAUNCH_CHECK();
  }
}

// Roundings each value goes through on its way into a column sum: the rows one after another, or
// a chunk's rows and then the chunks.
double column_additions(const Version& v, int64_t rows) {
  return v.columns == Columns::loop ? double(rows)
                                    : double(std::min<int64_t>(rows, kChunkRows) + chunks_of(rows));
}
// ... and into a row sum of the dx kernel: a lane's strided values, then five shuffles.
double row_additions(int64_t cols) {
  return double((cols + 31) / 32 + 5);
}

// ---- checks -------------------------------------------------------------------------------------

// dx's worst case: the two row means err by gamma_h (their sums' magnitudes) / C, and rstd
// multiplies both; each element adds a few roundings of its own terms (xhat, dnorm, the two
// subtractions, the product with rstd and b).
std::vector<double> dx_bounds(const Grads& g, const std::vector<double>& x,
                              const std::vector<double>& dy, const std::vector<double>& gamma,
                              const std::vector<double>& mean, const std::vector<double>& rstd,
                              int64_t rows, int64_t cols) {
  const double u = std::ldexp(1.0, -24);
  const double gh = gpu100::summation_error_bound(row_additions(cols) + 1 + 3, cols);
  std::vector<double> bound(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double ea = gh * g.row_abs_dn[size_t(r)] / double(cols);
    const double eb = gh * g.row_abs_dnx[size_t(r)] / double(cols);
    const double s = rstd[size_t(r)];
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = size_t(r * cols + c);
      const double xhat = std::fabs((x[i] - mean[size_t(r)]) * s);
      const double dn = std::fabs(dy[i] * gamma[size_t(c)]);
      const double terms = dn + g.row_abs_dn[size_t(r)] / double(cols) +
                           xhat * g.row_abs_dnx[size_t(r)] / double(cols);
      bound[i] = s * (ea + xhat * eb + 8 * u * terms) + u * std::fabs(g.dx[i]);
    }
  }
  return bound;
}

std::vector<double> column_bounds(const std::vector<double>& abs_sum, double additions,
                                  int64_t rows) {
  // +3 roundings in each term (x - mean, * rstd, * dy) before it is added.
  const double gh = gpu100::summation_error_bound(additions + 3, rows);
  std::vector<double> bound(abs_sum.size());
  for (size_t c = 0; c < abs_sum.size(); ++c) bound[c] = gh * abs_sum[c];
  return bound;
}

// ---- inputs -------------------------------------------------------------------------------------
// Rows in [-2, 2] around a per-row offset; rows 0 and 1 have zero variance (all 1.5, all 0.1).
std::vector<float> layernorm_inputs(int64_t rows, int64_t cols, uint64_t seed) {
  auto x = gpu100::random_floats(size_t(rows * cols), seed, -2.0f, 2.0f);
  const auto offset = gpu100::random_floats(size_t(rows), seed + 10);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float& v = x[size_t(r * cols + c)];
      v = r == 0 ? 1.5f : r == 1 ? 0.1f : v + offset[size_t(r)];
    }
  return x;
}

template <class T>
std::vector<double> doubles(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// The CPU backward against central differences of the CPU forward, on 2 rows of 3.
gpu100::CheckResult check_reference_gradient() {
  const int64_t rows = 2, cols = 3;
  const std::vector<double> x = {0.3, -1.2, 0.8, 1.7, 0.2, -0.6};
  const std::vector<double> gamma = {1.1, 0.7, -0.9}, beta = {0.2, -0.4, 0.5};
  const std::vector<double> dy = {0.5, -1.3, 0.9, -0.2, 1.1, 0.6};
  std::vector<double> p = x;
  p.insert(p.end(), gamma.begin(), gamma.end());
  p.insert(p.end(), beta.begin(), beta.end());
  std::vector<double> mean(rows), rstd(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c) m += x[size_t(r * cols + c)];
    m /= double(cols);
    for (int64_t c = 0; c < cols; ++c)
      v += (x[size_t(r * cols + c)] - m) * (x[size_t(r * cols + c)] - m);
    mean[size_t(r)] = m;
    rstd[size_t(r)] = 1.0 / std::sqrt(v / double(cols) + kEps);
  }
  const Grads g = layernorm_backward_d(x, dy, gamma, mean, rstd, rows, cols);
  std::vector<double> grad = g.dx;
  grad.insert(grad.end(), g.dgamma.begin(), g.dgamma.end());
  grad.insert(grad.end(), g.dbeta.begin(), g.dbeta.end());
  return gpu100::check_gradient(
      [&](const std::vector<double>& q) { return layernorm_forward_d(q, rows, cols); }, p, dy,
      grad);
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "LayerNorm backward in fp32: dx by rows, dgamma/dbeta by a column loop or two stages");
  int64_t rows = 8191, cols = 4097;
  cli.size("rows", rows, 37, "rows (tokens)", int64_t(1) << 31);
  cli.size("cols", cols, 1027, "elements per row (channels C)", int64_t(1) << 31);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    const double chunks = double((rows + kChunkRows - 1) / kChunkRows);
    return (3.0 * double(rows) * double(cols) + 2.0 * chunks * double(cols) + 3.0 * double(cols) +
            2.0 * double(rows)) *
           sizeof(float);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.add_check("reference gradient (finite differences)", check_reference_gradient());

    const size_t count = size_t(rows * cols);
    const auto x = layernorm_inputs(rows, cols, ctx.seed());
    const auto dy = gpu100::random_floats(count, ctx.seed() + 1);
    const auto gamma = gpu100::random_floats(size_t(cols), ctx.seed() + 2, 0.5f, 1.5f);
    std::vector<float> mean, rstd;
    row_stats_d(x, rows, cols, mean, rstd);
    const auto xd = doubles(x), dyd = doubles(dy), gd = doubles(gamma), md = doubles(mean),
               rd = doubles(rstd);
    const Grads ref = layernorm_backward_d(xd, dyd, gd, md, rd, rows, cols);
    const auto dx_bound = dx_bounds(ref, xd, dyd, gd, md, rd, rows, cols);

    gpu100::DeviceBuffer<float> d_x(x), d_dy(dy), d_gamma(gamma), d_mean(mean), d_rstd(rstd),
        d_dx{count}, d_dgamma{size_t(cols)}, d_dbeta{size_t(cols)},
        d_partial{size_t(2 * chunks_of(rows) * cols)};
    const Args args{d_x.data(),  d_dy.data(),     d_gamma.data(), d_mean.data(),    d_rstd.data(),
                    d_dx.data(), d_dgamma.data(), d_dbeta.data(), d_partial.data(), rows,
                    cols};
    ctx.copy_baseline(count * sizeof(float) * 3 / 2);  // 12 bytes per element, as the ideal pass

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back(
          {.name = v.name,
           .launch = [&, g = grids_of(rows, cols)](cudaStream_t s) { launch(v, g, args, s); },
           .reset =
               [&] {
                 d_dx.poison();
                 d_dgamma.poison();
                 d_dbeta.poison();
                 d_partial.poison();
               },
           .check =
               [&] {
                 const double h = column_additions(v, rows);
                 auto c =
                     gpu100::compare_within(d_dx.download(), ref.dx, dx_bound, "dx: row-sum bound");
                 c = gpu100::combine(
                     c, gpu100::compare_within(d_dgamma.download(), ref.dgamma,
                                               column_bounds(ref.col_abs_dgamma, h, rows),
                                               fmt::format("dgamma: column-sum bound, h = {}", h)));
                 return gpu100::combine(
                     c, gpu100::compare_within(d_dbeta.download(), ref.dbeta,
                                               column_bounds(ref.col_abs_dbeta, h, rows),
                                               fmt::format("dbeta: column-sum bound, h = {}", h)));
               },
           .work = 12.0 * double(count) + 12.0 * double(cols) + 8.0 * double(rows)});
    }
    ctx.measure_all(runs);
    report.note("rows 0 and 1 have zero variance (all 1.5, all 0.1): xhat = 0, rstd = 1/sqrt(eps)");
  });
}
