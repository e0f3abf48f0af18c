// Texture objects: tex1Dfetch on linear memory, tex1D / tex2D / tex3D / tex2DLayered /
// tex2Dgather on CUDA arrays and tex2D on pitched memory, with point and linear filtering, each
// address mode, normalized and unnormalized coordinates, and float, int, uchar4 and signed-char
// elements.
//
// Expected values follow the CUDA Programming Guide's appendix on texture fetching: with N texels
// on an axis, a normalized coordinate x is first scaled to x*N; point sampling returns T[floor(x)];
// linear filtering returns (1-a)T[i] + aT[i+1] with i = floor(xB), a = frac(xB), xB = x - 0.5,
// where a is held in 9-bit fixed point with 8 fraction bits (so is a multiple of 1/256); an index
// outside [0, N) is wrapped, clamped, mirrored or replaced by the border color (zero here) by the
// address mode. Most coordinates are chosen so that a is exactly representable in that format and
// the filtered value is exact up to float rounding; one check takes a weight that is not, and
// allows the guide's precision.
#include <cmath>
#include <string>
#include <vector>

#include "conf_common.h"

namespace {

// ---- the guide's rules, on the host ----
// The texel an index denotes after the address mode; false for a border texel.
bool place(int& i, int n, cudaTextureAddressMode mode) {
  switch (mode) {
    case cudaAddressModeWrap: i = ((i % n) + n) % n; return true;
    case cudaAddressModeMirror: {
      const int p = ((i % (2 * n)) + 2 * n) % (2 * n);
      i = p < n ? p : 2 * n - 1 - p;
      return true;
    }
    case cudaAddressModeClamp: i = i < 0 ? 0 : i >= n ? n - 1 : i; return true;
    default: return i >= 0 && i < n;
  }
}

struct Axis {
  int i[2];
  double w[2];
  bool valid[2];
  int taps;
};
// One axis of a fetch at texel-space coordinate s (already scaled by N when normalized).
Axis axis(double s, int n, cudaTextureAddressMode mode, bool linear) {
  Axis a{};
  if (!linear) {
    a.taps = 1;
    a.i[0] = int(std::floor(s));
    a.w[0] = 1;
    a.valid[0] = place(a.i[0], n, mode);
    return a;
  }
  const double xb = s - 0.5, fl = std::floor(xb);
  const double alpha = std::round((xb - fl) * 256) / 256;
  a.taps = 2;
  a.i[0] = int(fl);
  a.i[1] = int(fl) + 1;
  a.w[0] = 1 - alpha;
  a.w[1] = alpha;
  a.valid[0] = place(a.i[0], n, mode);
  a.valid[1] = place(a.i[1], n, mode);
  return a;
}

double ref_2d(const std::vector<float>& t, int w, int h, double s, double r, cudaTextureAddressMode mode,
              bool linear) {
  const Axis ax = axis(s, w, mode, linear), ay = axis(r, h, mode, linear);
  double v = 0;
  for (int y = 0; y < ay.taps; ++y)
    for (int x = 0; x < ax.taps; ++x)
      if (ax.valid[x] && ay.valid[y]) v += ax.w[x] * ay.w[y] * t[size_t(ay.i[y]) * w + ax.i[x]];
  return v;
}

// The guide fixes the weights' format, not the arithmetic of the blend: with weights exact in 9
// bits, a filtered value of these textures (texels below 100) is allowed a rounding error of
// about 2^-16 of its size.
constexpr double kBlendTolerance = 1e-3;

bool near(const char* name, const ConfStr& input, double got, double expected, double tol) {
  const bool ok = std::fabs(got - expected) <= tol;
  return conf_check_text(name, input.s, ok, conf_fmt("%.9g", got).s, conf_fmt("%.9g (within %g)", expected, tol).s);
}

// ---- kernels ----
__global__ void k_fetch_linear(cudaTextureObject_t tf, cudaTextureObject_t ti, int n, float* out_f, int* out_i) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out_f[i] = tex1Dfetch<float>(tf, i);
    out_i[i] = tex1Dfetch<int>(ti, i);
  }
}

