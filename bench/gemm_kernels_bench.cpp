// Side-by-side GEMM benchmark: Backplane's builtin kernels (every ISA this
// CPU runs) against oneDNN's dnnl_sgemm and bf16 matmul and OpenBLAS's
// cblas_sgemm, on the same inputs in one run (DESIGN.md section 8).
// Build and run with bench/run_gemm_kernels_bench.sh.
//
// Shapes are M x K x N (C[M,N] = A[M,K] B[K,N], all row-major). For each
// shape and thread count: one warm-up, then runs until `--min-time` seconds
// and at least `--reps` runs have passed; the median time is reported.
//
//   gemm_kernels_bench [--threads 1,2] [--shapes 256,512,1x4096x4096,...]
//                      [--reps 5] [--min-time 0.3] [--generic]

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backplane/runtime.h"
#include "kernels/cpu/gemm.h"
#include "oneapi/dnnl/dnnl.h"
#include "oneapi/dnnl/dnnl.hpp"

extern "C" {
#include <cblas.h>
void openblas_set_num_threads(int);
}

namespace {

namespace kc = bp::kernels::cpu;

struct Shape {
  int64_t m, k, n;
  std::string name;
};

std::vector<Shape> parse_shapes(const std::string& s) {
  std::vector<Shape> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string tok = s.substr(pos, end - pos);
    long long m = 0, k = 0, n = 0;
    if (std::sscanf(tok.c_str(), "%lldx%lldx%lld", &m, &k, &n) == 3) {
      out.push_back({m, k, n, tok});
    } else {
      m = std::atoll(tok.c_str());
      out.push_back({m, m, m, "n=" + tok});
    }
    pos = end + 1;
  }
  return out;
}

std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    out.push_back(std::atoi(s.substr(pos, end - pos).c_str()));
    pos = end + 1;
  }
  return out;
}

uint16_t to_bf16(float f) {  // round to nearest even (finite inputs only here)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

double median_seconds(const std::function<void()>& fn, int reps, double min_time) {
  fn();  // warm-up: caches, page faults, lazily built kernels
  std::vector<double> t;
  double total = 0;
  while (static_cast<int>(t.size()) < reps || (total < min_time && t.size() < 200)) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t.push_back(dt);
    total += dt;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// oneDNN bf16 x bf16 -> f32 matmul primitive, created once per shape.
struct OnednnBf16Matmul {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::matmul prim;
  dnnl::memory a, b, c;
  OnednnBf16Matmul(const Shape& s, uint16_t* pa, uint16_t* pb, float* pc) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dnnl::memory::desc a_md({s.m, s.k}, dt::bf16, tag::ab), b_md({s.k, s.n}, dt::bf16, tag::ab),
        c_md({s.m, s.n}, dt::f32, tag::ab);
    dnnl::matmul::desc d(a_md, b_md, c_md);
    dnnl::matmul::primitive_desc pd(d, eng);
    prim = dnnl::matmul(pd);
    a = dnnl::memory(a_md, eng, pa);
    b = dnnl::memory(b_md, eng, pb);
    c = dnnl::memory(c_md, eng, pc);
  }
  void run() {
    prim.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    strm.wait();
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string shapes_arg = "256,512,1024,2048,1x4096x4096,16x4096x4096,512x4096x11008";
  std::string threads_arg = "1,2";
  int reps = 5;
  double min_time = 0.3;
  bool with_generic = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--shapes") shapes_arg = next();
    else if (a == "--threads") threads_arg = next();
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--min-time") min_time = std::atof(next().c_str());
    else if (a == "--generic") with_generic = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }

  std::vector<kc::GemmIsa> isas;
  for (kc::GemmIsa isa : {kc::GemmIsa::generic, kc::GemmIsa::avx2, kc::GemmIsa::avx512}) {
    if (kc::gemm_isa_supported(isa) && (isa != kc::GemmIsa::generic || with_generic)) isas.push_back(isa);
  }
  const bool have_bf16 = kc::gemm_isa_supported(kc::GemmIsa::avx512_bf16);

  std::printf("%-16s %3s  %-22s %9s %9s %8s %8s\n", "shape MxKxN", "thr", "implementation", "ms", "GFLOP/s",
              "/dnnl", "/oblas");
  for (const Shape& s : parse_shapes(shapes_arg)) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    std::vector<uint16_t> a16(a.size()), b16(b.size());
    for (size_t i = 0; i < a.size(); ++i) a16[i] = to_bf16(a[i]);
    for (size_t i = 0; i < b.size(); ++i) b16[i] = to_bf16(b[i]);
    const kc::MatView<const float> va{a.data(), s.m, s.k, s.k, 1}, vb{b.data(), s.k, s.n, s.n, 1};
    const kc::MatView<float> vc{c.data(), s.m, s.n, s.n, 1};
    const kc::MatView<const uint16_t> va16{a16.data(), s.m, s.k, s.k, 1}, vb16{b16.data(), s.k, s.n, s.n, 1};
    const double flops = 2.0 * s.m * s.n * s.k;

    for (int t : parse_ints(threads_arg)) {
      bp::set_num_threads(t);
      omp_set_num_threads(t);
      openblas_set_num_threads(t);
      struct Row {
        std::string name;
        double sec;
      };
      std::vector<Row> rows;
      auto time = [&](const std::string& name, const std::function<void()>& fn) {
        rows.push_back({name, median_seconds(fn, reps, min_time)});
      };
      time("dnnl_sgemm", [&] {
        dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.f, a.data(), s.k, b.data(), s.n, 0.f, c.data(), s.n);
      });
      time("openblas cblas_sgemm", [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, a.data(), s.k, b.data(), s.n,
                    0.f, c.data(), s.n);
      });
      for (kc::GemmIsa isa : isas) {
        time(std::string("builtin:") + kc::gemm_isa_name(isa), [&] { kc::gemm_f32(isa, va, vb, vc, 1.f, 0.f); });
      }
      if (have_bf16) {
        time("builtin:avx512_bf16 f32", [&] { kc::gemm_f32(kc::GemmIsa::avx512_bf16, va, vb, vc, 1.f, 0.f); });
        time("builtin:avx512_bf16 bf16",
             [&] { kc::gemm_bf16(kc::GemmIsa::avx512_bf16, va16, vb16, vc, 1.f, 0.f); });
        OnednnBf16Matmul mm(s, a16.data(), b16.data(), c.data());
        time("onednn matmul bf16", [&] { mm.run(); });
      }
      const double dnnl = rows[0].sec, oblas = rows[1].sec;
      for (const Row& r : rows) {
        std::printf("%-16s %3d  %-22s %9.3f %9.1f %8.2f %8.2f\n", s.name.c_str(), t, r.name.c_str(), r.sec * 1e3,
                    flops / r.sec * 1e-9, dnnl / r.sec, oblas / r.sec);
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
