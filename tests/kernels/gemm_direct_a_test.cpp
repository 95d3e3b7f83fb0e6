// A read in place (Note [GEMM direct A]) and the small-problem path (Note
// [GEMM small problems]) in src/kernels/cpu/gemm.cpp, against a float64
// oracle: row-major A with few B strips (n up to 4 strips, and past it),
// both B layouts (read in place / packed), odd k (the last bf16 pair has no
// partner: the element after it in each row of A is NaN here, so a kernel
// that reads it gives NaN), ragged tiles, alpha and beta, the rounded bf16
// output, and NaN / Inf in the operands. A ends where an inaccessible page
// begins, so a tile that reads rows or elements past it faults.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include "backplane/dtype.h"
#include "backplane/runtime.h"
#include "kernels/cpu/gemm.h"

#include <sys/mman.h>
#include <unistd.h>
#include "kernels/thread_scope.h"

namespace {

namespace kc = bp::kernels::cpu;
using kc::GemmIsa;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// `count` elements of T ending right before a PROT_NONE page.
template <class T>
class Guarded {
 public:
  Guarded(std::size_t count, T fill) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = (count * sizeof(T) + page - 1) / page * page;
    map_bytes_ = bytes + page;
    void* m = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<char*>(m);
    mprotect(base_ + bytes, page, PROT_NONE);
    data_ = reinterpret_cast<T*>(base_ + bytes) - count;
    for (std::size_t i = 0; i < count; ++i) data_[i] = fill;
  }
  ~Guarded() { munmap(base_, map_bytes_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  T& operator[](std::size_t i) { return data_[i]; }
  const T* data() const { return data_; }

 private:
  char* base_ = nullptr;
  std::size_t map_bytes_ = 0;
  T* data_ = nullptr;
};

struct Problem {
  int64_t m, n, k;
  bool b_transposed;  // B column-major: the packed-B tiles with A in place
  float alpha, beta;
};

std::string describe(const Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
         (p.b_transposed ? " B^T" : " B") + " alpha " + std::to_string(p.alpha) + " beta " + std::to_string(p.beta);
}

// Operands as their 16-bit or fp32 storage plus the values (double) the kernel sees.
struct Operands {
  std::vector<double> a, b, c0;    // logical row-major values
  int64_t lda;                     // A's row stride: k + 1, element k of each row is NaN
  std::unique_ptr<Guarded<uint16_t>> a16;  // bf16 storage, A's last row ending at the guard page
  std::unique_ptr<Guarded<float>> a32;     // fp32 storage, likewise
  std::vector<uint16_t> b16;
  std::vector<float> b32;
};

Operands make(const Problem& p, std::mt19937& rng, bool specials) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Operands o;
  o.lda = p.k + 1;
  o.a.resize(p.m * p.k), o.b.resize(p.k * p.n), o.c0.resize(p.m * p.n);
  // The last row has no padding element: it ends at the guard page.
  const std::size_t a_size = static_cast<std::size_t>((p.m - 1) * o.lda + p.k);
  o.a16 = std::make_unique<Guarded<uint16_t>>(a_size,
                                              bp::bfloat16_from_float(std::numeric_limits<float>::quiet_NaN()).bits);
  o.a32 = std::make_unique<Guarded<float>>(a_size, std::numeric_limits<float>::quiet_NaN());
  o.b16.resize(p.k * p.n), o.b32.resize(p.k * p.n);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t q = 0; q < p.k; ++q) {
      // bf16-representable, so both storages hold the same value
      const float x = bp::bfloat16_bits_to_float(bp::bfloat16_from_float(static_cast<float>(dist(rng))).bits);
      o.a[i * p.k + q] = x, (*o.a16)[i * o.lda + q] = bp::bfloat16_from_float(x).bits, (*o.a32)[i * o.lda + q] = x;
    }
  for (int64_t q = 0; q < p.k; ++q)
    for (int64_t j = 0; j < p.n; ++j) {
      const float x = bp::bfloat16_bits_to_float(bp::bfloat16_from_float(static_cast<float>(dist(rng))).bits);
      const int64_t at = p.b_transposed ? j * p.k + q : q * p.n + j;
      o.b[q * p.n + j] = x, o.b16[at] = bp::bfloat16_from_float(x).bits, o.b32[at] = x;
    }
  if (specials && p.m > 1 && p.k > 1 && p.n > 1) {
    // One NaN in A (row 0), one Inf in B (column n - 1): row 0 is all NaN,
    // column n - 1 is +-Inf or NaN (Inf * 0 is impossible: no zero values).
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    o.a[0] = nan, (*o.a16)[0] = bp::bfloat16_from_float(nan).bits, (*o.a32)[0] = nan;
    const int64_t q = p.k - 1, j = p.n - 1, at = p.b_transposed ? j * p.k + q : q * p.n + j;
    o.b[q * p.n + j] = inf, o.b16[at] = bp::bfloat16_from_float(inf).bits, o.b32[at] = inf;
  }
  for (double& x : o.c0) x = static_cast<float>(dist(rng));
  return o;
}

