// Backplane's own GEMM (src/kernels/cpu/gemm.h) against a plain triple loop
// in double written here, apart from the kernels: every ISA this CPU runs,
// every dtype, sizes at and around the micro-tile and cache-block edges,
// transposed and padded views, alpha/beta cases, one and two threads.
//
// Tolerance: a floating-point sum of k products with accumulation unit u has
// error below about (k + 2) u sum|a_ip b_pj| (plus the beta term), so each
// element is checked against that bound, computed from the same inputs.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backplane/dtype.h"
#include "backplane/runtime.h"
#include "kernels/cpu/gemm.h"
#include "kernels/thread_scope.h"

namespace {

namespace kc = bp::kernels::cpu;
using kc::GemmIsa;

enum class Dt { f32, medium, f64, bf16, f16 };

const char* dt_name(Dt d) {
  switch (d) {
    case Dt::f32: return "f32";
    case Dt::medium: return "f32-as-bf16";
    case Dt::f64: return "f64";
    case Dt::bf16: return "bf16";
    case Dt::f16: return "f16";
  }
  return "?";
}

// How a matrix is laid out in memory (its logical shape is fixed).
enum class Layout { row, col, row_padded, col_padded, strided };

struct Case {
  int64_t m, n, k;
  Layout la = Layout::row, lb = Layout::row, lc = Layout::row;
  double alpha = 1, beta = 0;
  // A packed first by gemm_pack_shared_a (Note [GEMM shared A]) where it
  // packs, and its source then overwritten with NaN: the product must read
  // the packed copy, and read it right.
  bool shared_a = false;
};

std::string describe(const Case& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " layouts " +
         std::to_string(static_cast<int>(c.la)) + std::to_string(static_cast<int>(c.lb)) +
         std::to_string(static_cast<int>(c.lc)) + " alpha " + std::to_string(c.alpha) + " beta " +
         std::to_string(c.beta);
}

// Strides and buffer size for a rows x cols matrix in a layout.
struct Geometry {
  int64_t rs, cs, size;
};
Geometry geometry(Layout l, int64_t rows, int64_t cols) {
  switch (l) {
    case Layout::row: return {cols, 1, rows * cols};
    case Layout::col: return {1, rows, rows * cols};
    case Layout::row_padded: return {cols + 3, 1, rows * (cols + 3)};
    case Layout::col_padded: return {1, rows + 5, cols * (rows + 5)};
    case Layout::strided: return {2 * cols * 2, 2, rows * cols * 4};  // neither stride is 1
  }
  return {0, 0, 0};
}

// A logical matrix in double plus its copy in the element type, laid out.
template <class T>
struct Mat {
  std::vector<double> val;  // row-major logical values (as the kernel sees them)
  std::vector<T> buf;
  Geometry g;
  int64_t rows, cols;
};

uint16_t bf16_bits(double x) { return bp::bfloat16_bits_from_double(x); }
uint16_t f16_bits(double x) { return bp::half_bits_from_double(x); }

template <class T>
Mat<T> make(std::mt19937& rng, Layout l, int64_t rows, int64_t cols, Dt dt) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Mat<T> m{std::vector<double>(rows * cols), {}, geometry(l, rows, cols), rows, cols};
  m.buf.assign(m.g.size, T{});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double x = dist(rng);
      T& slot = m.buf[i * m.g.rs + j * m.g.cs];
      double& v = m.val[i * cols + j];
      if constexpr (std::is_same_v<T, uint16_t>) {
        slot = dt == Dt::bf16 ? bf16_bits(x) : f16_bits(x);
        v = dt == Dt::bf16 ? bp::bfloat16_bits_to_float(slot) : bp::half_bits_to_float(slot);
      } else {
        slot = static_cast<T>(x);
        v = static_cast<double>(slot);
      }
    }
  return m;
}

