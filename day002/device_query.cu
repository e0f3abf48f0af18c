// Day 002 - device query: what the GPU is, what it can do, and where a block actually runs
//
// Every later day reports its speed as a fraction of a device limit, so this day shows where
// those limits come from. The runtime answers two ways (cudaGetDeviceProperties, which fills a
// big struct, and cudaDeviceGetAttribute, which asks for one value); CUDA 13 dropped the clock
// fields from the struct, so the clocks, and with them every theoretical peak, come from
// attributes. The peaks printed here are arithmetic on those attributes, not measurements:
//   HBM GB/s         = 2 (double data rate) x memory clock x bus width / 8
//   FP32 TFLOP/s     = SMs x FP32 lanes per SM x 2 (an FMA is two FLOPs) x peak SM clock
//   FP16 tensor      = SMs x dense FP16 tensor FLOPs per SM per clock x peak SM clock
// The clock attribute is the boost clock; a long run may be throttled below it.
//
// Versions
//   properties  a table of every visible device; passes when the struct and the attribute
//               API agree, field by field, on every device (the two must never disagree), and
//               (row "limits") when every input of the theoretical peaks is known: SM count,
//               clocks, bus width, L2 size and FP32 lanes per SM must all be positive.
//   smid        a kernel launched with many more blocks than SMs (--blocks-per-sm x SMs); the
//               first thread of each block reads the special register %smid with inline PTX
//               and records it. The host checks that every id is below the SM count (row
//               smid) and that every SM ran at least one block (row smid_coverage), and prints
//               how many blocks each SM got.
//
// Run:  build/bin/day002 [--blocks-per-sm 8] [--hold-cycles 2000] [--per-sm] [--json out.json]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

// %smid is the SM the calling thread runs on. It is volatile: the value can only be read
// at run time, and the compiler must neither hoist nor merge the read.
__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// %nsmid is the range %smid may take. PTX only promises "at most" semantics: ids need not be
// contiguous and %nsmid may exceed the number of SMs, so the host check uses the attribute.
__device__ __forceinline__ unsigned sm_id_range() {
  unsigned n;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
  return n;
}

// One record per block: a block never migrates between SMs, so one thread's read describes
// the whole block. The spin keeps the block resident for hold_cycles, so the spread shows where
// the scheduler placed blocks rather than which SM happened to free up first;
// --hold-cycles 0 makes blocks as short-lived as they can be.
__global__ void record_smid(unsigned* __restrict__ block_sm, unsigned* __restrict__ nsmid,
                            long long hold_cycles) {
  if (threadIdx.x != 0) return;  // no barrier in this kernel, so idle threads may leave
  block_sm[blockIdx.x] = sm_id();
  if (blockIdx.x == 0) *nsmid = sm_id_range();
  const long long start = clock64();
  while (clock64() - start < hold_cycles) {
  }
}

constexpr int kBlock = 32;  // one warp: only thread 0 works, the block size is not the lesson

// An exact-style check built from counts: `mismatches` of `count` items broke the rule, the
// first at `first` (got vs expected), so the report prints "N diff" and PASS only at zero.
gpu100::CheckResult exact_check(int64_t count, int64_t mismatches, int64_t first, double got,
                                double expected) {
  gpu100::CheckResult r;
  r.checked = true;
  r.tolerance = "exact";
  r.count = count;
  r.mismatches = mismatches;
  r.worst_index = mismatches ? first : -1;
  r.worst_got = got;
  r.worst_ref = expected;
  r.rel_err = count ? double(mismatches) / double(count) : 0.0;
  r.max_abs_err = mismatches ? std::abs(got - expected) : 0.0;
  r.pass = count > 0 && mismatches == 0;
  return r;
}

// --- properties -------------------------------------------------------------------------

// Fields both APIs report. Any difference would be a runtime bug, so the check is exact.
struct FieldPair {
  const char* name;
  long long from_struct;
  cudaDeviceAttr attribute;
};

