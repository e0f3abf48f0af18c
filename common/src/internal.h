// What common/'s sources share with each other and with its unit tests, but no day needs: kept
// out of include/gpu100/ so that a day's reader meets only what a day uses.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "gpu100/bench.h"
#include "gpu100/cli.h"
#include "gpu100/device.h"
#include "gpu100/report.h"

namespace gpu100 {

enum ExitCode : int { kPass = 0, kFail = 1, kUsage = 2, kSkip = 77 };

// --- bench.cpp, l2_flush.cu ------------------------------------------------------------------
// Device-to-device cudaMemcpy of `bytes` (at most kMaxCopyProbeBytes and a quarter of the free
// memory), timed; the rate counts read + write (2 * bytes).
CopyProbe measure_copy_bandwidth(size_t bytes, const BenchOptions& options);
void flush_l2_by_reading(const void* buffer, size_t bytes, int* sink, cudaStream_t stream);

// --- device.cpp ------------------------------------------------------------------------------
// The emulator (emu/) is a libcudart.so.13 that runs kernels on the CPU; its device's name starts
// with this ("gpu100 emulator (sm_90)"), which is how a program knows it is emulated.
inline constexpr const char kEmulatorNamePrefix[] = "gpu100 emulator";
bool is_emulator_name(const std::string& device_name);
// Whether the current device is the emulator, for code that has no DeviceInfo at hand.
bool current_device_is_emulated();
// cuBLAS, cuBLASLt, cuSPARSE and cuRAND's host API are closed libraries with their own runtime
// inside, which talks to the GPU driver directly: the emulator cannot stand in for them.
inline bool vendor_libraries_usable(const DeviceInfo& device) { return !device.emulated; }
// Limit formulas. DRAM is double data rate: two transfers per memory clock over the whole bus.
double dram_gbps(int mem_clock_khz, int bus_bits);
// Dense FP16 tensor-core FLOPs per clock per SM (FMA = 2 FLOPs); 0 when unknown.
int fp16_tensor_flops_per_clock_per_sm(int cc_major, int cc_minor);
// FP32 peak: every lane issues one FMA (2 FLOPs) per clock.
double fp32_tflops(int sm_count, int lanes_per_sm, int sm_clock_khz);
// Version integers from cudaDriverGetVersion / cudaRuntimeGetVersion as "major.minor".
std::string cuda_version_string(int version);

// --- report.cpp ------------------------------------------------------------------------------
const char* outcome_name(Outcome o);  // "PASS", "FAIL", "SKIP"
void print_table(const Table& t);     // aligned columns, to stdout

// --- cli.cpp ---------------------------------------------------------------------------------
// The no-device decision: kSkip, or kFail when a GPU (or the emulator) is required.
int no_device_exit_code(bool require_gpu);
bool require_gpu_from_env();
bool require_emulator_from_env();
// The exit code of a finished report: kPass, kFail, or kSkip when no version ran (Outcome).
int exit_code(const Report& report);
// The lines printed before the body runs: what the day is, the device, the problem and how it
// is timed; under the emulator, that the times are CPU times and mean nothing for a GPU.
std::string run_header(const Cli& cli, const DeviceInfo& device);

// --- gemm.cu ---------------------------------------------------------------------------------
// The fastest timed version of this run that passed its check; empty when none did.
std::string best_passing_version(const Report& report);

}  // namespace gpu100
