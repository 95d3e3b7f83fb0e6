#pragma once
// The conv front end (conv.cpp): conv1d/2d/3d and conv_transpose1d/2d/3d
// with torch.nn.functional's semantics, validated (errors as PyTorch's,
// naming the argument and the value) and reduced to one call (Note [Conv
// params]) for the entries of op.cpp and the typed C++ API alike.

#include <string>
#include <vector>

#include "backplane/op_spec.h"

namespace bp::ops::conv {

// One call's arguments as the entries bind them. `padding_mode` is "" when
// `padding` holds numbers, else "same" or "valid" (forward only).
struct ConvArgs {
  int spatial = 2;  // 1, 2, 3
  bool transposed = false;
  Tensor input, weight, bias;
  std::vector<int64_t> stride = {1}, padding = {0}, dilation = {1}, output_padding = {0};
  std::string padding_mode;
  int64_t groups = 1;
};

// "conv2d", "conv_transpose3d": the entry's name, the subject of its errors.
std::string entry_name(int spatial, bool transposed);

Call prepare_conv(const ConvArgs& args);

}  // namespace bp::ops::conv
