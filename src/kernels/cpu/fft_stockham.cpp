// The Stockham FFT (Note [Stockham FFT] in fft_stockham.h).

#include "kernels/cpu/fft_stockham.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <string>
#include <vector>

namespace bp::kernels::fft {
namespace {

// Plain complex arithmetic (std::complex's operator* checks for NaNs and
// infinities through a library call unless compiled with -ffast-math).
template <class T>
struct C {
  T re, im;
};
template <class T>
inline C<T> operator+(C<T> a, C<T> b) { return {a.re + b.re, a.im + b.im}; }
template <class T>
inline C<T> operator-(C<T> a, C<T> b) { return {a.re - b.re, a.im - b.im}; }
template <class T>
inline C<T> operator*(C<T> a, C<T> b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
template <class T>
inline C<T> scaled(C<T> a, T s) { return {a.re * s, a.im * s}; }
// a times i s.
template <class T>
inline C<T> times_i(C<T> a, T s) { return {-s * a.im, s * a.re}; }

// exp(sign 2 pi i k / n), k reduced mod n first so the angle stays exact.
template <class T>
C<T> root(int64_t k, int64_t n, int sign) {
  k %= n;
  if (k < 0) k += n;
  const double a = sign * 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
  return {static_cast<T>(std::cos(a)), static_cast<T>(std::sin(a))};
}

constexpr int kRadices[] = {4, 2, 3, 5, 7, 11, 13};
constexpr int kMaxRadix = 13;
// Columns transformed together when a dim is not the last (and the widest
// block of a dim that is run in place).
constexpr int64_t kColumns = 16;
// Below this many elements a call runs on one thread.
constexpr int64_t kParallelElements = int64_t{1} << 16;
// Per element type, the cache is emptied when a new plan would take it past
// either bound; a thread keeps at most kKeptScratchBytes of scratch between calls.
constexpr std::size_t kMaxPlans = 64;
constexpr std::size_t kMaxPlanBytes = std::size_t{64} << 20;
constexpr std::size_t kKeptScratchBytes = std::size_t{4} << 20;

template <class T>
struct Plan {
  struct Pass {
    int r;
    int64_t m;            // L / r
    std::size_t tw, ro;   // offsets of its m (r - 1) twiddles and (generic radix) its r roots
  };
  int64_t n = 1;
  int sign = -1;
  std::vector<Pass> passes;
  std::vector<C<T>> tw, roots;
  // Bluestein (conv > 0): the chirp, the transformed kernel (divided by conv)
  // and the power-of-two plans of the convolution.
  int64_t conv = 0;
  std::vector<C<T>> chirp, kernel;
  std::shared_ptr<const Plan> fwd, bwd;

  // Scratch elements execute() needs for lines V columns wide.
  int64_t scratch(int64_t V) const { return (conv > 0 ? 2 * conv : n) * V; }
  // The bytes of its tables (a Bluestein plan's sub-plans are cached apart).
  std::size_t bytes() const { return (tw.size() + roots.size() + chirp.size() + kernel.size()) * sizeof(C<T>); }
};

template <class T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, int sign);

template <class T>
void pass2(const C<T>* __restrict x, C<T>* __restrict y, int64_t m, int64_t S, const C<T>* w) {
  for (int64_t p = 0; p < m; ++p) {
    const C<T> w1 = w[p];
    const C<T>* a = x + p * S;
    C<T>* b = y + 2 * p * S;
    for (int64_t u = 0; u < S; ++u) {
      const C<T> a0 = a[u], a1 = a[m * S + u];
      b[u] = a0 + a1;
      b[S + u] = (a0 - a1) * w1;
    }
  }
}

template <class T>
void pass3(const C<T>* __restrict x, C<T>* __restrict y, int64_t m, int64_t S, const C<T>* w, int sign) {
  const T half = T(-0.5), s3 = static_cast<T>(sign * 0.86602540378443864676);
  for (int64_t p = 0; p < m; ++p) {
    const C<T> w1 = w[2 * p], w2 = w[2 * p + 1];
    const C<T>* a = x + p * S;
    C<T>* b = y + 3 * p * S;
    for (int64_t u = 0; u < S; ++u) {
      const C<T> a0 = a[u], a1 = a[m * S + u], a2 = a[2 * m * S + u];
      const C<T> t = a1 + a2, d = times_i(a1 - a2, s3), base = a0 + scaled(t, half);
      b[u] = a0 + t;
      b[S + u] = (base + d) * w1;
      b[2 * S + u] = (base - d) * w2;
    }
  }
}

template <class T>
void pass4(const C<T>* __restrict x, C<T>* __restrict y, int64_t m, int64_t S, const C<T>* w, int sign) {
  const T s = static_cast<T>(sign);
  for (int64_t p = 0; p < m; ++p) {
    const C<T> w1 = w[3 * p], w2 = w[3 * p + 1], w3 = w[3 * p + 2];
    const C<T>* a = x + p * S;
    C<T>* b = y + 4 * p * S;
    for (int64_t u = 0; u < S; ++u) {
      const C<T> a0 = a[u], a1 = a[m * S + u], a2 = a[2 * m * S + u], a3 = a[3 * m * S + u];
      const C<T> t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = times_i(a1 - a3, s);
      b[u] = t0 + t2;
      b[S + u] = (t1 + t3) * w1;
      b[2 * S + u] = (t0 - t2) * w2;
      b[3 * S + u] = (t1 - t3) * w3;
    }
  }
}

template <class T>
void pass5(const C<T>* __restrict x, C<T>* __restrict y, int64_t m, int64_t S, const C<T>* w, int sign) {
  const T c1 = T(0.30901699437494742410), c2 = T(-0.80901699437494742410);
  const T s1 = static_cast<T>(sign * 0.95105651629515357212), s2 = static_cast<T>(sign * 0.58778525229247312917);
  for (int64_t p = 0; p < m; ++p) {
    const C<T> w1 = w[4 * p], w2 = w[4 * p + 1], w3 = w[4 * p + 2], w4 = w[4 * p + 3];
    const C<T>* a = x + p * S;
    C<T>* b = y + 5 * p * S;
    for (int64_t u = 0; u < S; ++u) {
      const C<T> a0 = a[u], a1 = a[m * S + u], a2 = a[2 * m * S + u], a3 = a[3 * m * S + u], a4 = a[4 * m * S + u];
      const C<T> t1 = a1 + a4, t2 = a2 + a3, t3 = a1 - a4, t4 = a2 - a3;
      const C<T> m1 = a0 + scaled(t1, c1) + scaled(t2, c2), m2 = a0 + scaled(t1, c2) + scaled(t2, c1);
      const C<T> n1 = times_i(scaled(t3, s1) + scaled(t4, s2), T(1)), n2 = times_i(scaled(t3, s2) - scaled(t4, s1), T(1));
      b[u] = a0 + t1 + t2;
      b[S + u] = (m1 + n1) * w1;
      b[2 * S + u] = (m2 + n2) * w2;
      b[3 * S + u] = (m2 - n2) * w3;
      b[4 * S + u] = (m1 - n1) * w4;
    }
  }
}

// Any other odd prime radix r <= kMaxRadix (7, 11, 13), by its r x r DFT matrix.
template <class T>
void pass_generic(const C<T>* __restrict x, C<T>* __restrict y, int r, int64_t m, int64_t S, const C<T>* w, const C<T>* roots) {
  C<T> a[kMaxRadix];
  for (int64_t p = 0; p < m; ++p) {
    const C<T>* in = x + p * S;
    C<T>* b = y + r * p * S;
    for (int64_t u = 0; u < S; ++u) {
      for (int j = 0; j < r; ++j) a[j] = in[j * m * S + u];
      for (int k = 0; k < r; ++k) {
        C<T> sum = a[0];
        for (int j = 1, jk = k; j < r; ++j, jk = (jk + k) % r) sum = sum + a[j] * roots[jk];
        b[k * S + u] = k == 0 ? sum : sum * w[p * (r - 1) + k - 1];
      }
    }
  }
}

// Transforms x ([n, V], dense) in place; `work` holds plan.scratch(V) elements.
template <class T>
void execute(const Plan<T>& plan, C<T>* x, C<T>* work, int64_t V) {
  if (plan.conv > 0) {
    const int64_t n = plan.n, m = plan.conv;
    C<T>* a = work;
    C<T>* sub = work + m * V;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t v = 0; v < V; ++v) a[k * V + v] = x[k * V + v] * plan.chirp[k];
    std::fill(a + n * V, a + m * V, C<T>{0, 0});
    execute(*plan.fwd, a, sub, V);
    for (int64_t k = 0; k < m; ++k)
      for (int64_t v = 0; v < V; ++v) a[k * V + v] = a[k * V + v] * plan.kernel[k];
    execute(*plan.bwd, a, sub, V);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t v = 0; v < V; ++v) x[k * V + v] = a[k * V + v] * plan.chirp[k];
    return;
  }
  C<T>* src = x;
  C<T>* dst = work;
  int64_t S = V;
  for (const auto& ps : plan.passes) {
    const C<T>* w = plan.tw.data() + ps.tw;
    switch (ps.r) {
      case 2: pass2(src, dst, ps.m, S, w); break;
      case 3: pass3(src, dst, ps.m, S, w, plan.sign); break;
      case 4: pass4(src, dst, ps.m, S, w, plan.sign); break;
      case 5: pass5(src, dst, ps.m, S, w, plan.sign); break;
      default: pass_generic(src, dst, ps.r, ps.m, S, w, plan.roots.data() + ps.ro); break;
    }
    std::swap(src, dst);
    S *= ps.r;
  }
  if (src != x) std::copy(src, src + plan.n * V, x);
}