std::vector<FieldPair> struct_fields(const cudaDeviceProp& p) {
  return {
      {"major", p.major, cudaDevAttrComputeCapabilityMajor},
      {"minor", p.minor, cudaDevAttrComputeCapabilityMinor},
      {"multiProcessorCount", p.multiProcessorCount, cudaDevAttrMultiProcessorCount},
      {"warpSize", p.warpSize, cudaDevAttrWarpSize},
      {"maxThreadsPerBlock", p.maxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock},
      {"maxThreadsDim[0]", p.maxThreadsDim[0], cudaDevAttrMaxBlockDimX},
      {"maxThreadsDim[1]", p.maxThreadsDim[1], cudaDevAttrMaxBlockDimY},
      {"maxThreadsDim[2]", p.maxThreadsDim[2], cudaDevAttrMaxBlockDimZ},
      {"maxGridSize[0]", p.maxGridSize[0], cudaDevAttrMaxGridDimX},
      {"maxGridSize[1]", p.maxGridSize[1], cudaDevAttrMaxGridDimY},
      {"maxGridSize[2]", p.maxGridSize[2], cudaDevAttrMaxGridDimZ},
      {"sharedMemPerBlock", (long long)p.sharedMemPerBlock, cudaDevAttrMaxSharedMemoryPerBlock},
      {"sharedMemPerBlockOptin", (long long)p.sharedMemPerBlockOptin,
       cudaDevAttrMaxSharedMemoryPerBlockOptin},
      {"sharedMemPerMultiprocessor", (long long)p.sharedMemPerMultiprocessor,
       cudaDevAttrMaxSharedMemoryPerMultiprocessor},
      {"regsPerBlock", p.regsPerBlock, cudaDevAttrMaxRegistersPerBlock},
      {"regsPerMultiprocessor", p.regsPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor},
      {"maxThreadsPerMultiProcessor", p.maxThreadsPerMultiProcessor,
       cudaDevAttrMaxThreadsPerMultiProcessor},
      {"maxBlocksPerMultiProcessor", p.maxBlocksPerMultiProcessor,
       cudaDevAttrMaxBlocksPerMultiprocessor},
      {"l2CacheSize", p.l2CacheSize, cudaDevAttrL2CacheSize},
      {"persistingL2CacheMaxSize", p.persistingL2CacheMaxSize, cudaDevAttrMaxPersistingL2CacheSize},
      {"memoryBusWidth", p.memoryBusWidth, cudaDevAttrGlobalMemoryBusWidth},
      {"totalConstMem", (long long)p.totalConstMem, cudaDevAttrTotalConstantMemory},
      {"concurrentKernels", p.concurrentKernels, cudaDevAttrConcurrentKernels},
      {"asyncEngineCount", p.asyncEngineCount, cudaDevAttrAsyncEngineCount},
      {"cooperativeLaunch", p.cooperativeLaunch, cudaDevAttrCooperativeLaunch},
  };
}

// One column of the properties table.
struct DeviceColumn {
  bool ok = false;
  std::string error;
  gpu100::DeviceInfo info;
  cudaDeviceProp prop{};
};

std::string mib(double bytes) {
  return fmt::format("{:.1f}", bytes / (1024.0 * 1024.0));
}

// Shared-memory sizes are whole KiB on every GPU so far; print them as integers.
gpu100::Cell kib(size_t bytes) {
  return gpu100::Cell((unsigned long long)(bytes / 1024));
}

