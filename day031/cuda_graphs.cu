// Day 031 - CUDA graphs: what a kernel launch costs, and how to stop paying it
//
// A kernel launch is not free: the host builds the launch (driver calls, argument copy, a push
// into the stream's queue) and the GPU takes the next kernel only when the previous one is done
// and the new one is fetched and set up. For a large kernel those microseconds vanish; for a
// chain of tiny kernels - an optimizer step over many small tensors, a decoding step of a small
// model - they are the whole runtime. A CUDA graph records the chain once (here by stream
// capture), is instantiated once into an executable graph, and is then launched with one call:
// the host cost is paid once per chain, and the GPU runs the prepared chain with shorter gaps.
//
// The chain: `chain` kernels (default 64), each a tiny elementwise step over n = 4099 uint32
// values (17 blocks): x = (x ^ (x >> 15)) * mul_i + add_i, in place, step i with its own
// parameters (mul_i odd). Step 0 reads the input array, so every launch of the chain computes the
// same result from scratch.
//
// Versions
//   eager             `chain` ordinary <<<>>> launches into a stream.
//   graph             the same launches captured once from a stream (cudaStreamBeginCapture /
//                     EndCapture), instantiated once (cudaGraphInstantiate); each run is one
//                     cudaGraphLaunch. Capture and instantiation are outside the timing (their
//                     cost is in the one-off table).
//   graph_update      parameters change every run (two parameter sets, alternating): the chain is
//                     captured again with the new parameters and cudaGraphExecUpdate patches the
//                     executable graph in place (same topology, so no new instantiation), then
//                     one launch. Timing includes the capture and the update.
//   graph_set_params  the same parameter changes through cudaGraphExecKernelNodeSetParams, node by
//                     node, then one launch. That call needs each node's handle, which a captured
//                     graph does not hand out in chain order, so this version builds the same
//                     chain with the explicit API (cudaGraphAddKernelNode) and keeps the handles.
//   fused             one kernel that applies all `chain` steps in a loop (parameters read from
//                     device memory): no launch between steps at all. It is the floor the others
//                     are compared with: the work of the chain without launch overhead.
//
// Timing: not ctx.bench. That queues the repeats back to back (and puts an L2-flush kernel in
// front of each), so the host's launch work would overlap the previous repeat's GPU work and
// disappear from the events. Here every repeat starts on an idle stream: record a start event,
// launch (and update), record a stop event, synchronize. The event time is the chain's latency on
// the GPU including the gaps where it waited for the host; the host wall clock around launch +
// synchronize is reported beside it. Reported per kernel: median time / chain in microseconds.
// The main table's rate is Mkernels/s (kernels of the chain per microsecond), so "x eager" is the
// speedup over eager launches.
//
// Check: exact. The CPU applies the same integer steps with the same parameters; the update
// versions are checked with the parameter set the executable graph was NOT instantiated with, so
// a lost update fails. Every point of the chain-length sweep is checked too.
//
// Run:  build/bin/day031 [--chain 64] [--n 4099] [--kernel eager,graph] [--json out.json]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu100/gpu100.h"
#include "gpu100/stream.h"

namespace {

constexpr int kBlock = 256;
constexpr int64_t kMaxChain = 1024;
constexpr int64_t kMaxN = int64_t(1) << 24;  // "tiny" kernels; also keeps n in an int
constexpr int kVariants = 2;                 // parameter sets the update versions alternate

struct StepParams {
  uint32_t mul, add;
};

__host__ __device__ __forceinline__ uint32_t chain_op(uint32_t x, uint32_t mul, uint32_t add) {
  return (x ^ (x >> 15)) * mul + add;
}

// One step. In place for every step but the first (src == dst), so no __restrict__ here: the
// promise that the two pointers never alias would be false.
__global__ void __launch_bounds__(kBlock)
    chain_step(const uint32_t* src, uint32_t* dst, int n, uint32_t mul, uint32_t add) {
  const int i = int(blockIdx.x) * kBlock + int(threadIdx.x);
  if (i < n) dst[i] = chain_op(src[i], mul, add);
}

// All steps in one kernel: the value stays in a register, the parameters come from memory (the
// same 8 bytes for every thread, so one broadcast load per step and warp).
__global__ void __launch_bounds__(kBlock)
    chain_fused(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, int n,
                const StepParams* __restrict__ params, int steps) {
  const int i = int(blockIdx.x) * kBlock + int(threadIdx.x);
  if (i >= n) return;
  uint32_t x = in[i];
  for (int s = 0; s < steps; ++s) x = chain_op(x, params[s].mul, params[s].add);
  out[i] = x;
}

// Streams and graphs are owned by gpu100::Stream, Graph and GraphExec (gpu100/stream.h).
using gpu100::Graph;
using gpu100::GraphExec;
using gpu100::Stream;

// ---- the chain -----------------------------------------------------------------------------------------
struct Chain {
  const uint32_t* in;
  uint32_t* x;
  int n;
  unsigned grid;
  const std::vector<StepParams>* params;  // params[v * kMaxChain + i]: step i of variant v

