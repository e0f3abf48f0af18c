// Day 050 - embedding lookup: a gather forward, a scatter-add backward, and determinism
//
// Forward: out[t] = W[idx[t]], one row of the table per token: a gather, pure memory traffic.
// Backward: dW[v] = sum of dy[t] over the tokens t with idx[t] = v: a scatter-add, and a token id
// that occurs many times in a batch (a space, "the", a padding id) makes many threads add into
// the same row. Floating-point addition is not associative, so the result depends on the order of
// the additions, and with atomics that order is whatever the hardware's scheduling gives: the same
// program on the same input gives gradients that differ in the last bits from run to run, and a
// training run cannot be reproduced. A sort makes the order a property of the data instead.
//
// Versions
//   forward          one thread per output element, rows on the grid's y: coalesced along a row.
//   backward_atomic  one thread per element of dy, atomicAdd into dW[idx[t]] (dW zeroed first).
//                    Fast and simple; the summation order is the schedule's.
//   backward_sorted  sort the token positions by id (cub::DeviceRadixSort, stable, so positions of
//                    one id stay ascending), then one thread per (run of equal ids, column) sums
//                    its column in that order and writes dW once: no atomics, a fixed order, the
//                    same bits on every run and every schedule.
//
// Check: forward exact (a copy). backward_sorted bit for bit against the CPU summing each row's
// tokens in ascending order in fp32. Both backwards element by element within the rounding bound
// of an fp32 sum of c terms (Higham: |error| <= gamma_(c-1) sum |dy|, c the id's count) of the
// double sum. The CPU backward against finite differences of the CPU forward. Determinism: every
// backward runs again several times and the distinct bit patterns of dW are counted; the
// `day050.emu.schedules` test runs the day under different emulator schedules
// (GPU100_EMU_SCHEDULE=random:SEED) and requires backward_sorted's digest to be the same in all,
// and backward_atomic's to differ.
//
// Run:  build/bin/day050 [--tokens 65536] [--vocab 50257] [--dim 771] [--hot 0.2]
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <cub/cub.cuh>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

struct Shape {
  int64_t tokens, vocab, dim;
};

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<float> forward_cpu(const std::vector<float>& w, const std::vector<int32_t>& idx,
                               const Shape& s) {
  std::vector<float> out(size_t(s.tokens * s.dim));
  for (int64_t t = 0; t < s.tokens; ++t)
    std::memcpy(&out[size_t(t * s.dim)], &w[size_t(idx[size_t(t)]) * size_t(s.dim)],
                size_t(s.dim) * sizeof(float));
  return out;
}

// dW in double; the absolute sum of each element's terms and each row's count (for the bound).
struct Backward {
  std::vector<double> dw, abs_sum;
  std::vector<int64_t> count;
};
Backward backward_cpu(const std::vector<float>& dy, const std::vector<int32_t>& idx,
                      const Shape& s) {
  Backward b{std::vector<double>(size_t(s.vocab * s.dim)),
             std::vector<double>(size_t(s.vocab * s.dim)), std::vector<int64_t>(size_t(s.vocab))};
  for (int64_t t = 0; t < s.tokens; ++t) {
    const size_t row = size_t(idx[size_t(t)]);
    ++b.count[row];
    for (int64_t d = 0; d < s.dim; ++d) {
      b.dw[row * size_t(s.dim) + size_t(d)] += dy[size_t(t * s.dim + d)];
      b.abs_sum[row * size_t(s.dim) + size_t(d)] += std::fabs(dy[size_t(t * s.dim + d)]);
    }
  }
  return b;
}

// What backward_sorted computes: each row's tokens in ascending position, summed in fp32.
std::vector<float> backward_ordered_fp32(const std::vector<float>& dy,
                                         const std::vector<int32_t>& idx, const Shape& s) {
  std::vector<float> dw(size_t(s.vocab * s.dim), 0.0f);
  std::vector<uint8_t> seen(size_t(s.vocab), 0);
  for (int64_t t = 0; t < s.tokens; ++t) {
    float* row = &dw[size_t(idx[size_t(t)]) * size_t(s.dim)];
    const bool first = !seen[size_t(idx[size_t(t)])];
    seen[size_t(idx[size_t(t)])] = 1;
    for (int64_t d = 0; d < s.dim; ++d)
      row[d] = first ? dy[size_t(t * s.dim + d)] : row[d] + dy[size_t(t * s.dim + d)];
  }
  return dw;
}

// ---- kernels ------------------------------------------------------------------------------------
// Columns on x, tokens on y (striding past the grid's y limit).
__global__ void embedding_forward(const float* __restrict__ w, const int32_t* __restrict__ idx,
                                  float* __restrict__ out, int64_t tokens, int64_t dim) {
  const int64_t d = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (d >= dim) return;
  for (int64_t t = blockIdx.y; t < tokens; t += gridDim.y)
    out[t * dim + d] = w[int64_t(idx[t]) * dim + d];
}

