#include "gpu100/device.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "gpu100/check.h"
#include "internal.h"

namespace gpu100 {

double dram_gbps(int mem_clock_khz, int bus_bits) {
  return 2.0 * double(mem_clock_khz) * 1e3 * (double(bus_bits) / 8.0) / 1e9;
}

int fp32_lanes_per_sm(int major, int minor) {
  switch (major) {
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;                       // Volta, Turing
    case 8: return minor == 0 ? 64 : 128;    // A100: 64; GA10x, AD10x: 128
    case 9: return 128;                      // H100
    case 10: case 11: case 12: return 128;   // Blackwell
    default: return 0;
  }
}

int fp16_tensor_flops_per_clock_per_sm(int major, int minor) {
  // Dense FP16 inputs with FP32 accumulation, per SM per clock (2 FLOPs per FMA).
  if (major == 7) return 1024;                     // V100 (8 tensor cores x 64 FMA)
  if (major == 8 && minor == 0) return 2048;       // A100: 312 TFLOP/s at 108 SMs, 1.41 GHz
  if (major == 8) return 1024;                     // GA10x / AD10x (fp32 accumulate, full rate)
  if (major == 9) return 4096;                     // H100: 989 TFLOP/s at 132 SMs, 1.83 GHz
  if (major == 10) return 8192;                    // B200
  return 0;
}

// Dense 8-bit tensor-core operations per clock per SM (one multiply-add = 2 operations). Where
// the architecture has them, int8 and fp8 run at twice the fp16 rate.
int int8_tensor_ops_per_clock_per_sm(int major, int minor) {
  if (major == 8 && minor == 0) return 4096;       // A100: 624 TOPS at 108 SMs, 1.41 GHz
  if (major == 8 && minor == 9) return 2048;       // L40S: 733 TOPS at 142 SMs, 2.52 GHz
  if (major == 8) return 2048;                     // GA10x
  if (major == 9) return 8192;                     // H100: 1979 TOPS at 132 SMs, 1.83 GHz
  if (major == 10) return 16384;                   // B200
  return 0;
}

int fp8_tensor_flops_per_clock_per_sm(int major, int minor) {
  if (major == 8 && minor == 9) return 2048;       // L40S: 733 TFLOP/s at 142 SMs, 2.52 GHz
  if (major == 9) return 8192;                     // H100: 1979 TFLOP/s at 132 SMs, 1.83 GHz
  if (major == 10) return 16384;                   // B200
  return 0;                                        // no fp8 tensor cores before sm_89
}

double fp32_tflops(int sm_count, int lanes_per_sm, int sm_clock_khz) {
  return 2.0 * sm_count * lanes_per_sm * (sm_clock_khz * 1e3) / 1e12;
}

bool is_emulator_name(const std::string& name) { return name.rfind(kEmulatorNamePrefix, 0) == 0; }

bool current_device_is_emulated() {
  int id = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&id) != cudaSuccess || cudaGetDeviceProperties(&prop, id) != cudaSuccess) {
    cudaGetLastError();  // a query that failed here must not surface at the next check
    return false;
  }
  return is_emulator_name(prop.name);
}

std::string cuda_version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string DeviceInfo::cc_string() const { return fmt::format("{}.{}", cc_major, cc_minor); }
double DeviceInfo::peak_dram_gbps() const { return dram_gbps(mem_clock_khz, mem_bus_bits); }
double DeviceInfo::peak_fp32_tflops() const {
  return fp32_tflops(sm_count, fp32_lanes_per_sm(cc_major, cc_minor), sm_clock_khz);
}
double DeviceInfo::peak_fp16_tensor_tflops() const {
  return double(sm_count) * fp16_tensor_flops_per_clock_per_sm(cc_major, cc_minor) *
         (sm_clock_khz * 1e3) / 1e12;
}

double DeviceInfo::peak_int8_tensor_tops() const {
  return double(sm_count) * int8_tensor_ops_per_clock_per_sm(cc_major, cc_minor) *
         (sm_clock_khz * 1e3) / 1e12;
}
double DeviceInfo::peak_fp8_tensor_tflops() const {
  return double(sm_count) * fp8_tensor_flops_per_clock_per_sm(cc_major, cc_minor) *
         (sm_clock_khz * 1e3) / 1e12;
}

DeviceInfo query_device(int id) {
  if (id < 0) CUDA_CHECK(cudaGetDevice(&id));
  CUDA_CHECK(cudaSetDevice(id));
  DeviceInfo d;
  d.id = id;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, id));
  d.name = prop.name;
  d.emulated = is_emulator_name(d.name);
  auto attr = [id](cudaDeviceAttr a) {
    int v = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, a, id));
    return v;
  };
  d.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  d.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  d.sm_count = attr(cudaDevAttrMultiProcessorCount);
  d.sm_clock_khz = attr(cudaDevAttrClockRate);
  d.mem_clock_khz = attr(cudaDevAttrMemoryClockRate);
  d.mem_bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  d.l2_bytes = size_t(attr(cudaDevAttrL2CacheSize));
  d.warp_size = attr(cudaDevAttrWarpSize);
  d.max_threads_per_block = attr(cudaDevAttrMaxThreadsPerBlock);
  d.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
  d.max_blocks_per_sm = attr(cudaDevAttrMaxBlocksPerMultiprocessor);
  d.regs_per_block = attr(cudaDevAttrMaxRegistersPerBlock);
  d.regs_per_sm = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
  d.smem_per_block = size_t(attr(cudaDevAttrMaxSharedMemoryPerBlock));
  d.smem_per_block_optin = size_t(attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  d.smem_per_sm = size_t(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  d.max_grid_x = attr(cudaDevAttrMaxGridDimX);
  d.cooperative_launch = attr(cudaDevAttrCooperativeLaunch) != 0;
  CUDA_CHECK(cudaMemGetInfo(&d.free_mem, &d.total_mem));
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

}  // namespace gpu100