// The passes' radices of n, and in `rest` what they leave (1: no Bluestein).
std::vector<int> factor(int64_t n, int64_t& rest) {
  std::vector<int> radices;
  rest = n;
  for (int r : kRadices)
    while (rest % r == 0) radices.push_back(r), rest /= r;
  return radices;
}

int64_t convolution_length(int64_t n) {
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  return m;
}

template <class T>
std::shared_ptr<const Plan<T>> make_plan(int64_t n, int sign) {
  auto plan = std::make_shared<Plan<T>>();
  plan->n = n;
  plan->sign = sign;
  int64_t rest = 1;
  const std::vector<int> radices = factor(n, rest);
  if (rest == 1) {
    int64_t L = n;
    for (int r : radices) {
      const int64_t m = L / r;
      typename Plan<T>::Pass ps{r, m, plan->tw.size(), plan->roots.size()};
      for (int64_t p = 0; p < m; ++p)
        for (int k = 1; k < r; ++k) plan->tw.push_back(root<T>(p * k, L, sign));
      if (r > 5)
        for (int k = 0; k < r; ++k) plan->roots.push_back(root<T>(k, r, sign));
      plan->passes.push_back(ps);
      L = m;
    }
    return plan;
  }
  // Bluestein: chirp[k] = exp(sign pi i k^2 / n) = root(k^2 mod 2n, 2n).
  const int64_t m = convolution_length(n);
  plan->conv = m;
  plan->fwd = get_plan<T>(m, -1);
  plan->bwd = get_plan<T>(m, +1);
  std::vector<C<double>> b(static_cast<std::size_t>(m), C<double>{0, 0});
  for (int64_t k = 0; k < n; ++k) {
    const int64_t k2 = (k * k) % (2 * n);
    const C<double> c = root<double>(k2, 2 * n, sign);
    plan->chirp.push_back({static_cast<T>(c.re), static_cast<T>(c.im)});
    b[k] = b[(m - k) % m] = {c.re, -c.im};
  }
  // The kernel's transform in double precision, divided by m.
  const auto dplan = get_plan<double>(m, -1);
  std::vector<C<double>> work(static_cast<std::size_t>(dplan->scratch(1)));
  execute(*dplan, b.data(), work.data(), 1);
  for (const C<double>& v : b) plan->kernel.push_back({static_cast<T>(v.re / m), static_cast<T>(v.im / m)});
  return plan;
}