__global__ void embedding_backward_atomic(const float* __restrict__ dy,
                                          const int32_t* __restrict__ idx, float* __restrict__ dw,
                                          int64_t tokens, int64_t dim) {
  const int64_t d = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (d >= dim) return;
  for (int64_t t = blockIdx.y; t < tokens; t += gridDim.y)
    atomicAdd(&dw[int64_t(idx[t]) * dim + d], dy[t * dim + d]);
}

// sorted_ids / positions: the ids in ascending order and, for equal ids, their token positions
// ascending. The thread of column d at the first position k of a run of equal ids sums the run.
__global__ void embedding_backward_runs(const float* __restrict__ dy,
                                        const int32_t* __restrict__ sorted_ids,
                                        const int32_t* __restrict__ positions,
                                        float* __restrict__ dw, int64_t tokens, int64_t dim) {
  const int64_t d = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (d >= dim) return;
  for (int64_t k = blockIdx.y; k < tokens; k += gridDim.y) {
    const int32_t id = sorted_ids[k];
    if (k > 0 && sorted_ids[k - 1] == id) continue;  // not the start of a run
    float sum = dy[int64_t(positions[k]) * dim + d];
    for (int64_t j = k + 1; j < tokens && sorted_ids[j] == id; ++j)
      sum += dy[int64_t(positions[j]) * dim + d];
    dw[int64_t(id) * dim + d] = sum;
  }
}

// ---- launchers ----------------------------------------------------------------------------------
constexpr int kBlock = 128;
constexpr unsigned kMaxGridY = 65535;

struct Buffers {
  const float *w, *dy;
  const int32_t *idx, *iota;
  float *out, *dw;
  int32_t *sorted_ids, *positions;
  void* sort_temp;
  size_t sort_temp_bytes;
  int end_bit;  // the ids' significant bits: fewer radix passes for a small vocabulary
};

enum class Kind { forward, atomic, sorted };
struct Version {
  const char* name;
  Kind kind;
};
const Version kVersions[] = {
    {"forward", Kind::forward},
    {"backward_atomic", Kind::atomic},
    {"backward_sorted", Kind::sorted},
};

dim3 grid_of(const Shape& s) {
  return dim3(gpu100::grid_for(s.dim, kBlock), unsigned(std::min<int64_t>(s.tokens, kMaxGridY)));
}

void launch(const Version& v, Buffers& b, const Shape& s, cudaStream_t st) {
  const dim3 grid = grid_of(s);
  switch (v.kind) {
    case Kind::forward:
      embedding_forward<<<grid, kBlock, 0, st>>>(b.w, b.idx, b.out, s.tokens, s.dim);
      break;
    case Kind::atomic:
      CUDA_CHECK(cudaMemsetAsync(b.dw, 0, size_t(s.vocab * s.dim) * sizeof(float), st));
      embedding_backward_atomic<<<grid, kBlock, 0, st>>>(b.dy, b.idx, b.dw, s.tokens, s.dim);
      break;
    case Kind::sorted:
      CUDA_CHECK(cudaMemsetAsync(b.dw, 0, size_t(s.vocab * s.dim) * sizeof(float), st));
      CUDA_CHECK(cub::DeviceRadixSort::SortPairs(b.sort_temp, b.sort_temp_bytes, b.idx,
                                                 b.sorted_ids, b.iota, b.positions, s.tokens, 0,
                                                 b.end_bit, st));
      embedding_backward_runs<<<grid, kBlock, 0, st>>>(b.dy, b.sorted_ids, b.positions, b.dw,
                                                       s.tokens, s.dim);
      break;
  }
  LAUNCH_CHECK();
}

// ---- analysis -----------------------------------------------------------------------------------
// Token ids: a fraction `hot` of the tokens is id 0 (a padding or very common id: the contended
// row), the rest uniform over the vocabulary.
std::vector<int32_t> token_ids(const Shape& s, double hot, uint64_t seed) {
  auto ids = gpu100::random_ints(size_t(s.tokens), seed, 0, int32_t(s.vocab - 1));
  const auto coin = gpu100::random_floats(size_t(s.tokens), seed + 1, 0.0f, 1.0f);
  for (size_t t = 0; t < ids.size(); ++t)
    if (coin[t] < hot) ids[t] = 0;
  return ids;
}

