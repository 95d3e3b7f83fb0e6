#pragma once
// The parameters every mha implementation receives (fastpath:cpu,
// composed:any), for both entries: "mha" (nn.MultiheadAttention.forward)
// and "transformer_encoder_layer" (nn.TransformerEncoderLayer.forward).
//
// Note [MHA params]
// The front end (front.cpp) validates the call as PyTorch does and keeps
// two kinds of fields:
// - what to compute: the inputs made batch-first and contiguous ([N, L, E]
//   query, [N, S, kdim|vdim] key/value), the weights, the masks already
//   canonicalised (PyTorch's F._canonical_mask: a bool mask's True, which
//   means "do not attend", becomes -inf; a float mask is added) and
//   reshaped to broadcast against the [N, H, L, S] scores, and `out`;
// - the facts the fast-path conditions judge (spec §7.1/§7.2): module state
//   (training, batch_first, bias_k / bias_v, add_zero_attn, the activation),
//   whether query, key and value are one tensor, the caller's query rank
//   and dtypes. The checks (checks.cpp) read only these and the flag.
// Every implementation computes the same function of the first kind; the
// fast path merely refuses what PyTorch's fast path refuses.

#include <cstdint>
#include <vector>

#include "backplane/dispatch.h"
#include "backplane/tensor.h"

namespace bp::ops::mha {

enum class Kind { attention, encoder_layer };
// What the feed-forward block applies: relu, gelu (exact, erf), or a Python
// callable (`other`), which only TransformerEncoderLayer's own Python code runs.
enum class Activation { relu, gelu, other };

struct Params {
  Kind kind = Kind::attention;
  // ---- what to compute
  Tensor x;            // query (src) [N, L, E], batch-first, contiguous
  Tensor key, value;   // [N, S, kdim], [N, S, vdim] (attention entry; the encoder layer attends to x)
  Tensor in_w, in_b;   // packed [3E, E], [3E] (in_w undefined when q/k/v weights are separate)
  Tensor q_w, k_w, v_w;  // [E, E], [E, kdim], [E, vdim] when kdim/vdim differ from E
  Tensor out_w, out_b;   // [E, E], [E]
  Tensor bias_k, bias_v;  // [1, 1, E] or undefined
  bool add_zero_attn = false;
  // Masks in the compute dtype: attn [1|N, 1|H, L, S], key padding [N, 1, 1, S] (S before bias_k / zero attn).
  Tensor attn_mask, kpm;
  Tensor kpm_in;       // the caller's key padding mask (bool or float), for packing: a row is padding where != 0
  bool is_causal = false;  // PyTorch's hint: attn_mask is causal (Note [is_causal hint] in front.cpp)
  bool need_weights = false, average_attn_weights = true;
  // encoder layer
  Tensor n1_w, n1_b, n2_w, n2_b, l1_w, l1_b, l2_w, l2_b;
  double eps1 = 1e-5, eps2 = 1e-5;
  Activation activation = Activation::relu;
  bool norm_first = false;
  // Return zeros at padded positions and skip them (TransformerEncoder's
  // nested-tensor path, spec §7.3); needs a key padding mask.
  bool nested = false;
  int64_t N = 0, L = 0, S = 0, E = 0, H = 0, D = 0, kdim = 0, vdim = 0, F = 0;
  DType dtype = DType::f32;
  Device device = Device::cpu();
  // outputs: out in the caller's layout ([N, L, E] batch-first, else [L, N, E]); weights [N, (H,) L, S']
  Tensor out, weights;

  // ---- facts the fast-path conditions judge
  int64_t query_dim = 3;          // the caller's query rank (2: unbatched)
  bool self_attention = true;     // query, key and value are one tensor
  bool training = false, batch_first = false;
  double dropout = 0.0;           // the module's; applied only in training mode, which no implementation runs yet
  bool float_masks = false;       // a floating-point attn_mask or key_padding_mask was given
  DType in_w_dtype = DType::f32, in_b_dtype = DType::f32;
};

enum LayoutBits : uint32_t {
  kEncoderLayer = 1u << 0,
  kAttnMask = 1u << 1,
  kPaddingMask = 1u << 2,
  kNeedWeights = 1u << 3,
  kNested = 1u << 4,
  kNormFirst = 1u << 5,
};

dispatch::Op& mha_op();
// dims (batch, L, S, E, heads, ffn), dtype, layout bits, flops.
dispatch::Problem problem_of(const Params& p);

}  // namespace bp::ops::mha
