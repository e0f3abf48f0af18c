// Day 004 - 2D matrix addition: C = A + B with 2D grids, 2D blocks and pitched memory
//
// A matrix of rows x cols floats is stored row by row. cudaMallocPitch pads each row to a
// "pitch" (bytes from one row's start to the next) so that every row starts on an aligned
// address: a warp reading a row then touches whole memory segments, whatever cols is. Row r
// starts at (char*)base + r * pitch; cudaMemcpy2D copies between the host's packed rows and the
// device's padded ones. The kernel maps threadIdx.x / blockIdx.x to columns and threadIdx.y /
// blockIdx.y to rows, so the 32 threads of a warp read consecutive floats of one row.
//
// gridDim.y is limited to 65535 (gridDim.x to 2^31 - 1), so a grid of ceil(rows / blockDim.y)
// blocks in y fails to launch beyond 65535 * blockDim.y rows. The kernels cap gridDim.y and
// loop over rows with a stride of gridDim.y * blockDim.y, which covers any row count.
//
// Versions (each element costs 12 bytes: two loads, one store; the rate is GB/s of those)
//   block_32x8   2D blocks of 32 x 8: each warp reads 128 contiguous bytes of one row.
//   block_16x16  the shape many tutorials use: each warp covers two half rows of 64 bytes,
//                still whole 32-byte sectors, so it should run close to 32x8.
//   block_4x64   a narrow block: each warp touches 8 rows with 16 bytes each, half of every
//                32-byte sector it fetches; the other half is read by another block, from L2
//                if it is still there. Expect it to be slower.
//   flat         the contrast: the same matrices packed without padding (rows * cols floats)
//                and added as one 1D array with a grid-stride loop. For an element-wise
//                operation the 2D view buys nothing; it matters once a kernel needs (row, col).
// All are exact: float addition is correctly rounded on both sides.
//
// Run:  build/bin/day004 [--rows 8191 --cols 16387] [--kernel block_32x8,flat] [--json out.json]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