// Each element within the worst-case rounding bound of an fp32 sum of its c terms, in any order:
// |computed - exact| <= gamma_(c-1) * sum |terms|, gamma_h = h u / (1 - h u), u = 2^-24.
gpu100::CheckResult check_within_sum_bound(const std::vector<float>& got, const Backward& ref,
                                           int64_t dim) {
  gpu100::CheckResult r;
  r.checked = true;
  r.tolerance = "fp32 sum bound gamma_(c-1) sum|dy|";
  r.count = int64_t(got.size());
  double diff2 = 0, ref2 = 0;
  r.pass = true;
  for (size_t i = 0; i < got.size(); ++i) {
    const double h = double(std::max<int64_t>(ref.count[i / size_t(dim)] - 1, 0)) * 0x1p-24;
    const double bound = h / (1 - h) * ref.abs_sum[i];
    const double err = std::fabs(double(got[i]) - ref.dw[i]);
    diff2 += err * err;
    ref2 += ref.dw[i] * ref.dw[i];
    r.max_ref = std::max(r.max_ref, std::fabs(ref.dw[i]));
    if (!std::isfinite(got[i])) ++r.nonfinite;
    if (!(err <= bound) && r.pass) {
      r.pass = false;
      r.worst_index = int64_t(i);
      r.worst_got = got[i];
      r.worst_ref = ref.dw[i];
    }
    r.max_abs_err = std::max(r.max_abs_err, err);
  }
  r.rel_err = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  r.pass = r.pass && r.nonfinite == 0;
  return r;
}

// FNV-1a over the bits: two results are the same run for run only if every bit is.
uint64_t digest(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// dW of a backward over several more runs: how many different bit patterns came out.
size_t distinct_results(const Version& v, Buffers& b, const Shape& s,
                        gpu100::DeviceBuffer<float>& d_dw, int runs) {
  std::set<uint64_t> seen;
  for (int r = 0; r < runs; ++r) {
    launch(v, b, s, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    seen.insert(digest(d_dw.download()));
  }
  return seen.size();
}

// The CPU backward (scatter-add) against finite differences of the CPU forward (gather), as a
// function of the table, on 5 tokens (one id three times) over 3 rows of 2.
gpu100::CheckResult check_reference_gradient() {
  const Shape s{5, 3, 2};
  const std::vector<int32_t> idx = {2, 0, 2, 1, 2};
  const auto wf = gpu100::random_floats(size_t(s.vocab * s.dim), 21);
  const auto dyf = gpu100::random_floats(size_t(s.tokens * s.dim), 22);
  const std::vector<double> w(wf.begin(), wf.end()), dy(dyf.begin(), dyf.end());
  auto forward = [&](const std::vector<double>& table) {
    std::vector<double> out(size_t(s.tokens * s.dim));
    for (int64_t t = 0; t < s.tokens; ++t)
      for (int64_t d = 0; d < s.dim; ++d)
        out[size_t(t * s.dim + d)] = table[size_t(idx[size_t(t)] * s.dim + d)];
    return out;
  };
  return gpu100::check_gradient(forward, w, dy, backward_cpu(dyf, idx, s).dw);
}

// The CPU's results for one batch: the gathered rows, dW in double with each element's count and
// sum |dy|, and dW summed in fp32 in token order (the sorted backward's exact result).
struct References {
  std::vector<float> out;
  Backward dw;
  std::vector<float> dw_ordered;
};

// The table, the batch and every buffer the versions use, on the device; b points into them.
struct DeviceData {
  DeviceData(const std::vector<float>& w, const std::vector<float>& dy,
             const std::vector<int32_t>& idx, const Shape& s)
      : d_w(w),
        d_dy(dy),
        d_out(size_t(s.tokens * s.dim)),
        d_dw(size_t(s.vocab * s.dim)),
        d_idx(idx),
        d_iota(iota(s.tokens)),
        d_sorted(size_t(s.tokens)),
        d_pos(size_t(s.tokens)) {
    b = {d_w.data(), d_dy.data(), d_idx.data(), d_iota.data(), d_out.data(), d_dw.data(),
         d_sorted.data(), d_pos.data(), nullptr, 0, 1};
    while (b.end_bit < 31 && (int64_t(1) << b.end_bit) < s.vocab) ++b.end_bit;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b.sort_temp_bytes, b.idx, b.sorted_ids,
                                               b.iota, b.positions, s.tokens, 0, b.end_bit));
    d_temp = gpu100::DeviceBuffer<unsigned char>(b.sort_temp_bytes);
    b.sort_temp = d_temp.data();
  }
  DeviceData(const DeviceData&) = delete;  // b points into this object
  DeviceData& operator=(const DeviceData&) = delete;

  static std::vector<int32_t> iota(int64_t tokens) {
    std::vector<int32_t> v(static_cast<size_t>(tokens));
    std::iota(v.begin(), v.end(), 0);
    return v;
  }

  gpu100::DeviceBuffer<float> d_w, d_dy, d_out, d_dw;
  gpu100::DeviceBuffer<int32_t> d_idx, d_iota, d_sorted, d_pos;
  gpu100::DeviceBuffer<unsigned char> d_temp;
  Buffers b;
};