__global__ void k_sample_2d(cudaTextureObject_t t, const float2* at, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

__global__ void k_sample_1d(cudaTextureObject_t t, const float* at, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<float>(t, at[i]);
}

__global__ void k_sample_uchar4(cudaTextureObject_t t, const float2* at, int n, float4* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}

__global__ void k_sample_int(cudaTextureObject_t t, const float2* at, int n, int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<int>(t, at[i].x, at[i].y);
}

__global__ void k_sample_3d(cudaTextureObject_t t, const float4* at, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}

__global__ void k_sample_layered(cudaTextureObject_t t, const float4* at, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, at[i].x, at[i].y, int(at[i].z));
}

__global__ void k_gather(cudaTextureObject_t t, const float2* at, int n, float4* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2Dgather<float4>(t, at[i].x, at[i].y, 0);
}

// txq through inline PTX: the texture's width and height.
__global__ void k_query(cudaTextureObject_t t, int* out) {
  int w, h;
  asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t));
  asm("txq.height.b32 %0, [%1];" : "=r"(h) : "l"(t));
  out[0] = w;
  out[1] = h;
}

template <typename T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T>
std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

cudaTextureObject_t make_texture(const cudaResourceDesc& res, cudaTextureAddressMode mode, cudaTextureFilterMode filter,
                                 bool normalized, cudaTextureReadMode read = cudaReadModeElementType) {
  cudaTextureDesc td{};
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = mode;
  td.filterMode = filter;
  td.readMode = read;
  td.normalizedCoords = normalized;
  cudaTextureObject_t t = 0;
  CUDA_CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
  return t;
}

cudaResourceDesc array_resource(cudaArray_t a) {
  cudaResourceDesc r{};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = a;
  return r;
}

int blocks(int n) { return (n + 127) / 128; }

// tex1Dfetch on linear memory, float and int elements: every element, exactly.
void linear_fetch() {
  constexpr int n = 300;
  std::vector<float> hf(n);
  std::vector<int> hi(n);
  for (int i = 0; i < n; ++i) {
    hf[i] = 0.25f * i - 17.0f;
    hi[i] = (i * 7919) % 1000 - 500;
  }
  float* df = to_device(hf);
  int* di = to_device(hi);
  cudaResourceDesc rf{}, ri{};
  rf.resType = ri.resType = cudaResourceTypeLinear;
  rf.res.linear.devPtr = df;
  rf.res.linear.desc = cudaCreateChannelDesc<float>();
  rf.res.linear.sizeInBytes = n * sizeof(float);
  ri.res.linear.devPtr = di;
  ri.res.linear.desc = cudaCreateChannelDesc<int>();
  ri.res.linear.sizeInBytes = n * sizeof(int);
  const cudaTextureObject_t tf = make_texture(rf, cudaAddressModeClamp, cudaFilterModePoint, false);
  const cudaTextureObject_t ti = make_texture(ri, cudaAddressModeClamp, cudaFilterModePoint, false);
  float* of;
  int* oi;
  CUDA_CHECK(cudaMalloc(&of, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&oi, n * sizeof(int)));
  k_fetch_linear<<<blocks(n), 128>>>(tf, ti, n, of, oi);
  CUDA_CHECK(cudaGetLastError());
  const auto gf = to_host(of, n);
  const auto gi = to_host(oi, n);
  for (int i = 0; i < n; ++i) {
    uint32_t gb, eb;
    std::memcpy(&gb, &gf[i], 4);
    std::memcpy(&eb, &hf[i], 4);
    conf_check_bits("tex1Dfetch<float>", conf_fmt("index %d", i), gb, eb, 32);
    conf_check("tex1Dfetch<int>", conf_fmt("index %d", i), gi[i], hi[i]);
  }
  cudaResourceDesc back{};
  CUDA_CHECK(cudaGetTextureObjectResourceDesc(&back, tf));
  conf_check("cudaGetTextureObjectResourceDesc", "linear devPtr", back.res.linear.devPtr == df, true);
  CUDA_CHECK(cudaDestroyTextureObject(tf));
  CUDA_CHECK(cudaDestroyTextureObject(ti));
  CUDA_CHECK(cudaFree(df));
  CUDA_CHECK(cudaFree(di));
  CUDA_CHECK(cudaFree(of));
  CUDA_CHECK(cudaFree(oi));
}

