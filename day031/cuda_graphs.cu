// Day 031 - CUDA graphs: what a kernel launch costs, and how to stop paying it
//
// A kernel launch is not free: the host builds the launch (driver calls, argument copy, a push
// into the stream's queue) and the GPU takes the next kernel only when the previous one is done
// and the new one is fetched and set up. For a chain of tiny kernels - an optimizer step over
// many small tensors, a decoding step of a small model - those microseconds are the whole
// runtime. A CUDA graph records the chain once (here by stream capture), is instantiated once,
// and is then launched with one call: the host cost is paid once per chain, and the GPU runs the
// prepared chain with shorter gaps.
//
// The chain: `chain` kernels (default 64), each a tiny in-place step over n = 4099 uint32 values,
// x = (x ^ (x >> 15)) * mul_i + add_i with its own parameters; step 0 reads the input array, so
// every run of the chain computes the same result from scratch.
//
// Versions
//   eager             `chain` ordinary <<<>>> launches into a stream.
//   graph             the launches captured once, instantiated once; each run is one
//                     cudaGraphLaunch (capture and instantiation are in the one-off table).
//   graph_update      new parameters every run: the chain is captured again and
//                     cudaGraphExecUpdate patches the executable graph in place, then one launch.
//   graph_set_params  the same change through cudaGraphExecKernelNodeSetParams, node by node, on a
//                     chain built with the explicit API (which hands out the node handles).
//   fused             one kernel that applies all steps in a loop: the floor, no launch between.
//
// Timing: every timed run starts on an idle stream (Measure::idle_start): events around the
// launch, then synchronize, so the host's launch work cannot hide behind the previous run; the
// host wall clock of launch + synchronize is reported beside it. The main table's rate is
// Mkernels/s (kernels of the chain per microsecond), so "x eager" is the speedup over eager.
//
// Check: exact. The CPU applies the same integer steps with the same parameters; the update
// versions are checked with the parameter set the executable graph was NOT instantiated with, so
// a lost update fails. Every point of the chain-length sweep is checked too.
//
// Run:  build/bin/day031 [--chain 64] [--n 4099] [--kernel eager,graph] [--json out.json]
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
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

// ---- CPU reference ------------------------------------------------------------------------------
__host__ __device__ __forceinline__ uint32_t chain_op(uint32_t x, uint32_t mul, uint32_t add) {
  return (x ^ (x >> 15)) * mul + add;
}


// ---- kernels ------------------------------------------------------------------------------------
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

// ---- launchers: the chain, eager and as a graph -------------------------------------------------
// Streams and graphs are owned by gpu100::Stream, Graph and GraphExec (gpu100/stream.h).
using gpu100::Graph;
using gpu100::GraphExec;
using gpu100::Stream;

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
      throw gpu100::CudaError(
          fmt::format("cudaGraphExecUpdate refused the new graph (result {}): {}",
                      int(info.result), cudaGetErrorString(e)));
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

enum class Kind { eager, graph, graph_update, graph_set_params, fused };
struct Version {
  const char* name;
  Kind kind;
};
const Version kVersions[] = {{"eager", Kind::eager},
                             {"graph", Kind::graph},
                             {"graph_update", Kind::graph_update},
                             {"graph_set_params", Kind::graph_set_params},
                             {"fused", Kind::fused}};

// One version at one chain length: the graphs it needs, built before any run, and one run. Run k
// of the update versions uses parameter set (k + 1) % 2: the checked run (k = 0) the set the graph
// was not instantiated with, and every later run changes it again.
struct Runner {
  Graph graph;
  GraphExec exec;
  std::vector<cudaGraphNode_t> nodes;
  int runs = 0;
  int check_variant = 0;  // the parameter set of the checked run
  std::function<void(cudaStream_t)> run;
};

