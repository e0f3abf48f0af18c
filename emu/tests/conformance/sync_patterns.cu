// Synchronization that is correct, each pattern once, with its result checked. Under the
// emulator this program runs with every check on (label emu): a race, uninitialized-read or
// synchronization report on any of these kernels fails the launch and the program, so it guards
// the checks against flagging correct code. On a GPU (label gpu) it checks the same results.
//   - a producer warp and a consumer warp handing a buffer back and forth through named barriers
//     (bar.arrive on one side, bar.sync on the other, two barriers for the two directions);
//   - the two halves of a warp, each exchanging through shared memory with __syncwarp(its mask);
//   - a flag in shared memory between two warps: data, __syncwarp, __threadfence_block, volatile
//     store of the flag; spin on a volatile load, __threadfence_block, __syncwarp, data;
//   - message passing between blocks: data, __syncthreads, a release store of a flag; an acquire
//     load of the flag in another block, __syncthreads, data;
//   - neighbouring threads writing the bytes and halves of one word (no conflict: other bytes);
//   - shared-memory atomics from every lane of a warp onto one counter, then a barrier and reads.
#include <cuda/atomic>
#include <cuda_fp16.h>

#include "conf_common.h"

namespace {

constexpr int kRounds = 4;

// Warp 0 fills buf, warp 1 reads it reversed; barrier 1: "full", barrier 2: "empty".
__global__ void k_named_pipeline(int* out) {
  __shared__ int buf[32];
  const int lane = threadIdx.x % 32;
  if (threadIdx.x < 32) {
    for (int r = 0; r < kRounds; ++r) {
      if (r > 0) asm volatile("bar.sync 2, 64;" ::: "memory");
      buf[lane] = 100 * r + lane;
      asm volatile("bar.arrive 1, 64;" ::: "memory");
    }
    asm volatile("bar.sync 2, 64;" ::: "memory");
  } else {
    for (int r = 0; r < kRounds; ++r) {
      asm volatile("bar.sync 1, 64;" ::: "memory");
      out[r * 32 + lane] = buf[31 - lane];
      asm volatile("bar.arrive 2, 64;" ::: "memory");
    }
  }
}

// Each half of the warp rotates its 16 values by one, three times, through shared memory.
__global__ void k_half_warps(int* out) {
  __shared__ int s[32];
  const int lane = threadIdx.x;
  const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  const int base = lane & 16;
  int v = lane * 3;
  for (int r = 0; r < 3; ++r) {
    s[lane] = v;
    __syncwarp(half);
    v = s[base + ((lane + 1) & 15)];
    __syncwarp(half);
  }
  out[lane] = v;
}

__global__ void k_shared_flag(int* out) {
  __shared__ int data[32];
  __shared__ int flag;
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x < 32) {
    data[lane] = lane * lane;
    __syncwarp();
    __threadfence_block();
    if (lane == 0) *reinterpret_cast<volatile int*>(&flag) = 1;
  } else {
    if (lane == 0)
      while (*reinterpret_cast<volatile int*>(&flag) == 0) {
      }
    __threadfence_block();
    __syncwarp();
    out[lane] = data[31 - lane];
  }
}

// Block 1 produces, block 0 consumes (both are resident: two blocks of 128 threads).
__global__ void k_message(int* data, unsigned* flag, int* out) {
  const int t = threadIdx.x;
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(*flag);
  if (blockIdx.x == 1) {
    data[t] = 7 * t + 1;
    __syncthreads();
    if (t == 0) f.store(1u, cuda::memory_order_release);
  } else {
    if (t == 0)
      while (f.load(cuda::memory_order_acquire) == 0u) {
      }
    __syncthreads();
    out[t] = data[127 - t];
  }
}

__global__ void k_bytes_halves(unsigned* words, unsigned* half_words) {
  __shared__ unsigned char b[128];
  __shared__ __half h[128];
  const int t = threadIdx.x;
  b[t] = static_cast<unsigned char>(t + 1);
  h[t] = __int2half_rn(t);
  __syncthreads();
  if (t < 32) words[t] = reinterpret_cast<const unsigned*>(b)[t];
  if (t < 64) half_words[t] = reinterpret_cast<const unsigned*>(h)[t];
}

__global__ void k_shared_atomics(unsigned* out) {
  __shared__ unsigned count[4];
  const int t = threadIdx.x;
  if (t < 4) count[t] = 0;
  __syncthreads();
  atomicAdd(&count[t % 4], 1u + t);
  __syncthreads();
  if (t < 4) out[t] = count[t];
}

unsigned half_bits(int v) {
  const __half h = __int2half_rn(v);
  unsigned short u;
  std::memcpy(&u, &h, 2);
  return u;
}

}  // namespace

int main() {
  conf_require_device();
  int* d_out;
  int* d_data;
  unsigned *d_flag, *d_u, *d_u2;
  CUDA_CHECK(cudaMalloc(&d_out, 256 * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_data, 256 * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_flag, sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&d_u, 64 * sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&d_u2, 64 * sizeof(unsigned)));
  int h[256];
  unsigned hu[64];

  k_named_pipeline<<<1, 64>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h, d_out, kRounds * 32 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int r = 0; r < kRounds; ++r)
    for (int l = 0; l < 32; ++l)
      conf_check("named barriers: bar.arrive / bar.sync pipeline", conf_fmt("round %d lane %d", r, l),
                 h[r * 32 + l], 100 * r + 31 - l);

  k_half_warps<<<1, 32>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h, d_out, 32 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int l = 0; l < 32; ++l)
    conf_check("__syncwarp(half mask) exchange", conf_fmt("lane %d", l), h[l],
               3 * ((l & 16) + ((l + 3) & 15)));

  k_shared_flag<<<1, 64>>>(d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h, d_out, 32 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int l = 0; l < 32; ++l)
    conf_check("shared flag: fence + volatile store / volatile spin + fence", conf_fmt("lane %d", l),
               h[l], (31 - l) * (31 - l));

  CUDA_CHECK(cudaMemset(d_flag, 0, sizeof(unsigned)));
  k_message<<<2, 128>>>(d_data, d_flag, d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h, d_out, 128 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < 128; ++t)
    conf_check("release store / acquire load between blocks", conf_fmt("thread %d", t), h[t],
               7 * (127 - t) + 1);

  k_bytes_halves<<<1, 128>>>(d_u, d_u2);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(hu, d_u, 32 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int w = 0; w < 32; ++w) {
    unsigned want = 0;
    for (int k = 0; k < 4; ++k) want |= unsigned(4 * w + k + 1) << (8 * k);
    conf_check("bytes of one word written by four threads", conf_fmt("word %d", w), hu[w], want);
  }
  CUDA_CHECK(cudaMemcpy(hu, d_u2, 64 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int w = 0; w < 64; ++w)
    conf_check("halves of one word written by two threads", conf_fmt("word %d", w), hu[w],
               half_bits(2 * w) | (half_bits(2 * w + 1) << 16));

  k_shared_atomics<<<1, 128>>>(d_u);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(hu, d_u, 4 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int b = 0; b < 4; ++b) {
    unsigned want = 0;
    for (int t = b; t < 128; t += 4) want += 1u + t;
    conf_check("shared atomics, barrier, read", conf_fmt("counter %d", b), hu[b], want);
  }

  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_data));
  CUDA_CHECK(cudaFree(d_flag));
  CUDA_CHECK(cudaFree(d_u));
  CUDA_CHECK(cudaFree(d_u2));
  return conf_finish("sync_patterns");
}