gpu100::Table properties_table(const std::vector<DeviceColumn>& devices, int current) {
  gpu100::Table t;
  t.title = "Visible devices (peaks are theoretical: device attributes times per-SM rates)";
  t.columns = {"property"};
  for (size_t i = 0; i < devices.size(); ++i)
    t.columns.push_back(fmt::format("GPU {}{}", i, int(i) == current ? " (this run)" : ""));

  // Each row: a label and how to get the value from one device.
  auto row = [&](const char* label, auto value) {
    std::vector<gpu100::Cell> r{label};
    for (const auto& d : devices) r.push_back(d.ok ? gpu100::Cell(value(d)) : gpu100::Cell("-"));
    t.add_row(std::move(r));
  };
  using D = const DeviceColumn&;
  auto yes_no = [](bool b) { return gpu100::Cell(b ? "yes" : "no"); };
  {
    std::vector<gpu100::Cell> r{"name"};
    for (const auto& d : devices) r.push_back(d.ok ? d.info.name : "unavailable: " + d.error);
    t.add_row(std::move(r));
  }
  row("compute capability", [](D d) { return gpu100::Cell(d.info.cc_string()); });
  row("SMs", [](D d) { return gpu100::Cell(d.info.sm_count); });
  row("FP32 lanes per SM", [](D d) {
    return gpu100::Cell(gpu100::fp32_lanes_per_sm(d.info.cc_major, d.info.cc_minor));
  });
  row("peak SM clock (MHz)", [](D d) { return gpu100::Cell(d.info.sm_clock_khz / 1e3); });
  row("peak memory clock (MHz)", [](D d) { return gpu100::Cell(d.info.mem_clock_khz / 1e3); });
  row("memory bus width (bits)", [](D d) { return gpu100::Cell(d.info.mem_bus_bits); });
  row("global memory (MiB)", [](D d) { return gpu100::Cell(mib(double(d.info.total_mem))); });
  row("free memory now (MiB)", [](D d) { return gpu100::Cell(mib(double(d.info.free_mem))); });
  row("L2 cache (MiB)", [](D d) { return gpu100::Cell(mib(double(d.info.l2_bytes))); });
  row("max persisting L2 (MiB)",
      [](D d) { return gpu100::Cell(mib(double(d.prop.persistingL2CacheMaxSize))); });
  row("constant memory (KiB)", [](D d) { return kib(d.prop.totalConstMem); });
  row("shared memory per block (KiB)", [](D d) { return kib(d.info.smem_per_block); });
  row("  per block, opt-in (KiB)", [](D d) { return kib(d.info.smem_per_block_optin); });
  row("  per SM (KiB)", [](D d) { return kib(d.info.smem_per_sm); });
  row("  reserved per block (bytes)",
      [](D d) { return gpu100::Cell((unsigned long long)d.prop.reservedSharedMemPerBlock); });
  row("32-bit registers per block", [](D d) { return gpu100::Cell(d.info.regs_per_block); });
  row("  per SM", [](D d) { return gpu100::Cell(d.info.regs_per_sm); });
  row("warp size", [](D d) { return gpu100::Cell(d.info.warp_size); });
  row("max threads per block", [](D d) { return gpu100::Cell(d.info.max_threads_per_block); });
  row("max threads per SM", [](D d) { return gpu100::Cell(d.info.max_threads_per_sm); });
  row("max resident warps per SM",
      [](D d) { return gpu100::Cell(d.info.max_threads_per_sm / std::max(1, d.info.warp_size)); });
  row("max resident blocks per SM", [](D d) { return gpu100::Cell(d.info.max_blocks_per_sm); });
  row("max block dims (x, y, z)", [](D d) {
    return gpu100::Cell(fmt::format("{}, {}, {}", d.prop.maxThreadsDim[0], d.prop.maxThreadsDim[1],
                                    d.prop.maxThreadsDim[2]));
  });
  row("max grid dims (x, y, z)", [](D d) {
    return gpu100::Cell(fmt::format("{}, {}, {}", d.prop.maxGridSize[0], d.prop.maxGridSize[1],
                                    d.prop.maxGridSize[2]));
  });
  row("cooperative launch", [&](D d) { return yes_no(d.info.cooperative_launch); });
  row("thread block clusters", [&](D d) { return yes_no(d.prop.clusterLaunch != 0); });
  row("concurrent kernels", [&](D d) { return yes_no(d.prop.concurrentKernels != 0); });
  row("async copy engines", [](D d) { return gpu100::Cell(d.prop.asyncEngineCount); });
  row("ECC enabled", [&](D d) { return yes_no(d.prop.ECCEnabled != 0); });
  row("MPS enabled", [&](D d) { return yes_no(d.prop.mpsEnabled != 0); });
  row("PCI domain:bus:device", [](D d) {
    return gpu100::Cell(fmt::format("{:04x}:{:02x}:{:02x}", d.prop.pciDomainID, d.prop.pciBusID,
                                    d.prop.pciDeviceID));
  });
  row("peak DRAM bandwidth (GB/s)", [](D d) { return gpu100::Cell(d.info.peak_dram_gbps()); });
  row("peak FP32 (TFLOP/s)", [](D d) { return gpu100::Cell(d.info.peak_fp32_tflops()); });
  row("peak FP16 tensor, dense (TFLOP/s)", [](D d) {
    const double v = d.info.peak_fp16_tensor_tflops();
    return v > 0 ? gpu100::Cell(v) : gpu100::Cell("unknown");
  });
  return t;
}