// Checks C (fp32, or the bf16 out when `out16`) against the oracle:
// |error| within (k + 4) fp32 units of the magnitude sum, plus half a bf16
// unit of the result when rounded; NaN exactly where the oracle has NaN,
// infinities with their sign.
void check(const Problem& p, const Operands& o, const std::vector<double>& got, const char* what) {
  int bad = 0;
  for (int64_t i = 0; i < p.m && bad < 5; ++i)
    for (int64_t j = 0; j < p.n && bad < 5; ++j) {
      double s = 0, mag = 0;
      for (int64_t q = 0; q < p.k; ++q) {
        s += o.a[i * p.k + q] * o.b[q * p.n + j];
        mag += std::fabs(o.a[i * p.k + q] * o.b[q * p.n + j]);
      }
      const double beta_term = p.beta == 0 ? 0.0 : p.beta * o.c0[i * p.n + j];
      const double want = p.alpha * s + beta_term;
      const double g = got[i * p.n + j];
      bool ok;
      if (std::isnan(want) || std::isinf(want)) {
        ok = std::isnan(want) ? std::isnan(g) : g == want;
      } else {
        // Absolute floors: half the spacing of fp32's / bf16's subnormals
        // (products scaled into that range must not be flushed to zero).
        const bool rounded = std::string(what) == "bf16 out";
        double bound = (p.k + 4) * std::ldexp(1.0, -24) * (std::fabs(p.alpha) * mag + std::fabs(beta_term)) +
                       std::ldexp(1.0, rounded ? -134 : -150);
        if (rounded) bound += std::fabs(want) * std::ldexp(1.0, -8);
        ok = std::fabs(g - want) <= bound;
      }
      if (!ok) {
        ++bad;
        ADD_FAILURE() << what << " " << describe(p) << " at (" << i << ", " << j << "): got " << g << ", want "
                      << want;
      }
    }
}

void run(GemmIsa isa, bool bf16, const Problem& p, bool specials, uint32_t seed) {
  std::mt19937 rng(seed);
  const Operands o = make(p, rng, specials);
  std::vector<float> c(p.m * p.n);
  for (int64_t e = 0; e < p.m * p.n; ++e) c[e] = p.beta == 0 ? static_cast<float>(kNaN) : static_cast<float>(o.c0[e]);
  const kc::MatView<float> vc{c.data(), p.m, p.n, p.n, 1};
  const int64_t b_rs = p.b_transposed ? 1 : p.n, b_cs = p.b_transposed ? p.k : 1;
  std::vector<double> got(p.m * p.n);
  if (!bf16) {
    kc::gemm_f32(isa, {o.a32->data(), p.m, p.k, o.lda, 1}, {o.b32.data(), p.k, p.n, b_rs, b_cs}, vc, p.alpha, p.beta);
    for (int64_t e = 0; e < p.m * p.n; ++e) got[e] = c[e];
    return check(p, o, got, "fp32");
  }
  const kc::MatView<const uint16_t> va{o.a16->data(), p.m, p.k, o.lda, 1}, vb{o.b16.data(), p.k, p.n, b_rs, b_cs};
  // Once into C, once rounded into a bf16 output (its row stride padded).
  kc::gemm_bf16(isa, va, vb, vc, p.alpha, p.beta);
  for (int64_t e = 0; e < p.m * p.n; ++e) got[e] = c[e];
  check(p, o, got, "bf16 into C");
  for (int64_t e = 0; e < p.m * p.n; ++e) c[e] = p.beta == 0 ? static_cast<float>(kNaN) : static_cast<float>(o.c0[e]);
  const int64_t ldo = p.n + 5;
  std::vector<uint16_t> out(p.m * ldo, 0x7FC1);
  if (kc::gemm_bf16(isa, va, vb, vc, p.alpha, p.beta, {out.data(), ldo})) {
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) got[i * p.n + j] = bp::bfloat16_bits_to_float(out[i * ldo + j]);
    for (int64_t i = 0; i < p.m; ++i)  // the padding of each output row is not written
      for (int64_t j = p.n; j < ldo; ++j) ASSERT_EQ(out[i * ldo + j], 0x7FC1) << describe(p);
  } else {
    for (int64_t e = 0; e < p.m * p.n; ++e)
      got[e] = bp::bfloat16_bits_to_float(bp::bfloat16_from_float(c[e]).bits);
  }
  check(p, o, got, "bf16 out");
}