// C = alpha A B + beta C0 in double, with each element's error budget.
struct Ref {
  std::vector<double> c, bound;
};
Ref reference(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& c0,
              const Case& cs, double unit) {
  Ref r{std::vector<double>(cs.m * cs.n), std::vector<double>(cs.m * cs.n)};
  for (int64_t i = 0; i < cs.m; ++i)
    for (int64_t j = 0; j < cs.n; ++j) {
      double s = 0, mag = 0;
      for (int64_t p = 0; p < cs.k; ++p) {
        s += a[i * cs.k + p] * b[p * cs.n + j];
        mag += std::fabs(a[i * cs.k + p] * b[p * cs.n + j]);
      }
      const double beta_term = cs.beta == 0 ? 0 : cs.beta * c0[i * cs.n + j];
      r.c[i * cs.n + j] = cs.alpha * s + beta_term;
      r.bound[i * cs.n + j] =
          (cs.k + 4) * unit * (std::fabs(cs.alpha) * mag + std::fabs(beta_term)) + 1e-30;
    }
  return r;
}

double bf16_round(double x) { return bp::bfloat16_bits_to_float(bf16_bits(static_cast<float>(x))); }

// A packed for a shared-A batch, when cs asks for it and the GEMM packs A
// for this shape: then A's source is overwritten with NaN (the product must
// not read it) and *shared is set.
struct SharedA {
  std::unique_ptr<char, decltype(&std::free)> packed{nullptr, &std::free};
};

template <class T>
SharedA share_a(GemmIsa isa, bp::DType src, const Case& cs, Mat<T>& a, const Geometry& gb, bool* shared) {
  SharedA s;
  if (!cs.shared_a) return s;
  const std::size_t bytes = kc::gemm_shared_a_bytes(isa, src, cs.m, cs.n, cs.k, a.g.rs, a.g.cs, gb.rs, gb.cs);
  if (bytes == 0) return s;
  s.packed.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
  kc::gemm_pack_shared_a(isa, src, a.buf.data(), a.g.rs, a.g.cs, cs.m, cs.k, s.packed.get());
  if constexpr (std::is_same_v<T, uint16_t>) std::fill(a.buf.begin(), a.buf.end(), uint16_t{0x7fc0});  // NaN in bf16 and f16
  else std::fill(a.buf.begin(), a.buf.end(), std::numeric_limits<T>::quiet_NaN());
  if (shared != nullptr) *shared = true;
  return s;
}