template <class T>
struct Cache {
  std::mutex mutex;
  std::map<std::pair<int64_t, int>, std::shared_ptr<const Plan<T>>> plans;
  std::size_t bytes = 0;
  static Cache& get() {
    static Cache c;
    return c;
  }
};

template <class T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, int sign) {
  auto& cache = Cache<T>::get();
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    const auto it = cache.plans.find({n, sign});
    if (it != cache.plans.end()) return it->second;
  }
  auto plan = make_plan<T>(n, sign);  // outside the lock: Bluestein's plan asks for others
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (cache.plans.size() >= kMaxPlans || cache.bytes + plan->bytes() > kMaxPlanBytes) {
    cache.plans.clear();
    cache.bytes = 0;
  }
  if (cache.plans.emplace(std::make_pair(n, sign), plan).second) cache.bytes += plan->bytes();
  return plan;
}

// A thread's scratch, grown as needed; kept between calls up to kKeptScratchBytes.
template <class T>
std::vector<C<T>>& thread_buffer() {
  thread_local std::vector<C<T>> buffer;
  return buffer;
}
template <class T>
C<T>* scratch(std::size_t elements) {
  auto& buffer = thread_buffer<T>();
  if (buffer.size() < elements) buffer.resize(elements);
  return buffer.data();
}
template <class T>
void trim_scratch() {
  auto& buffer = thread_buffer<T>();
  if (buffer.size() * sizeof(C<T>) > kKeptScratchBytes) std::vector<C<T>>().swap(buffer);
}

}  // namespace