std::unique_ptr<Runner> runner(const Version& v, const Chain& c, int length,
                               cudaStream_t capture_stream, const StepParams* d_params) {
  auto r = std::make_unique<Runner>();
  Runner* p = r.get();
  switch (v.kind) {
    case Kind::eager:
      r->run = [&c, length](cudaStream_t s) { c.launch_eager(s, length, 0); };
      break;
    case Kind::graph:
      r->graph = c.capture(capture_stream, length, 0);
      r->exec = GraphExec(r->graph);
      r->run = [p](cudaStream_t s) { CUDA_CHECK(cudaGraphLaunch(p->exec.get(), s)); };
      break;
    case Kind::graph_update:
      r->graph = c.capture(capture_stream, length, 0);
      r->exec = GraphExec(r->graph);
      r->check_variant = 1;
      r->run = [p, &c, length, capture_stream](cudaStream_t s) {
        const Graph fresh = c.capture(capture_stream, length, (p->runs++ + 1) % kVariants);
        c.update(p->exec, fresh);
        CUDA_CHECK(cudaGraphLaunch(p->exec.get(), s));
      };
      break;
    case Kind::graph_set_params:
      r->graph = c.build(length, 0, r->nodes);
      r->exec = GraphExec(r->graph);
      r->check_variant = 1;
      r->run = [p, &c](cudaStream_t s) {
        c.set_params(p->exec, p->nodes, (p->runs++ + 1) % kVariants);
        CUDA_CHECK(cudaGraphLaunch(p->exec.get(), s));
      };
      break;
    case Kind::fused:
      r->run = [&c, length, d_params](cudaStream_t s) {
        chain_fused<<<c.grid, kBlock, 0, s>>>(c.in, c.x, c.n, d_params, length);
        LAUNCH_CHECK();
      };
      break;
  }
  return r;
}

// The chain's input and parameters, on the host and the device, and the streams every run uses.
struct Setup {
  Setup(int64_t n, uint64_t seed)
      : input(chain_input(n, seed)),
        params(chain_params(seed)),
        d_in(input),
        d_x(input.size()),
        d_params(params),
        chain{d_in.data(), d_x.data(), int(n), gpu100::grid_for(n, kBlock), &params} {
    // Lazy loading (the default since CUDA 12.2) loads a kernel at its first launch. Launch the
    // step once here, so that the first capture (e.g. --kernel graph_update alone) never has to
    // load a module in the middle of a capture, which drivers before 12.3 reject.
    chain.launch_eager(stream.get(), 1, 0);
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  }
  Setup(const Setup&) = delete;  // chain points into this object
  Setup& operator=(const Setup&) = delete;

  static std::vector<uint32_t> chain_input(int64_t n, uint64_t seed) {
    std::vector<uint32_t> input(static_cast<size_t>(n));
    for (size_t i = 0; i < input.size(); ++i)
      input[i] = uint32_t(gpu100::mix64(seed * 0x9E3779B97F4A7C15ull + i) >> 32);
    return input;
  }
  static std::vector<StepParams> chain_params(uint64_t seed) {
    std::vector<StepParams> params(size_t(kVariants * kMaxChain));
    for (size_t k = 0; k < params.size(); ++k) {
      const uint64_t r = gpu100::mix64((seed + 0x5EED) * 0xD1B54A32D192ED03ull + k);
      params[k] = {uint32_t(r) | 1u, uint32_t(r >> 32)};
    }
    return params;
  }

  std::vector<uint32_t> input;
  std::vector<StepParams> params;
  gpu100::DeviceBuffer<uint32_t> d_in, d_x;
  gpu100::DeviceBuffer<StepParams> d_params;
  Stream stream, capture_stream;
  Chain chain;
};

// The CPU chain's result with each parameter set.
using References = std::array<std::vector<uint32_t>, kVariants>;

// One run of a version at one chain length, checked against the CPU chain of the parameter set
// its checked run uses, timed from an idle stream.
gpu100::Measure measure_run(std::string name, const Version& v, const Runner& r, int length,
                            gpu100::Role role, Setup& setup, const References& refs) {
  return {.name = std::move(name),
          .kernel = v.name,
          .launch = [&r](cudaStream_t s) { r.run(s); },
          .reset = [&setup] { setup.d_x.poison(); },
          .check =
              [&setup, &r, &refs] {
                return gpu100::compare_exact(setup.d_x.download(), refs[r.check_variant]);
              },
          .rate = [length](double ms) { return double(length) / (ms * 1e3); },  // kernels/us
          .role = role,
          .flush_l2 = false,
          .stream = setup.stream.get(),
          .idle_start = true};
}

