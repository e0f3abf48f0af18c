// Day 056 - graph_bfs: breadth-first search levels on a graph in CSR form
//
// BFS from a source gives every vertex its distance in edges (its level), or -1 where the source
// cannot reach it. On a GPU it goes level by level: one launch expands level L into level L + 1,
// and the host launches the next only after reading back whether anything changed. How much work
// a level costs is the lesson: the frontier (the vertices of level L) is tiny at the start and
// the end of a search and huge in the middle, and a kernel that looks at every vertex at every
// level does work in proportion to levels x vertices, not to the edges it actually follows.
//
// The graph is undirected and generated from the seed (--graph): "random" (a random recursive
// tree, so every part is connected, plus --degree random extra edges per vertex on average) or
// "powerlaw" (the tree's parents and the extra edges' far ends drawn towards low indices, so a
// few hubs own most edges). It always has disconnected parts: an eighth of the vertices form a
// second component the source never reaches, and the last sixty-fourth (at least the last vertex)
// have no edges at all. The rate is traversed edges per second: the adjacency entries a top-down
// search reads, the degrees of the reached vertices summed (Graph500's TEPS counts each
// undirected edge of the component once, half of this).
//
// Versions
//   vertex_centric       one thread per vertex per level: a vertex whose level is L scans its
//                        neighbours and claims the unlabelled ones for L + 1 (atomicCAS, so each
//                        is labelled once), counting them; the search ends at a level that
//                        labels none. Every level launches a thread for every vertex.
//   frontier             the current frontier as a queue of vertex ids: one thread per frontier
//                        vertex, atomicCAS claims a neighbour (so it is labelled and queued once)
//                        and atomicAdd on the next queue's length reserves its slot.
//   frontier_aggregated  the same, with the queue slots reserved once per warp and step: a ballot
//                        of the lanes that claimed a vertex, one atomicAdd of its popcount by
//                        the first of them, each lane's slot its rank among them.
//
// Check: exact. Levels must equal a CPU BFS from the same source, vertex by vertex, including
// the -1 of every vertex it cannot reach; the same versions are also run (a checked point) from
// the last vertex, which has no edges, where every level but the source's must be -1.
//
// Run:  build/bin/day056 [--vertices 1000003 --degree 8] [--graph random|powerlaw]
//                        [--source 0] [--kernel frontier,frontier_aggregated] [--json f]
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cuda/atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpu100/gpu100.h"