// tex2D on a float array, normalized coordinates, every address mode with point and linear
// filtering, at coordinates inside, left of, right of, above and below the texture.
void filtering_2d() {
  constexpr int w = 8, h = 4;
  std::vector<float> t(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) t[y * w + x] = float(x * x) + 10.0f * y;  // not linear in x: filtering shows
  cudaArray_t arr;
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  CUDA_CHECK(cudaMallocArray(&arr, &desc, w, h));
  CUDA_CHECK(cudaMemcpy2DToArray(arr, 0, 0, t.data(), w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
  // The array reads back as written.
  std::vector<float> back(w * h);
  CUDA_CHECK(cudaMemcpy2DFromArray(back.data(), w * sizeof(float), arr, 0, 0, w * sizeof(float), h, cudaMemcpyDeviceToHost));
  conf_check("cudaMemcpy2DFromArray", "the whole array", std::memcmp(back.data(), t.data(), back.size() * 4) == 0, true);

  // Texel-space coordinates k + f with fractions whose weights 9 bits hold exactly (and away
  // from texel edges for point sampling), over more than two periods of each axis.
  std::vector<float2> at;
  std::vector<double> sx, sy;
  const double fracs[] = {0.3125, 0.75};
  for (int ky = -3; ky <= h + 2; ++ky)
    for (int kx = -5; kx <= w + 4; ++kx)
      for (double fx : fracs) {
        const double s = kx + fx, r = ky + (fx == 0.75 ? 0.3125 : 0.75);
        sx.push_back(s);
        sy.push_back(r);
        at.push_back(make_float2(float(s / w), float(r / h)));
      }
  const int n = int(at.size());
  float2* dat = to_device(at);
  float* out;
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  const cudaTextureAddressMode modes[] = {cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror,
                                          cudaAddressModeBorder};
  const char* mode_names[] = {"wrap", "clamp", "mirror", "border"};
  for (int m = 0; m < 4; ++m)
    for (int linear = 0; linear < 2; ++linear) {
      const cudaTextureObject_t tx = make_texture(array_resource(arr), modes[m],
                                                  linear ? cudaFilterModeLinear : cudaFilterModePoint, true);
      k_sample_2d<<<blocks(n), 128>>>(tx, dat, n, out);
      CUDA_CHECK(cudaGetLastError());
      const auto got = to_host(out, n);
      const std::string name = std::string("tex2D ") + (linear ? "linear " : "point ") + mode_names[m];
      for (int i = 0; i < n; ++i)
        near(name.c_str(), conf_fmt("texel coordinates (%g, %g)", sx[i], sy[i]), got[i],
             ref_2d(t, w, h, sx[i], sy[i], modes[m], linear), linear ? kBlendTolerance : 0);
      CUDA_CHECK(cudaDestroyTextureObject(tx));
    }

  // Unnormalized coordinates, by hand: texel centres read the texel; halfway between two centres
  // reads their mean; beyond the edge, clamp reads the edge texel.
  const cudaTextureObject_t tu = make_texture(array_resource(arr), cudaAddressModeClamp, cudaFilterModeLinear, false);
  const std::vector<float2> hand = {{2.5f, 1.5f}, {3.0f, 1.5f}, {2.5f, 2.0f}, {-4.0f, 0.5f}, {20.0f, 3.5f}};
  const double expect[] = {4 + 10, (4 + 9) / 2.0 + 10, 4 + 15, 0, 49 + 30};
  float2* dhand = to_device(hand);
  k_sample_2d<<<1, 32>>>(tu, dhand, int(hand.size()), out);
  CUDA_CHECK(cudaGetLastError());
  const auto got = to_host(out, hand.size());
  for (size_t i = 0; i < hand.size(); ++i)
    near("tex2D linear clamp unnormalized", conf_fmt("(%g, %g)", hand[i].x, hand[i].y), got[i], expect[i],
         kBlendTolerance);

  // tex2Dgather (tld4): the four texels of the bilinear footprint, counter-clockwise from the
  // lower left (the PTX ISA): (i, j+1), (i+1, j+1), (i+1, j), (i, j).
  const std::vector<float2> corners = {{3.0f, 2.0f}, {0.25f, 0.25f}, {7.75f, 1.0f}};
  const int foot[3][2] = {{2, 1}, {-1, -1}, {7, 0}};  // (i, j) of each
  float2* dcorners = to_device(corners);
  float4* g4;
  CUDA_CHECK(cudaMalloc(&g4, corners.size() * sizeof(float4)));
  k_gather<<<1, 32>>>(tu, dcorners, int(corners.size()), g4);
  CUDA_CHECK(cudaGetLastError());
  const auto gathered = to_host(g4, corners.size());
  for (size_t k = 0; k < corners.size(); ++k) {
    auto texel = [&](int xi, int yj) {  // clamp addressing
      xi = xi < 0 ? 0 : xi >= w ? w - 1 : xi;
      yj = yj < 0 ? 0 : yj >= h ? h - 1 : yj;
      return double(t[yj * w + xi]);
    };
    const int i = foot[k][0], j = foot[k][1];
    const double e[4] = {texel(i, j + 1), texel(i + 1, j + 1), texel(i + 1, j), texel(i, j)};
    const float g[4] = {gathered[k].x, gathered[k].y, gathered[k].z, gathered[k].w};
    for (int c = 0; c < 4; ++c)
      near("tex2Dgather", conf_fmt("(%g, %g) texel %d", corners[k].x, corners[k].y, c), g[c], e[c], 0);
  }
  CUDA_CHECK(cudaFree(dcorners));
  CUDA_CHECK(cudaFree(g4));

  int* q;
  CUDA_CHECK(cudaMalloc(&q, 2 * sizeof(int)));
  k_query<<<1, 1>>>(tu, q);
  CUDA_CHECK(cudaGetLastError());
  const auto dims = to_host(q, 2);
  conf_check("txq.width", "8 x 4 array", dims[0], w);
  conf_check("txq.height", "8 x 4 array", dims[1], h);
  CUDA_CHECK(cudaDestroyTextureObject(tu));
  CUDA_CHECK(cudaFree(q));
  CUDA_CHECK(cudaFree(dhand));
  CUDA_CHECK(cudaFree(dat));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFreeArray(arr));
}

// The 9-bit weight: between texels 0 and 1 the result is the weight itself, a multiple of 1/256
// within 1/256 of the exact fraction.
void weight_precision() {
  const std::vector<float> t = {0.0f, 1.0f};
  cudaArray_t arr;
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  CUDA_CHECK(cudaMallocArray(&arr, &desc, 2, 0));
  CUDA_CHECK(cudaMemcpy2DToArray(arr, 0, 0, t.data(), 8, 8, 1, cudaMemcpyHostToDevice));
  const cudaTextureObject_t tx = make_texture(array_resource(arr), cudaAddressModeClamp, cudaFilterModeLinear, false);
  std::vector<float> at;
  for (int i = 0; i <= 40; ++i) at.push_back(0.5f + i / 40.0f);  // fractions 0, 0.025, ..., 1
  float* dat = to_device(at);
  float* out;
  CUDA_CHECK(cudaMalloc(&out, at.size() * sizeof(float)));
  k_sample_1d<<<1, 64>>>(tx, dat, int(at.size()), out);
  CUDA_CHECK(cudaGetLastError());
  const auto got = to_host(out, at.size());
  for (size_t i = 0; i < at.size(); ++i) {
    const double exact = at[i] - 0.5;
    const double steps = got[i] * 256.0;
    const bool ok = std::fabs(got[i] - exact) <= 1.0 / 256 + 1e-7 && steps == std::floor(steps);
    conf_check_text("tex1D linear 9-bit weight", conf_fmt("x = %.6f", at[i]).s, ok, conf_fmt("%.9g", got[i]).s,
                    conf_fmt("a multiple of 1/256 within 1/256 of %.6f", exact).s);
  }
  CUDA_CHECK(cudaDestroyTextureObject(tx));
  CUDA_CHECK(cudaFree(dat));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFreeArray(arr));
}