// Runs one case; returns the largest |error| / bound (must be <= 1) and,
// through `dev_plain`, the largest deviation from the plain (unrounded)
// fp32 reference relative to its fp32 bound (used to see the bf16 signature).
// `shared`: set when the case's A was shared (Case::shared_a).
double run_case(GemmIsa isa, Dt dt, const Case& cs, uint32_t seed, double* dev_plain = nullptr,
                bool* shared = nullptr) {
  std::mt19937 rng(seed);
  using Acc = double;
  const bool is64 = dt == Dt::f64;
  std::vector<double> av, bv;
  Geometry gc = geometry(cs.lc, cs.m, cs.n);
  std::vector<double> c0(cs.m * cs.n);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& x : c0) x = static_cast<float>(dist(rng));
  const double nan = std::numeric_limits<double>::quiet_NaN();

  std::vector<double> got(cs.m * cs.n);
  if (is64) {
    auto a = make<double>(rng, cs.la, cs.m, cs.k, dt);
    auto b = make<double>(rng, cs.lb, cs.k, cs.n, dt);
    std::vector<double> c(gc.size, nan);
    for (int64_t i = 0; i < cs.m; ++i)
      for (int64_t j = 0; j < cs.n; ++j) c[i * gc.rs + j * gc.cs] = cs.beta == 0 ? nan : c0[i * cs.n + j];
    const SharedA sa = share_a(isa, bp::DType::f64, cs, a, b.g, shared);
    kc::gemm_f64(isa, {a.buf.data(), cs.m, cs.k, a.g.rs, a.g.cs}, {b.buf.data(), cs.k, cs.n, b.g.rs, b.g.cs},
                 {c.data(), cs.m, cs.n, gc.rs, gc.cs}, cs.alpha, cs.beta, sa.packed.get());
    for (int64_t i = 0; i < cs.m; ++i)
      for (int64_t j = 0; j < cs.n; ++j) got[i * cs.n + j] = c[i * gc.rs + j * gc.cs];
    av = a.val, bv = b.val;
  } else {
    std::vector<float> c(gc.size, static_cast<float>(nan));
    for (int64_t i = 0; i < cs.m; ++i)
      for (int64_t j = 0; j < cs.n; ++j)
        c[i * gc.rs + j * gc.cs] = cs.beta == 0 ? static_cast<float>(nan) : static_cast<float>(c0[i * cs.n + j]);
    const kc::MatView<float> vc{c.data(), cs.m, cs.n, gc.rs, gc.cs};
    const float alpha = static_cast<float>(cs.alpha), beta = static_cast<float>(cs.beta);
    if (dt == Dt::f32 || dt == Dt::medium) {
      auto a = make<float>(rng, cs.la, cs.m, cs.k, dt);
      auto b = make<float>(rng, cs.lb, cs.k, cs.n, dt);
      const SharedA sa = share_a(isa, bp::DType::f32, cs, a, b.g, shared);
      kc::gemm_f32(isa, {a.buf.data(), cs.m, cs.k, a.g.rs, a.g.cs}, {b.buf.data(), cs.k, cs.n, b.g.rs, b.g.cs}, vc,
                   alpha, beta, sa.packed.get());
      av = a.val, bv = b.val;
    } else {
      auto a = make<uint16_t>(rng, cs.la, cs.m, cs.k, dt);
      auto b = make<uint16_t>(rng, cs.lb, cs.k, cs.n, dt);
      const SharedA sa = share_a(isa, dt == Dt::bf16 ? bp::DType::bf16 : bp::DType::f16, cs, a, b.g, shared);
      const kc::MatView<const uint16_t> va{a.buf.data(), cs.m, cs.k, a.g.rs, a.g.cs};
      const kc::MatView<const uint16_t> vb{b.buf.data(), cs.k, cs.n, b.g.rs, b.g.cs};
      if (dt == Dt::bf16) {
        kc::gemm_bf16(isa, va, vb, vc, alpha, beta, {}, sa.packed.get());
      } else {
        kc::gemm_f16(isa, va, vb, vc, alpha, beta, {}, sa.packed.get());
      }
      av = a.val, bv = b.val;
    }
    for (int64_t i = 0; i < cs.m; ++i)
      for (int64_t j = 0; j < cs.n; ++j) got[i * cs.n + j] = c[i * gc.rs + j * gc.cs];
  }

  const double unit = is64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  // The medium path multiplies bf16-rounded operands; its oracle does too.
  std::vector<double> ar = av, br = bv;
  if (dt == Dt::medium) {
    for (double& x : ar) x = bf16_round(x);
    for (double& x : br) x = bf16_round(x);
  }
  const Ref ref = reference(ar, br, c0, cs, unit);
  double worst = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    const double err = std::fabs(got[e] - ref.c[e]);
    const double r = std::isnan(got[e]) ? 1e30 : err / ref.bound[e];
    worst = std::max(worst, r);
  }
  if (dev_plain != nullptr) {
    const Ref plain = reference(av, bv, c0, cs, unit);
    double d = 0;
    for (size_t e = 0; e < got.size(); ++e) d = std::max(d, std::fabs(got[e] - plain.c[e]) / plain.bound[e]);
    *dev_plain = d;
  }
  return worst;
}

std::vector<GemmIsa> supported_isas() {
  std::vector<GemmIsa> out;
  for (GemmIsa isa : {GemmIsa::generic, GemmIsa::avx2, GemmIsa::avx512, GemmIsa::avx512_bf16})
    if (kc::gemm_isa_supported(isa)) out.push_back(isa);
  return out;
}

std::vector<Dt> dtypes_for(GemmIsa isa) {
  if (isa == GemmIsa::avx512_bf16) return {Dt::medium, Dt::bf16, Dt::f16};
  return {Dt::f32, Dt::f64, Dt::bf16, Dt::f16};
}

// Restores the process thread count after a test changes it.
using bp::test::ThreadScope;

void expect_ok(GemmIsa isa, Dt dt, const Case& cs, uint32_t seed) {
  const double worst = run_case(isa, dt, cs, seed);
  EXPECT_LE(worst, 1.0) << kc::gemm_isa_name(isa) << " " << dt_name(dt) << " " << describe(cs);
}