// RAII owner of a pitched rows x cols matrix (a DeviceBuffer for 2D data): allocation with
// cudaMallocPitch, packed host rows in and out with cudaMemcpy2D.
template <class T>
class PitchedBuffer {
 public:
  PitchedBuffer(size_t rows, size_t cols) : rows_(rows), cols_(cols) {
    CUDA_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&ptr_), &pitch_, cols * sizeof(T), rows));
  }
  ~PitchedBuffer() {
    if (ptr_) cudaFree(ptr_);  // no check: destructors must not throw
  }
  PitchedBuffer(const PitchedBuffer&) = delete;
  PitchedBuffer& operator=(const PitchedBuffer&) = delete;
  PitchedBuffer(PitchedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), pitch_(o.pitch_), rows_(o.rows_), cols_(o.cols_) {}

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t pitch() const { return pitch_; }  // bytes between the starts of two rows
  size_t rows() const { return rows_; }
  size_t cols() const { return cols_; }
  size_t row_bytes() const { return cols_ * sizeof(T); }

  void upload(const std::vector<T>& host) {  // host: rows x cols, packed
    if (host.size() != rows_ * cols_) throw gpu100::CudaError("PitchedBuffer::upload: wrong size");
    CUDA_CHECK(cudaMemcpy2D(ptr_, pitch_, host.data(), row_bytes(), row_bytes(), rows_,
                            cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(rows_ * cols_);
    CUDA_CHECK(cudaMemcpy2D(host.data(), row_bytes(), ptr_, pitch_, row_bytes(), rows_,
                            cudaMemcpyDeviceToHost));
    return host;
  }
  // 0xFF everywhere, padding included: NaN in every element a kernel forgets to write.
  void poison() { CUDA_CHECK(cudaMemset2D(ptr_, pitch_, 0xFF, pitch_, rows_)); }

 private:
  T* ptr_ = nullptr;
  size_t pitch_ = 0, rows_ = 0, cols_ = 0;
};

// ---- CPU reference ------------------------------------------------------------------------------
std::vector<float> add_cpu(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(a.size());
  for (size_t i = 0; i < c.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

// ---- kernels ------------------------------------------------------------------------------------
template <class T>
__device__ __forceinline__ T* row_of(T* base, size_t pitch, int64_t row) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return reinterpret_cast<T*>(reinterpret_cast<Byte*>(base) + size_t(row) * pitch);
}

// One thread per column; rows in a loop so that a capped gridDim.y still covers every row.
template <int BX, int BY>
__global__ void __launch_bounds__((BX * BY))
    add_pitched(const float* __restrict__ a, size_t pitch_a, const float* __restrict__ b,
                size_t pitch_b, float* __restrict__ c, size_t pitch_c, int64_t rows, int64_t cols) {
  const int64_t col = int64_t(blockIdx.x) * BX + threadIdx.x;
  if (col >= cols) return;  // no barrier below, so the threads past the last column may leave
  const int64_t row_stride = int64_t(gridDim.y) * BY;
  for (int64_t row = int64_t(blockIdx.y) * BY + threadIdx.y; row < rows; row += row_stride)
    row_of(c, pitch_c, row)[col] = row_of(a, pitch_a, row)[col] + row_of(b, pitch_b, row)[col];
}

__global__ void add_flat(const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ c, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    c[i] = a[i] + b[i];
}

// ---- launchers ----------------------------------------------------------------------------------
// The pitched matrices and, for the flat version, the same values packed.
struct Matrices {
  PitchedBuffer<float> a, b, c;
  gpu100::DeviceBuffer<float> flat_a, flat_b, flat_c;
  unsigned flat_grid = 0;  // grid-stride: 8 blocks of 256 per SM
};

template <int BX, int BY>
void launch_pitched(Matrices& m, cudaStream_t stream) {
  const int64_t rows = int64_t(m.c.rows()), cols = int64_t(m.c.cols());
  const dim3 block(BX, BY);
  const dim3 grid(gpu100::grid_for(cols, BX),
                  unsigned(std::min<int64_t>(gpu100::ceil_div<int64_t>(rows, BY),
                                             int64_t(gpu100::kMaxGridDimY))));
  add_pitched<BX, BY><<<grid, block, 0, stream>>>(m.a.data(), m.a.pitch(), m.b.data(), m.b.pitch(),
                                                  m.c.data(), m.c.pitch(), rows, cols);
  LAUNCH_CHECK();
}

void launch_flat(Matrices& m, cudaStream_t stream) {
  add_flat<<<m.flat_grid, 256, 0, stream>>>(m.flat_a.data(), m.flat_b.data(), m.flat_c.data(),
                                            int64_t(m.flat_c.size()));
  LAUNCH_CHECK();
}

struct Version {
  const char* name;
  void (*launch)(Matrices&, cudaStream_t);
  bool flat;  // reads and writes the packed copies
};
const Version kVersions[] = {
    {"block_32x8", launch_pitched<32, 8>, false},
    {"block_16x16", launch_pitched<16, 16>, false},
    {"block_4x64", launch_pitched<4, 64>, false},
    {"flat", launch_flat, true},
};

// cudaMallocPitch rounds each row up to an alignment the driver chooses (commonly 512 bytes);
// the memory estimate assumes 512, and the run prints the pitch it got.
constexpr double kPitchAlign = 512;

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("C = A + B on pitched rows x cols matrices: 2D blocks of three shapes, flat 1D");
  int64_t rows = 8191, cols = 16387;
  cli.size("rows", rows, 333, "matrix rows");
  cli.size("cols", cols, 517, "matrix columns");
  cli.kernels_of(kVersions);
  // cudaMallocPitch takes a row of at most 2^31 - 1 bytes (cudaDeviceProp::memPitch).
  cli.validate([&]() -> std::string {
    if (double(cols) * sizeof(float) > 2147483647.0)
      return fmt::format("--cols {} makes a row longer than 2^31 - 1 bytes", cols);
    return "";
  });
  cli.device_bytes([&] {
    const double pitch = std::ceil(double(cols) * sizeof(float) / kPitchAlign) * kPitchAlign;
    const double packed = double(rows) * double(cols) * sizeof(float);
    return 3.0 * double(rows) * pitch + 3.0 * packed;  // pitched A, B, C and the flat copies
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("GB/s");
    report.limit("dram_gbps", ctx.device().peak_dram_gbps(), "HBM peak");
    report.intensity(1.0 / 12.0);

    const size_t count = size_t(rows) * size_t(cols);
    const auto a = gpu100::random_floats(count, ctx.seed());
    const auto b = gpu100::random_floats(count, ctx.seed() + 1);
    const auto ref = add_cpu(a, b);
    Matrices m{
        {size_t(rows), size_t(cols)}, {size_t(rows), size_t(cols)}, {size_t(rows), size_t(cols)}};
    m.a.upload(a);
    m.b.upload(b);
    if (ctx.want("flat")) {
      m.flat_a = gpu100::DeviceBuffer<float>(a);
      m.flat_b = gpu100::DeviceBuffer<float>(b);
      m.flat_c = gpu100::DeviceBuffer<float>(count);
      m.flat_grid = unsigned(ctx.device().sm_count) * 8;
    }
    report.problem("pitch_bytes", double(m.c.pitch()));
    report.note(fmt::format(
        "pitch {} bytes for rows of {} bytes: {:.1f}% of the allocation is padding", m.c.pitch(),
        m.c.row_bytes(), 100.0 * double(m.c.pitch() - m.c.row_bytes()) / double(m.c.pitch())));
    if (gpu100::ceil_div<int64_t>(rows, 8) > int64_t(gpu100::kMaxGridDimY))
      report.note(
          "rows > 65535 x 8: gridDim.y is capped at 65535 (for block_32x8 at least), "
          "so threads loop over several rows");
    // Same traffic as the kernels: a copy of 1.5 x rows x cols floats moves 12 bytes per element.
    ctx.copy_baseline(size_t(1.5 * double(count) * sizeof(float)));

    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back({.name = v.name,
                      .launch = [&](cudaStream_t s) { v.launch(m, s); },
                      .reset = [&] { v.flat ? m.flat_c.poison() : m.c.poison(); },
                      .check =
                          [&] {
                            return gpu100::compare_exact(
                                v.flat ? m.flat_c.download() : m.c.download(), ref);
                          },
                      .work = 12.0 * double(count)});  // useful bytes, not padding
    }
    ctx.measure_all(runs);
  });
}