using bp::test::ThreadScope;

// The kernels the direct-A entry serves on this CPU: fp32 and bf16 operands
// on AVX-512, bf16 on AVX512_BF16 (fp32 there is the medium path, which
// packs A: it must round it).
struct KernelCase {
  GemmIsa isa;
  bool bf16;
};
std::vector<KernelCase> direct_a_cases() {
  std::vector<KernelCase> out;
  for (const KernelCase c : {KernelCase{GemmIsa::avx512, false}, KernelCase{GemmIsa::avx512, true},
                             KernelCase{GemmIsa::avx512_bf16, true}})
    if (kc::gemm_isa_supported(c.isa)) out.push_back(c);
  return out;
}

TEST(GemmDirectA, MatchesTheOracleAroundEveryEdge) {
  ThreadScope one(1);
  // MR is 14 (bf16 pairs) or 8 (fp32), NR 32 or 48, the in-place bound 4 strips.
  const int64_t ms[] = {1, 2, 3, 5, 8, 9, 14, 15, 16, 17, 29, 64, 65};
  const int64_t ns[] = {2, 15, 16, 17, 31, 32, 33, 48, 49, 64, 96, 127, 128, 129, 193};
  const int64_t ks[] = {1, 2, 3, 16, 17, 63, 64, 65};
  uint32_t seed = 1;
  for (const auto [isa, bf16] : direct_a_cases())
    for (int64_t m : ms)
      for (int64_t n : ns)
        for (int64_t k : ks)
          for (const bool bt : {false, true}) {
            const bool odd = ((m + n + k) & 1) != 0;
            run(isa, bf16, {m, n, k, bt, odd ? 0.5f : 1.0f, odd ? 1.0f : 0.0f}, false, seed++);
            if (HasFailure()) return;
          }
}

TEST(GemmDirectA, NanInfAndSubnormals) {
  ThreadScope one(1);
  uint32_t seed = 100;
  for (const auto [isa, bf16] : direct_a_cases()) {
    for (const Problem& p : {Problem{16, 16, 16, false, 1, 0}, Problem{17, 33, 65, false, 1, 1},
                             Problem{64, 64, 64, true, 2, 0}, Problem{3, 100, 7, false, 1, 0}})
      run(isa, bf16, p, true, seed++);
    // Subnormal products: the bf16 rounding must not flush them.
    for (const float alpha : {1e-39f, 3e-41f})
      for (const Problem& p : {Problem{16, 16, 16, false, alpha, 0}, Problem{29, 64, 33, true, alpha, 0}})
        run(isa, bf16, p, false, seed++);
  }
}

TEST(GemmDirectA, TwoThreadsAndABatchOfSmallProducts) {
  ThreadScope two(2);
  uint32_t seed = 200;
  for (const auto [isa, bf16] : direct_a_cases())
    for (const Problem& p : {Problem{300, 64, 301, false, 1, 0}, Problem{700, 128, 64, true, 1, 1},
                             Problem{64, 64, 64, false, 1, 0}})
      run(isa, bf16, p, false, seed++);
}

}  // namespace

