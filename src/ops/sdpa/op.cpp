// The op "sdpa" (scaled_dot_product_attention), declared once
// (backplane/op_spec.h): its one ordered list, its entry and its shape form.
//
// The list is PyTorch's CPU order (spec §4.10.8, select_sdp_backend_cpp),
// flash first, with Backplane's efficient:cpu after it (governed by
// cuda.mem_efficient_sdp_enabled, which PyTorch's CPU chooser ignores): it
// takes what flash refuses for shape reasons (any broadcast mask, Ev != E)
// without the math path's L x S scores. The CPU ignores
// cuda.sdp_priority_order and the cuDNN flag, as PyTorch's CPU chooser does.
// Then the CUDA rows, slots that backplane_cuda fills; CUDA problems take
// them in cuda.sdp_priority_order (priority.h). math:any is the reference:
// it accepts every valid CPU problem, so it stays last.

#include "backplane/op_spec.h"
#include "ops/common/cuda_slot.h"
#include "ops/sdpa/checks_cuda.h"
#include "ops/sdpa/impls.h"
#include "ops/sdpa/priority.h"

namespace bp::ops::sdpa {
namespace {

std::vector<std::string> explain_notes(const dispatch::Problem& p) {
  if (p.device.is_cuda())
    return {"CUDA order follows cuda.sdp_priority_order: " + priority_text() +
            " (cuDNN moves first on the first CUDA call where PyTorch prefers it, unless the order was set)"};
  return {"CPU order is fixed (flash:cpu, efficient:cpu, math:any): cuda.sdp_priority_order and the cuDNN flag "
          "do not apply to CPU tensors; cuda.mem_efficient_sdp_enabled governs efficient:cpu (a Backplane addition)"};
}

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "sdpa";
  c.signature = {"batch", "L", "S", "E", "Ev"};
  c.flops = [](const int64_t* d) { return 2.0 * double(d[0]) * double(d[1]) * double(d[2]) * double(d[3] + d[4]); };
  c.notes = explain_notes;
  // backends.cpu.benchmark times flash:cpu against efficient:cpu (math:any,
  // the reference, only runs when nothing else is acceptable). CUDA keeps
  // the priority order: PyTorch does not autotune attention.
  c.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  c.rank = priority_rank;
  c.rank_reads = {flags::Id::cuda_sdp_priority_order};
  return c;
}

std::vector<std::unique_ptr<dispatch::Implementation>> implementations() {
  std::vector<std::unique_ptr<dispatch::Implementation>> list;
  list.push_back(make_flash_cpu());
  list.push_back(make_efficient_cpu());
  {
    dispatch::Properties props;
    props.deterministic = false;
    props.workspace = "cuDNN's workspace for the graph (its own buffer per thread)";
    list.push_back(cuda_slot<Params>("cudnn:sdpa", "cudnn", props, cuda_checks::cudnn_checks()));
  }
  {
    dispatch::Properties props;
    props.reduced = dispatch::kTf32;  // its fp32 GEMMs follow cuda.matmul.fp32_precision
    props.workspace = "the L x S scores of every batch entry";
    props.calls = {"matmul"};
    list.push_back(cuda_slot<Params>("math:cuda", "cuda", props, cuda_checks::math_cuda_checks(),
                                     {flags::Id::cuda_fp16_bf16_reduction_math_sdp_allowed}));
  }
  list.push_back(make_math());
  return list;
}

Form form() {
  Form f;
  f.entry = "sdpa";
  f.dims = {{"batch", 1, "batch size"},         {"heads", 8, "query heads"},
            {"l", 1024, "query length"},        {"s", 1024, "key/value length"},
            {"e", 64, "head dim of q and k"},   {"kv_heads", 0, "key/value heads (0: as query)"},
            {"ev", 0, "head dim of v (0: as e)"}};
  f.line_dims = 5;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    const int64_t B = d[0], H = d[1], L = d[2], S = d[3], E = d[4];
    const int64_t Hkv = d[5] ? d[5] : H, Ev = d[6] ? d[6] : E;
    auto make = [&](Shape shape, unsigned seed) {
      return random ? random_tensor(shape, dtype, seed, device) : Tensor::zeros(shape, dtype).to(device);
    };
    std::vector<std::pair<std::string, ArgValue>> args = {
        {"query", make({B, H, L, E}, 1)}, {"key", make({B, Hkv, S, E}, 2)}, {"value", make({B, Hkv, S, Ev}, 3)}};
    if (Hkv != H) args.emplace_back("enable_gqa", true);
    return args;
  };
  return f;
}

EntrySpec entry() {
  EntrySpec e;
  e.name = "sdpa";
  e.python = "backplane.nn.functional.scaled_dot_product_attention";
  e.doc =
      "softmax(query @ key.T * scale + mask) @ value, as torch.nn.functional.scaled_dot_product_attention.\n\n"
      "query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev). attn_mask: bool (True = take\n"
      "part) or float (added to the scores), broadcastable to (..., L, S). is_causal: query i sees keys\n"
      "j <= i (top-left aligned). scale defaults to 1/sqrt(E). enable_gqa: query heads (size(-3)) may be a\n"
      "multiple of key/value heads. dropout_p draws from backplane's default generator.";
  e.args = {arg::tensor("query"),          arg::tensor("key"),          arg::tensor("value"),
            arg::optional_tensor("attn_mask"), arg::real("dropout_p", 0.0), arg::boolean("is_causal", false),
            arg::keyword_only(arg::optional_real("scale")), arg::keyword_only(arg::boolean("enable_gqa", false))};
  e.prepare = [](const Args& a) {
    return prepare_sdpa(a.tensor("query"), a.tensor("key"), a.tensor("value"), a.tensor("attn_mask"),
                        a.real("dropout_p"), a.boolean("is_causal"), a.optional_real("scale"), a.boolean("enable_gqa"));
  };
  return e;
}

}  // namespace

dispatch::Op& sdpa_op() {
  static dispatch::Op& op = dispatch_op("sdpa");
  return op;
}

OpSpec spec() {
  OpSpec s;
  s.config = config();
  s.implementations = implementations();
  s.entries = {entry()};
  s.form = form();
  // No attention library is installed here (ggml, PyTorch), so the peer is
  // the naive composition NumPy-style code runs: math:any, q·kᵀ and ·v on
  // the BLAS dispatcher with the L x S scores in memory.
  // bench/sdpa_numpy_peer.py times NumPy itself.
  s.bench.peer_libraries = {"math"};
  s.bench.peer_text = "the naive composition, math:any";
  return s;
}

}  // namespace bp::ops::sdpa