template <class T>
void dft_lines(std::complex<T>* data, int64_t outer, int64_t n, int64_t inner, int sign, int threads) {
  if (n <= 1 || outer <= 0 || inner <= 0) return;
  const auto plan = get_plan<T>(n, sign);
  C<T>* d = reinterpret_cast<C<T>*>(data);
  // Up to kColumns columns: each [n, inner] slab in place; more: gathered
  // kColumns at a time into a dense block.
  const bool in_place = inner <= kColumns;
  const int64_t width = std::min(inner, kColumns);
  const int64_t per_outer = in_place ? 1 : (inner + width - 1) / width;
  const int64_t tasks = outer * per_outer;
  const bool parallel = threads > 1 && tasks > 1 && outer * n * inner >= kParallelElements;
  (void)parallel;
#pragma omp parallel num_threads(threads) if (parallel)
  {
    const int64_t need = plan->scratch(width);
    C<T>* work = scratch<T>(static_cast<std::size_t>(need + (in_place ? 0 : n * width)));
    C<T>* block = work + need;
#pragma omp for schedule(static)
    for (int64_t t = 0; t < tasks; ++t) {
      C<T>* base = d + (t / per_outer) * n * inner;
      if (in_place) {
        execute(*plan, base, work, inner);
        continue;
      }
      const int64_t c0 = (t % per_outer) * width, w = std::min(width, inner - c0);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t c = 0; c < w; ++c) block[k * w + c] = base[k * inner + c0 + c];
      execute(*plan, block, work, w);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t c = 0; c < w; ++c) base[k * inner + c0 + c] = block[k * w + c];
    }
    trim_scratch<T>();
  }
}

template void dft_lines<float>(std::complex<float>*, int64_t, int64_t, int64_t, int, int);
template void dft_lines<double>(std::complex<double>*, int64_t, int64_t, int64_t, int, int);

std::string describe(int64_t n) {
  int64_t rest = 1;
  const std::vector<int> radices = factor(n, rest);
  if (rest != 1)
    return std::to_string(n) + " points by Bluestein (a prime factor above " + std::to_string(kMaxRadix) +
           "): a convolution of " + std::to_string(convolution_length(n)) + " points";
  std::string text = std::to_string(n) + " points in passes of radix ";
  for (std::size_t i = 0; i < radices.size(); ++i) text += (i ? "x" : "") + std::to_string(radices[i]);
  return radices.empty() ? std::to_string(n) + " point: nothing to do" : text;
}

int64_t cached_plans() {
  int64_t total = 0;
  {
    std::lock_guard<std::mutex> lock(Cache<float>::get().mutex);
    total += static_cast<int64_t>(Cache<float>::get().plans.size());
  }
  std::lock_guard<std::mutex> lock(Cache<double>::get().mutex);
  return total + static_cast<int64_t>(Cache<double>::get().plans.size());
}

}  // namespace bp::kernels::fft
