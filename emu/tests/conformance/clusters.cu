// Thread block clusters (sm_90): the cluster special registers for several cluster shapes, a
// distributed-shared-memory reduction (mapa + ld/st/atom/red.shared::cluster), the ordering
// barrier.cluster gives, cudaOccupancyMaxActiveClusters, and the launches the runtime refuses.
//
// Expected values come from the PTX ISA's definitions of the special registers:
//   %cluster_nctaid = cluster dims, %cluster_ctaid = %ctaid mod %cluster_nctaid,
//   %clusterid = %ctaid / %cluster_nctaid, %nclusterid = %nctaid / %cluster_nctaid,
//   %cluster_ctarank = x + y*nx + z*nx*ny (of %cluster_ctaid), %cluster_nctarank = nx*ny*nz,
// and from the CUDA Programming Guide's launch rules (grid a multiple of the cluster in every
// dimension; at most 8 blocks, 16 with cudaFuncAttributeNonPortableClusterSizeAllowed; a
// compile-time cluster size cannot be changed at launch).
//
// --plant adds one to every expected value (and expects success where an error is due): the
// program must then fail every check.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "conf_common.h"
#include "gpu100_emu_metrics.h"

namespace {

bool g_plant = false;

constexpr int kRegs = 16;  // values recorded per thread 0 of each block

__global__ void k_sregs(unsigned* out) {
  unsigned v[kRegs];
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[0]));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[1]));
  asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v[2]));
  asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(v[3]));
  asm volatile("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(v[4]));
  asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(v[5]));
  asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(v[6]));
  asm volatile("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(v[7]));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(v[8]));
  asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(v[9]));
  asm volatile("mov.u32 %0, %%clusterid.z;" : "=r"(v[10]));
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(v[11]));
  asm volatile("mov.u32 %0, %%nclusterid.y;" : "=r"(v[12]));
  asm volatile("mov.u32 %0, %%nclusterid.z;" : "=r"(v[13]));
  unsigned expl;
  asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(expl));
  v[14] = expl;
  // getctarank of the block's own shared variable: its own rank.
  __shared__ unsigned probe;
  unsigned rank_of_own;
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(rank_of_own) : "r"(unsigned(__cvta_generic_to_shared(&probe))));
  v[15] = rank_of_own;
  if (threadIdx.x == 0) {
    const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    for (int i = 0; i < kRegs; ++i) out[b * kRegs + i] = v[i];
  }
}

// Every block puts (rank + 1) * 1000 + tid in its shared array; after a cluster barrier, each
// thread reads element tid of every block of its cluster through mapa + ld.shared::cluster, and
// atomically adds 1 to its word in the next block's array (atom.shared::cluster) and, with red,
// 2 to the same word of the block after that; after a second barrier it reads its own word.
__global__ void k_dsmem(unsigned* sums, unsigned* own) {
  __shared__ unsigned s[128];
  unsigned rank, n;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  const unsigned tid = threadIdx.x;
  s[tid] = (rank + 1) * 1000 + tid;
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  const unsigned local = unsigned(__cvta_generic_to_shared(&s[tid]));
  unsigned total = 0;
  for (unsigned r = 0; r < n; ++r) {
    unsigned remote, v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(r));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(remote) : "memory");
    total += v;
  }
  asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  unsigned next, after, old;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(next) : "r"(local), "r"((rank + 1) % n));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(after) : "r"(local), "r"((rank + 2) % n));
  asm volatile("atom.shared::cluster.add.u32 %0, [%1], 1;" : "=r"(old) : "r"(next) : "memory");
  asm volatile("red.shared::cluster.add.u32 [%0], 2;" ::"r"(after) : "memory");
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  sums[b * blockDim.x + tid] = total;
  own[b * blockDim.x + tid] = s[tid];
}

// Generic-address DSMEM: a store into the next block's array through the generic address mapa
// returns (st through a generic pointer), read back by the owner after the barrier.
__global__ void k_generic(unsigned* out) {
  __shared__ unsigned s[64];
  unsigned rank, n;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  unsigned long long mine = reinterpret_cast<unsigned long long>(&s[threadIdx.x]), theirs;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(theirs) : "l"(mine), "r"((rank + 1) % n));
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  *reinterpret_cast<volatile unsigned*>(theirs) = rank * 100 + threadIdx.x;
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}

// barrier.cluster ordering: the order in which each block passes its steps is recorded with a
// global atomic counter: every block's "before" step must precede every block's "after" step.
// The arrive is .relaxed: it orders no memory, but the wait still waits for every arrival.
__global__ void k_order(unsigned* ticket, unsigned* order) {
  const unsigned b = blockIdx.x;
  if (threadIdx.x == 0) order[2 * b] = atomicAdd(ticket, 1);
  asm volatile("barrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait;" ::: "memory");
  if (threadIdx.x == 0) order[2 * b + 1] = atomicAdd(ticket, 1);
}