// uchar4 read as normalized floats (v / 255), point and linear; signed char (v / 127, at least
// -1); int elements read as they are.
void element_types() {
  constexpr int w = 4, h = 2;
  std::vector<uchar4> c(w * h);
  for (int i = 0; i < w * h; ++i)
    c[i] = make_uchar4(uint8_t(i * 37), uint8_t(255 - i * 11), uint8_t(i == 0 ? 255 : 0), uint8_t(i * 5 + 1));
  cudaArray_t arr;
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<uchar4>();
  CUDA_CHECK(cudaMallocArray(&arr, &desc, w, h));
  CUDA_CHECK(cudaMemcpy2DToArray(arr, 0, 0, c.data(), w * 4, w * 4, h, cudaMemcpyHostToDevice));
  float4* out;
  CUDA_CHECK(cudaMalloc(&out, 16 * sizeof(float4)));
  std::vector<float2> at;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) at.push_back(make_float2(x + 0.5f, y + 0.5f));
  at.push_back(make_float2(1.0f, 0.5f));  // halfway between texels 0 and 1 of row 0
  float2* dat = to_device(at);
  for (int linear = 0; linear < 2; ++linear) {
    const cudaTextureObject_t tx = make_texture(array_resource(arr), cudaAddressModeClamp,
                                                linear ? cudaFilterModeLinear : cudaFilterModePoint, false,
                                                cudaReadModeNormalizedFloat);
    k_sample_uchar4<<<1, 32>>>(tx, dat, int(at.size()), out);
    CUDA_CHECK(cudaGetLastError());
    const auto got = to_host(out, at.size());
    for (size_t i = 0; i < at.size(); ++i) {
      // The last coordinate lies on the edge between texels 0 and 1: point sampling reads
      // texel 1, linear filtering their mean.
      const bool edge = i == size_t(w * h);
      const uchar4 a = c[edge ? (linear ? 0 : 1) : i], b = c[edge ? 1 : i];
      const double wa = edge && linear ? 0.5 : 1.0, wb = 1 - wa;
      const float g[4] = {got[i].x, got[i].y, got[i].z, got[i].w};
      const int ea[4] = {a.x, a.y, a.z, a.w}, eb[4] = {b.x, b.y, b.z, b.w};
      for (int ch = 0; ch < 4; ++ch)
        near(linear ? "tex2D<float4> uchar4 normalized linear" : "tex2D<float4> uchar4 normalized point",
             conf_fmt("(%g, %g) channel %d", at[i].x, at[i].y, ch), g[ch], (wa * ea[ch] + wb * eb[ch]) / 255.0,
             linear ? 1.0 / 512 : 1e-6);
    }
    CUDA_CHECK(cudaDestroyTextureObject(tx));
  }
  CUDA_CHECK(cudaFreeArray(arr));

  const std::vector<signed char> sc = {-128, -127, -64, 0, 1, 64, 127};
  cudaArray_t sarr;
  const cudaChannelFormatDesc sdesc = cudaCreateChannelDesc<signed char>();
  CUDA_CHECK(cudaMallocArray(&sarr, &sdesc, sc.size(), 0));
  CUDA_CHECK(cudaMemcpy2DToArray(sarr, 0, 0, sc.data(), sc.size(), sc.size(), 1, cudaMemcpyHostToDevice));
  const cudaTextureObject_t ts = make_texture(array_resource(sarr), cudaAddressModeClamp, cudaFilterModePoint, false,
                                              cudaReadModeNormalizedFloat);
  std::vector<float> sat;
  for (size_t i = 0; i < sc.size(); ++i) sat.push_back(i + 0.5f);
  float* dsat = to_device(sat);
  float* sout;
  CUDA_CHECK(cudaMalloc(&sout, sat.size() * sizeof(float)));
  k_sample_1d<<<1, 32>>>(ts, dsat, int(sat.size()), sout);
  CUDA_CHECK(cudaGetLastError());
  const auto sgot = to_host(sout, sat.size());
  for (size_t i = 0; i < sc.size(); ++i)
    near("tex1D<float> signed char normalized", conf_fmt("%d", sc[i]), sgot[i], std::max(sc[i] / 127.0, -1.0), 1e-6);
  CUDA_CHECK(cudaDestroyTextureObject(ts));
  CUDA_CHECK(cudaFreeArray(sarr));
  CUDA_CHECK(cudaFree(dsat));
  CUDA_CHECK(cudaFree(sout));

  // int elements, point sampling at texel centres and outside (clamped).
  std::vector<int> iv(w * h);
  for (int i = 0; i < w * h; ++i) iv[i] = (i - 3) * 1000003;
  cudaArray_t iarr;
  const cudaChannelFormatDesc idesc = cudaCreateChannelDesc<int>();
  CUDA_CHECK(cudaMallocArray(&iarr, &idesc, w, h));
  CUDA_CHECK(cudaMemcpyToArray(iarr, 0, 0, iv.data(), iv.size() * sizeof(int), cudaMemcpyHostToDevice));
  const cudaTextureObject_t ti = make_texture(array_resource(iarr), cudaAddressModeClamp, cudaFilterModePoint, false);
  std::vector<float2> iat = at;
  iat.back() = make_float2(-3.0f, 7.0f);  // clamps to (0, h - 1)
  float2* diat = to_device(iat);
  int* iout;
  CUDA_CHECK(cudaMalloc(&iout, iat.size() * sizeof(int)));
  k_sample_int<<<1, 32>>>(ti, diat, int(iat.size()), iout);
  CUDA_CHECK(cudaGetLastError());
  const auto igot = to_host(iout, iat.size());
  for (size_t i = 0; i < iat.size(); ++i)
    conf_check("tex2D<int>", conf_fmt("(%g, %g)", iat[i].x, iat[i].y), igot[i], i < iv.size() ? iv[i] : iv[(h - 1) * w]);
  CUDA_CHECK(cudaDestroyTextureObject(ti));
  CUDA_CHECK(cudaFreeArray(iarr));
  CUDA_CHECK(cudaFree(diat));
  CUDA_CHECK(cudaFree(iout));
  CUDA_CHECK(cudaFree(dat));
  CUDA_CHECK(cudaFree(out));
}

