// The mha op from C++: fastpath:cpu's conditions are PyTorch's, in
// PyTorch's order; the fast path (padding skipped or not) and the composed
// path agree on the benchmark form's problems at one and two threads (the
// row passes run on OpenMP teams); the fastpath switch picks composed:any.
// The float64 oracle and every option are in tests/python/test_mha.py.

#include <gtest/gtest.h>

#include <cmath>

#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "backplane/op_spec.h"
#include "backplane/runtime.h"

namespace bp::ops {
namespace {

Tensor run_layer(const std::vector<int64_t>& dims, const char* impl) {
  const OpInfo& op = op_info("mha");
  const EntrySpec& e = entry("mha");
  const dispatch::ImplementationsGuard only("mha", {impl});
  return std::get<std::vector<Tensor>>(run(e.prepare(bind(e, {}, op.form->make(dims, DType::f32, Device::cpu(), true)))))[0];
}

double max_diff(const Tensor& a, const Tensor& b) {
  const Tensor x = a.contiguous(), y = b.contiguous();
  double m = 0;
  for (int64_t i = 0; i < x.numel(); ++i) m = std::max(m, std::abs(double(x.data_ptr<float>()[i]) - y.data_ptr<float>()[i]));
  return m;
}

TEST(Mha, FastPathConditionsAreInPyTorchsOrder) {
  const dispatch::Op& op = dispatch_op("mha");
  std::vector<std::string> names;
  for (const auto& impl : op.implementations())
    if (impl->name() == "fastpath:cpu") names = impl->check_names();
  const std::vector<std::string> want = {
      "fastpath_enabled", "batched",  "self_attention", "in_proj_bias_dtype", "in_proj_weight",
      "in_proj_weight_dtype", "training", "num_heads", "batch_first", "layer_bias", "bias_k", "bias_v",
      "add_zero_attn", "qkv_same_embed_dim", "activation", "norm_eps", "layer_num_heads", "float_masks",
      "in_proj_bias", "dtype"};
  EXPECT_EQ(names, want);
}

TEST(Mha, FastAndComposedPathsAgreeAtOneAndTwoThreads) {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    // Several token blocks (Note [Token blocks], 512 rows): many short sequences per block, one per
    // block, and one longer than a block; padded (nested) and whole.
    for (std::vector<int64_t> dims : {std::vector<int64_t>{3, 9, 16, 4, 24, 0}, {4, 10, 16, 2, 8, 40},
                                      {1, 7, 8, 2, 16, 30}, {9, 130, 8, 2, 8, 30}, {3, 300, 8, 2, 8, 0},
                                      {2, 600, 8, 2, 8, 10}}) {
      const Tensor fast = run_layer(dims, "fastpath:cpu"), slow = run_layer(dims, "composed:any");
      EXPECT_LT(max_diff(fast, slow), 1e-4) << "threads " << threads << " pad " << dims[5];
    }
  }
  set_num_threads(1);
}

TEST(Mha, TheSwitchPicksTheComposedPath) {
  const OpInfo& op = op_info("mha");
  const EntrySpec& e = entry("mha");
  const Call call = e.prepare(bind(e, {}, op.form->make({2, 4, 8, 2, 8, 0}, DType::f32, Device::cpu(), true)));
  EXPECT_EQ(explain(call).chosen->name(), "fastpath:cpu");
  backends::mha::set_fastpath_enabled(false);
  const dispatch::Decision d = explain(call);
  backends::mha::set_fastpath_enabled(true);
  EXPECT_EQ(d.chosen->name(), "composed:any");
  EXPECT_EQ(d.rows[0].reasons.at(0).text(), "fastpath_enabled: torch.backends.mha.get_fastpath_enabled() was not True");
}

}  // namespace
}  // namespace bp::ops
