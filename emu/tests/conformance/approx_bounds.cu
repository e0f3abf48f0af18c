// The approximate f32 instructions against the error bounds the PTX ISA states for them, on
// many inputs each (PTX ISA 9.1, "Floating Point Instructions": rcp, sqrt, rsqrt, ex2, lg2, sin,
// cos, tanh, div):
//   rcp.approx.f32    at most 1 ulp from the exact reciprocal
//   sqrt.approx.f32   relative error at most 2^-23 over the positive finite range
//   rsqrt.approx.f32  relative error at most 2^-22.9
//   ex2.approx.f32    at most 2 ulp from the correctly rounded result
//   lg2.approx.f32    absolute error 2^-22 for inputs in (0.5, 2), relative 2^-22 elsewhere
//   sin/cos.approx.f32  absolute error 2^-20.5 on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi]
//   tanh.approx.f32   relative error 2^-11 (ISA 9.1; earlier texts 2^-10.987, the looser, used)
//   div.approx.f32    at most 2 ulp for |b| in [2^-126, 2^126]; for 2^126 < |b| < 2^128 a
//                     sign-preserving zero, or NaN when a is infinite
//   div.full.f32      at most 2 ulp over the full range
// and the special inputs of each page's table exactly (infinities, zeros, NaN), with .ftz
// flushing subnormal inputs and results to sign-preserving zero and tanh passing subnormal
// inputs through.
//
// Run without arguments (on a GPU, or under the emulator's default) it checks only that: each
// result within its bound. `--mode up|down|random|exact` checks in addition where in the bound
// each result lies, for a run under GPU100_EMU_APPROX=bound-up, bound-down, bound-random or exact
// (the emulator's error model, CMakeLists.txt): bound-up gives, of the f32 values within the
// bound, the largest (ex2: 2 steps above the correctly rounded result), bound-down the smallest,
// bound-random one of the two (both sides must occur), exact the exact value rounded to nearest.
// Results clipped to the function's range (|sin|, |cos|, |tanh| <= 1) count as at the edge; an
// exactly zero quotient stays zero, and with .ftz a result that rounds to a normal value stays
// normal.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "conf_common.h"

namespace {

enum Op {
  RCP, RCP_FTZ, SQRT, SQRT_FTZ, RSQRT, RSQRT_FTZ, EX2, EX2_FTZ, LG2, LG2_FTZ, SIN, SIN_FTZ, COS,
  COS_FTZ, TANH, DIV_APPROX, DIV_APPROX_FTZ, DIV_FULL, DIV_FULL_FTZ, OP_COUNT
};
const char* const kNames[OP_COUNT] = {
    "rcp.approx.f32", "rcp.approx.ftz.f32", "sqrt.approx.f32", "sqrt.approx.ftz.f32",
    "rsqrt.approx.f32", "rsqrt.approx.ftz.f32", "ex2.approx.f32", "ex2.approx.ftz.f32",
    "lg2.approx.f32", "lg2.approx.ftz.f32", "sin.approx.f32", "sin.approx.ftz.f32",
    "cos.approx.f32", "cos.approx.ftz.f32", "tanh.approx.f32", "div.approx.f32",
    "div.approx.ftz.f32", "div.full.f32", "div.full.ftz.f32"};

bool is_ftz(int op) {
  return op == RCP_FTZ || op == SQRT_FTZ || op == RSQRT_FTZ || op == EX2_FTZ || op == LG2_FTZ ||
         op == SIN_FTZ || op == COS_FTZ || op == DIV_APPROX_FTZ || op == DIV_FULL_FTZ;
}
bool is_div(int op) { return op >= DIV_APPROX; }

}  // namespace

#define UN(OPC, TEXT) \
  if constexpr (OP == OPC) asm volatile(TEXT " %0, %1;" : "=f"(r) : "f"(x));
