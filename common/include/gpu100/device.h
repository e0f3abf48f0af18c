// The device a day runs on and its theoretical limits, computed from device attributes.
// (CUDA 13 removed cudaDeviceProp::memoryClockRate and clockRate; the attributes remain.)
#pragma once
#include <cstddef>
#include <string>

namespace gpu100 {

struct DeviceInfo {
  int id = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  // Peak (maximum boost) SM clock. Peaks computed from it are upper bounds: NVIDIA's datasheet
  // tensor-core figures assume a lower clock (H100 SXM: 989 TFLOP/s at 1830 MHz, while this
  // formula at the 1980 MHz boost clock gives 1070), so a "% of limit" here is conservative.
  int sm_clock_khz = 0;
  int mem_clock_khz = 0;       // peak memory clock
  int mem_bus_bits = 0;
  size_t l2_bytes = 0;
  size_t total_mem = 0, free_mem = 0;
  int warp_size = 32;
  int max_threads_per_block = 0, max_threads_per_sm = 0, max_blocks_per_sm = 0;
  int regs_per_block = 0, regs_per_sm = 0;
  size_t smem_per_block = 0, smem_per_block_optin = 0, smem_per_sm = 0;
  int max_grid_x = 0;
  bool cooperative_launch = false;
  int driver_version = 0, runtime_version = 0;
  // The device is the emulator: kernels run on the CPU, so times are CPU times (meaningless as
  // GPU speed), and the closed vendor libraries cannot run (Context::vendor_libraries).
  bool emulated = false;

  int cc() const { return cc_major * 10 + cc_minor; }  // 90 for 9.0
  std::string cc_string() const;                       // "9.0"
  double peak_dram_gbps() const;
  double peak_fp32_tflops() const;
  double peak_fp16_tensor_tflops() const;  // dense, fp32 accumulate; 0 when unknown
  double peak_int8_tensor_tops() const;    // dense, s8 x s8 -> s32; 0 when unknown
  double peak_fp8_tensor_tflops() const;   // dense e4m3/e5m2, fp32 accumulate; 0 when none
};

// Queries device `id` (current device when id < 0) and makes it current.
DeviceInfo query_device(int id = -1);

// FP32 lanes (CUDA cores) per SM for a compute capability; 0 when unknown.
int fp32_lanes_per_sm(int cc_major, int cc_minor);

}  // namespace gpu100