namespace {

constexpr int kBlock = 256;
constexpr int64_t kMaxIndex = (int64_t(1) << 31) - 1;  // 32-bit offsets and vertex ids
constexpr int kMaxLevelRows = 40;                      // rows of the per-level table

// ---- the graph ----------------------------------------------------------------------------------
enum class Kind { random, powerlaw };

struct Graph {
  int64_t n = 0;
  std::vector<int> row_ptr, adj;
  int64_t degree(int64_t v) const { return row_ptr[size_t(v + 1)] - row_ptr[size_t(v)]; }
};

// The vertex ranges: [0, main) and [main, main + second) each connected, the rest isolated.
struct Parts {
  int64_t main, second, isolated;
};
Parts parts_of(int64_t n) {
  const int64_t isolated = std::max<int64_t>(1, n / 64);
  const int64_t rest = n - isolated;
  const int64_t second = rest >= 4 ? rest / 8 : 0;
  return {rest - second, second, isolated};
}

double unit_interval(uint64_t h) {
  return double(h >> 11) * 0x1p-53;
}  // in [0, 1)

// An index in [0, size): uniform, or for the power law cubed towards 0 (density ~ i^(-2/3)).
int64_t draw(Kind kind, uint64_t h, int64_t size) {
  const double u = unit_interval(h);
  const double t = kind == Kind::powerlaw ? u * u * u : u;
  return std::min<int64_t>(size - 1, int64_t(t * double(size)));
}

// The undirected edges of one part [begin, begin + size): a tree (each vertex after the first
// joins one before it) and size * degree / 2 extra edges, each stored in both directions.
void add_part(Kind kind, int64_t begin, int64_t size, int degree, uint64_t seed,
              std::vector<std::pair<int, int>>& edges) {
  uint64_t k = 0;
  auto next = [&] { return gpu100::mix64(seed + 0x9E3779B97F4A7C15ull * ++k); };
  for (int64_t u = 1; u < size; ++u) {
    const int64_t parent = draw(kind, next(), u);
    edges.emplace_back(int(begin + u), int(begin + parent));
  }
  const int64_t extra = size * degree / 2;
  for (int64_t e = 0; e < extra && size > 1; ++e) {
    const int64_t u = int64_t(next() % uint64_t(size));
    edges.emplace_back(int(begin + u), int(begin + draw(kind, next(), size)));
  }
}

Graph make_graph(Kind kind, int64_t n, int degree, uint64_t seed) {
  const Parts p = parts_of(n);
  std::vector<std::pair<int, int>> edges;
  add_part(kind, 0, p.main, degree, seed, edges);
  add_part(kind, p.main, p.second, degree, seed + 1, edges);
  Graph g;
  g.n = n;
  // Both directions, bucketed by source vertex, then each list sorted without repeats and loops.
  std::vector<int64_t> count(size_t(n + 1), 0);
  for (const auto& [u, v] : edges) {
    ++count[size_t(u) + 1];
    ++count[size_t(v) + 1];
  }
  for (int64_t v = 0; v < n; ++v) count[size_t(v + 1)] += count[size_t(v)];
  std::vector<int> all(static_cast<size_t>(count[size_t(n)]));
  std::vector<int64_t> fill(count.begin(), count.end() - 1);
  for (const auto& [u, v] : edges) {
    all[size_t(fill[size_t(u)]++)] = v;
    all[size_t(fill[size_t(v)]++)] = u;
  }
  g.row_ptr.assign(size_t(n + 1), 0);
  g.adj.reserve(all.size());
  for (int64_t v = 0; v < n; ++v) {
    auto first = all.begin() + count[size_t(v)], last = all.begin() + count[size_t(v + 1)];
    std::sort(first, last);
    for (auto it = first; it != last; ++it)
      if (*it != int(v) && (it == first || *it != *(it - 1))) g.adj.push_back(*it);
    g.row_ptr[size_t(v + 1)] = int(g.adj.size());
  }
  return g;
}

// ---- CPU reference ------------------------------------------------------------------------------
struct Search {
  std::vector<int> level;         // -1: unreached
  std::vector<int64_t> frontier;  // vertices per level
  int64_t reached = 0, traversed_edges = 0;
  int depth() const { return int(frontier.size()) - 1; }  // the largest level
};

Search bfs_cpu(const Graph& g, int64_t source) {
  Search s;
  s.level.assign(size_t(g.n), -1);
  std::vector<int> queue{int(source)};
  s.level[size_t(source)] = 0;
  size_t head = 0;
  while (head < queue.size()) {
    const size_t level_end = queue.size();
    s.frontier.push_back(int64_t(level_end - head));
    for (; head < level_end; ++head) {
      const int v = queue[head];
      s.traversed_edges += g.degree(v);
      for (int j = g.row_ptr[size_t(v)]; j < g.row_ptr[size_t(v) + 1]; ++j) {
        const int u = g.adj[size_t(j)];
        if (s.level[size_t(u)] < 0) {
          s.level[size_t(u)] = s.level[size_t(v)] + 1;
          queue.push_back(u);
        }
      }
    }
  }
  s.reached = int64_t(queue.size());
  return s;
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void __launch_bounds__(kBlock) bfs_init(int n, int source, int* __restrict__ level) {
  const int v = int(blockIdx.x) * kBlock + int(threadIdx.x);
  if (v < n) level[v] = v == source ? 0 : -1;
}

// A level is read while other threads of the same launch label vertices, so every access to it
// in a level's launch is an atomic or a relaxed (strong) load: plain loads and stores there
// would be a data race, whatever value they happen to see. The relaxed load filters out most
// neighbours cheaply; the CAS decides, so exactly one thread turns a -1 into cur + 1.
__device__ __forceinline__ int load_relaxed(int* p) {
  return cuda::atomic_ref<int, cuda::thread_scope_device>(*p).load(cuda::memory_order_relaxed);
}
__device__ __forceinline__ bool claim(int* level, int u, int cur) {
  return load_relaxed(&level[u]) == -1 && atomicCAS(&level[u], -1, cur + 1) == -1;
}

// Every vertex, every level: a thread whose vertex is on level cur labels its neighbours, and
// counts the vertices it labelled (the host stops at a level that labels none).
__global__ void __launch_bounds__(kBlock)
    bfs_vertex_level(int n, const int* __restrict__ row_ptr, const int* __restrict__ adj,
                     int* __restrict__ level, int cur, int* __restrict__ labelled) {
  const int v = int(blockIdx.x) * kBlock + int(threadIdx.x);
  if (v >= n || load_relaxed(&level[v]) != cur) return;
  const int end = row_ptr[v + 1];
  for (int j = row_ptr[v]; j < end; ++j)
    if (claim(level, adj[j], cur)) atomicAdd(labelled, 1);
}

// The frontier only: one thread per queued vertex, the vertices it labels appended to next.
__global__ void __launch_bounds__(kBlock)
    bfs_frontier_level(const int* __restrict__ row_ptr, const int* __restrict__ adj,
                       int* __restrict__ level, const int* __restrict__ frontier, int size,
                       int* __restrict__ next, int* __restrict__ next_size, int cur) {
  const int i = int(blockIdx.x) * kBlock + int(threadIdx.x);
  if (i >= size) return;
  const int v = frontier[i];
  const int end = row_ptr[v + 1];
  for (int j = row_ptr[v]; j < end; ++j) {
    const int u = adj[j];
    if (claim(level, u, cur)) next[atomicAdd(next_size, 1)] = u;
  }
}

// Every lane stays in the loop for the warp's largest degree, so each ballot has all 32 lanes.
__global__ void __launch_bounds__(kBlock)
    bfs_frontier_aggregated_level(const int* __restrict__ row_ptr, const int* __restrict__ adj,
                                  int* __restrict__ level, const int* __restrict__ frontier,
                                  int size, int* __restrict__ next, int* __restrict__ next_size,
                                  int cur) {
  const int i = int(blockIdx.x) * kBlock + int(threadIdx.x);
  const int lane = int(threadIdx.x) % 32;
  int begin = 0, degree = 0;
  if (i < size) {
    const int v = frontier[i];
    begin = row_ptr[v];
    degree = row_ptr[v + 1] - begin;
  }
  int steps = degree;
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) steps = max(steps, __shfl_xor_sync(0xffffffffu, steps, k));
  for (int k = 0; k < steps; ++k) {
    int u = 0;
    bool claimed = false;
    if (k < degree) {
      u = adj[begin + k];
      claimed = claim(level, u, cur);
    }
    const unsigned mask = __ballot_sync(0xffffffffu, claimed);
    if (mask == 0) continue;
    const int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(next_size, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (claimed) next[base + __popc(mask & ((1u << lane) - 1))] = u;
  }
}

// ---- launchers ----------------------------------------------------------------------------------
// The device side of a search: the graph, the levels, two queues, a counter and its host copy.
struct DeviceBfs {
  int n;
  const int *row_ptr, *adj;
  int *level, *queue_a, *queue_b, *counter;
  int* host_counter;  // pinned
};

enum class Method { vertex, frontier, frontier_aggregated };

struct Version {
  const char* name;
  Method method;
};
const Version kVersions[] = {
    {"vertex_centric", Method::vertex},
    {"frontier", Method::frontier},
    {"frontier_aggregated", Method::frontier_aggregated},
};

// What one level's launch did under the emulator.
struct LevelCounts {
  unsigned long long warp_instructions = 0, atomics = 0;
};

// Reads the device counter back: the host needs it to decide on the next launch.
int read_counter(const DeviceBfs& d, cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(d.host_counter, d.counter, sizeof(int), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return *d.host_counter;
}

// The whole search. With `levels`, each level's launch is counted (under the emulator) into it.
void run_bfs(const Version& v, const DeviceBfs& d, int source, cudaStream_t s,
             std::vector<LevelCounts>* levels = nullptr) {
  bfs_init<<<gpu100::grid_for(d.n, kBlock), kBlock, 0, s>>>(d.n, source, d.level);
  LAUNCH_CHECK();
  std::optional<gpu100::EmuMetricsScope> scope;
  auto count_level = [&] {
    if (!levels) return;
    CUDA_CHECK(cudaStreamSynchronize(s));
    const auto m = scope->take();
    if (m) levels->push_back({m->warp_instructions, m->global_atomic_threads});
  };
  int* frontier = d.queue_a;
  int* next = d.queue_b;
  int size = 1;
  if (v.method != Method::vertex)
    CUDA_CHECK(cudaMemcpyAsync(frontier, &source, sizeof(int), cudaMemcpyHostToDevice, s));
  for (int cur = 0;; ++cur) {
    CUDA_CHECK(cudaMemsetAsync(d.counter, 0, sizeof(int), s));
    if (levels) scope.emplace();
    switch (v.method) {
      case Method::vertex:
        bfs_vertex_level<<<gpu100::grid_for(d.n, kBlock), kBlock, 0, s>>>(d.n, d.row_ptr, d.adj,
                                                                          d.level, cur, d.counter);
        break;
      case Method::frontier:
        bfs_frontier_level<<<gpu100::grid_for(size, kBlock), kBlock, 0, s>>>(
            d.row_ptr, d.adj, d.level, frontier, size, next, d.counter, cur);
        break;
      case Method::frontier_aggregated:
        bfs_frontier_aggregated_level<<<gpu100::grid_for(size, kBlock), kBlock, 0, s>>>(
            d.row_ptr, d.adj, d.level, frontier, size, next, d.counter, cur);
        break;
    }
    LAUNCH_CHECK();
    count_level();
    size = read_counter(d, s);
    if (size == 0) break;
    std::swap(frontier, next);
  }
}

// ---- analysis -----------------------------------------------------------------------------------
gpu100::Table graph_table(const Graph& g, const Search& s, const char* kind) {
  int64_t isolated = 0, largest = 0;
  for (int64_t v = 0; v < g.n; ++v) {
    isolated += g.degree(v) == 0;
    largest = std::max(largest, g.degree(v));
  }
  gpu100::Table t{fmt::format("graph ({})", kind),
                  {"vertices", "adjacency entries", "mean degree", "largest degree",
                   "vertices without edges", "reached", "traversed edges", "levels"},
                  {}};
  t.add_row({g.n, int64_t(g.adj.size()), double(g.adj.size()) / double(g.n), largest, isolated,
             s.reached, s.traversed_edges, s.depth() + 1});
  return t;
}

// Under the emulator: each level's launch, per version (the frontier's size from the CPU search;
// the last launch of every version finds nothing and ends the search).
gpu100::Table level_table(const Search& s, const std::vector<std::string>& names,
                          const std::vector<std::vector<LevelCounts>>& counts) {
  gpu100::Table t{
      "per level (emulated counts: warp instructions / global atomics)", {"level", "frontier"}, {}};
  for (const auto& name : names) t.columns.push_back(name);
  const int rows = std::min(s.depth() + 1, kMaxLevelRows);
  for (int l = 0; l < rows; ++l) {
    std::vector<gpu100::Cell> row{l, s.frontier[size_t(l)]};
    for (const auto& c : counts) {
      row.push_back(size_t(l) < c.size()
                        ? gpu100::Cell(fmt::format("{} / {}", c[size_t(l)].warp_instructions,
                                                   c[size_t(l)].atomics))
                        : gpu100::Cell("-"));
    }
    t.add_row(std::move(row));
  }
  return t;
}

// The rate of a search: the edges it traverses, in billions per second.
std::function<double(double)> edges_per_s(const Search& s) {
  return [traversed = double(s.traversed_edges)](double ms) { return traversed / (ms * 1e6); };
}

}  // namespace

int main(int argc, char** argv) {
  gpu100::Cli cli("Breadth-first search: vertex-centric, frontier queue, warp-aggregated queue");
  int64_t vertices = 1000003;
  int degree = 8, source = 0;
  std::string graph = "random";
  cli.size("vertices", vertices, 3001, "vertices of the graph", kMaxIndex);
  cli.option("degree", degree, "extra edges per vertex on average, beyond the spanning trees", 0,
             1024);
  cli.option("graph", graph, {"random", "powerlaw"},
             "uniform random edges, or edges drawn towards low-index hubs");
  cli.option("source", source, "the vertex the search starts from", 0, int(kMaxIndex));
  cli.kernels_of(kVersions);
  // Two adjacency entries per tree edge and per extra edge.
  const auto max_entries = [&] { return double(vertices) * (double(degree) + 2.0); };
  cli.validate([&]() -> std::string {
    if (source >= vertices)
      return fmt::format("--source {} is not a vertex (there are {})", source, vertices);
    if (max_entries() > double(kMaxIndex))
      return fmt::format(
          "--vertices {} with --degree {} may exceed {} adjacency entries (32-bit "
          "offsets); use fewer vertices or a smaller degree",
          vertices, degree, kMaxIndex);
    return "";
  });
  cli.device_bytes([&] { return 4.0 * max_entries() + 16.0 * double(vertices + 1); });

  return gpu100::run(cli, argc, argv, [&](gpu100::Context& ctx) {
    auto& report = ctx.report();
    report.unit("Gedges/s");

    const Kind kind = graph == "powerlaw" ? Kind::powerlaw : Kind::random;
    const Graph g = make_graph(kind, vertices, degree, ctx.seed());
    const int64_t edgeless = vertices - 1;  // always without edges (parts_of)
    const Search ref = bfs_cpu(g, source);
    const Search ref_edgeless = bfs_cpu(g, edgeless);
    report.problem("reached", double(ref.reached));
    report.problem("traversed_edges", double(ref.traversed_edges));
    report.problem("depth", double(ref.depth()));

    gpu100::DeviceBuffer<int> d_row_ptr(g.row_ptr),
        d_adj(g.adj.empty() ? std::vector<int>(1) : g.adj), d_level{size_t(vertices)},
        d_queue_a{size_t(vertices)}, d_queue_b{size_t(vertices)}, d_counter{1};
    gpu100::PinnedBuffer<int> h_counter(1);
    const DeviceBfs d{int(vertices),    d_row_ptr.data(), d_adj.data(),     d_level.data(),
                      d_queue_a.data(), d_queue_b.data(), d_counter.data(), h_counter.data()};

    // 0x55 in every byte is no level a search writes: a vertex left unwritten fails the check.
    auto poison = [&] { CUDA_CHECK(cudaMemset(d_level.data(), 0x55, d_level.bytes())); };
    std::vector<gpu100::Measure> runs;
    for (const Version& v : kVersions) {
      runs.push_back({.name = v.name,
                      .launch = [&](cudaStream_t s) { run_bfs(v, d, source, s); },
                      .reset = poison,
                      .check = [&] { return gpu100::compare_exact(d_level.download(), ref.level); },
                      .rate = edges_per_s(ref)});
    }
    ctx.measure_all(runs);

    // The source without edges: a checked point per version, recorded as a check.
    for (const Version& v : kVersions) {
      if (!ctx.want(v.name) || edgeless == source) continue;
      const auto r = ctx.measure(
          {.name = fmt::format("{} (source {}, no edges)", v.name, edgeless),
           .launch = [&](cudaStream_t s) { run_bfs(v, d, int(edgeless), s); },
           .reset = poison,
           .check = [&] { return gpu100::compare_exact(d_level.download(), ref_edgeless.level); },
           .rate = edges_per_s(ref_edgeless),
           .role = gpu100::Role::point});
      report.add_check(fmt::format("{} from vertex {} (no edges)", v.name, edgeless), r.check);
    }

    report.table(graph_table(g, ref, graph.c_str()));
    if (report.emulated()) {
      std::vector<std::string> names;
      std::vector<std::vector<LevelCounts>> counts;
      for (const Version& v : kVersions) {
        if (!ctx.want(v.name)) continue;
        names.emplace_back(v.name);
        counts.emplace_back();
        run_bfs(v, d, source, nullptr, &counts.back());
      }
      report.table(level_table(ref, names, counts));
    }
    report.note("traversed edges: the degrees of the vertices the search reaches, summed");
  });
}
