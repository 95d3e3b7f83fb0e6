// `backplane explain sdpa --batch B --heads H [--kv-heads HKV] --l L --s S
// --e E [--ev EV] [--dtype f32] [--mask none|bool|float] [--causal]
// [--dropout P] [--gqa] [--device cuda]`: the sdpa decision table for one call, with the
// process's flags as they are.

#include <fmt/core.h>

#include <memory>

#include "backplane/ops/sdpa.h"
#include "commands.h"

namespace bp::cli {

void add_explain_sdpa(CLI::App& explain) {
  struct Options {
    int64_t batch = 1, heads = 8, kv_heads = 0, l = 1024, s = 1024, e = 64, ev = 0;
    std::string dtype = "f32", mask = "none", device = "cpu";
    double dropout = 0.0;
    bool causal = false, gqa = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = explain.add_subcommand("sdpa", "scaled_dot_product_attention of (B, H, L, E) queries");
  cmd->add_option("--batch", o->batch, "batch size")->check(CLI::NonNegativeNumber);
  cmd->add_option("--heads", o->heads, "query heads")->check(CLI::NonNegativeNumber);
  cmd->add_option("--kv-heads", o->kv_heads, "key/value heads (0: as query)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--l", o->l, "query length")->check(CLI::NonNegativeNumber);
  cmd->add_option("--s", o->s, "key/value length")->check(CLI::NonNegativeNumber);
  cmd->add_option("--e", o->e, "head dim of q and k")->check(CLI::NonNegativeNumber);
  cmd->add_option("--ev", o->ev, "head dim of v (0: as e)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--dtype", o->dtype, "f32, f64, f16 or bf16");
  cmd->add_option("--mask", o->mask, "none, bool or float (a (L, S) mask)")
      ->check(CLI::IsMember({"none", "bool", "float"}));
  cmd->add_option("--dropout", o->dropout, "dropout_p");
  cmd->add_flag("--causal", o->causal, "is_causal=True");
  cmd->add_flag("--gqa", o->gqa, "enable_gqa=True");
  cmd->add_option("--device", o->device, "cpu or cuda[:N] (where the tensors live)");
  cmd->callback([o] {
    const DType dtype = parse_dtype(o->dtype);
    const Device device = parse_device(o->device);
    const int64_t hkv = o->kv_heads ? o->kv_heads : o->heads, ev = o->ev ? o->ev : o->e;
    const Tensor q = Tensor::zeros({o->batch, o->heads, o->l, o->e}, dtype).to(device);
    const Tensor k = Tensor::zeros({o->batch, hkv, o->s, o->e}, dtype).to(device);
    const Tensor v = Tensor::zeros({o->batch, hkv, o->s, ev}, dtype).to(device);
    Tensor mask;
    if (o->mask != "none")
      mask = Tensor::zeros({o->l, o->s}, o->mask == "bool" ? DType::boolean : dtype).to(device);
    const dispatch::Decision d = explain_sdpa(q, k, v, mask, o->dropout, o->causal, std::nullopt, o->gqa);
    fmt::print("{}", d.text());
    if (d.chosen == nullptr) fmt::print("  => no implementation accepts this problem\n");
    std::fflush(stdout);
  });
}

}  // namespace bp::cli