void run_properties(gpu100::Context& ctx) {
  auto& report = ctx.report();
  const int current = ctx.device().id;
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));

  std::vector<DeviceColumn> devices(static_cast<size_t>(count));
  int64_t compared = 0, mismatches = 0, first = -1;
  double first_got = 0, first_expected = 0;
  for (int id = 0; id < count; ++id) {
    DeviceColumn& d = devices[size_t(id)];
    // query_device makes the device current (and creates its context, for the free-memory
    // query). A device in exclusive-process mode owned by someone else refuses that: show it
    // as unavailable instead of failing the run.
    try {
      d.info = id == current ? ctx.device() : gpu100::query_device(id);
      CUDA_CHECK(cudaGetDeviceProperties(&d.prop, id));
      d.ok = true;
    } catch (const gpu100::CudaError& e) {
      cudaGetLastError();
      d.error = e.what();
    }
    if (!d.ok) continue;
    for (const auto& f : struct_fields(d.prop)) {
      int value = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&value, f.attribute, id));
      if (value != f.from_struct) {
        if (mismatches++ == 0) {
          first = compared;
          first_got = double(f.from_struct);
          first_expected = value;
        }
        report.note(fmt::format("GPU {}: cudaDeviceProp::{} = {} but the attribute says {}", id,
                                f.name, f.from_struct, value));
      }
      ++compared;
    }
  }
  CUDA_CHECK(cudaSetDevice(current));  // query_device switched devices; the run uses this one
  report.table(properties_table(devices, current));
  report.add_check("properties",
                   exact_check(compared, mismatches, first, first_got, first_expected));
  report.note(
      fmt::format("properties: {} fields of cudaDeviceProp compared with "
                  "cudaDeviceGetAttribute over {} device(s)",
                  compared, count));

  // The runtime fills cudaDeviceProp from the same attributes, so the check above can only catch
  // a runtime bug. What later days really depend on is that the inputs of the limits they divide
  // by are known: a memory clock or bus width reported as 0, or a compute capability newer than
  // common/ has an FP32 lane count for, would make every "% of peak" column vanish. Each must be
  // positive on the device this run uses.
  const gpu100::DeviceInfo& dev = ctx.device();
  const std::pair<const char*, double> limits[] = {
      {"SM count", double(dev.sm_count)},
      {"peak SM clock (kHz)", double(dev.sm_clock_khz)},
      {"peak memory clock (kHz)", double(dev.mem_clock_khz)},
      {"memory bus width (bits)", double(dev.mem_bus_bits)},
      {"L2 cache size (bytes)", double(dev.l2_bytes)},
      {"FP32 lanes per SM for this compute capability",
       double(gpu100::fp32_lanes_per_sm(dev.cc_major, dev.cc_minor))},
  };
  int64_t unknown = 0, first_unknown = -1;
  for (size_t i = 0; i < std::size(limits); ++i) {
    if (limits[i].second > 0) continue;
    if (unknown++ == 0) first_unknown = int64_t(i);
    report.note(
        fmt::format("limits: {} is {} on {}: the theoretical peaks of later days cannot "
                    "be computed",
                    limits[i].first, limits[i].second, dev.name));
  }
  // "got" is the first unknown value; "expected" 1 stands for "positive".
  const double first_value = first_unknown >= 0 ? limits[size_t(first_unknown)].second : 0.0;
  report.add_check(
      "limits", exact_check(int64_t(std::size(limits)), unknown, first_unknown, first_value, 1.0));
}

