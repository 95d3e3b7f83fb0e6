// The op "mha" (nn.MultiheadAttention and nn.TransformerEncoderLayer
// forward), declared once (backplane/op_spec.h). Two entries share one
// list: "mha" is the encoder layer (what `backplane bench mha` times) and
// "multihead_attention" the attention alone. The list is PyTorch's choice:
// fastpath:cpu when every fast-path condition holds (checks.cpp, in
// PyTorch's order with PyTorch's texts), else composed:any, the slow path.
// The Python modules (python/backplane/nn/_mha.py) call these entries with
// their state; backends.mha.why_not_fast_path(module, *args) lists the
// reasons.

#include <cmath>

#include "backplane/op_spec.h"
#include "ops/mha/front.h"
#include "ops/mha/impls.h"

namespace bp::ops::mha {
namespace {

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "mha";
  c.signature = {"batch", "L", "S", "E", "heads", "ffn"};
  c.flops = [](const int64_t* d) {
    const double N = double(d[0]), L = double(d[1]), S = double(d[2]), E = double(d[3]), F = double(d[5]);
    return 2 * N * L * E * 4 * E + 4 * N * L * S * E + 4 * N * L * E * F;
  };
  c.notes = [](const dispatch::Problem&) {
    return std::vector<std::string>{
        "fastpath:cpu runs only when PyTorch's fast path would (backends.mha.get_fastpath_enabled() and every "
        "condition of spec §7); its projections go through the matmul dispatcher and its attention through sdpa's"};
  };
  return c;
}

ArgSpec required(ArgSpec a) {
  a.default_value.reset();
  return a;
}

Tensor opt(const Args& a, const char* name) { return a.is_none(name) ? Tensor() : a.tensor(name); }

Activation activation_of(const std::string& s) {
  return s == "relu" ? Activation::relu : s == "gelu" ? Activation::gelu : Activation::other;
}

EntrySpec layer_entry() {
  EntrySpec e;
  e.name = "mha";
  e.python = "backplane.nn._mha_ops.transformer_encoder_layer";
  e.doc =
      "nn.TransformerEncoderLayer.forward on explicit weights (PyTorch's names): self-attention, then the\n"
      "feed-forward block, each with a residual add and a layer norm (before, with norm_first). Keyword\n"
      "arguments carry the module's state, which the fast-path conditions judge. nested=True skips the\n"
      "positions src_key_padding_mask pads and returns zeros there (TransformerEncoder's nested path).";
  e.args = {arg::tensor("src"), required(arg::integer("num_heads", 1)),
            arg::optional_tensor("in_proj_weight"), arg::optional_tensor("in_proj_bias"),
            arg::optional_tensor("out_proj_weight"), arg::optional_tensor("out_proj_bias"),
            arg::optional_tensor("norm1_weight"), arg::optional_tensor("norm1_bias"),
            arg::optional_tensor("norm2_weight"), arg::optional_tensor("norm2_bias"),
            arg::optional_tensor("linear1_weight"), arg::optional_tensor("linear1_bias"),
            arg::optional_tensor("linear2_weight"), arg::optional_tensor("linear2_bias"),
            arg::optional_tensor("src_mask", "bool (True = not attended) or float (added), (L, S) or (N*H, L, S)"),
            arg::optional_tensor("src_key_padding_mask", "bool (True = padding) or float, (N, S)"),
            arg::boolean("is_causal", false, "hint: src_mask is causal (needs src_mask)"),
            arg::keyword_only(arg::choice("activation", {"relu", "gelu", "other"}, "relu",
                                          "'other': a Python callable, which only the module runs")),
            arg::keyword_only(arg::boolean("norm_first", false)),
            arg::keyword_only(arg::real("norm1_eps", 1e-5)),
            arg::keyword_only(arg::real("norm2_eps", 1e-5)),
            arg::keyword_only(arg::boolean("batch_first", false)),
            arg::keyword_only(arg::boolean("training", false)),
            arg::keyword_only(arg::real("dropout", 0.0)),
            arg::keyword_only(arg::boolean("nested", false, "skip the padding (zeros there)"))};
  e.prepare = [](const Args& a) {
    LayerArgs l;
    l.src = a.tensor("src");
    l.num_heads = a.integer("num_heads");
    l.in_proj_weight = opt(a, "in_proj_weight"), l.in_proj_bias = opt(a, "in_proj_bias");
    l.out_proj_weight = opt(a, "out_proj_weight"), l.out_proj_bias = opt(a, "out_proj_bias");
    l.norm1_weight = opt(a, "norm1_weight"), l.norm1_bias = opt(a, "norm1_bias");
    l.norm2_weight = opt(a, "norm2_weight"), l.norm2_bias = opt(a, "norm2_bias");
    l.linear1_weight = opt(a, "linear1_weight"), l.linear1_bias = opt(a, "linear1_bias");
    l.linear2_weight = opt(a, "linear2_weight"), l.linear2_bias = opt(a, "linear2_bias");
    l.src_mask = opt(a, "src_mask"), l.src_key_padding_mask = opt(a, "src_key_padding_mask");
    l.is_causal = a.boolean("is_causal");
    l.activation = activation_of(a.string("activation"));
    l.norm_first = a.boolean("norm_first");
    l.norm1_eps = a.real("norm1_eps"), l.norm2_eps = a.real("norm2_eps");
    l.batch_first = a.boolean("batch_first"), l.training = a.boolean("training");
    l.dropout = a.real("dropout"), l.nested = a.boolean("nested");
    return prepare_encoder_layer(l);
  };
  return e;
}

EntrySpec attention_entry() {
  EntrySpec e;
  e.name = "multihead_attention";
  e.python = "backplane.nn._mha_ops.multi_head_attention";
  e.doc =
      "nn.MultiheadAttention.forward on explicit weights (PyTorch's names); returns [attn_output] or\n"
      "[attn_output, attn_weights] (need_weights). Keyword arguments carry the module's state, which the\n"
      "fast-path conditions judge; query, key and value given as one Tensor is self-attention.";
  e.args = {arg::tensor("query"), arg::tensor("key"), arg::tensor("value"), required(arg::integer("num_heads", 1)),
            arg::optional_tensor("in_proj_weight"), arg::optional_tensor("in_proj_bias"),
            arg::optional_tensor("out_proj_weight"), arg::optional_tensor("out_proj_bias"),
            arg::optional_tensor("key_padding_mask", "bool (True = padding) or float, (N, S)"),
            arg::boolean("need_weights", true),
            arg::optional_tensor("attn_mask", "bool (True = not attended) or float (added), (L, S) or (N*H, L, S)"),
            arg::boolean("average_attn_weights", true), arg::boolean("is_causal", false),
            arg::keyword_only(arg::optional_tensor("q_proj_weight")),
            arg::keyword_only(arg::optional_tensor("k_proj_weight")),
            arg::keyword_only(arg::optional_tensor("v_proj_weight")),
            arg::keyword_only(arg::optional_tensor("bias_k")), arg::keyword_only(arg::optional_tensor("bias_v")),
            arg::keyword_only(arg::boolean("add_zero_attn", false)),
            arg::keyword_only(arg::boolean("batch_first", false)),
            arg::keyword_only(arg::boolean("training", false)),
            arg::keyword_only(arg::real("dropout", 0.0))};
  e.prepare = [](const Args& a) {
    AttentionArgs m;
    m.query = a.tensor("query"), m.key = a.tensor("key"), m.value = a.tensor("value");
    m.num_heads = a.integer("num_heads");
    m.in_proj_weight = opt(a, "in_proj_weight"), m.in_proj_bias = opt(a, "in_proj_bias");
    m.out_proj_weight = opt(a, "out_proj_weight"), m.out_proj_bias = opt(a, "out_proj_bias");
    m.key_padding_mask = opt(a, "key_padding_mask"), m.attn_mask = opt(a, "attn_mask");
    m.need_weights = a.boolean("need_weights"), m.average_attn_weights = a.boolean("average_attn_weights");
    m.is_causal = a.boolean("is_causal");
    m.q_proj_weight = opt(a, "q_proj_weight"), m.k_proj_weight = opt(a, "k_proj_weight");
    m.v_proj_weight = opt(a, "v_proj_weight");
    m.bias_k = opt(a, "bias_k"), m.bias_v = opt(a, "bias_v");
    m.add_zero_attn = a.boolean("add_zero_attn");
    m.batch_first = a.boolean("batch_first"), m.training = a.boolean("training");
    m.dropout = a.real("dropout");
    return prepare_attention(m);
  };
  return e;
}

// The benchmark's problem: a batch-first encoder layer in eval mode; `pad`
// percent of the tokens padded on average (sequence n loses about
// 2 * pad * n / (N - 1) percent, at the end, so lengths vary as in real
// batches), skipped through nested=True.
Form form() {
  Form f;
  f.entry = "mha";
  f.dims = {{"batch", 32, "batch size"},     {"seq", 128, "sequence length"},
            {"d_model", 512, "model width"}, {"heads", 8, "attention heads"},
            {"ffn", 2048, "feed-forward width"}, {"pad", 0, "percent of tokens padded (mean)", 0}};
  f.line_dims = 6;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    const int64_t N = d[0], L = d[1], E = d[2], H = d[3], F = d[4], pad = d[5];
    unsigned seed = 1;
    auto make = [&](Shape shape) {
      return random ? random_tensor(shape, dtype, seed++, device) : Tensor::zeros(shape, dtype).to(device);
    };
    std::vector<std::pair<std::string, ArgValue>> args = {
        {"src", make({N, L, E})},          {"num_heads", H},
        {"in_proj_weight", make({3 * E, E})}, {"in_proj_bias", make({3 * E})},
        {"out_proj_weight", make({E, E})}, {"out_proj_bias", make({E})},
        {"norm1_weight", make({E})},       {"norm1_bias", make({E})},
        {"norm2_weight", make({E})},       {"norm2_bias", make({E})},
        {"linear1_weight", make({F, E})},  {"linear1_bias", make({F})},
        {"linear2_weight", make({E, F})},  {"linear2_bias", make({E})},
        {"batch_first", true}};
    if (pad > 0) {
      std::vector<uint8_t> mask(static_cast<std::size_t>(N * L), 0);
      for (int64_t n = 0; n < N; ++n) {
        const double share = N > 1 ? 2.0 * double(pad) * double(n) / double(N - 1) : double(pad);
        const int64_t padded = std::min<int64_t>(L - 1, std::llround(share * double(L) / 100.0));
        for (int64_t i = L - padded; i < L; ++i) mask[static_cast<std::size_t>(n * L + i)] = 1;
      }
      args.emplace_back("src_key_padding_mask", Tensor::from_buffer(mask.data(), {N, L}, DType::boolean).to(device));
      args.emplace_back("nested", true);
    }
    return args;
  };
  return f;
}

}  // namespace

OpSpec spec() {
  OpSpec s;
  s.config = config();
  s.implementations.push_back(make_fastpath());
  s.implementations.push_back(make_composed());
  s.entries = {layer_entry(), attention_entry()};
  s.form = form();
  s.bench.peer_libraries = {"composed"};
  s.bench.peer_text = "the composed (slow) path, composed:any";
  return s;
}

}  // namespace bp::ops::mha
