// sdpa's bench plug-in: a shape line is "B H L S D" (or "BxHxLxSxD"); inputs
// are contiguous random (B, H, L, D) / (B, H, S, D) tensors of the dtype, no
// mask, no dropout (what every implementation accepts).

#include "backplane/ops/sdpa.h"
#include "bench_driver.h"

namespace bp::cli::bench {
namespace {

std::vector<int64_t> parse(const std::string& line) {
  return parse_dims(line, 5, "bench sdpa shape", "'B H L S D' or 'BxHxLxSxD'");
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
  // No attention library is installed here (ggml, PyTorch), so the peer is
  // the naive composition NumPy-style code runs: math:any, q·kᵀ and ·v on
  // the BLAS dispatcher with the L x S scores in memory. bench/sdpa_numpy_peer.py
  // times NumPy itself.
  p.peer_libraries = {"math"};
  p.peer_text = "the naive composition, math:any";
  return p;
}

}  // namespace bp::cli::bench