// --- smid ---------------------------------------------------------------------------------

// Where the blocks of one launch ran, from the %smid each recorded.
struct Placement {
  std::vector<int64_t> blocks_on;  // per SM id below the SM count
  int64_t out_of_range = 0, first_bad = -1;
  int64_t unhit = 0, first_unhit = -1;
};

Placement tally(const std::vector<unsigned>& block_sm, int sm_count) {
  Placement p;
  p.blocks_on.assign(size_t(sm_count), 0);
  for (size_t b = 0; b < block_sm.size(); ++b) {
    if (block_sm[b] < unsigned(sm_count))
      ++p.blocks_on[block_sm[b]];
    else if (p.out_of_range++ == 0)
      p.first_bad = int64_t(b);
  }
  for (int sm = 0; sm < sm_count; ++sm)
    if (p.blocks_on[size_t(sm)] == 0 && p.unhit++ == 0) p.first_unhit = sm;
  return p;
}

// Range: %smid < SM count for every block.
gpu100::CheckResult range_check(const Placement& p, const std::vector<unsigned>& block_sm,
                                int sm_count) {
  const double first = p.first_bad >= 0 ? double(block_sm[size_t(p.first_bad)]) : 0.0;
  return exact_check(int64_t(block_sm.size()), p.out_of_range, p.first_bad, first,
                     double(sm_count - 1));
}

// Coverage: every SM ran at least one block. Nothing in the programming model promises where a
// block runs, so this checks the hardware's scheduling policy, not CUDA's rules: the block
// scheduler hands each block to an SM that has room, and spreads a launch over all SMs (across
// GPCs and TPCs) rather than filling one SM before the next. At launch every SM is empty, and the
// grid has blocks-per-sm blocks for each SM, so the first dispatch round already reaches every
// SM; a block that finishes early only frees its SM for more work, it cannot stop another SM from
// getting one of the remaining blocks. What would make it fail: fewer blocks than SMs; SMs this
// context cannot use (MPS with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, green contexts, other kernels
// occupying SMs at the same time); a MIG slice whose %smid values are not numbered from zero.
gpu100::CheckResult coverage_check(const Placement& p, int sm_count) {
  return exact_check(sm_count, p.unhit, p.first_unhit, 0.0, 1.0);
}

void add_placement_tables(gpu100::Report& report, const Placement& p, int64_t blocks,
                          unsigned nsmid, bool per_sm) {
  const int sm_count = int(p.blocks_on.size());
  const auto [lo, hi] = std::minmax_element(p.blocks_on.begin(), p.blocks_on.end());
  gpu100::Table summary;
  summary.title = fmt::format("Where the {} blocks ran (from %smid)", blocks);
  summary.columns = {"quantity", "value"};
  summary.add_row({"SMs (cudaDevAttrMultiProcessorCount)", sm_count});
  summary.add_row({"%nsmid (upper bound of %smid)", (unsigned long long)nsmid});
  summary.add_row({"blocks launched", (long long)blocks});
  summary.add_row({"blocks with %smid >= SM count", (long long)p.out_of_range});
  summary.add_row({"SMs that ran no block", (long long)p.unhit});
  summary.add_row({"fewest blocks on one SM", (long long)*lo});
  summary.add_row({"most blocks on one SM", (long long)*hi});
  summary.add_row({"mean blocks per SM", double(blocks - p.out_of_range) / sm_count});
  report.table(std::move(summary));

  // How even the spread was: for each block count, how many SMs received that many.
  gpu100::Table histogram;
  histogram.title = "Blocks per SM: histogram";
  histogram.columns = {"blocks on an SM", "SMs"};
  for (int64_t k = *lo; k <= *hi; ++k) {
    const auto sms = std::count(p.blocks_on.begin(), p.blocks_on.end(), k);
    if (sms) histogram.add_row({(long long)k, (long long)sms});
  }
  report.table(std::move(histogram));

  if (per_sm) {
    gpu100::Table each;
    each.title = "Blocks per SM";
    each.columns = {"SM", "blocks"};
    for (int sm = 0; sm < sm_count; ++sm) each.add_row({sm, (long long)p.blocks_on[size_t(sm)]});
    report.table(std::move(each));
  }
}