// Every selected version at one chain length; at --chain they are the main table's rows, and
// eager is the baseline too. Returns each version's measurement by its name (the baseline is in
// the report).
using Results = std::map<std::string, gpu100::Measured>;
Results measure_length(gpu100::Context& ctx, Setup& setup, int length, bool main_point,
                       const std::vector<const Version*>& selected) {
  const References refs = {cpu_chain(setup.input, setup.chain, length, 0),
                           cpu_chain(setup.input, setup.chain, length, 1)};
  std::vector<std::unique_ptr<Runner>> runners;
  std::vector<gpu100::Measure> runs;
  auto add = [&](const Version& v, std::string name, gpu100::Role role) {
    runners.push_back(
        runner(v, setup.chain, length, setup.capture_stream.get(), setup.d_params.data()));
    runs.push_back(measure_run(std::move(name), v, *runners.back(), length, role, setup, refs));
  };
  if (main_point && ctx.want("eager")) add(kVersions[0], "eager", gpu100::Role::baseline);
  for (const Version* v : selected) {
    if (main_point)
      add(*v, v->name, gpu100::Role::version);
    else
      add(*v, fmt::format("{} chain {}", v->name, length), gpu100::Role::point);
  }
  const std::vector<gpu100::Measured> measured = ctx.measure_all(runs);
  Results by_version;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].role != gpu100::Role::baseline) by_version[runs[i].kernel] = measured[i];
  return by_version;
}

// ---- analysis -----------------------------------------------------------------------------------
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
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

// The host side of a launch alone: the calls return before the GPU is done, so the synchronize
// stays outside the clock.
double launch_calls_us(const std::function<void()>& launch, cudaStream_t s, int iters) {
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    launch();
    ms.push_back(ms_since(t0));
    CUDA_CHECK(cudaStreamSynchronize(s));
  }
  return gpu100::summarize(ms).median_ms * 1e3;
}

// The one-off host costs of building and changing the graph at one chain length.
struct OneOff {
  gpu100::Table table;
  double capture_us = 0, instantiate_us = 0;
};

OneOff one_off_costs(const Chain& c, cudaStream_t capture_stream, cudaStream_t stream,
                     int length, int iters) {
  OneOff o{{fmt::format("host cost of building and changing the graph at chain = {} (wall "
                        "clock, median of --iters)",
                        length),
            {"operation", "us", "us per kernel"},
            {}}};
  auto add = [&](const char* what, double us) { o.table.add_row({what, us, us / length}); };
  const Graph g = c.capture(capture_stream, length, 0);
  o.capture_us = host_us([&] { const Graph tmp = c.capture(capture_stream, length, 0); }, iters);
  o.instantiate_us = host_us([&] { const GraphExec tmp(g); }, iters);
  add("stream capture (BeginCapture .. EndCapture, + destroy)", o.capture_us);
  add("cudaGraphInstantiate (+ destroy)", o.instantiate_us);
  GraphExec exec(g);
  const Graph g1 = c.capture(capture_stream, length, 1);
  int k = 0;
  add("cudaGraphExecUpdate (graph already captured)",
      host_us([&] { c.update(exec, (k++ % 2) ? g : g1); }, iters));
  std::vector<cudaGraphNode_t> nodes;
  const Graph built = c.build(length, 0, nodes);
  GraphExec built_exec(built);
  add("cudaGraphExecKernelNodeSetParams x chain",
      host_us([&] { c.set_params(built_exec, nodes, k++ % 2); }, iters));
  add("eager: the chain's <<<>>> calls (host side only)",
      launch_calls_us([&] { c.launch_eager(stream, length, 0); }, stream, iters));
  add("graph: the cudaGraphLaunch call (host side only)",
      launch_calls_us([&] { CUDA_CHECK(cudaGraphLaunch(built_exec.get(), stream)); }, stream,
                      iters));
  return o;
}

// When does building the graph pay for itself? After as many launches as its one-off cost divided
// by what each launch saves over eager launches (wall clock, launch + sync).
std::string payback_note(double build_us, double eager_wall_us, double graph_wall_us) {
  const double saved = eager_wall_us - graph_wall_us;
  if (saved > 0)
    return fmt::format("capture + instantiate = {:.1f} us; each graph launch saves {:.1f} us over "
                       "eager launches (wall clock): the graph pays for itself after {:.1f} "
                       "launches",
                       build_us, saved, build_us / saved);
  return fmt::format("capture + instantiate = {:.1f} us; the graph launch saved nothing over "
                     "eager launches at this chain length (wall clock)",
                     build_us);
}

