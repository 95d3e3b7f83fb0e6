// The rnn op without a GPU: cudnn:rnn's SDK-free checks (cuDNN enabled,
// dtype, no training-mode dropout, a buffer in cuDNN's layout) and the
// flags its row declares; the CPU weight layout (PyTorch's order, names,
// shapes, aligned offsets); the row order of the list.

#include <gtest/gtest.h>

#include <algorithm>

#include "backplane/backends/cudnn.h"
#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "backplane/op_spec.h"
#include "ops/rnn/checks_cuda.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {
namespace {

// The reasons cudnn:rnn's checks give for p (empty: acceptable).
std::vector<std::string> rejections(const Params& p) {
  std::vector<std::string> out;
  for (const auto& check : cuda_checks::cudnn_checks()) {
    dispatch::Reasons r(true);
    if (!check.fn(p, r)) out.push_back(check.name);
  }
  return out;
}

Params cudnn_problem() {
  Params p;
  p.cfg.mode = Mode::lstm;
  p.cfg.num_layers = 2;
  p.dtype = DType::f32;
  p.device = Device::cuda(0);
  p.layout.kind = "cudnn";
  p.steps = 4;
  p.batch = 2;
  return p;
}

TEST(RnnCudaChecks, AcceptWhatCudnnRuns) {
  EXPECT_TRUE(rejections(cudnn_problem()).empty());
  Params f64 = cudnn_problem();
  f64.dtype = DType::f64;
  EXPECT_TRUE(rejections(f64).empty());
  Params eval_dropout = cudnn_problem();
  eval_dropout.dropout = 0.5;  // dropout only matters in training mode
  EXPECT_TRUE(rejections(eval_dropout).empty());
}

TEST(RnnCudaChecks, RejectWithTheirNames) {
  Params bf16 = cudnn_problem();
  bf16.dtype = DType::bf16;
  EXPECT_EQ(rejections(bf16), std::vector<std::string>{"dtype"});
  Params train = cudnn_problem();
  train.dropout = 0.5;
  train.train = true;
  EXPECT_EQ(rejections(train), std::vector<std::string>{"dropout"});
  Params one_layer = train;
  one_layer.cfg.num_layers = 1;  // no layer below another: nothing to drop
  EXPECT_TRUE(rejections(one_layer).empty());
  Params cpu_layout = cudnn_problem();
  cpu_layout.layout.kind = "cpu";
  EXPECT_EQ(rejections(cpu_layout), std::vector<std::string>{"layout"});
  {
    backends::cudnn::flags_guard off({.enabled = false});
    EXPECT_EQ(rejections(cudnn_problem()), std::vector<std::string>{"enabled"});
  }
  EXPECT_TRUE(rejections(cudnn_problem()).empty());
}

TEST(RnnCudaChecks, DeclaredFlagsAndListOrder) {
  ensure_ops();
  const dispatch::Op& op = rnn_op();
  std::vector<std::string> names;
  for (const dispatch::Implementation* impl : op.implementations()) names.push_back(impl->name());
  EXPECT_EQ(names, (std::vector<std::string>{"cudnn:rnn", "packed:avx512_bf16", "packed:cpu", "onednn:rnn", "ref:any"}));
  const auto reads = op.find("cudnn:rnn")->flags_read();
  auto has = [&](flags::Id id) { return std::find(reads.begin(), reads.end(), id) != reads.end(); };
  EXPECT_TRUE(has(flags::Id::cudnn_enabled));
  EXPECT_TRUE(has(flags::Id::cudnn_rnn_fp32_precision));
}

TEST(RnnLayout, CpuLayoutIsPyTorchsOrderAligned) {
  Config c;
  c.mode = Mode::lstm;
  c.input_size = 3;
  c.hidden_size = 5;
  c.proj_size = 2;
  c.num_layers = 2;
  c.bidirectional = true;
  const WeightLayout w = cpu_layout(c);
  ASSERT_EQ(w.slots.size(), 20u);
  EXPECT_EQ(w.slots[0].name, "weight_ih_l0");
  EXPECT_EQ(w.slots[4].name, "weight_hr_l0");
  EXPECT_EQ(w.slots[5].name, "weight_ih_l0_reverse");
  EXPECT_EQ(w.slots[10].shape, (Shape{20, 4}));  // layer 1's input: 2 directions x proj_size
  EXPECT_EQ(w.slots[11].shape, (Shape{20, 2}));
  int64_t end = 0;
  for (const ParamSlot& s : w.slots) {
    EXPECT_EQ(s.offset % kCpuAlign, 0) << s.name;
    EXPECT_GE(s.offset, end) << s.name;  // no overlap
    end = s.offset + s.numel();
  }
  EXPECT_LE(end, w.total);
  EXPECT_EQ(slot_index(c, 1, 1, Which::w_hr), 19);
  c.has_bias = false;
  EXPECT_EQ(slot_index(c, 0, 0, Which::b_ih), -1);
  EXPECT_EQ(slot_index(c, 0, 1, Which::w_hr), 5);
}

TEST(RnnLayout, BadConfigurationsNameTheValue) {
  Config c;
  c.mode = Mode::gru;
  c.proj_size = 1;
  c.hidden_size = 4;
  try {
    c.validate("rnn");
    FAIL() << "a GRU with proj_size was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("proj_size only with LSTM"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_mode("LSTM2"), Error);
  EXPECT_EQ(parse_mode("RNN_RELU"), Mode::rnn_relu);
}

}  // namespace
}  // namespace bp::ops::rnn