void run_smid(gpu100::Context& ctx, int64_t blocks_per_sm, int hold_cycles, bool per_sm) {
  auto& report = ctx.report();
  // The SM count from the attribute is the truth the kernel's ids are checked against.
  int sm_count = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, ctx.device().id));
  const int64_t blocks = blocks_per_sm * sm_count;
  if (blocks > ctx.device().max_grid_x)
    throw std::runtime_error(
        fmt::format("--blocks-per-sm x SMs exceeds the grid limit {}", ctx.device().max_grid_x));

  gpu100::DeviceBuffer<unsigned> d_block_sm(static_cast<size_t>(blocks)), d_nsmid(1);
  Placement placement;
  std::vector<unsigned> block_sm;
  unsigned nsmid = 0;
  // Timed without an L2 flush (nothing of it is in DRAM): the rate is blocks dispatched per
  // microsecond, each held for hold_cycles.
  ctx.measure({.name = "smid",
               .launch =
                   [&](cudaStream_t s) {
                     record_smid<<<unsigned(blocks), kBlock, 0, s>>>(d_block_sm.data(),
                                                                     d_nsmid.data(), hold_cycles);
                     LAUNCH_CHECK();
                   },
               // 0xFFFFFFFF is no SM id: a block that never wrote fails the range check.
               .reset =
                   [&] {
                     d_block_sm.poison();
                     d_nsmid.poison();
                   },
               .check =
                   [&] {
                     block_sm = d_block_sm.download();
                     nsmid = d_nsmid.download()[0];
                     placement = tally(block_sm, sm_count);
                     return range_check(placement, block_sm, sm_count);
                   },
               .rate = [&](double ms) { return double(blocks) / (ms * 1e3); },
               .flush_l2 = false});
  report.add_check("smid_coverage", coverage_check(placement, sm_count));
  if (placement.first_bad >= 0 && block_sm[size_t(placement.first_bad)] < nsmid)
    report.note(
        fmt::format("smid: id {} is below %nsmid = {}, which PTX allows: this GPU numbers "
                    "its SMs with gaps, so ids cannot index an array of SM-count entries",
                    block_sm[size_t(placement.first_bad)], nsmid));
  add_placement_tables(report, placement, blocks, nsmid, per_sm);
  report.note(
      fmt::format("smid is timed (launch + {}-cycle hold per block): the rate is blocks "
                  "dispatched per microsecond",
                  hold_cycles));
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("device properties, theoretical peaks, and which SM each block runs on");
  int64_t blocks_per_sm = 8;
  int hold_cycles = 2000;
  bool per_sm = false;
  cli.size("blocks-per-sm", blocks_per_sm, 3, "blocks launched per SM by the smid kernel",
           int64_t(1) << 16);
  cli.option("hold-cycles", hold_cycles, "clock cycles each block stays resident", 0, 100'000'000);
  cli.flag("per-sm", per_sm, "also print the block count of every SM");
  cli.kernels({"properties", "smid"});
  // One id per block; the SM count is not known before the device is, so assume a generous
  // 1024 SMs for the estimate.
  cli.device_bytes([&] { return double(blocks_per_sm) * 1024.0 * sizeof(unsigned); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("blocks/us");
    if (ctx.want("properties")) run_properties(ctx);
    if (ctx.want("smid")) run_smid(ctx, blocks_per_sm, hold_cycles, per_sm);
  });
}