#define BIN(OPC, TEXT) \
  if constexpr (OP == OPC) asm volatile(TEXT " %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));

template <int OP>
__global__ void k_approx(const float* a, const float* b, float* d, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = a[i], y = b[i];
  float r = 0;
  UN(RCP, "rcp.approx.f32") UN(RCP_FTZ, "rcp.approx.ftz.f32")
  UN(SQRT, "sqrt.approx.f32") UN(SQRT_FTZ, "sqrt.approx.ftz.f32")
  UN(RSQRT, "rsqrt.approx.f32") UN(RSQRT_FTZ, "rsqrt.approx.ftz.f32")
  UN(EX2, "ex2.approx.f32") UN(EX2_FTZ, "ex2.approx.ftz.f32")
  UN(LG2, "lg2.approx.f32") UN(LG2_FTZ, "lg2.approx.ftz.f32")
  UN(SIN, "sin.approx.f32") UN(SIN_FTZ, "sin.approx.ftz.f32")
  UN(COS, "cos.approx.f32") UN(COS_FTZ, "cos.approx.ftz.f32")
  UN(TANH, "tanh.approx.f32")
  BIN(DIV_APPROX, "div.approx.f32") BIN(DIV_APPROX_FTZ, "div.approx.ftz.f32")
  BIN(DIV_FULL, "div.full.f32") BIN(DIV_FULL_FTZ, "div.full.ftz.f32")
  d[i] = r;
}

// rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 (r: 0 rcp, 1 rsqrt).
__global__ void k_approx_f64(int r, const double* a, double* d, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double y;
  if (r == 0) asm volatile("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(a[i]));
  else asm volatile("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(a[i]));
  d[i] = y;
}

namespace {

using Kernel = void (*)(const float*, const float*, float*, int);
template <int... I>
std::vector<Kernel> kernels(std::integer_sequence<int, I...>) {
  return {&k_approx<I>...};
}

uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
bool subnormal(float f) { return f != 0 && std::fabs(f) < 0x1p-126f; }
float flush(float f) { return subnormal(f) ? std::copysign(0.0f, f) : f; }

double ulp_f32(double y) {  // the spacing of f32 values at |y| (2^-149 among subnormals)
  if (y == 0) return 0x1p-149;
  int e;
  std::frexp(std::fabs(y), &e);  // |y| in [2^(e-1), 2^e)
  return std::ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
}

constexpr double kPi = 3.14159265358979323846;

// The page's table (or, for div.approx, its definition d = a * (1/b) with rcp's table) for a
// special input after .ftz's flush: true with the exact result in *r.
bool special(int op, float a, float b, float* r) {
  if (std::isnan(a) || (is_div(op) && std::isnan(b))) return *r = NAN, true;
  switch (op) {
    case RCP: case RCP_FTZ:
      if (a == 0) return *r = std::copysign(INFINITY, a), true;
      if (std::isinf(a)) return *r = std::copysign(0.0f, a), true;
      return false;
    case SQRT: case SQRT_FTZ:
      if (a == 0 || a == INFINITY) return *r = a, true;
      if (a < 0) return *r = NAN, true;
      return false;
    case RSQRT: case RSQRT_FTZ:
      if (a == 0) return *r = std::copysign(INFINITY, a), true;
      if (a == INFINITY) return *r = 0.0f, true;
      if (a < 0) return *r = NAN, true;
      return false;
    case EX2: case EX2_FTZ:
      if (a == 0) return *r = 1.0f, true;
      if (std::isinf(a)) return *r = a > 0 ? INFINITY : 0.0f, true;
      return false;
    case LG2: case LG2_FTZ:
      if (a == 0) return *r = -INFINITY, true;
      if (a == INFINITY) return *r = INFINITY, true;
      if (a < 0) return *r = NAN, true;
      return false;
    case SIN: case SIN_FTZ: case COS: case COS_FTZ:
      if (std::isinf(a)) return *r = NAN, true;
      if (a == 0) return *r = (op == SIN || op == SIN_FTZ) ? a : 1.0f, true;
      return false;
    case TANH:
      if (std::isinf(a)) return *r = a > 0 ? 1.0f : -1.0f, true;
      if (a == 0 || subnormal(a)) return *r = a, true;  // subnormals pass through
      return false;
    case DIV_APPROX: case DIV_APPROX_FTZ: {
      const float ab = std::fabs(b);
      if (ab < 0x1p-126f && b != 0) return false;  // no bound, no table: not checked
      if (ab > 0x1p126f && std::isfinite(b))
        return *r = std::isinf(a) ? NAN : ((std::signbit(a) != std::signbit(b)) ? -0.0f : 0.0f), true;
      if (b == 0 || std::isinf(b) || a == 0 || std::isinf(a)) {
        const float inv = b == 0 ? std::copysign(INFINITY, b) : std::isinf(b) ? std::copysign(0.0f, b) : 0.0f;
        if (b == 0 || std::isinf(b)) return *r = a * inv, true;  // 0 * Inf is NaN
        return *r = a == 0 ? ((std::signbit(a) != std::signbit(b)) ? -0.0f : 0.0f)
                           : ((std::signbit(a) != std::signbit(b)) ? -INFINITY : INFINITY), true;
      }
      return false;
    }
    default: return false;
  }
}

enum class Kind { none, abs, cr_steps };

// The exact result y and the bound: |got - y| <= *e (Kind::abs), or at most *e f32 steps from y
// rounded to nearest (Kind::cr_steps); Kind::none where the ISA states no bound for the input.
Kind bound(int op, float a, float b, double* y, double* e) {
  const double x = a;
  switch (op) {
    case RCP: case RCP_FTZ:
      *y = 1.0 / x;
      if (std::fabs(*y) > 0x1.fffffep127) return Kind::none;  // overflows f32
      *e = ulp_f32(*y);
      return Kind::abs;
    case SQRT: case SQRT_FTZ: *y = std::sqrt(x); *e = std::ldexp(*y, -23); return Kind::abs;
    case RSQRT: case RSQRT_FTZ: *y = 1.0 / std::sqrt(x); *e = *y * std::exp2(-22.9); return Kind::abs;
    case EX2: case EX2_FTZ:
      *y = std::exp2(x);
      if (*y > 0x1.fffffep127) return Kind::none;
      *e = 2;
      return Kind::cr_steps;
    case LG2: case LG2_FTZ:
      *y = std::log2(x);
      *e = (x > 0.5 && x < 2.0) ? std::ldexp(1.0, -22) : std::ldexp(std::fabs(*y), -22);
      return Kind::abs;
    case SIN: case SIN_FTZ: case COS: case COS_FTZ: {
      *y = (op == SIN || op == SIN_FTZ) ? std::sin(x) : std::cos(x);
      const double ax = std::fabs(x);
      if (ax > 100 * kPi) return Kind::none;  // "no defined error guarantees"
      *e = ax <= 2 * kPi ? std::exp2(-20.5) : std::exp2(-14.7);
      return Kind::abs;
    }
    case TANH: *y = std::tanh(x); *e = std::fabs(*y) * std::exp2(-10.987); return Kind::abs;
    default: {  // div
      *y = x / double(b);
      // div.full's page has no table of special inputs: no check where the quotient is not finite.
      if (!(std::fabs(*y) <= 0x1.fffffep127)) return Kind::none;
      const float ab = std::fabs(b);
      if ((op == DIV_APPROX || op == DIV_APPROX_FTZ) && (ab < 0x1p-126f || ab > 0x1p126f)) return Kind::none;
      *e = 2 * ulp_f32(*y);
      return Kind::abs;
    }
  }
}

// n f32 steps from r (toward +Inf for n > 0), staying finite and on r's side of zero.
float steps(float r, int n) {
  for (; n > 0; --n) {
    const float s = std::nextafter(r, INFINITY);
    if (!std::isfinite(s) || (r < 0 && s == 0)) break;
    r = s;
  }
  for (; n < 0; ++n) {
    const float s = std::nextafter(r, -INFINITY);
    if (!std::isfinite(s) || (r > 0 && s == 0) || r == 0) break;
    r = s;
  }
  return r;
}

// The two edges of the bound: the largest f32 within it (at least y rounded to nearest) and the
// smallest (at most y rounded to nearest). With .ftz, of the values the instruction can return:
// when y rounds to a normal value, an edge among the subnormals is the smallest normal instead.
void edges(Kind k, double y, double e, bool ftz, bool div, float* up, float* down) {
  const float rn = float(y);
  auto normal = [&](float f) {
    return (ftz && std::fabs(rn) >= 0x1p-126f && subnormal(f)) ? std::copysign(0x1p-126f, rn) : f;
  };
  if (div && y == 0) {  // an exactly zero quotient (a = 0) is exact in every mode
    *up = *down = rn;
    return;
  }
  if (k == Kind::cr_steps) {
    *up = normal(steps(rn, int(e)));
    *down = normal(steps(rn, -int(e)));
    return;
  }
  float u = float(y + e);
  if (double(u) > y + e) u = std::nextafter(u, -INFINITY);
  float d = float(y - e);
  if (double(d) < y - e) d = std::nextafter(d, INFINITY);
  *up = normal(u > rn ? u : rn);
  *down = normal(d < rn ? d : rn);
}

bool within(Kind k, double y, double e, float g) {
  if (std::isnan(g)) return false;
  if (k == Kind::cr_steps) {
    const float rn = float(y);
    float lo = steps(rn, -int(e)), hi = steps(rn, int(e));
    return g >= lo && g <= hi;
  }
  return std::fabs(double(g) - y) <= e;
}

// Deterministic inputs.
struct Rng {
  uint64_t s;
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(s >> 33);
  }
  double unit() { return next() / 2147483648.0; }  // [0, 1)
  float uniform(double lo, double hi) { return float(lo + (hi - lo) * unit()); }
  // |x| log-uniform in [2^lo, 2^hi), with a random sign when signed.
  float logu(int lo, int hi, bool sign) {
    const float m = std::ldexp(1.0f + float(next() & 0x7fffff) / 8388608.0f, lo + int(next() % uint32_t(hi - lo)));
    return (sign && (next() & 1)) ? -m : m;
  }
};

std::vector<float> inputs_for(int op, Rng& r, std::vector<float>* second) {
  std::vector<float> a;
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0x1p-149f,
                            -0x1p-149f, 0x1.fffffcp-127f, -0x1.0p-140f, 0x1p-126f, 2.0f, 0.5f};
  if (is_div(op)) {
    auto push = [&](float x, float y) { a.push_back(x); second->push_back(y); };
    for (int i = 0; i < 3000; ++i) push(r.logu(-60, 60, true), r.logu(-60, 60, true));
    for (int i = 0; i < 300; ++i) push(r.uniform(-8, 8), r.uniform(0.5, 2));
    for (int i = 0; i < 200; ++i) push(r.logu(-10, 10, true), r.logu(-126, -100, true));  // quotient near the top
    for (int i = 0; i < 200; ++i) push(r.logu(-30, 30, true), r.logu(100, 126, true));   // quotient small
    for (int i = 0; i < 100; ++i) push(r.logu(-30, 127, true), r.logu(126, 128, true));  // |b| > 2^126 (mostly)
    for (int i = 0; i < 50; ++i) push(r.logu(-149, -127, true), r.logu(-10, 10, true));   // subnormal a
    for (int i = 0; i < 50; ++i) push(r.logu(-10, 10, true), r.logu(-149, -127, true));   // subnormal b
    for (float x : specials)
      for (float y : specials) push(x, y);
    for (float x : specials) push(x, 0x1.8p127f), push(x, -0x1.0p127f);
    return a;
  }
  switch (op) {
    case SIN: case SIN_FTZ: case COS: case COS_FTZ:
      for (int i = 0; i < 2000; ++i) a.push_back(r.uniform(-2 * kPi, 2 * kPi));
      for (int i = 0; i < 1500; ++i) a.push_back(r.uniform(-100 * kPi, 100 * kPi));
      for (int i = 0; i < 300; ++i) a.push_back(r.logu(-30, 1, true));
      break;
    case EX2: case EX2_FTZ:
      for (int i = 0; i < 2000; ++i) a.push_back(r.uniform(-150, 127.9));
      for (int i = 0; i < 1500; ++i) a.push_back(r.uniform(-2, 2));
      for (int i = 0; i < 300; ++i) a.push_back(r.logu(-40, 0, true));
      break;
    case TANH:
      for (int i = 0; i < 2000; ++i) a.push_back(r.uniform(-6, 6));
      for (int i = 0; i < 1500; ++i) a.push_back(r.logu(-126, 5, true));
      break;
    case LG2: case LG2_FTZ:
      for (int i = 0; i < 1500; ++i) a.push_back(r.uniform(0.5, 2));
      for (int i = 0; i < 2000; ++i) a.push_back(r.logu(-149, 128, false));
      for (int i = 0; i < 50; ++i) a.push_back(-r.logu(-20, 20, false));
      break;
    default:  // rcp, sqrt, rsqrt: the whole positive range, negatives too
      for (int i = 0; i < 3000; ++i) a.push_back(r.logu(-149, 128, op == RCP || op == RCP_FTZ));
      for (int i = 0; i < 500; ++i) a.push_back(r.uniform(0.25, 4));
      for (int i = 0; i < 50; ++i) a.push_back(-r.logu(-20, 20, false));
      break;
  }
  for (float x : specials) a.push_back(x);
  second->assign(a.size(), 1.0f);
  return a;
}

enum class Expect { bounds, exact, up, down, random };

// Up to 5 lines of detail per op and check, then one recorded check per op and check.
struct Tally {
  const char* name;
  const char* what;
  int bad = 0, total = 0;
  void add(bool ok, const char* input, float got, const char* want) {
    ++total;
    if (ok) return;
    if (++bad <= 5) std::printf("%s: %s: %s -> got %.9g (0x%08x), expected %s\n", name, what, input, got, bits(got), want);
  }
  void record() {
    conf_check_text(name, what, bad == 0, conf_fmt("%d of %d wrong", bad, total).s, "none wrong");
  }
};

void run_op(int op, Kernel k, Expect expect) {
  Rng rng{0x1234567ull + 977ull * op};
  std::vector<float> b;
  const std::vector<float> a = inputs_for(op, rng, &b);
  const int n = int(a.size());
  float *da = nullptr, *db = nullptr, *dd = nullptr;
  CUDA_CHECK(cudaMalloc(&da, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dd, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  k<<<(n + 127) / 128, 128>>>(da, db, dd, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), dd, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(da));
  CUDA_CHECK(cudaFree(db));
  CUDA_CHECK(cudaFree(dd));

  const char* name = kNames[op];
  const bool ftz = is_ftz(op);
  const bool unit_range = op == SIN || op == SIN_FTZ || op == COS || op == COS_FTZ || op == TANH;
  Tally specials{name, "special inputs (the ISA's table)"}, bounded{name, "within the ISA's bound"},
      edge{name, "at the edge the mode chooses"};
  int ups = 0, downs = 0;
  for (int i = 0; i < n; ++i) {
    const float g = got[i];
    const float x = ftz ? flush(a[i]) : a[i], y = ftz ? flush(b[i]) : b[i];
    const ConfStr in = is_div(op) ? conf_fmt("%a, %a", a[i], b[i]) : conf_fmt("%a", a[i]);
    float sp;
    if (special(op, x, y, &sp)) {
      const bool ok = std::isnan(sp) ? std::isnan(g) : bits(g) == bits(sp);
      specials.add(ok, in.s, g, conf_fmt("%a", sp).s);
      continue;
    }
    double ex = 0, e = 0;
    const Kind kind = bound(op, x, y, &ex, &e);
    if (kind == Kind::none) continue;
    // .ftz: no subnormal result; where the exact result is below 2^-126, zero of its sign too.
    bool ok = within(kind, ex, e, g);
    if (ftz) {
      if (subnormal(g)) ok = false;
      else if (g == 0 && std::fabs(ex) < 0x1p-126 && std::signbit(g) == std::signbit(ex)) ok = true;
    }
    if (unit_range && std::fabs(g) == 1.0f && std::fabs(ex) <= 1 && std::fabs(ex) + e >= 1) ok = true;
    bounded.add(ok, in.s, g, conf_fmt("%.9g, %s %g", ex, kind == Kind::abs ? "error at most" : "steps at most", e).s);
    if (expect == Expect::bounds) continue;
    float up, down;
    edges(kind, ex, e, ftz, is_div(op), &up, &down);
    if (unit_range) {
      up = std::fmin(std::fmax(up, -1.0f), 1.0f);
      down = std::fmin(std::fmax(down, -1.0f), 1.0f);
    }
    const float rn = ftz ? flush(float(ex)) : float(ex);
    if (ftz) { up = flush(up); down = flush(down); }
    bool at = false;
    switch (expect) {
      case Expect::exact: at = bits(g) == bits(rn); break;
      case Expect::up: at = bits(g) == bits(up); break;
      case Expect::down: at = bits(g) == bits(down); break;
      default:
        at = bits(g) == bits(up) || bits(g) == bits(down);
        if (up != down) (bits(g) == bits(up) ? ups : downs) += at;
        break;
    }
    edge.add(at, in.s, g,
             conf_fmt("%a (exact %.9g; up %a, down %a)", expect == Expect::exact ? rn : expect == Expect::down ? down : up,
                      ex, up, down).s);
  }
  specials.record();
  bounded.record();
  if (expect != Expect::bounds) edge.record();
  if (expect == Expect::random)
    conf_check_text(name, "bound-random takes both sides", ups > n / 20 && downs > n / 20,
                    conf_fmt("%d up, %d down", ups, downs).s, conf_fmt("more than %d of each", n / 20).s);
}

// The f64 forms have no error bound in the ISA, only their tables (subnormal inputs flushed,
// NaN inputs to the canonical 0x7fffffff00000000), and rcp's format: only the upper 32 bits of a
// are read, the lower 32 bits of d are zero.
void run_f64() {
  const uint64_t kNaN = 0x7fffffff00000000ull;
  std::vector<uint64_t> in = {0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull,
                              0xfff0000000000000ull, 0x7ff8000000000000ull, 0x0000000000000001ull,
                              0x8000000000000001ull, 0x000fffffffffffffull, 0x800fffffffffffffull};
  const size_t n_special = in.size();
  Rng rng{99};
  for (int i = 0; i < 100; ++i) {  // pairs: the same upper word, different lower words
    const uint64_t upper = (uint64_t(rng.next() % 2046 + 1) << 52) | (uint64_t(rng.next() & 0xfffff) << 32);
    in.push_back(upper | rng.next());
    in.push_back(upper | rng.next());
  }
  const int n = int(in.size());
  double *da = nullptr, *dd = nullptr;
  CUDA_CHECK(cudaMalloc(&da, n * sizeof(double)));
  CUDA_CHECK(cudaMalloc(&dd, n * sizeof(double)));
  CUDA_CHECK(cudaMemcpy(da, in.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  for (int r = 0; r < 2; ++r) {
    const char* name = r == 0 ? "rcp.approx.ftz.f64" : "rsqrt.approx.ftz.f64";
    k_approx_f64<<<(n + 127) / 128, 128>>>(r, da, dd, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<uint64_t> got(n);
    CUDA_CHECK(cudaMemcpy(got.data(), dd, n * sizeof(double), cudaMemcpyDeviceToHost));
    // The tables: -Inf, -subnormal, -0, +0, +subnormal, +Inf, NaN.
    for (size_t i = 0; i < n_special; ++i) {
      const uint64_t a = in[i], sign = a & 0x8000000000000000ull, mag = a & ~0x8000000000000000ull;
      uint64_t want;
      if (mag > 0x7ff0000000000000ull) want = kNaN;
      else if (mag == 0x7ff0000000000000ull) want = r == 0 ? sign : (sign ? kNaN : 0);
      else want = sign | 0x7ff0000000000000ull;  // zero or subnormal
      conf_check_bits(name, conf_fmt("0x%016llx", (unsigned long long)a), got[i], want, 64);
    }
    if (r != 0) continue;
    int low = 0, upper_only = 0;
    for (int i = int(n_special); i < n; ++i) {
      low += (got[i] & 0xffffffffull) != 0;
      // The same upper word gives the same result.
      for (int j = int(n_special); j < i; ++j)
        if ((in[j] >> 32) == (in[i] >> 32) && got[j] != got[i]) ++upper_only;
    }
    conf_check(name, "the lower 32 bits of the result are zero (count of results that are not)", low, 0);
    conf_check(name, "only the upper 32 bits of a are read (count of disagreements)", upper_only, 0);
  }
  CUDA_CHECK(cudaFree(da));
  CUDA_CHECK(cudaFree(dd));
}

}  // namespace

int main(int argc, char** argv) {
  Expect expect = Expect::bounds;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--mode") == 0) {
      const std::string m = argv[i + 1];
      expect = m == "exact" ? Expect::exact : m == "up" ? Expect::up : m == "down" ? Expect::down
             : m == "random" ? Expect::random : Expect::bounds;
      if (expect == Expect::bounds) {
        std::fprintf(stderr, "approx_bounds: --mode exact|up|down|random\n");
        return 2;
      }
    }
  conf_require_device();
  const std::vector<Kernel> ks = kernels(std::make_integer_sequence<int, OP_COUNT>{});
  for (int op = 0; op < OP_COUNT; ++op) run_op(op, ks[op], expect);
  run_f64();
  return conf_finish("approx_bounds");
}
