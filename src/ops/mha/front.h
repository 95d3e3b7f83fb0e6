#pragma once
// The mha front end (front.cpp): PyTorch's validation of
// MultiheadAttention.forward and TransformerEncoderLayer.forward, reduced to
// one Params (Note [MHA params]) and a Call.

#include <memory>

#include "backplane/op_spec.h"
#include "ops/mha/params.h"

namespace bp::ops::mha {

struct AttentionArgs {
  Tensor query, key, value;
  int64_t num_heads = 1;
  Tensor in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias;
  Tensor q_proj_weight, k_proj_weight, v_proj_weight, bias_k, bias_v;
  Tensor key_padding_mask, attn_mask;
  bool add_zero_attn = false, need_weights = true, average_attn_weights = true, is_causal = false;
  bool batch_first = false, training = false;
  double dropout = 0.0;
};

struct LayerArgs {
  Tensor src;
  int64_t num_heads = 1;
  Tensor in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias;
  Tensor norm1_weight, norm1_bias, norm2_weight, norm2_bias;
  Tensor linear1_weight, linear1_bias, linear2_weight, linear2_bias;
  Tensor src_mask, src_key_padding_mask;
  bool is_causal = false, norm_first = false, batch_first = false, training = false, nested = false;
  Activation activation = Activation::relu;
  double norm1_eps = 1e-5, norm2_eps = 1e-5, dropout = 0.0;
};

Call prepare_attention(const AttentionArgs& a);
Call prepare_encoder_layer(const LayerArgs& a);

}  // namespace bp::ops::mha