namespace {

// Note [GEMM pre-packed A]: gemm_bf16_pack_a + gemm_bf16_packed against the
// float64 oracle, A row- or column-major (attention's keys and transposed
// values), one and several A blocks (m past MC = 336), k up to KC, B read in
// place or packed (row- / column-major), beta 0 and 1, into C and rounded.
// With extra > 0, A is packed with k + extra columns, the extra ones NaN,
// and multiplied by its first k (gemm_bf16_packed_prefix, Note [GEMM packed
// A prefix]): a NaN in C means the prefix read past its k.
void run_packed(GemmIsa isa, int64_t m, int64_t n, int64_t k, bool a_col, bool b_col, float beta, bool out16,
                uint32_t seed, int64_t extra = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const auto bf = [&] { return bp::bfloat16_from_float(dist(rng)).bits; };
  const int64_t ka = k + extra;  // A's packed columns
  std::vector<uint16_t> a(m * ka), b(k * n);
  for (auto& x : a) x = bf();
  for (auto& x : b) x = bf();
  std::vector<float> c0(m * n);
  for (auto& x : c0) x = dist(rng);
  const int64_t a_rs = a_col ? 1 : ka, a_cs = a_col ? m : 1, b_rs = b_col ? 1 : n, b_cs = b_col ? k : 1;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = k; q < ka; ++q) a[i * a_rs + q * a_cs] = 0x7FC0;  // NaN: never read
  const std::size_t bytes = kc::gemm_bf16_packed_a_bytes(isa, m, ka);
  ASSERT_GT(bytes, 0u) << m << "x" << ka;
  std::vector<char> packed(bytes + 64);
  kc::gemm_bf16_pack_a(isa, {a.data(), m, ka, a_rs, a_cs}, packed.data());
  std::vector<float> c = c0;
  if (beta == 0) std::fill(c.begin(), c.end(), static_cast<float>(kNaN));
  std::vector<uint16_t> out(m * n, 0x7FC1);
  const kc::Out16 o16 = out16 ? kc::Out16{out.data(), n} : kc::Out16{};
  const bool rounded =
      extra > 0 ? kc::gemm_bf16_packed_prefix(isa, packed.data(), m, ka, k, {b.data(), k, n, b_rs, b_cs},
                                              {c.data(), m, n, n, 1}, 0.75f, beta, o16)
                : kc::gemm_bf16_packed(isa, packed.data(), m, k, {b.data(), k, n, b_rs, b_cs}, {c.data(), m, n, n, 1},
                                       0.75f, beta, o16);
  const std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                           (a_col ? " A col" : " A row") + (b_col ? " B col" : " B row") + " beta " +
                           std::to_string(beta) + (out16 ? " out16" : "") + " packed k " + std::to_string(ka);
  int bad = 0;
  for (int64_t i = 0; i < m && bad < 5; ++i)
    for (int64_t j = 0; j < n && bad < 5; ++j) {
      double s = 0, mag = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double x = double(bp::bfloat16_bits_to_float(a[i * a_rs + q * a_cs])) *
                         bp::bfloat16_bits_to_float(b[q * b_rs + j * b_cs]);
        s += x, mag += std::fabs(x);
      }
      const double beta_term = beta == 0 ? 0.0 : beta * double(c0[i * n + j]);
      const double want = 0.75 * s + beta_term;
      double bound = (k + 4) * std::ldexp(1.0, -24) * (0.75 * mag + std::fabs(beta_term)) + 1e-30;
      double got = c[i * n + j];
      if (out16 && rounded) {
        got = bp::bfloat16_bits_to_float(out[i * n + j]);
        bound += std::fabs(want) * std::ldexp(1.0, -8);
      }
      if (!(std::fabs(got - want) <= bound)) {
        ++bad;
        ADD_FAILURE() << kc::gemm_isa_name(isa) << " " << what << " at (" << i << ", " << j << "): got " << got
                      << ", want " << want;
      }
    }
}

TEST(GemmPackedA, MatchesTheOracle) {
  uint32_t seed = 300;
  for (const int threads : {1, 2}) {
    ThreadScope scope(threads);
    for (const GemmIsa isa : {GemmIsa::generic, GemmIsa::avx512, GemmIsa::avx512_bf16}) {
      if (!kc::gemm_isa_supported(isa)) continue;
      for (const int64_t m : {1, 13, 14, 15, 64, 337, 700})
        for (const int64_t n : {1, 17, 32, 100, 192})
          for (const int64_t k : {1, 2, 63, 64, 65, 256}) {
            if (kc::gemm_bf16_packed_a_bytes(isa, m, k) == 0) continue;  // k past this kernel's KC
            const bool odd = ((m + n + k) & 1) != 0;
            run_packed(isa, m, n, k, odd, (m + k) % 3 == 0, odd ? 1.0f : 0.0f, (n + k) % 2 == 0, seed++);
            if (HasFailure()) return;
          }
    }
  }
}

