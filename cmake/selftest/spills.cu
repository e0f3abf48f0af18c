// Test input for the ptx checker (not a day): a kernel that keeps 64 values live at once. With
// ptxas --maxrregcount=32 it must spill, and the checker must then fail.
__global__ void keeps_many_values_live(const float* __restrict__ in, float* __restrict__ out) {
  float v[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) v[i] = in[threadIdx.x + 32 * i];
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < 64; ++i)
#pragma unroll
    for (int j = i + 1; j < 64; j += 7) acc += v[i] * v[j];
  out[threadIdx.x] = acc;
}