// A version's result against the CPU: the forward exactly; a backward within the fp32 sum bound,
// the sorted one also bit for bit against the token-order sum. The digest of a backward's dW is
// kept for the determinism table.
gpu100::CheckResult check_version(const Version& v, const DeviceData& d, const References& ref,
                                  int64_t dim, uint64_t& digest_out) {
  if (v.kind == Kind::forward) return gpu100::compare_exact(d.d_out.download(), ref.out);
  const auto got = d.d_dw.download();
  digest_out = digest(got);
  auto c = check_within_sum_bound(got, ref.dw, dim);
  if (v.kind == Kind::sorted) c = gpu100::combine(c, gpu100::compare_exact(got, ref.dw_ordered));
  return c;
}

gpu100::Measure measure_version(const Version& v, DeviceData& d, const References& ref,
                                const Shape& s, uint64_t& digest_out) {
  const bool fwd = v.kind == Kind::forward;
  return {.name = v.name,
          .launch = [&v, &d, s](cudaStream_t st) { launch(v, d.b, s, st); },
          .reset =
              [&d] {
                d.d_out.poison();
                d.d_dw.poison();
              },
          .check = [&v, &d, &ref, dim = s.dim, &digest_out] {
            return check_version(v, d, ref, dim, digest_out);
          },
          // The essential traffic: the forward's rows in and out and ids; the backward's dy and
          // ids in, dW out (the sort's own passes are part of its cost, not of the work).
          .work = fwd ? 8.0 * double(s.tokens * s.dim) + 4.0 * double(s.tokens)
                      : 4.0 * double(s.tokens * s.dim + s.vocab * s.dim) + 4.0 * double(s.tokens)};
}

// Each selected backward's dW over `repeats` more runs: distinct bit patterns, and the digest of
// its checked run.
gpu100::Table determinism_table(gpu100::Context& ctx, DeviceData& d, const Shape& s, int repeats,
                                const std::map<std::string, uint64_t>& digests) {
  gpu100::Table t;
  t.title = fmt::format("determinism: dW over {} more runs of each backward", repeats);
  t.columns = {"version", "runs", "distinct dW bit patterns", "digest of the checked run"};
  for (const Version& v : kVersions) {
    if (v.kind == Kind::forward || !ctx.want(v.name)) continue;
    t.add_row({v.name, repeats, int(distinct_results(v, d.b, s, d.d_dw, repeats)),
               fmt::format("{:016x}", digests.at(v.name))});
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli(
      "Embedding: gather forward; scatter-add backward by atomics vs deterministic sort");
  int64_t tokens = 65536, vocab = 50257, dim = 771;
  double hot = 0.2;
  int repeats = 4;
  cli.size("tokens", tokens, 1003, "tokens in the batch", INT32_MAX);
  cli.size("vocab", vocab, 97, "rows of the table", INT32_MAX);
  cli.size("dim", dim, 67, "columns (embedding size)");
  cli.option("hot", hot, "fraction of tokens that are id 0 (the contended row)", 0.0, 1.0);
  cli.option("repeats", repeats, "extra runs of each backward to count distinct results", 1, 100);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    return 4.0 * double(dim) * (double(vocab) * 2 + double(tokens) * 2) + 16.0 * double(tokens);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    const Shape s{tokens, vocab, dim};

    const auto idx = token_ids(s, hot, ctx.seed());
    const auto w = gpu100::random_floats(size_t(vocab * dim), ctx.seed() + 2);
    const auto dy = gpu100::random_floats(size_t(tokens * dim), ctx.seed() + 3);
    const References ref{forward_cpu(w, idx, s), backward_cpu(dy, idx, s),
                         backward_ordered_fp32(dy, idx, s)};
    report.add_check("reference gradient (finite differences)", check_reference_gradient());

    DeviceData d(w, dy, idx, s);
    ctx.copy_baseline(size_t(tokens * dim) * sizeof(float));  // the forward's rows in and out

    std::map<std::string, uint64_t> digests;  // of each backward's checked dW
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions)
      runs.push_back(measure_version(v, d, ref, s, digests[v.name]));
    ctx.measure_all(runs);

    report.table(determinism_table(ctx, d, s, repeats, digests));
    // One line per backward for the schedules test (day050/schedules.cmake) to compare.
    for (const Version& v : kVersions)
      if (v.kind != Kind::forward && ctx.want(v.name))
        report.note(fmt::format("digest {} {:016x}", v.name, digests.at(v.name)));
    report.note(fmt::format(
        "id 0 occurs {} times (the contended row); {} of {} rows are hit", ref.dw.count[0],
        std::count_if(ref.dw.count.begin(), ref.dw.count.end(), [](int64_t c) { return c > 0; }),
        vocab));
  });
}
