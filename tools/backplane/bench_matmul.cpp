// matmul's bench plug-in: a shape line is "m n k" (or "MxNxK"); inputs are
// contiguous random matrices of the dtype. Extras: the dispatch overhead of a
// 1x1x1 problem with a warm cache (the 1 us budget of docs/dispatch.md).

#include <chrono>

#include "backplane/ops/matmul.h"
#include "bench_driver.h"
#include "ops/matmul/impl_list.h"
#include "ops/matmul/params.h"

namespace bp::cli::bench {
namespace {

std::vector<int64_t> parse(const std::string& line) {
  return parse_dims(line, 3, "bench matmul shape", "'m n k' or 'MxNxK'");
}

Prepared prepare(const std::vector<int64_t>& s, DType dtype) {
  const int64_t m = s[0], n = s[1], k = s[2];
  auto a = std::make_shared<Tensor>(random_tensor({m, k}, dtype, 1));
  auto b = std::make_shared<Tensor>(random_tensor({k, n}, dtype, 2));
  Prepared p;
  p.label = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  p.flops = 2.0 * double(m) * double(n) * double(k);
  p.run = [a, b] { (void)matmul(*a, *b); };
  p.explain = [a, b] { return explain_matmul(*a, *b); };
  return p;
}

// Nanoseconds per select() on a 1x1x1 problem, averaged over many calls.
double select_ns(const ops::matmul::Params& params, int iterations) {
  const dispatch::Problem problem = ops::matmul::problem_of(params);
  const dispatch::Op& op = ops::matmul::matmul_op();
  (void)dispatch::select(op, problem, &params);  // warm: availability, autotune cache
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) (void)dispatch::select(op, problem, &params);
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / iterations;
}

nlohmann::json dispatch_overhead() {
  ops::matmul::Params p;
  p.a = random_tensor({1, 1}, DType::f32, 1);
  p.b = random_tensor({1, 1}, DType::f32, 2);
  p.out = Tensor::empty({1, 1}, DType::f32);
  p.m = p.n = p.k = 1;
  nlohmann::json out;
  out["select_ns_first_acceptable"] = select_ns(p, 200000);
  {
    backends::cpu::flags_guard g({.benchmark = true});
    out["select_ns_autotune_cache"] = select_ns(p, 200000);
  }
  return out;
}

}  // namespace

Plugin bench_plugin_matmul() {
  Plugin p;
  p.op = "matmul";
  p.shape_help = "m n k";
  p.parse_shape = parse;
  p.prepare = prepare;
  p.extras = [] { return nlohmann::json{{"dispatch overhead (1x1x1, warm)", dispatch_overhead()}}; };
  p.peer_libraries = {"openblas", "onednn"};
  p.peer_text = "OpenBLAS/oneDNN";
  return p;
}

}  // namespace bp::cli::bench
