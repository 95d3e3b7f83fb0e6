// The checks of cudnn:rnn (checks_cuda.h).

#include "ops/rnn/checks_cuda.h"

#include "backplane/dispatch_checks.h"
#include "backplane/precision.h"

namespace bp::ops::rnn::cuda_checks {
namespace {

// cuDNN's dropout draws from its own generator, so a training-mode forward
// with dropout would not match Note [RNN dropout]'s mask: it is not taken.
bool no_dropout(const Params& p, dispatch::Reasons& r) {
  return !p.dropout_active() || r.fail("no dropout between layers (cuDNN's dropout draws its own mask)",
                                       [&] { return "dropout=" + std::to_string(p.dropout) + " in training mode"; });
}

bool weight_space(const Params& p, dispatch::Reasons& r) {
  return p.layout.kind == "cudnn" ||
         r.fail("a weight buffer in cuDNN's layout", [&] { return "the " + p.layout.kind + " layout"; });
}

}  // namespace

std::vector<dispatch::Check<Params>> cudnn_checks() {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(enabled<Params>(flags::Id::cudnn_enabled));
  list.push_back(dtype_in<Params>({DType::f16, DType::f32, DType::f64}));
  list.push_back({"dropout", no_dropout});
  list.push_back({"layout", weight_space});
  return list;
}

std::vector<flags::Id> cudnn_run_flags() { return precision::path(precision::Backend::cuda, precision::Op::rnn); }

}  // namespace bp::ops::rnn::cuda_checks
