// The fast-path conditions (checks.h). A reason has no "expected" part:
// "<check>: <PyTorch's text>", e.g. "training: training is enabled".

#include "ops/mha/checks.h"

#include <sstream>
#include <string>

#include "backplane/dispatch_checks.h"
#include "backplane/flags.h"

namespace bp::ops::mha::checks {
namespace {

using dispatch::Reasons;
using C = dispatch::Check<Params>;

bool is_attention(const Params& p) { return p.kind == Kind::attention; }
bool is_layer(const Params& p) { return p.kind == Kind::encoder_layer; }
std::string dt(DType d) { return std::string(dtype_name(d)); }

bool fail(Reasons& r, const std::string& why) { return r.fail(std::string_view(), std::string_view(why)); }

// An attention-only condition: passes for the encoder layer.
C attention_only(const char* name, bool (*ok)(const Params&), std::string (*why)(const Params&)) {
  return C{name, [ok, why](const Params& p, Reasons& r) {
             return !is_attention(p) || ok(p) || (r.collecting() ? fail(r, why(p)) : r.fail("", ""));
           }};
}
C layer_only(const char* name, bool (*ok)(const Params&), const char* why) {
  return C{name, [ok, why](const Params& p, Reasons& r) { return !is_layer(p) || ok(p) || fail(r, why); }};
}
C both(const char* name, bool (*ok)(const Params&), std::string (*why)(const Params&)) {
  return C{name, [ok, why](const Params& p, Reasons& r) {
             return ok(p) || (r.collecting() ? fail(r, why(p)) : r.fail("", ""));
           }};
}

}  // namespace

std::vector<C> fastpath_conditions() {
  std::vector<C> list;
  list.push_back(C{"fastpath_enabled",
                   [](const Params&, Reasons& r) {
                     return flags::get_raw(flags::Id::mha_fastpath_enabled) != 0 ||
                            fail(r, "torch.backends.mha.get_fastpath_enabled() was not True");
                   },
                   {flags::Id::mha_fastpath_enabled}});
  list.push_back(both(
      "batched", [](const Params& p) { return p.query_dim == 3; },
      [](const Params& p) {
        return std::string("input not batched; expected ") + (is_layer(p) ? "src" : "query") + ".dim() of 3 but got " +
               std::to_string(p.query_dim);
      }));
  list.push_back(attention_only(
      "self_attention", [](const Params& p) { return p.self_attention; },
      [](const Params&) {
        return std::string("non-self attention was used (query, key, and value are not the same Tensor)");
      }));
  list.push_back(attention_only(
      "in_proj_bias_dtype", [](const Params& p) { return !p.in_b.defined() || p.in_b_dtype == p.dtype; },
      [](const Params& p) {
        return "dtypes of query (" + dt(p.dtype) + ") and self.in_proj_bias (" + dt(p.in_b_dtype) + ") don't match";
      }));
  list.push_back(attention_only(
      "in_proj_weight", [](const Params& p) { return p.in_w.defined(); },
      [](const Params&) { return std::string("in_proj_weight was None"); }));
  list.push_back(attention_only(
      "in_proj_weight_dtype", [](const Params& p) { return !p.in_w.defined() || p.in_w_dtype == p.dtype; },
      [](const Params& p) {
        return "dtypes of query (" + dt(p.dtype) + ") and self.in_proj_weight (" + dt(p.in_w_dtype) + ") don't match";
      }));
  list.push_back(both(
      "training", [](const Params& p) { return !p.training; },
      [](const Params&) { return std::string("training is enabled"); }));
  list.push_back(attention_only(
      "num_heads", [](const Params& p) { return p.H % 2 == 0; },
      [](const Params&) { return std::string("self.num_heads is not even"); }));
  list.push_back(both(
      "batch_first", [](const Params& p) { return p.batch_first; },
      [](const Params& p) {
        return std::string(is_layer(p) ? "self_attn.batch_first was not True" : "batch_first was not True");
      }));
  list.push_back(layer_only(
      "layer_bias", [](const Params& p) { return p.in_b.defined(); }, "self_attn was passed bias=False"));
  list.push_back(attention_only(
      "bias_k", [](const Params& p) { return !p.bias_k.defined(); },
      [](const Params&) { return std::string("self.bias_k was not None"); }));
  list.push_back(attention_only(
      "bias_v", [](const Params& p) { return !p.bias_v.defined(); },
      [](const Params&) { return std::string("self.bias_v was not None"); }));
  list.push_back(attention_only(
      "add_zero_attn", [](const Params& p) { return !p.add_zero_attn; },
      [](const Params&) { return std::string("add_zero_attn was enabled"); }));
  list.push_back(attention_only(
      "qkv_same_embed_dim", [](const Params& p) { return p.kdim == p.E && p.vdim == p.E; },
      [](const Params&) { return std::string("_qkv_same_embed_dim was not True"); }));
  list.push_back(layer_only(
      "activation", [](const Params& p) { return p.activation != Activation::other; },
      "activation_relu_or_gelu was not True"));
  list.push_back(layer_only(
      "norm_eps", [](const Params& p) { return p.eps1 == p.eps2; }, "norm1.eps is not equal to norm2.eps"));
  list.push_back(layer_only(
      "layer_num_heads", [](const Params& p) { return p.H % 2 == 0; }, "num_head is odd"));
  // PyTorch notes float masks before its chain and lets any later failure
  // overwrite the text, so this reason is the first only when nothing above fails.
  list.push_back(attention_only(
      "float_masks", [](const Params& p) { return !p.float_masks; },
      [](const Params&) { return std::string("floating-point masks are not supported for fast path."); }));
  // PyTorch calls the native op only with a bias (bias=False silently takes the slow path).
  list.push_back(attention_only(
      "in_proj_bias", [](const Params& p) { return p.in_b.defined(); },
      [](const Params&) { return std::string("in_proj_bias was None (bias=False)"); }));
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64}));
  return list;
}

std::vector<C> composed_conditions() {
  std::vector<C> list;
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64}));
  // Forward-only: dropout in training mode is refused, never skipped silently.
  list.push_back(C{"dropout", [](const Params& p, Reasons& r) {
                     return !p.training || p.dropout == 0 ||
                            r.fail("dropout 0 or eval mode (Backplane's modules are forward-only: call eval())",
                                   [&] {
                                     std::ostringstream s;
                                     s << "dropout " << p.dropout << " in training mode";
                                     return s.str();
                                   });
                   }});
  list.push_back(C{"activation", [](const Params& p, Reasons& r) {
                     return p.activation != Activation::other ||
                            r.fail("relu or gelu", "a Python callable (TransformerEncoderLayer runs it in Python)");
                   }});
  return list;
}

}  // namespace bp::ops::mha::checks