// Sizes around every micro-tile edge of every variant (MR in {4, 6, 8, 14},
// NR in {8, 16, 24, 32, 48}) and odd sizes.
const int64_t kEdgeSizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 49, 63, 65, 97};

TEST(KernelsGemm, IsaNamesAndGenericAlwaysSupported) {
  EXPECT_STREQ(kc::gemm_isa_name(GemmIsa::avx512_bf16), "avx512_bf16");
  EXPECT_STREQ(kc::gemm_isa_name(GemmIsa::generic), "generic");
  EXPECT_TRUE(kc::gemm_isa_supported(GemmIsa::generic));
  // avx512_bf16 implies avx512 implies nothing about avx2 in principle, but
  // every CPU with AVX-512 here also has AVX2.
  if (kc::gemm_isa_supported(GemmIsa::avx512_bf16)) EXPECT_TRUE(kc::gemm_isa_supported(GemmIsa::avx512));
}

TEST(KernelsGemm, MicroTileEdges) {
  ThreadScope one(1);
  uint32_t seed = 1;
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa)) {
      for (int64_t m : kEdgeSizes) expect_ok(isa, dt, {m, 50, 19}, seed++);
      for (int64_t n : kEdgeSizes) expect_ok(isa, dt, {17, n, 23}, seed++);
      for (int64_t k : {1, 2, 3, 8, 31, 33}) expect_ok(isa, dt, {15, 33, k}, seed++);
    }
}

TEST(KernelsGemm, CacheBlockEdges) {
  ThreadScope one(1);
  uint32_t seed = 100;
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa)) {
      // KC is 256 or 384 (512 k steps for the bf16 pairs kernels).
      for (int64_t k : {255, 256, 257, 383, 384, 385, 511, 512, 513, 769}) expect_ok(isa, dt, {9, 50, k}, seed++);
      // MC is 72..336 rows depending on variant and dtype.
      for (int64_t m : {72, 73, 128, 129, 144, 145, 168, 169, 335, 336, 337}) expect_ok(isa, dt, {m, 20, 7}, seed++);
      // NC is 2048 (f64) or 4096.
      for (int64_t n : {2047, 2049, 4095, 4097}) expect_ok(isa, dt, {3, n, 5}, seed++);
      expect_ok(isa, dt, {130, 97, 600}, seed++);  // several blocks in every dimension at once
    }
}

// Row-major A is packed with in-register transposes (8 x 8 blocks of 8 rows
// x 8 k for fp32, 14 rows x 16 k for the medium path's bf16 pairs), with
// scalar code for ragged strips and the k tail: sizes at and around both
// edges, contiguous and padded rows, odd k (a zero pair partner).
TEST(KernelsGemm, PackedTransposeEdges) {
  ThreadScope one(1);
  uint32_t seed = 150;
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa))
      for (Layout la : {Layout::row, Layout::row_padded})
        for (int64_t m : {7, 8, 9, 14, 15, 16, 28, 29, 43})
          for (int64_t k : {7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 49, 263})
            expect_ok(isa, dt, {m, 21, k, la}, seed++);
}

// A column-major B (x @ w.T) is packed the same way, NR columns a strip:
// whole and ragged strips (NR = 48 for AVX-512 fp32, 32 bf16 pairs for the
// bf16 kernel), k around the 8 x 8 blocks and the tail, contiguous and padded
// columns, one and several strips.
TEST(KernelsGemm, PackedTransposedBEdges) {
  ThreadScope one(1);
  uint32_t seed = 190;
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa))
      for (Layout lb : {Layout::col, Layout::col_padded})
        for (int64_t n : {7, 8, 9, 47, 48, 49, 96, 97, 143})
          for (int64_t k : {7, 8, 9, 16, 17, 63, 385}) expect_ok(isa, dt, {11, n, k, Layout::row, lb}, seed++);
}

