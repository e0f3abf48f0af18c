/* The gpu100 emulator's metrics, as a program reads them while it runs under the emulator.
 *
 * The emulator's libcudart.so.13 exports gpu100_emu_metrics(); the real runtime does not, so a
 * program finds it with dlsym and needs no link against the emulator:
 *
 *   #include <dlfcn.h>
 *   #include "gpu100_emu_metrics.h"
 *   Gpu100EmuMetricsFn get = (Gpu100EmuMetricsFn)dlsym(RTLD_DEFAULT, GPU100_EMU_METRICS_SYMBOL);
 *   if (get) {                          // running emulated
 *     Gpu100EmuMetrics before = {sizeof before}, after = {sizeof after};
 *     get(&before);  ... launch, cudaDeviceSynchronize() ...  get(&after);
 *     gpu100_emu_metrics_diff(&after, &before) -> the launches in between
 *   }
 *
 * Every counter is cumulative over the program's launches (they never decrease), so the
 * difference of two readings is what ran in between. The two byte counts are the exception:
 * device_bytes_live is the device memory allocated now, and device_bytes_peak the most that was
 * allocated at once since the program started or since gpu100_emu_metrics_reset_peak().
 *
 * The counters follow Nsight Compute's metrics where one exists, counted on the PTX the program
 * carries rather than on the SASS a GPU runs (emu/README.md, "Metrics", says where the two can
 * differ):
 *   blocks                  the blocks of those launches (launch__grid_size, summed)
 *   warp_instructions       smsp__inst_executed (PTX instructions, each execution by a warp)
 *   thread_instructions     smsp__thread_inst_executed (the threads active at each of them,
 *                           predicated-off threads included)
 *   branches                bra executed by a warp
 *   divergent_branches      of those, the executions whose guard sent some active threads to
 *                           the target and others on (PTX-level divergence)
 *   global_{load,store}_requests  l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}
 *   global_{load,store}_sectors   l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}: the distinct
 *                           32-byte sectors each request touches
 *   global_{load,store}_ideal_sectors  the fewest sectors that could hold the bytes the request's
 *                           threads use: ceil(distinct bytes / 32) per request
 *   shared_{load,store}_requests  smsp__sass_inst_executed_op_shared_{ld,st}
 *   shared_{load,store}_wavefronts  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}
 *   shared_{load,store}_ideal_wavefronts  the wavefronts without any bank conflict: one per
 *                           128-byte phase of the request (1 for accesses up to 4 bytes a
 *                           thread, 2 for 8 bytes, 4 for 16 bytes, fewer when lanes are off);
 *                           bank conflicts = wavefronts - ideal wavefronts
 *   global_atomic_{requests,threads}  atom/red on global memory: warp requests, thread operations
 *   shared_atomic_{requests,threads}  the same on shared memory
 *   local_{load,store}_requests   l1tex__t_requests_pipe_lsu_mem_local_op_{ld,st}
 *   tma_requests, tma_bytes  bulk and bulk tensor copies (cp.async.bulk{.tensor}, one per
 *                           issuing thread) and the bytes they moved, out-of-bounds fill
 *                           included
 *   mbarrier_waits          warp-level mbarrier.try_wait / test_wait executions in which a
 *                           thread found its phase incomplete (test_wait returned false,
 *                           try_wait suspended the thread)
 *   wgmma_instructions      wgmma.mma_async executed by a warpgroup (each counts once for its
 *                           four warps)
 *   wgmma_flops             2 M N K of each of them (a multiply and an add per product; the
 *                           integer types count the same way)
 *   dsmem_requests          ld/st/atom/red executions by a warp with at least one thread
 *                           accessing another block's shared memory (distributed shared memory,
 *                           thread block clusters); those threads' shared accesses are not in
 *                           the shared counts above
 *   dsmem_bytes             the bytes those threads accessed in other blocks' shared memory
 */
#ifndef GPU100_EMU_METRICS_H
#define GPU100_EMU_METRICS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct Gpu100EmuMetrics {
  /* The caller sets size to sizeof(Gpu100EmuMetrics) of its own copy of this header; the
   * emulator fills that many bytes (fields are only ever added at the end). */
  unsigned long long size;
  unsigned long long launches, blocks;
  unsigned long long warp_instructions, thread_instructions;
  unsigned long long branches, divergent_branches;
  unsigned long long global_load_requests, global_load_sectors, global_load_ideal_sectors;
  unsigned long long global_store_requests, global_store_sectors, global_store_ideal_sectors;
  unsigned long long shared_load_requests, shared_load_wavefronts, shared_load_ideal_wavefronts;
  unsigned long long shared_store_requests, shared_store_wavefronts, shared_store_ideal_wavefronts;
  unsigned long long global_atomic_requests, global_atomic_threads;
  unsigned long long shared_atomic_requests, shared_atomic_threads;
  unsigned long long local_load_requests, local_store_requests;
  unsigned long long device_bytes_live, device_bytes_peak;
  unsigned long long tma_requests, tma_bytes, mbarrier_waits;
  unsigned long long wgmma_instructions, wgmma_flops;
  unsigned long long dsmem_requests, dsmem_bytes;
} Gpu100EmuMetrics;

typedef void (*Gpu100EmuMetricsFn)(Gpu100EmuMetrics* out);
typedef void (*Gpu100EmuResetPeakFn)(void);
#define GPU100_EMU_METRICS_SYMBOL "gpu100_emu_metrics"
#define GPU100_EMU_RESET_PEAK_SYMBOL "gpu100_emu_metrics_reset_peak"

/* The cumulative counters, in the order above (launches .. local_store_requests, then
 * tma_requests .. dsmem_bytes, which follow the byte counts in the struct): X(name) for
 * each, to print them or to take the difference of two readings. */
#define GPU100_EMU_METRICS_COUNTERS(X)                                                   \
  X(launches) X(blocks) X(warp_instructions) X(thread_instructions) X(branches)          \
  X(divergent_branches) X(global_load_requests) X(global_load_sectors)                 \
  X(global_load_ideal_sectors) X(global_store_requests) X(global_store_sectors)        \
  X(global_store_ideal_sectors) X(shared_load_requests) X(shared_load_wavefronts)      \
  X(shared_load_ideal_wavefronts) X(shared_store_requests) X(shared_store_wavefronts)  \
  X(shared_store_ideal_wavefronts) X(global_atomic_requests) X(global_atomic_threads)  \
  X(shared_atomic_requests) X(shared_atomic_threads) X(local_load_requests)            \
  X(local_store_requests) X(tma_requests) X(tma_bytes) X(mbarrier_waits)               \
  X(wgmma_instructions) X(wgmma_flops) X(dsmem_requests) X(dsmem_bytes)

/* after -= before, for the cumulative counters; the byte counts keep after's values. */
static inline void gpu100_emu_metrics_diff(Gpu100EmuMetrics* after, const Gpu100EmuMetrics* before) {
#define GPU100_EMU_METRICS_DIFF_(f) after->f -= before->f;
  GPU100_EMU_METRICS_COUNTERS(GPU100_EMU_METRICS_DIFF_)
#undef GPU100_EMU_METRICS_DIFF_
}

#ifdef __cplusplus
}
#endif

#endif