// Note [GEMM packed A prefix]: the first k (even) of a packed A's columns,
// the rest NaN, one and several strips, k from one pair to KC - 2.
TEST(GemmPackedA, PrefixMatchesTheOracle) {
  uint32_t seed = 900;
  for (const int threads : {1, 2}) {
    ThreadScope scope(threads);
    for (const GemmIsa isa : {GemmIsa::generic, GemmIsa::avx512, GemmIsa::avx512_bf16}) {
      if (!kc::gemm_isa_supported(isa)) continue;
      for (const int64_t m : {1, 14, 64, 337})
        for (const int64_t n : {17, 64, 192})
          for (const int64_t k : {2, 64, 126})
            for (const int64_t extra : {1, 2, 66}) {
              if (kc::gemm_bf16_packed_a_bytes(isa, m, k + extra) == 0) continue;  // past this kernel's KC
              const bool odd = ((m + n + k + extra) & 1) != 0;
              run_packed(isa, m, n, k, odd, (m + k) % 3 == 0, odd ? 1.0f : 0.0f, (n + extra) % 2 == 0, seed++, extra);
              if (HasFailure()) return;
            }
    }
  }
}

// fp32's pre-packed A (gemm_f32_pack_a + gemm_f32_packed_prefix: flash
// attention's value panels, Note [Packed fp32 value panels]) against the
// float64 oracle: A row- or column-major, one and several strips and A
// blocks (m past MC), k to KC, the whole packed k or any prefix of it (odd
// too: fp32's k unit is 1) with the columns past it NaN, B row- or
// column-major, beta 0 and 1, one and two threads.
void run_packed_f32(GemmIsa isa, int64_t m, int64_t n, int64_t k, int64_t extra, bool a_col, bool b_col, float beta,
                    uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t ka = k + extra;
  std::vector<float> a(m * ka), b(k * n), c0(m * n);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  for (auto& x : c0) x = dist(rng);
  const int64_t a_rs = a_col ? 1 : ka, a_cs = a_col ? m : 1, b_rs = b_col ? 1 : n, b_cs = b_col ? k : 1;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = k; q < ka; ++q) a[i * a_rs + q * a_cs] = static_cast<float>(kNaN);  // never read
  const std::size_t bytes = kc::gemm_f32_packed_a_bytes(isa, m, ka);
  ASSERT_GT(bytes, 0u) << m << "x" << ka;
  std::vector<char> packed(bytes + 64);
  kc::gemm_f32_pack_a(isa, {a.data(), m, ka, a_rs, a_cs}, packed.data());
  std::vector<float> c = c0;
  if (beta == 0) std::fill(c.begin(), c.end(), static_cast<float>(kNaN));
  kc::gemm_f32_packed_prefix(isa, packed.data(), m, ka, k, {b.data(), k, n, b_rs, b_cs}, {c.data(), m, n, n, 1},
                             0.75f, beta);
  int bad = 0;
  for (int64_t i = 0; i < m && bad < 5; ++i)
    for (int64_t j = 0; j < n && bad < 5; ++j) {
      double s = 0, mag = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double x = double(a[i * a_rs + q * a_cs]) * b[q * b_rs + j * b_cs];
        s += x, mag += std::fabs(x);
      }
      const double beta_term = beta == 0 ? 0.0 : beta * double(c0[i * n + j]);
      const double want = 0.75 * s + beta_term;
      const double bound = (k + 4) * std::ldexp(1.0, -24) * (0.75 * mag + std::fabs(beta_term)) + 1e-30;
      if (!(std::fabs(c[i * n + j] - want) <= bound)) {
        ++bad;
        ADD_FAILURE() << kc::gemm_isa_name(isa) << " " << m << "x" << n << "x" << k << " packed k " << ka
                      << (a_col ? " A col" : " A row") << (b_col ? " B col" : " B row") << " beta " << beta << " at ("
                      << i << ", " << j << "): got " << c[i * n + j] << ", want " << want;
      }
    }
}

TEST(GemmPackedA, F32MatchesTheOracle) {
  uint32_t seed = 1500;
  for (const int threads : {1, 2}) {
    ThreadScope scope(threads);
    for (const GemmIsa isa : {GemmIsa::generic, GemmIsa::avx2, GemmIsa::avx512}) {
      if (!kc::gemm_isa_supported(isa)) continue;
      for (const int64_t m : {1, 7, 8, 9, 64, 337})
        for (const int64_t n : {1, 17, 48, 192})
          for (const int64_t k : {1, 63, 64, 191, 384})
            for (const int64_t extra : {0, 1, 64}) {
              if (kc::gemm_f32_packed_a_bytes(isa, m, k + extra) == 0) continue;  // past this kernel's KC
              const bool odd = ((m + n + k) & 1) != 0;
              run_packed_f32(isa, m, n, k, extra, odd, (m + k) % 3 == 0, odd ? 1.0f : 0.0f, seed++);
              if (HasFailure()) return;
            }
    }
  }
}

}  // namespace