  const StepParams& step(int variant, int i) const {
    return (*params)[size_t(variant) * kMaxChain + size_t(i)];
  }

  // `length` plain launches. cudaGetLastError rather than LAUNCH_CHECK: this also runs under
  // stream capture, where LAUNCH_CHECK's optional device synchronization would be illegal.
  void launch_eager(cudaStream_t s, int length, int variant) const {
    for (int i = 0; i < length; ++i) {
      const StepParams& p = step(variant, i);
      chain_step<<<grid, kBlock, 0, s>>>(i == 0 ? in : x, x, n, p.mul, p.add);
      CUDA_CHECK(cudaGetLastError());
    }
  }

  // Records the launches instead of running them. ThreadLocal mode: only this thread's
  // unsafe-during-capture calls are an error.
  Graph capture(cudaStream_t s, int length, int variant) const {
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    launch_eager(s, length, variant);
    cudaGraph_t g = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(s, &g));
    return Graph(g);
  }

  // The parameters of step i as a kernel node sees them. The argument values are copied when
  // the node is created or set, so the locals only have to live through the call.
  struct NodeArgs {
    const uint32_t* src;
    uint32_t* dst;
    int n;
    uint32_t mul, add;
    void* ptrs[5];
    cudaKernelNodeParams params{};
  };
  void fill(NodeArgs& a, int variant, int i) const {
    a.src = i == 0 ? in : x;
    a.dst = x;
    a.n = n;
    a.mul = step(variant, i).mul;
    a.add = step(variant, i).add;
    a.ptrs[0] = &a.src;
    a.ptrs[1] = &a.dst;
    a.ptrs[2] = &a.n;
    a.ptrs[3] = &a.mul;
    a.ptrs[4] = &a.add;
    a.params.func = reinterpret_cast<void*>(chain_step);
    a.params.gridDim = dim3(grid);
    a.params.blockDim = dim3(kBlock);
    a.params.sharedMemBytes = 0;
    a.params.kernelParams = a.ptrs;
    a.params.extra = nullptr;
  }

  // The explicit API: each node depends on the one before it, which is what stream order meant.
  Graph build(int length, int variant, std::vector<cudaGraphNode_t>& nodes) const {
    cudaGraph_t g = nullptr;
    CUDA_CHECK(cudaGraphCreate(&g, 0));
    Graph graph(g);
    nodes.assign(size_t(length), nullptr);
    NodeArgs a;
    for (int i = 0; i < length; ++i) {
      fill(a, variant, i);
      CUDA_CHECK(cudaGraphAddKernelNode(&nodes[size_t(i)], g, i ? &nodes[size_t(i) - 1] : nullptr,
                                        i ? 1 : 0, &a.params));
    }
    return graph;
  }

  void set_params(const GraphExec& exec, const std::vector<cudaGraphNode_t>& nodes,
                  int variant) const {
    NodeArgs a;
    for (size_t i = 0; i < nodes.size(); ++i) {
      fill(a, variant, int(i));
      CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec.get(), nodes[i], &a.params));
    }
  }

  void update(const GraphExec& exec, const Graph& g) const {
    cudaGraphExecUpdateResultInfo info{};
    const cudaError_t e = cudaGraphExecUpdate(exec.get(), g.get(), &info);
    if (e != cudaSuccess)
      throw gpu100::CudaError("cudaGraphExecUpdate refused the new graph (result " +
                              std::to_string(int(info.result)) + "): " + cudaGetErrorString(e));
  }
};

