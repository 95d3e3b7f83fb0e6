// The named checks of the sdpa implementations (checks.h).

#include "ops/sdpa/checks.h"

#include <cstdio>
#include <string>

#include "backplane/dispatch_checks.h"
#include "core/tensor_internal.h"

namespace bp::ops::sdpa::checks {
namespace {

std::string shape_text(const Tensor& t) { return detail::shape_str(t.shape()); }

std::string qkv_text(const Params& p, const std::function<std::string(const Tensor&)>& f) {
  return "query " + f(p.q_in) + ", key " + f(p.k_in) + ", value " + f(p.v_in);
}

}  // namespace

std::string num_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

bool no_dropout(const Params& p, Reasons& r) {
  return p.dropout_p == 0.0 || r.fail("dropout_p == 0", [&] { return "dropout_p " + num_text(p.dropout_p); });
}

bool four_dims(const Params& p, Reasons& r) {
  if (p.q_in.ndim() == 4 && p.k_in.ndim() == 4 && p.v_in.ndim() == 4) return true;
  return r.fail("4-D query, key and value", [&] {
    return qkv_text(p, [](const Tensor& t) { return std::to_string(t.ndim()) + "-D"; });
  });
}

bool batch_and_heads(const Params& p, Reasons& r) {
  const Tensor &q = p.q_in, &k = p.k_in, &v = p.v_in;
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4) return true;  // "dims" reports it; B and H need 4-D
  auto shapes = [&] { return qkv_text(p, shape_text); };
  if (q.size(0) != k.size(0) || q.size(0) != v.size(0))
    return r.fail("query, key and value of one batch size (broadcast with expand first)", shapes);
  const int64_t hq = q.size(1), hk = k.size(1), hv = v.size(1);
  if (hq == hk && hq == hv) return true;
  if (!p.enable_gqa) return r.fail("query, key and value with the same number of heads (or enable_gqa=True)", shapes);
  if (hk != hv) return r.fail("key and value with the same number of heads", shapes);
  return hq % hk == 0 || r.fail("key/value heads dividing the query heads", shapes);
}

bool mask_shape(const Params& p, Reasons& r) {
  if (!p.mask_in.defined()) return true;
  const Tensor& m = p.mask_in;
  const int64_t L = p.q_in.size(-2), S = p.k_in.size(-2);
  auto got = [&] { return "attn_mask " + shape_text(m) + " for L=" + std::to_string(L) + ", S=" + std::to_string(S); };
  const char* rule = "attn_mask 2-D ({L, 1} x {S, 1}) or 4-D ({B, 1} x {Hq, 1} x {L, 1} x {S, 1})";
  if (m.ndim() != 2 && m.ndim() != 4) return r.fail(rule, got);
  if ((m.size(-2) != L && m.size(-2) != 1) || (m.size(-1) != S && m.size(-1) != 1)) return r.fail(rule, got);
  if (m.ndim() == 4 && p.q_in.ndim() == 4 && ((m.size(0) != 1 && m.size(0) != p.q_in.size(0)) || (m.size(1) != 1 && m.size(1) != p.q_in.size(1))))
    return r.fail(rule, got);
  return true;
}

bool head_dims_equal(const Params& p, Reasons& r) {
  if (p.q_in.size(-1) == p.k_in.size(-1) && p.q_in.size(-1) == p.v_in.size(-1)) return true;
  return r.fail("query, key and value with the same last dimension", [&] {
    return qkv_text(p, [](const Tensor& t) { return "size(-1) " + std::to_string(t.size(-1)); });
  });
}

bool nonzero_seq_lens(const Params& p, Reasons& r) {
  if (p.L > 0 && p.S > 0) return true;
  return r.fail("nonzero sequence lengths", [&] { return "L=" + std::to_string(p.L) + ", S=" + std::to_string(p.S); });
}

bool last_dim_stride(const Params& p, Reasons& r) {
  auto unit = [](const Tensor& t) { return t.stride(-1) == 1 || t.size(-1) == 1; };
  if (unit(p.q_in) && unit(p.k_in) && unit(p.v_in)) return true;
  return r.fail("last dimension of query, key and value with stride 1", [&] {
    return qkv_text(p, [](const Tensor& t) { return "stride(-1) " + std::to_string(t.stride(-1)); });
  });
}

dispatch::Check<Params> float_dtype() {
  return dispatch::checks::dtype_in<Params>({DType::f32, DType::f64, DType::bf16, DType::f16});
}

// PyTorch's check_head_dim_size_mem_efficient without the CUDA GEMM
// alignment: v's head size may differ from q's; a zero-sized one would give
// the kernel empty inner products.
bool qk_head_dims(const Params& p, Reasons& r) {
  if (p.q_in.size(-1) == p.k_in.size(-1) && p.q_in.size(-1) > 0 && p.v_in.size(-1) > 0) return true;
  return r.fail("query and key with the same last dimension, query's and value's > 0", [&] {
    return qkv_text(p, [](const Tensor& t) { return "size(-1) " + std::to_string(t.size(-1)); });
  });
}

// The mem-efficient rule does not exempt size-1 head dims (spec §4.10.6).
bool last_dim_stride_strict(const Params& p, Reasons& r) {
  auto unit = [](const Tensor& t) { return t.stride(-1) == 1; };
  if (unit(p.q_in) && unit(p.k_in) && unit(p.v_in)) return true;
  return r.fail("last dimension of query, key and value with stride 1", [&] {
    return qkv_text(p, [](const Tensor& t) { return "stride(-1) " + std::to_string(t.stride(-1)); });
  });
}

}  // namespace bp::ops::sdpa::checks