// Small m reads row-major B in place (Note [GEMM direct B] in gemm.cpp)
// instead of packing it; larger m packs. Both sides of that threshold (on
// one thread 80 A strips for fp32: 640 rows; 56 for the bf16 pairs: 784
// rows; 448 rows is fp32's bound with threads), every ragged row count
// of a strip (tiles of 2, 4, 8 or MR rows), ragged and masked column strips,
// odd k (a bf16 pair without partner), k around the direct path's blocks,
// padded rows of B, and A row- or column-major.
TEST(KernelsGemm, DirectAndPackedBAroundTheSmallMThreshold) {
  ThreadScope one(1);
  uint32_t seed = 250;
  const int64_t ms[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 23, 28, 31, 32, 33, 41, 55, 56, 57, 64, 71};
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa)) {
      for (int64_t m : ms)
        for (int64_t n : {17, 32, 33, 48, 100})
          for (int64_t k : {1, 17, 129}) expect_ok(isa, dt, {m, n, k}, seed++);
      for (int64_t m : {255, 256, 257, 448, 449, 640, 641, 784, 785})
        for (Layout lb : {Layout::row, Layout::col}) expect_ok(isa, dt, {m, 33, 19, Layout::row, lb}, seed++);
      // B's rows more than 2 KiB apart: the direct bound drops (2 strips for
      // the bf16 pairs kernel, 32 for fp32), so both sides of each.
      for (int64_t m : {28, 29, 56, 57, 256, 257}) expect_ok(isa, dt, {m, 1100, 19}, seed++);
      for (int64_t m : {5, 16, 31, 60})
        for (Layout la : {Layout::row, Layout::col})
          for (int64_t k : {2, 3, 127, 128, 129, 257, 300}) {
            expect_ok(isa, dt, {m, 97, k, la, Layout::row_padded}, seed++);
            expect_ok(isa, dt, {m, 64, k, la, Layout::row, Layout::row, 0.5, -1.0}, seed++);
          }
    }
}

TEST(KernelsGemm, RowAndColumnShapes) {
  ThreadScope one(1);
  uint32_t seed = 200;
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa))
      for (Layout lb : {Layout::row, Layout::col, Layout::strided}) {
        expect_ok(isa, dt, {1, 300, 257, Layout::row, lb}, seed++);              // m = 1 (GEMV path)
        expect_ok(isa, dt, {1, 2000, 70, Layout::col, lb, Layout::row, 0.5, 2}, seed++);
        expect_ok(isa, dt, {300, 1, 129, Layout::row, lb, Layout::col}, seed++);  // n = 1
        expect_ok(isa, dt, {1, 21, 1000, Layout::row, lb, Layout::strided, 1, 0.5}, seed++);  // GEMV column groups and tails
        expect_ok(isa, dt, {1003, 1, 31, Layout::row, lb, Layout::row}, seed++);
        for (int64_t m : {2, 3, 4, 5})  // few rows (Note [Few-row products]): column groups, k tails, strided C
          for (int64_t k : {255, 300})    // below kGemmFewRowsMinK: packed as before
            expect_ok(isa, dt, {m, 23, k, Layout::row, lb, Layout::strided, 0.5, 0.5}, seed++);
        expect_ok(isa, dt, {1, 1, 65, Layout::strided, lb}, seed++);
        expect_ok(isa, dt, {40, 30, 1, Layout::row, lb}, seed++);                // k = 1
      }
}

TEST(KernelsGemm, StridesAndTransposes) {
  ThreadScope one(1);
  uint32_t seed = 300;
  const Layout all[] = {Layout::row, Layout::col, Layout::row_padded, Layout::col_padded, Layout::strided};
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa))
      for (Layout la : all)
        for (Layout lb : all)
          for (Layout lc : {Layout::row, Layout::col, Layout::strided})
            expect_ok(isa, dt, {37, 53, 41, la, lb, lc, 1.0, 0.0}, seed++);
}

TEST(KernelsGemm, AlphaBeta) {
  ThreadScope one(1);
  uint32_t seed = 400;
  const double ab[][2] = {{1, 0}, {0.5, 0}, {1, 1}, {-2, 0.25}, {0, 2}, {0, 0}, {1.5, -1}};
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa))
      for (const auto& [alpha, beta] : ab)
        for (int64_t k : {0, 9, 300}) {
          expect_ok(isa, dt, {29, 51, k, Layout::row, Layout::row, Layout::row, alpha, beta}, seed++);
          expect_ok(isa, dt, {29, 51, k, Layout::col, Layout::row, Layout::col_padded, alpha, beta}, seed++);
        }
}