std::vector<uint32_t> cpu_chain(const std::vector<uint32_t>& in, const Chain& c, int length,
                                int variant) {
  std::vector<uint32_t> out(in);
  for (int i = 0; i < length; ++i) {
    const StepParams& p = c.step(variant, i);
    for (auto& v : out) v = chain_op(v, p.mul, p.add);
  }
  return out;
}

// ---- timing --------------------------------------------------------------------------------------------
struct Timing {
  gpu100::Stats gpu;   // events around the work, on an idle stream
  gpu100::Stats wall;  // host clock around the work + synchronize
};

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// fn(stream, repeat index): the index lets the update versions alternate parameter sets.
Timing time_idle_start(const std::function<void(cudaStream_t, int)>& fn, cudaStream_t s,
                       int warmup, int iters, int first_index) {
  cudaEvent_t start = nullptr, stop = nullptr;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> gpu_ms, wall_ms;
  int index = first_index;
  try {
    for (int i = 0; i < warmup; ++i) {
      fn(s, index++);
      CUDA_CHECK(cudaStreamSynchronize(s));  // an update never meets a launch still in flight
    }
    for (int i = 0; i < iters; ++i) {
      const auto t0 = Clock::now();
      CUDA_CHECK(cudaEventRecord(start, s));
      fn(s, index++);
      CUDA_CHECK(cudaEventRecord(stop, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      wall_ms.push_back(ms_since(t0));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      gpu_ms.push_back(ms);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {gpu100::summarize(gpu_ms), gpu100::summarize(wall_ms)};
}

// Median host time of fn over `iters` calls (one-off costs: capture, instantiate, update).
double host_us(const std::function<void()>& fn, int iters) {
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    fn();
    ms.push_back(ms_since(t0));
  }
  return gpu100::summarize(ms).median_ms * 1e3;
}

const char* const kVersions[] = {"eager", "graph", "graph_update", "graph_set_params", "fused"};

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("launch overhead: a chain of tiny kernels, eager vs CUDA graph vs graph update "
                  "vs one fused kernel");
  int64_t chain = 64;
  int64_t n = 4099;
  cli.size("chain", chain, 19, "kernels in the chain", kMaxChain);
  cli.size("n", n, 257, "uint32 elements each kernel updates", kMaxN);
  cli.kernels({kVersions[0], kVersions[1], kVersions[2], kVersions[3], kVersions[4]});
  cli.device_bytes([&] {
    return 2.0 * double(n) * sizeof(uint32_t) + double(kVariants * kMaxChain) * sizeof(StepParams);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("chain", double(chain));
    report.problem("n", double(n));
    report.unit("Mkernels/s");
    const int iters = ctx.cli().iters(), warmup = ctx.cli().warmup();
    const int length_main = int(chain);

    const size_t count = size_t(n);
    std::vector<uint32_t> input(count);
    for (size_t i = 0; i < count; ++i)
      input[i] = uint32_t(gpu100::mix64(ctx.seed() * 0x9E3779B97F4A7C15ull + i) >> 32);
    std::vector<StepParams> params(size_t(kVariants * kMaxChain));
    for (size_t k = 0; k < params.size(); ++k) {
      const uint64_t r = gpu100::mix64((ctx.seed() + 0x5EED) * 0xD1B54A32D192ED03ull + k);
      params[k] = {uint32_t(r) | 1u, uint32_t(r >> 32)};
    }
    gpu100::DeviceBuffer<uint32_t> d_in(input), d_x(count);
    gpu100::DeviceBuffer<StepParams> d_params(params);
    Stream stream, capture_stream;
    const Chain c{d_in.data(), d_x.data(), int(n), gpu100::grid_for(n, kBlock), &params};
    // Lazy loading (the default since CUDA 12.2) loads a kernel at its first launch. Launch the
    // step once here, so that the first capture (e.g. --kernel graph_update alone) never has to
    // load a module in the middle of a capture, which drivers before 12.3 reject.
    c.launch_eager(stream.get(), 1, 0);
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));

    // Chain lengths of the sweep: powers of two up to --chain, and --chain itself.
    std::set<int> lengths = {length_main};
    for (int l = 1; l < length_main; l *= ctx.quick() ? 4 : 2) lengths.insert(l);

    gpu100::Table sweep{"us per kernel vs chain length (GPU events, each repeat from an idle stream)",
                        {"kernels in chain"},
                        {}};
    for (const char* v : kVersions)
      if (ctx.want(v))
        sweep.columns.push_back(std::string(v) + (std::string(v) == "fused" ? " us/step" : " us/kernel"));
    gpu100::Table per_kernel{
        "at chain = " + std::to_string(length_main) + ": us per kernel",
        {"version", "GPU us/kernel (events)", "wall us/kernel (launch + sync)", "x eager (GPU)"},
        {}};

    gpu100::CheckResult sweep_check;  // unchecked until the first point is combined into it
    double eager_us = 0;
    std::map<std::string, double> wall_chain_us;  // at the main length: launch + sync, whole chain
    for (int length : lengths) {
      const bool main_point = length == length_main;
      std::vector<gpu100::Cell> row = {length};
      const auto ref0 = cpu_chain(input, c, length, 0);
      const auto ref1 = cpu_chain(input, c, length, 1);

      // What each version needs before it runs (graphs) and what one run is.
      Graph captured, built;
      GraphExec exec;
      std::vector<cudaGraphNode_t> nodes;
      for (const char* name_c : kVersions) {
        const std::string name = name_c;
        if (!ctx.want(name)) continue;
        std::function<void(cudaStream_t, int)> run;
        int check_variant = 0;
        if (name == "eager") {
          run = [&](cudaStream_t s, int) { c.launch_eager(s, length, 0); };
        } else if (name == "graph") {
          captured = c.capture(capture_stream.get(), length, 0);
          exec = GraphExec(captured);
          run = [&](cudaStream_t s, int) { CUDA_CHECK(cudaGraphLaunch(exec.get(), s)); };
        } else if (name == "graph_update") {
          captured = c.capture(capture_stream.get(), length, 0);
          exec = GraphExec(captured);
          // Repeat k runs with variant (k + 1) % 2: the checked run (k = 0) with variant 1, the
          // set the graph was not instantiated with, and every later run changes it again.
          run = [&](cudaStream_t s, int k) {
            const Graph fresh = c.capture(capture_stream.get(), length, (k + 1) % kVariants);
            c.update(exec, fresh);
            CUDA_CHECK(cudaGraphLaunch(exec.get(), s));
          };
          check_variant = 1;
        } else if (name == "graph_set_params") {
          built = c.build(length, 0, nodes);
          exec = GraphExec(built);
          run = [&](cudaStream_t s, int k) {
            c.set_params(exec, nodes, (k + 1) % kVariants);
            CUDA_CHECK(cudaGraphLaunch(exec.get(), s));
          };
          check_variant = 1;
        } else {  // fused
          run = [&](cudaStream_t s, int) {
            chain_fused<<<c.grid, kBlock, 0, s>>>(d_in.data(), d_x.data(), int(n), d_params.data(),
                                                  length);
            LAUNCH_CHECK();
          };
        }

        d_x.poison();
        // The memset ran on the legacy default stream, which a non-blocking stream does not
        // wait for.
        CUDA_CHECK(cudaDeviceSynchronize());
        run(stream.get(), 0);
        CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        const auto check = gpu100::compare_exact(d_x.download(), check_variant ? ref1 : ref0);
        sweep_check = gpu100::combine(sweep_check, check);
        // Index 1 onwards: the first timed warm-up run changes the parameters again.
        const Timing t = time_idle_start(run, stream.get(), warmup, iters, 1);
        const double us_per = t.gpu.median_ms * 1e3 / length;
        row.push_back(check.pass ? gpu100::Cell(us_per) : gpu100::Cell("FAIL"));
        if (main_point) {
          const double rate = double(length) / (t.gpu.median_ms * 1e3);  // kernels per us = M/s
          if (name == "eager") {
            report.baseline("eager", t.gpu, rate);
            eager_us = us_per;
          }
          report.add(name, t.gpu, rate, check);
          wall_chain_us[name] = t.wall.median_ms * 1e3;
          per_kernel.add_row({name, us_per, t.wall.median_ms * 1e3 / length,
                              eager_us > 0 ? gpu100::Cell(eager_us / us_per) : gpu100::Cell("-")});
        }
      }
      sweep.add_row(std::move(row));
    }
    report.add_check("chain-length sweep (every point, every version)", sweep_check);
    report.table(std::move(sweep));
    report.table(std::move(per_kernel));

    // ---- one-off host costs at the main length ----------------------------------------------------
    gpu100::Table once{"host cost of building and changing the graph at chain = " +
                           std::to_string(length_main) + " (wall clock, median of --iters)",
                       {"operation", "us", "us per kernel"},
                       {}};
    {
      auto add = [&](const char* what, double us) {
        once.add_row({what, us, us / length_main});
      };
      const Graph g = c.capture(capture_stream.get(), length_main, 0);
      const double capture_us = host_us([&] {
        const Graph tmp = c.capture(capture_stream.get(), length_main, 0);
      }, iters);
      const double instantiate_us = host_us([&] { const GraphExec tmp(g); }, iters);
      add("stream capture (BeginCapture .. EndCapture, + destroy)", capture_us);
      add("cudaGraphInstantiate (+ destroy)", instantiate_us);
      // When does building the graph pay for itself? After as many launches as its one-off cost
      // divided by what each launch saves over eager launches (wall clock, launch + sync).
      if (wall_chain_us.count("eager") && wall_chain_us.count("graph")) {
        const double saved = wall_chain_us["eager"] - wall_chain_us["graph"];
        char line[240];
        if (saved > 0)
          std::snprintf(line, sizeof line,
                        "capture + instantiate = %.1f us; each graph launch saves %.1f us over "
                        "eager launches (wall clock): the graph pays for itself after %.1f launches",
                        capture_us + instantiate_us, saved, (capture_us + instantiate_us) / saved);
        else
          std::snprintf(line, sizeof line,
                        "capture + instantiate = %.1f us; the graph launch saved nothing over eager "
                        "launches at this chain length (wall clock)",
                        capture_us + instantiate_us);
        report.note(line);
      }
      GraphExec exec(g);
      const Graph g1 = c.capture(capture_stream.get(), length_main, 1);
      int k = 0;
      add("cudaGraphExecUpdate (graph already captured)",
          host_us([&] { c.update(exec, (k++ % 2) ? g : g1); }, iters));
      std::vector<cudaGraphNode_t> nodes;
      const Graph built = c.build(length_main, 0, nodes);
      GraphExec built_exec(built);
      add("cudaGraphExecKernelNodeSetParams x chain",
          host_us([&] { c.set_params(built_exec, nodes, k++ % 2); }, iters));
      // The host side of a launch alone: the calls return before the GPU is done, so the
      // synchronize stays outside the clock.
      auto launch_calls_us = [&](const std::function<void()>& launch) {
        std::vector<double> ms;
        for (int i = 0; i < iters; ++i) {
          const auto t0 = Clock::now();
          launch();
          ms.push_back(ms_since(t0));
          CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        }
        return gpu100::summarize(ms).median_ms * 1e3;
      };
      add("eager: the chain's <<<>>> calls (host side only)",
          launch_calls_us([&] { c.launch_eager(stream.get(), length_main, 0); }));
      add("graph: the cudaGraphLaunch call (host side only)",
          launch_calls_us([&] { CUDA_CHECK(cudaGraphLaunch(built_exec.get(), stream.get())); }));
    }
    report.table(std::move(once));
    report.note("Mkernels/s = kernels of the chain per microsecond of GPU time; the floor is "
                "'fused' (the chain's arithmetic with no launch between steps), the baseline eager "
                "launches");
  });
}
