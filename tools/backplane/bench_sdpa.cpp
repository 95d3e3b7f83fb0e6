// sdpa's bench plug-in: a shape line is "B H L S D" (or "BxHxLxSxD"); inputs
// are contiguous random (B, H, L, D) / (B, H, S, D) tensors of the dtype, no
// mask, no dropout (what every implementation accepts).

#include <random>
#include <sstream>

#include "backplane/ops/sdpa.h"
#include "bench_driver.h"

namespace bp::cli::bench {
namespace {

Tensor random_tensor(const Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(gen);
  return Tensor::from_vector(v, shape).to(dtype);
}

std::vector<int64_t> parse(const std::string& line) {
  std::string s = line;
  for (char& c : s)
    if (c == 'x' || c == 'X' || c == ',') c = ' ';
  std::istringstream in(s);
  std::vector<int64_t> dims;
  int64_t d;
  while (in >> d) dims.push_back(d);
  bool ok = dims.size() == 5 && in.eof();
  for (int64_t x : dims) ok = ok && x >= 1;
  if (!ok) throw_bad_value("bench sdpa shape", "'" + line + "'", "'B H L S D' or 'BxHxLxSxD' with positive integers");
  return dims;
}

Prepared prepare(const std::vector<int64_t>& s, DType dtype) {
  const int64_t B = s[0], H = s[1], L = s[2], S = s[3], D = s[4];
  auto q = std::make_shared<Tensor>(random_tensor({B, H, L, D}, dtype, 1));
  auto k = std::make_shared<Tensor>(random_tensor({B, H, S, D}, dtype, 2));
  auto v = std::make_shared<Tensor>(random_tensor({B, H, S, D}, dtype, 3));
  Prepared p;
  p.label = std::to_string(B) + "x" + std::to_string(H) + "x" + std::to_string(L) + "x" + std::to_string(S) + "x" +
            std::to_string(D);
  p.flops = 4.0 * double(B) * double(H) * double(L) * double(S) * double(D);
  p.run = [q, k, v] { (void)sdpa(*q, *k, *v); };
  p.explain = [q, k, v] { return explain_sdpa(*q, *k, *v); };
  return p;
}

}  // namespace

Plugin bench_plugin_sdpa() {
  Plugin p;
  p.op = "sdpa";
  p.shape_help = "B H L S D";
  p.parse_shape = parse;
  p.prepare = prepare;
  return p;
}

}  // namespace bp::cli::bench