TEST(KernelsGemm, TwoThreads) {
  ThreadScope two(2);
  uint32_t seed = 500;
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa)) {
      expect_ok(isa, dt, {700, 150, 300}, seed++);   // several A blocks: threads split m
      expect_ok(isa, dt, {16, 700, 300}, seed++);    // one A block: threads split n
      expect_ok(isa, dt, {257, 515, 513, Layout::col, Layout::row_padded, Layout::row, 0.5, 0.5}, seed++);
      expect_ok(isa, dt, {1, 5000, 300}, seed++);  // GEMVs whose B is big enough to share (Note [Threaded GEMV])
      expect_ok(isa, dt, {1, 1000, 700, Layout::row, Layout::col, Layout::strided, 0.5, 0.5}, seed++);
      expect_ok(isa, dt, {1000, 1, 700, Layout::col, Layout::strided, Layout::col, 1.0, 0.5}, seed++);
      expect_ok(isa, dt, {1, 130, 300}, seed++);  // too small: one thread
      expect_ok(isa, dt, {3, 1000, 700, Layout::row, Layout::col, Layout::row, 1.0, 0.5}, seed++);  // few rows, shared
      expect_ok(isa, dt, {5, 1000, 257}, seed++);    // small m (B read in place): threads split n
      expect_ok(isa, dt, {33, 260, 129, Layout::row, Layout::row_padded, Layout::row, 1.0, 1.0}, seed++);
      expect_ok(isa, dt, {100, 200, 129}, seed++);  // B in place, threads split m (no barrier)
      // Around kDirectSplitMMaxBBytes (256 KiB of bf16 B: the pairs kernel's bound): B in place or packed
      // once, threads splitting m; fp32 reads B in place either side.
      expect_ok(isa, dt, {100, 256, 255}, seed++);
      expect_ok(isa, dt, {100, 256, 257}, seed++);
      expect_ok(isa, dt, {100, 256, 511}, seed++);
      expect_ok(isa, dt, {100, 256, 513}, seed++);
      expect_ok(isa, dt, {900, 64, 40}, seed++);  // 57 strips a thread: fp32 packs B again
      expect_ok(isa, dt, {130, 1024, 300, Layout::row, Layout::row_padded, Layout::row, 1.0, 0.5}, seed++);
      expect_ok(isa, dt, {201, 97, 257, Layout::col, Layout::row, Layout::row, 1.0, 0.5}, seed++);
    }
}

// check(isa, dt, threads) for every variant and dtype, on one and then two
// threads (split m and split n).
void on_one_and_two_threads(const std::function<void(GemmIsa, Dt, int)>& check) {
  for (int threads : {1, 2})
    for (GemmIsa isa : supported_isas())
      for (Dt dt : dtypes_for(isa)) {
        ThreadScope team(threads);
        check(isa, dt, threads);
      }
}

// Shallow blocks go row strip by row strip (Note [GEMM shallow blocks by
// rows]): k up to 32, several A strips and more than 4 B strips, around
// the bound (k = 32, 33) and with few rows or columns (the strip-by-strip
// order), row and column strips with ragged ends, an MC edge, strided C
// with beta, one and two threads (split m and split n).
TEST(KernelsGemm, ShallowBlocksByRows) {
  uint32_t seed = 1200;
  on_one_and_two_threads([&](GemmIsa isa, Dt dt, int) {
    for (int64_t k : {1, 2, 16, 31, 32, 33}) expect_ok(isa, dt, {97, 1000, k}, seed++);
    expect_ok(isa, dt, {29, 4100, 16}, seed++);
    expect_ok(isa, dt, {700, 530, 24}, seed++);
    expect_ok(isa, dt, {15, 2000, 8}, seed++);
    expect_ok(isa, dt, {200, 150, 8}, seed++);
    expect_ok(isa, dt, {96, 600, 16, Layout::row, Layout::col, Layout::strided, 0.5, 0.5}, seed++);
    expect_ok(isa, dt, {96, 600, 16, Layout::col, Layout::row_padded, Layout::row_padded, 1.0, 1.0}, seed++);
  });
}