// Pitched linear memory (cudaMallocPitch) as a 2D texture, wrap addressing, point sampling.
void pitch2d() {
  constexpr int w = 5, h = 3;
  float* d;
  size_t pitch;
  CUDA_CHECK(cudaMallocPitch(&d, &pitch, w * sizeof(float), h));
  std::vector<float> t(w * h);
  for (int i = 0; i < w * h; ++i) t[i] = 1.5f * i;
  CUDA_CHECK(cudaMemcpy2D(d, pitch, t.data(), w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
  cudaResourceDesc r{};
  r.resType = cudaResourceTypePitch2D;
  r.res.pitch2D.devPtr = d;
  r.res.pitch2D.desc = cudaCreateChannelDesc<float>();
  r.res.pitch2D.width = w;
  r.res.pitch2D.height = h;
  r.res.pitch2D.pitchInBytes = pitch;
  const cudaTextureObject_t tx = make_texture(r, cudaAddressModeWrap, cudaFilterModePoint, true);
  std::vector<float2> at;
  std::vector<double> sx, sy;
  for (int y = -1; y <= h; ++y)
    for (int x = -2; x <= w + 1; ++x) {
      sx.push_back(x + 0.5);
      sy.push_back(y + 0.5);
      at.push_back(make_float2(float((x + 0.5) / w), float((y + 0.5) / h)));
    }
  float2* dat = to_device(at);
  float* out;
  CUDA_CHECK(cudaMalloc(&out, at.size() * sizeof(float)));
  k_sample_2d<<<1, 64>>>(tx, dat, int(at.size()), out);
  CUDA_CHECK(cudaGetLastError());
  const auto got = to_host(out, at.size());
  for (size_t i = 0; i < at.size(); ++i)
    near("tex2D pitch2D point wrap", conf_fmt("texel coordinates (%g, %g)", sx[i], sy[i]), got[i],
         ref_2d(t, w, h, sx[i], sy[i], cudaAddressModeWrap, false), 0);
  CUDA_CHECK(cudaDestroyTextureObject(tx));
  CUDA_CHECK(cudaFree(dat));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(d));
}

// A 3D array filled with cudaMemcpy3D: point samples at texel centres, and a trilinear sample at a
// texel corner (the mean of the eight texels around it). A layered 2D array: each layer on its own.
void volumes() {
  constexpr int w = 4, h = 3, dpt = 2;
  std::vector<float> v(w * h * dpt);
  for (int i = 0; i < w * h * dpt; ++i) v[i] = float(i * i % 17);
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  for (int layered = 0; layered < 2; ++layered) {
    cudaArray_t arr;
    CUDA_CHECK(cudaMalloc3DArray(&arr, &desc, make_cudaExtent(w, h, dpt), layered ? cudaArrayLayered : 0));
    cudaMemcpy3DParms p{};
    p.srcPtr = make_cudaPitchedPtr(v.data(), w * sizeof(float), w, h);
    p.dstArray = arr;
    p.extent = make_cudaExtent(w, h, dpt);
    p.kind = cudaMemcpyHostToDevice;
    CUDA_CHECK(cudaMemcpy3D(&p));
    std::vector<float4> at;
    std::vector<double> expect;
    for (int z = 0; z < dpt; ++z)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          at.push_back(make_float4(x + 0.5f, y + 0.5f, layered ? float(z) : z + 0.5f, 0));
          expect.push_back(v[(z * h + y) * w + x]);
        }
    float4* dat = to_device(at);
    float* out;
    CUDA_CHECK(cudaMalloc(&out, (at.size() + 1) * sizeof(float)));
    const cudaTextureObject_t tx = make_texture(array_resource(arr), cudaAddressModeClamp, cudaFilterModePoint, false);
    if (layered) k_sample_layered<<<1, 32>>>(tx, dat, int(at.size()), out);
    else k_sample_3d<<<1, 32>>>(tx, dat, int(at.size()), out);
    CUDA_CHECK(cudaGetLastError());
    const auto got = to_host(out, at.size());
    for (size_t i = 0; i < at.size(); ++i)
      near(layered ? "tex2DLayered point" : "tex3D point", conf_fmt("(%g, %g, %g)", at[i].x, at[i].y, at[i].z),
           got[i], expect[i], 0);
    CUDA_CHECK(cudaDestroyTextureObject(tx));
    if (!layered) {
      const cudaTextureObject_t tl = make_texture(array_resource(arr), cudaAddressModeClamp, cudaFilterModeLinear, false);
      const std::vector<float4> corner = {make_float4(2.0f, 1.0f, 1.0f, 0)};
      float4* dc = to_device(corner);
      k_sample_3d<<<1, 1>>>(tl, dc, 1, out);
      CUDA_CHECK(cudaGetLastError());
      double mean = 0;
      for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 2; ++y)
          for (int x = 1; x < 3; ++x) mean += v[(z * h + y) * w + x] / 8.0;
      near("tex3D linear", conf_fmt("(2, 1, 1)"), to_host(out, 1)[0], mean, kBlendTolerance);
      CUDA_CHECK(cudaDestroyTextureObject(tl));
      CUDA_CHECK(cudaFree(dc));
    }
    // The array reads back through cudaMemcpy3D as written.
    std::vector<float> back(v.size(), -1.0f);
    cudaMemcpy3DParms b{};
    b.srcArray = arr;
    b.dstPtr = make_cudaPitchedPtr(back.data(), w * sizeof(float), w, h);
    b.extent = make_cudaExtent(w, h, dpt);
    b.kind = cudaMemcpyDeviceToHost;
    CUDA_CHECK(cudaMemcpy3D(&b));
    conf_check("cudaMemcpy3D from an array", layered ? "layered" : "3D", back == v, true);
    CUDA_CHECK(cudaFree(dat));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFreeArray(arr));
  }
}

}  // namespace

int main() {
  conf_require_device();
  linear_fetch();
  filtering_2d();
  weight_precision();
  element_types();
  pitch2d();
  volumes();
  return conf_finish("textures");
}