__global__ void __cluster_dims__(2, 2, 1) k_compiled(unsigned* out) {
  unsigned rank, n, expl;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(expl));
  if (threadIdx.x == 0) {
    const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
    out[3 * b] = rank;
    out[3 * b + 1] = n;
    out[3 * b + 2] = expl;
  }
}

__global__ void k_plain(unsigned*) {}

struct Shape {
  dim3 grid, cluster;
  bool attr;  // launched with the cluster attribute (else <<<>>>: no cluster)
};

cudaError_t launch_ex(const void* f, dim3 grid, dim3 block, dim3 cluster, bool with_attr, void** args,
                      size_t smem = 0) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster.x;
  attr[0].val.clusterDim.y = cluster.y;
  attr[0].val.clusterDim.z = cluster.z;
  cfg.attrs = attr;
  cfg.numAttrs = with_attr ? 1 : 0;
  return cudaLaunchKernelExC(&cfg, f, args);
}

unsigned pl(unsigned v) { return g_plant ? v + 1 : v; }

void test_sregs() {
  const Shape shapes[] = {
      {dim3(4), dim3(2), true},           {dim3(6, 2), dim3(3, 2), true},
      {dim3(2, 4, 2), dim3(1, 2, 2), true}, {dim3(8, 3, 1), dim3(4, 1, 1), true},
      {dim3(4, 4, 4), dim3(2, 2, 2), true}, {dim3(6), dim3(1), true},
      {dim3(3, 2), dim3(1), false},
  };
  for (const Shape& sh : shapes) {
    const unsigned nb = sh.grid.x * sh.grid.y * sh.grid.z;
    unsigned* d = nullptr;
    CUDA_CHECK(cudaMalloc(&d, nb * kRegs * sizeof(unsigned)));
    void* args[] = {&d};
    CUDA_CHECK(launch_ex(reinterpret_cast<const void*>(k_sregs), sh.grid, dim3(64), sh.cluster, sh.attr, args));
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> got(nb * kRegs);
    CUDA_CHECK(cudaMemcpy(got.data(), d, got.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d));
    const dim3 c = sh.cluster;
    for (unsigned z = 0; z < sh.grid.z; ++z)
      for (unsigned y = 0; y < sh.grid.y; ++y)
        for (unsigned x = 0; x < sh.grid.x; ++x) {
          const unsigned b = x + sh.grid.x * (y + sh.grid.y * z);
          const unsigned cx = x % c.x, cy = y % c.y, cz = z % c.z;
          const unsigned want[kRegs] = {cx + cy * c.x + cz * c.x * c.y, c.x * c.y * c.z, cx, cy, cz, c.x, c.y, c.z,
                                        x / c.x, y / c.y, z / c.z, sh.grid.x / c.x, sh.grid.y / c.y,
                                        sh.grid.z / c.z, sh.attr ? 1u : 0u, cx + cy * c.x + cz * c.x * c.y};
          static const char* names[kRegs] = {"%cluster_ctarank", "%cluster_nctarank", "%cluster_ctaid.x",
                                             "%cluster_ctaid.y", "%cluster_ctaid.z", "%cluster_nctaid.x",
                                             "%cluster_nctaid.y", "%cluster_nctaid.z", "%clusterid.x",
                                             "%clusterid.y", "%clusterid.z", "%nclusterid.x",
                                             "%nclusterid.y", "%nclusterid.z", "%is_explicit_cluster",
                                             "getctarank (own)"};
          for (int i = 0; i < kRegs; ++i)
            conf_check(names[i],
                       conf_fmt("grid %ux%ux%u cluster %ux%ux%u%s, block (%u,%u,%u)", sh.grid.x, sh.grid.y,
                                sh.grid.z, c.x, c.y, c.z, sh.attr ? "" : " (no attribute)", x, y, z),
                       got[b * kRegs + i], pl(want[i]));
        }
  }
}