// A row-major A read in place (Note [GEMM direct A]: n within 4 B strips)
// unless a thread's share of it passes kDirectAMaxBytesPerThread (4 MiB of
// f32: 8066 rows of 130), then packed: both sides, one and two threads.
TEST(KernelsGemm, DirectAAroundItsSizeBound) {
  uint32_t seed = 980;
  on_one_and_two_threads([&](GemmIsa isa, Dt dt, int threads) {
    for (int64_t m : {8000, 8100}) expect_ok(isa, dt, {m * threads, 9, 130}, seed++);
  });
}

// A row-major A read in place past both bounds above when its rows are long
// (Note [GEMM direct A]: k of at least 2 KiB): rows 4 KiB and more apart
// (row_padded) and shares of A past 4 MiB, either side of the long-row bound
// (f32 k = 511 / 512, bf16 pairs 1023 / 1024), rows aliasing in L1, n
// within and just past 4 B strips, ragged m, one and two threads, with
// alpha and beta.
TEST(KernelsGemm, DirectAWithLongRows) {
  uint32_t seed = 990;
  on_one_and_two_threads([&](GemmIsa isa, Dt dt, int threads) {
    for (int64_t k : {511, 512, 1023, 1024}) {
      expect_ok(isa, dt, {37, 49, k, Layout::row_padded}, seed++);
      expect_ok(isa, dt, {13, 2, k, Layout::row_padded}, seed++);
      expect_ok(isa, dt, {70, 193, k, Layout::row_padded, Layout::row, Layout::row, 0.5, 0.5}, seed++);
    }
    expect_ok(isa, dt, {1100 * threads, 9, 1025}, seed++);  // over 4 MiB of f32 A per thread
    expect_ok(isa, dt, {40, 50, 2048}, seed++);  // rows 4 or 8 KiB apart: one L1 set (bf16 packs them)
    expect_ok(isa, dt, {100, 130, 1025, Layout::row_padded, Layout::row_padded, Layout::row_padded, 1.0, 1.0},
              seed++);
  });
}

// The last B strip's few columns as dot products (Note [GEMM narrow last
// strip]: at most 4 columns left of NR, a row-major A): 1 to 4 columns and
// just past, after one and several strips; ragged row groups of the 4-row
// tiles; k below, at and past a vector and over several k blocks (beta
// accumulating); padded A rows, transposed and strided B, strided C; one and
// two threads (split m and split n); and a column-major A, which keeps the
// register tile.
TEST(KernelsGemm, NarrowLastStrip) {
  uint32_t seed = 1010;
  on_one_and_two_threads([&](GemmIsa isa, Dt dt, int) {
    for (int64_t n : {49, 52, 53, 100, 196})
      for (int64_t k : {15, 17, 385}) expect_ok(isa, dt, {70, n, k}, seed++);
    for (int64_t m : {1, 3, 9, 13}) expect_ok(isa, dt, {m, 98, 40}, seed++);
    expect_ok(isa, dt, {600, 49, 1000, Layout::row_padded, Layout::row, Layout::row, 0.5, 0.5}, seed++);
    expect_ok(isa, dt, {37, 196, 800, Layout::row, Layout::col, Layout::strided, 1.0, 1.0}, seed++);
    expect_ok(isa, dt, {37, 148, 300, Layout::row_padded, Layout::strided, Layout::row_padded, 2.0, 0.0}, seed++);
    expect_ok(isa, dt, {29, 49, 300, Layout::col, Layout::row, Layout::row, 1.0, 0.5}, seed++);
  });
}

// Split n with a shallower last k block (k = 770, 1000, 1024 under balanced
// kc blocks): threads do not synchronise there, so a fast thread packing the
// last block must not land on strips a slow one is still reading. Repeated,
// since a race shows only sometimes.
TEST(KernelsGemm, TwoThreadsSplitNWithARaggedLastKBlock) {
  ThreadScope two(2);
  uint32_t seed = 900;
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa))
      for (int64_t k : {770, 1000, 1024})
        for (int rep = 0; rep < 4; ++rep) expect_ok(isa, dt, {65, 64, k}, seed++);
}