gpu100::Table sweep_table(const std::vector<const Version*>& selected) {
  gpu100::Table t{"us per kernel vs chain length (GPU events, each repeat from an idle stream)",
                  {"kernels in chain"},
                  {}};
  for (const Version* v : selected)
    t.columns.push_back(
        fmt::format("{} {}", v->name, v->kind == Kind::fused ? "us/step" : "us/kernel"));
  return t;
}

gpu100::Table per_kernel_table(int length) {
  return {fmt::format("at chain = {}: us per kernel", length),
          {"version", "GPU us/kernel (events)", "wall us/kernel (launch + sync)", "x eager (GPU)"},
          {}};
}

// The sweep's rows (us per kernel of every version at every length), the main length's rows
// per version, and the checks of every point.
struct SweepTables {
  SweepTables(const std::vector<const Version*>& selected_, int length_main_)
      : selected(selected_),
        length_main(length_main_),
        sweep(sweep_table(selected_)),
        per_kernel(per_kernel_table(length_main_)) {}

  void add(int length, const Results& by_version) {
    std::vector<gpu100::Cell> row = {length};
    for (const Version* v : selected) {
      const gpu100::Measured& r = by_version.at(v->name);
      check = gpu100::combine(check, r.check);
      const double us_per = r.time.median_ms * 1e3 / length;
      row.push_back(r.check.pass ? gpu100::Cell(us_per) : gpu100::Cell("FAIL"));
      if (length != length_main) continue;
      wall_chain_us[v->name] = r.wall.median_ms * 1e3;
      const auto eager = by_version.find("eager");
      const double eager_us =
          eager != by_version.end() ? eager->second.time.median_ms * 1e3 / length : 0.0;
      per_kernel.add_row({v->name, us_per, r.wall.median_ms * 1e3 / length,
                          eager_us > 0 ? gpu100::Cell(eager_us / us_per) : gpu100::Cell("-")});
    }
    sweep.add_row(std::move(row));
  }

  std::vector<const Version*> selected;
  int length_main;
  gpu100::Table sweep, per_kernel;
  gpu100::CheckResult check;  // unchecked until the first point is combined into it
  std::map<std::string, double> wall_chain_us;  // at the main length: launch + sync, whole chain
};

// Chain lengths of the sweep: powers of two (of four with --quick) up to --chain, and --chain.
std::set<int> sweep_lengths(int chain, bool quick) {
  std::set<int> lengths = {chain};
  for (int l = 1; l < chain; l *= quick ? 4 : 2) lengths.insert(l);
  return lengths;
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("launch overhead: a chain of tiny kernels, eager vs CUDA graph vs graph update "
                  "vs one fused kernel");
  int64_t chain = 64;
  int64_t n = 4099;
  cli.size("chain", chain, 19, "kernels in the chain", kMaxChain);
  cli.size("n", n, 257, "uint32 elements each kernel updates", kMaxN);
  cli.kernels_of(kVersions);
  cli.device_bytes([&] {
    return 2.0 * double(n) * sizeof(uint32_t) + double(kVariants * kMaxChain) * sizeof(StepParams);
  });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.problem("chain", double(chain));
    report.problem("n", double(n));
    report.unit("Mkernels/s");
    const int length_main = int(chain);
    Setup setup(n, ctx.seed());

    std::vector<const Version*> selected;
    for (const Version& v : kVersions)
      if (ctx.want(v.name)) selected.push_back(&v);
    SweepTables tables(selected, length_main);
    for (int length : sweep_lengths(length_main, ctx.quick()))
      tables.add(length, measure_length(ctx, setup, length, length == length_main, selected));
    report.add_check("chain-length sweep (every point, every version)", tables.check);
    report.table(std::move(tables.sweep));
    report.table(std::move(tables.per_kernel));

    OneOff once = one_off_costs(setup.chain, setup.capture_stream.get(), setup.stream.get(),
                                length_main, ctx.cli().iters());
    const auto& wall_us = tables.wall_chain_us;
    if (wall_us.count("eager") && wall_us.count("graph"))
      report.note(payback_note(once.capture_us + once.instantiate_us, wall_us.at("eager"),
                               wall_us.at("graph")));
    report.table(std::move(once.table));
    report.note("Mkernels/s = kernels of the chain per microsecond of GPU time; the floor is "
                "'fused' (the chain's arithmetic with no launch between steps), the baseline eager "
                "launches");
  });
}