void test_dsmem() {
  const Shape shapes[] = {{dim3(8), dim3(4), true}, {dim3(4, 2), dim3(2, 2), true}, {dim3(3), dim3(3), true}};
  const unsigned threads = 128;
  for (const Shape& sh : shapes) {
    const unsigned nb = sh.grid.x * sh.grid.y * sh.grid.z, n = sh.cluster.x * sh.cluster.y * sh.cluster.z;
    unsigned *sums = nullptr, *own = nullptr;
    CUDA_CHECK(cudaMalloc(&sums, nb * threads * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&own, nb * threads * sizeof(unsigned)));
    void* args[] = {&sums, &own};
    CUDA_CHECK(launch_ex(reinterpret_cast<const void*>(k_dsmem), sh.grid, dim3(threads), sh.cluster, true, args));
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> s(nb * threads), o(nb * threads);
    CUDA_CHECK(cudaMemcpy(s.data(), sums, s.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o.data(), own, o.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(sums));
    CUDA_CHECK(cudaFree(own));
    for (unsigned b = 0; b < nb; ++b) {
      const unsigned x = b % sh.grid.x, y = (b / sh.grid.x) % sh.grid.y;
      const unsigned rank = x % sh.cluster.x + (y % sh.cluster.y) * sh.cluster.x;
      for (unsigned t = 0; t < threads; t += 37) {
        unsigned total = 0;
        for (unsigned r = 0; r < n; ++r) total += (r + 1) * 1000 + t;
        // The previous block adds 1 (atom), the one before it 2 (red); with n == 1 both are this
        // block, with n == 2 the two are the same other block.
        const unsigned added = 3;
        const ConfStr where = conf_fmt("cluster %ux%u, block %u thread %u", sh.cluster.x, sh.cluster.y, b, t);
        conf_check("ld.shared::cluster sum over the cluster", where, s[b * threads + t], pl(total));
        conf_check("atom+red.shared::cluster into a neighbour", where, o[b * threads + t],
                   pl((rank + 1) * 1000 + t + added));
      }
    }
  }
  // The generic form. Under the emulator, its metrics too (found with dlsym; a GPU has none):
  // each of the 4 blocks' 2 warps stores once into the next block's shared memory, 32 threads
  // of 4 bytes: 8 DSMEM requests, 8 * 32 * 4 bytes; its own shared reads are not DSMEM.
  auto get = reinterpret_cast<Gpu100EmuMetricsFn>(dlsym(RTLD_DEFAULT, GPU100_EMU_METRICS_SYMBOL));
  Gpu100EmuMetrics before = {sizeof before}, after = {sizeof after};
  if (get) get(&before);
  unsigned* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, 4 * 64 * sizeof(unsigned)));
  void* args[] = {&d};
  CUDA_CHECK(launch_ex(reinterpret_cast<const void*>(k_generic), dim3(4), dim3(64), dim3(4), true, args));
  CUDA_CHECK(cudaDeviceSynchronize());
  if (get) {
    get(&after);
    gpu100_emu_metrics_diff(&after, &before);
    conf_check("metrics dsmem_requests", "k_generic, 4 blocks of 2 warps", after.dsmem_requests, pl(8));
    conf_check("metrics dsmem_bytes", "k_generic, 4 blocks of 2 warps", after.dsmem_bytes, pl(8 * 32 * 4));
  }
  std::vector<unsigned> g(4 * 64);
  CUDA_CHECK(cudaMemcpy(g.data(), d, g.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d));
  for (unsigned b = 0; b < 4; ++b)
    for (unsigned t = 0; t < 64; t += 13)
      conf_check("st through mapa.u64 (generic)", conf_fmt("block %u thread %u", b, t), g[b * 64 + t],
                 pl(((b + 3) % 4) * 100 + t));
}

void test_order() {
  const unsigned nb = 8;
  unsigned *ticket = nullptr, *order = nullptr;
  CUDA_CHECK(cudaMalloc(&ticket, 4));
  CUDA_CHECK(cudaMemset(ticket, 0, 4));
  CUDA_CHECK(cudaMalloc(&order, 2 * nb * 4));
  void* args[] = {&ticket, &order};
  CUDA_CHECK(launch_ex(reinterpret_cast<const void*>(k_order), dim3(nb), dim3(64), dim3(nb), true, args));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> o(2 * nb);
  CUDA_CHECK(cudaMemcpy(o.data(), order, o.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(ticket));
  CUDA_CHECK(cudaFree(order));
  unsigned latest_before = 0, earliest_after = ~0u;
  for (unsigned b = 0; b < nb; ++b) {
    latest_before = std::max(latest_before, o[2 * b]);
    earliest_after = std::min(earliest_after, o[2 * b + 1]);
  }
  // The cluster barrier: all nb "before" tickets (0 .. nb-1) come before every "after" one.
  conf_check("barrier.cluster: last ticket before the barrier", "8 blocks, one cluster", latest_before, pl(nb - 1));
  conf_check("barrier.cluster: first ticket after the barrier", "8 blocks, one cluster", earliest_after, pl(nb));
}

void test_compiled() {
  const dim3 grid(4, 2);
  const unsigned nb = 8;
  unsigned* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, 3 * nb * 4));
  k_compiled<<<grid, 32>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> g(3 * nb);
  CUDA_CHECK(cudaMemcpy(g.data(), d, g.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d));
  for (unsigned y = 0; y < grid.y; ++y)
    for (unsigned x = 0; x < grid.x; ++x) {
      const unsigned b = x + grid.x * y;
      const ConfStr where = conf_fmt("__cluster_dims__(2,2,1), block (%u,%u)", x, y);
      conf_check("%cluster_ctarank", where, g[3 * b], pl(x % 2 + (y % 2) * 2));
      conf_check("%cluster_nctarank", where, g[3 * b + 1], pl(4));
      conf_check("%is_explicit_cluster", where, g[3 * b + 2], pl(1));
    }
  cudaFuncAttributes fa;
  CUDA_CHECK(cudaFuncGetAttributes(&fa, k_compiled));
  conf_check("cudaFuncGetAttributes requiredClusterWidth", "__cluster_dims__(2,2,1)", unsigned(fa.requiredClusterWidth), pl(2));
  conf_check("cudaFuncGetAttributes requiredClusterHeight", "__cluster_dims__(2,2,1)", unsigned(fa.requiredClusterHeight), pl(2));
}