// A batch's shared A (Note [GEMM shared A]): packed once, every k block of
// it (KC is 256 or 384, 512 k steps for the bf16 pairs), rows around MR and
// MC, row- and column-major A, one and two threads (split m and split n).
// share_a overwrites A's source after packing, so a product that read the
// source, or a block at the wrong offset, fails; each variant must have
// taken the shared path on the shapes that pack A (n over the direct-A
// bound of 4 B strips, or a column-major A).
TEST(KernelsGemm, SharedAPackedOnce) {
  uint32_t seed = 950;
  struct Shape3 {
    int64_t m, n, k;
    Layout la;
    int threads;
  };
  const Shape3 shapes[] = {{9, 200, 385, Layout::row, 1},   {15, 250, 1025, Layout::col, 1},
                           {73, 97, 769, Layout::col, 1},   {337, 200, 300, Layout::row, 1},
                           {2, 300, 64, Layout::row_padded, 1}, {300, 250, 520, Layout::row, 2},
                           {16, 700, 513, Layout::col, 2}};
  for (GemmIsa isa : supported_isas())
    for (Dt dt : dtypes_for(isa)) {
      int shared_count = 0;
      for (const Shape3& s : shapes) {
        ThreadScope team(s.threads);
        Case cs{s.m, s.n, s.k, s.la, Layout::row, Layout::row, 1.0, s.m % 2 == 0 ? 0.5 : 0.0};
        cs.shared_a = true;
        bool shared = false;
        const double worst = run_case(isa, dt, cs, seed++, nullptr, &shared);
        EXPECT_LE(worst, 1.0) << kc::gemm_isa_name(isa) << " " << dt_name(dt) << " shared A " << describe(cs);
        shared_count += shared;
      }
      EXPECT_GE(shared_count, 5) << kc::gemm_isa_name(isa) << " " << dt_name(dt);
    }
}

// The "medium" path must really multiply bf16-rounded operands: its result
// matches the bf16-rounded oracle to fp32 accuracy and misses the plain fp32
// oracle by far more than fp32 accuracy allows.
TEST(KernelsGemm, MediumPrecisionHasBf16Signature) {
  if (!kc::gemm_isa_supported(GemmIsa::avx512_bf16)) GTEST_SKIP() << "no AVX512_BF16 on this CPU";
  ThreadScope one(1);
  for (const Case& cs : {Case{64, 64, 64}, Case{1, 512, 256}, Case{200, 1, 300}}) {
    double dev_plain = 0;
    const double worst = run_case(GemmIsa::avx512_bf16, Dt::medium, cs, 7, &dev_plain);
    EXPECT_LE(worst, 1.0) << describe(cs);
    EXPECT_GT(dev_plain, 20.0) << describe(cs) << ": result looks like fp32 arithmetic, not bf16";
  }
  // And the fp32 variants do not show it.
  double dev_plain = 0;
  for (GemmIsa isa : supported_isas()) {
    if (isa == GemmIsa::avx512_bf16) continue;
    EXPECT_LE(run_case(isa, Dt::f32, {64, 64, 64}, 7, &dev_plain), 1.0);
    EXPECT_LE(dev_plain, 1.0);
  }
}

TEST(KernelsGemm, RejectsMismatchedShapesAndUnsupportedCombos) {
  float a[6] = {}, b[6] = {}, c[4] = {};
  EXPECT_ANY_THROW(kc::gemm_f32(GemmIsa::generic, {a, 2, 3, 3, 1}, {b, 2, 3, 3, 1}, {c, 2, 2, 2, 1}, 1, 0));
  double d[4] = {};
  if (kc::gemm_isa_supported(GemmIsa::avx512_bf16)) {
    EXPECT_ANY_THROW(kc::gemm_f64(GemmIsa::avx512_bf16, {d, 2, 2, 2, 1}, {d, 2, 2, 2, 1}, {d, 2, 2, 2, 1}, 1, 0));
  }
}

}  // namespace