void test_occupancy_and_errors() {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(16);
  cfg.blockDim = dim3(128);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 4;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(k_dsmem), &cfg));
  conf_check("cudaOccupancyMaxActiveClusters > 0", "cluster of 4, 128 threads", unsigned(clusters > 0), pl(1));

  unsigned* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, 4096 * kRegs * 4));
  void* args[] = {&d};
  const void* f = reinterpret_cast<const void*>(k_sregs);
  auto expect = [&](const char* what, cudaError_t got, cudaError_t want) {
    cudaGetLastError();  // a refused launch is not sticky
    if (g_plant) want = want == cudaSuccess ? cudaErrorInvalidValue : cudaSuccess;
    conf_check(what, conf_fmt("%s", cudaGetErrorName(want)), int(got), int(want));
  };
  // The grid must be a whole number of clusters in every dimension.
  expect("grid 6 with cluster 4", launch_ex(f, dim3(6), dim3(32), dim3(4), true, args), cudaErrorInvalidClusterSize);
  expect("grid 4x3 with cluster 2x2", launch_ex(f, dim3(4, 3), dim3(32), dim3(2, 2), true, args), cudaErrorInvalidClusterSize);
  // At most 8 blocks without the non-portable attribute, 16 with it, never more.
  expect("cluster of 16, portable", launch_ex(f, dim3(16), dim3(32), dim3(16), true, args), cudaErrorInvalidClusterSize);
  CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  expect("cluster of 16, non-portable allowed", launch_ex(f, dim3(16), dim3(32), dim3(16), true, args), cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  expect("cluster of 32, non-portable allowed", launch_ex(f, dim3(32), dim3(32), dim3(32), true, args), cudaErrorInvalidClusterSize);
  CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 0));
  expect("cluster of 8 (portable)", launch_ex(f, dim3(16), dim3(32), dim3(8), true, args), cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  // A compile-time cluster size cannot be changed at launch.
  expect("__cluster_dims__(2,2,1) launched with cluster 4x1x1",
         launch_ex(reinterpret_cast<const void*>(k_compiled), dim3(4, 2), dim3(32), dim3(4, 1, 1), true, args),
         cudaErrorInvalidClusterSize);
  expect("__cluster_dims__(2,2,1) launched with cluster 2x2x1",
         launch_ex(reinterpret_cast<const void*>(k_compiled), dim3(4, 2), dim3(32), dim3(2, 2, 1), true, args), cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  expect("__cluster_dims__(2,2,1) with grid 3x2", launch_ex(reinterpret_cast<const void*>(k_compiled), dim3(3, 2), dim3(32), dim3(2, 2, 1), false, args),
         cudaErrorInvalidClusterSize);
  (void)k_plain;
  CUDA_CHECK(cudaFree(d));
}

}  // namespace

int main(int argc, char** argv) {
  g_plant = argc > 1 && std::strcmp(argv[1], "--plant") == 0;
  conf_require_device();
  int cc = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, 0));
  int cluster_launch = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, 0));
  if (cc < 9 || !cluster_launch) {
    std::printf("SKIP: thread block clusters need compute capability 9.0\n");
    return 77;
  }
  test_sregs();
  test_dsmem();
  test_order();
  test_compiled();
  test_occupancy_and_errors();
  if (g_plant) {
    // Every check must have failed.
    const int failed = conf_failures(), total = conf_checks();
    std::printf("clusters --plant: %d of %d checks failed\n", failed, total);
    return failed == total && total > 0 ? 0 : 1;
  }
  return conf_finish("clusters");
}
