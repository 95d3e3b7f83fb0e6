// The op "conv" (conv1d/2d/3d and conv_transpose1d/2d/3d), declared once
// (backplane/op_spec.h): its one ordered list, its entries and its shape
// form.
//
// The order is the default preference (first acceptable wins unless
// autotuning is on), which the op's rank adjusts per problem (Note [Conv
// default order], order.h: Winograd, im2col or the direct kernels first
// for f32 layers where they were measured faster): oneDNN first, as
// PyTorch's CPU convolutions; then
// Backplane's own kernels (Winograd for 3x3 unit-stride layers, the direct
// kernels from the widest ISA down), the lowering to matmul, the CUDA rows
// (slots that backplane_cuda fills: cuDNN, the native depthwise kernel, a
// plain reference kernel) and the CPU reference, which accepts every valid
// CPU problem. cpu.benchmark autotunes the CPU rows per problem;
// cudnn.benchmark makes cudnn:conv time cuDNN's engine configurations.

#include "backends/onednn/onednn_bf16.h"
#include "backplane/dispatch_checks.h"
#include "backplane/op_spec.h"
#include "backplane/precision.h"
#include "backplane_build_config.h"
#include "ops/common/cuda_slot.h"
#include "ops/conv/checks_cuda.h"
#include "ops/conv/front.h"
#include "ops/conv/impls.h"
#include "ops/conv/order.h"
#include "ops/conv/params.h"

namespace bp::ops::conv {
namespace {

std::vector<std::string> explain_notes(const dispatch::Problem& p) {
  std::vector<std::string> notes;
  if (p.device.is_cuda()) {
    notes.push_back("cudnn.benchmark times up to cudnn.benchmark_limit cuDNN engine configurations once per problem "
                    "(kept in the autotune cache); otherwise cuDNN's heuristic choice runs");
    if (auto ws = cuda_checks::cudnn_workspace(p.str()))
      notes.push_back("cudnn:conv plan " + ws->second + " takes a workspace of " + std::to_string(ws->first) +
                      " bytes (from Backplane's allocator)");
    return notes;
  }
  notes.push_back(default_order_note(p));
  if (p.dtype == DType::f32) {
    const auto prec = precision::resolved(precision::Backend::mkldnn, precision::Op::conv);
    if (prec == flags::Precision::bf16)
      notes.push_back(backends::onednn::built_with_bf16()
                          ? "mkldnn.conv.fp32_precision 'bf16' permits bf16 operands with fp32 accumulation: "
                            "onednn:conv uses it, Backplane's kernels stay exact"
                          : "mkldnn.conv.fp32_precision 'bf16' permits bf16 operands, but this CPU's oneDNN has no "
                            "bf16: onednn:conv stays exact, as Backplane's kernels do");
    else if (prec == flags::Precision::tf32)
      notes.push_back("mkldnn.conv.fp32_precision 'tf32' permits TF32, which no CPU has: CPU convolutions stay exact");
  }
  notes.push_back("im2col:gemm's products run on matmul's dispatcher: matmul's knobs (its fp32 precision, "
                  "preferred_blas_library) apply to them");
  return notes;
}

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "conv";
  c.signature = {"batch", "groups", "c_in", "c_out", "d", "h", "w", "kd", "kh", "kw",
                 "od", "oh", "ow", "stride", "padding", "dilation"};
  // Forward work; problem_of() sets the transposed forms' own count.
  c.flops = [](const int64_t* d) {
    return 2.0 * double(d[0]) * double(d[2]) * double(d[3]) / double(d[1]) * double(d[7] * d[8] * d[9]) *
           double(d[10] * d[11] * d[12]);
  };
  c.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  // On CUDA, cudnn.benchmark: dispatch times the acceptable CUDA rows (cuDNN
  // and the native depthwise kernel never both accept a problem, so in
  // practice this only records the choice) and cudnn:conv times cuDNN's
  // engine configurations, both through the autotune cache.
  c.autotune[static_cast<int>(DeviceType::cuda)] =
      dispatch::AutotuneFlags{flags::Id::cudnn_benchmark, flags::Id::cudnn_benchmark_limit};
  c.notes = explain_notes;
  c.call_notes = [](const dispatch::Problem&, const void* params) {
    return winograd_notes(*static_cast<const Params*>(params));
  };
  // The per-problem default order (Note [Conv default order], order.h): it
  // reads only the problem, no flag.
  c.rank = default_rank;
  // Under about a million FLOPs per thread a second thread costs more than it
  // saves (Note [Small problems on fewer threads]): MobileNet-V2's 7x7 and
  // 14x14 depthwise layers ran slower on two threads than on one.
  c.flops_per_thread = 1e6;
  return c;
}

std::vector<std::unique_ptr<dispatch::Implementation>> implementations() {
  std::vector<std::unique_ptr<dispatch::Implementation>> list;
#if BP_HAVE_ONEDNN
  list.push_back(make_onednn_conv());
#else
  list.push_back(dispatch::not_built("onednn:conv", "onednn", "oneDNN was not found at configure time"));
#endif
  list.push_back(make_winograd());
  list.push_back(make_direct(kernels::cpu::ConvIsa::avx512));
  list.push_back(make_direct(kernels::cpu::ConvIsa::avx2));
  list.push_back(make_direct(kernels::cpu::ConvIsa::generic));
  list.push_back(make_im2col());
  list.push_back(make_cudnn_slot());
  list.push_back(make_depthwise_cuda_slot());
  list.push_back(make_ref_cuda_slot());  // the CUDA reference, last of the CUDA rows
  list.push_back(make_ref());            // the reference, last
  return list;
}

// An argument that takes an int or a tuple of ints, with an int default
// (shown as torch shows it: stride=1).
ArgSpec ints(const char* name, int64_t fallback, const char* doc) {
  ArgSpec a = arg::integers(name, {fallback}, doc);
  a.default_value = ArgValue{fallback};
  return a;
}

EntrySpec entry(int spatial, bool transposed) {
  EntrySpec e;
  e.name = entry_name(spatial, transposed);
  e.python = "backplane.nn.functional." + e.name;
  const std::string d = std::to_string(spatial) + "d";
  const char* dims = spatial == 1 ? "L" : spatial == 2 ? "H, W" : "D, H, W";
  e.doc = std::string(transposed ? "The transposed " : "The ") + d + " convolution of input (N, C_in, " + dims +
          ") or (C_in, " + dims + ") with weight " +
          (transposed ? "(C_in, C_out / groups, k...)" : "(C_out, C_in / groups, k...)") +
          ", as torch.nn.functional." + e.name + ".\n\nThe output keeps the input's memory format "
          "(channels-last in, channels-last out, as PyTorch). float16, bfloat16, float32 and float64.";
  ArgSpec padding = ints("padding", 0,
                         transposed ? "zero-padding removed from each side of the output (dilation * (k - 1) - padding "
                                      "added to the input)"
                                    : "zero-padding of each side, or 'valid' (none) or 'same' (output size = input "
                                      "size; stride 1)");
  if (!transposed) {
    padding.accepts |= bit(ArgKind::string);
    padding.choices = {"valid", "same"};
  }
  e.args = {arg::tensor("input"), arg::tensor("weight"), arg::optional_tensor("bias"),
            ints("stride", 1, "the stride of the kernel"), padding};
  if (transposed) {
    e.args.push_back(ints("output_padding", 0, "size added to one side of each output dimension"));
    e.args.push_back(arg::integer("groups", 1, "blocked connections from input to output channels"));
    e.args.push_back(ints("dilation", 1, "spacing between kernel elements"));
  } else {
    e.args.push_back(ints("dilation", 1, "spacing between kernel elements"));
    e.args.push_back(arg::integer("groups", 1, "blocked connections from input to output channels"));
  }
  e.prepare = [spatial, transposed](const Args& a) {
    ConvArgs c;
    c.spatial = spatial;
    c.transposed = transposed;
    c.input = a.tensor("input");
    c.weight = a.tensor("weight");
    c.bias = a.tensor("bias");
    c.stride = a.integers("stride");
    if (kind_of(a["padding"]) == ArgKind::string)
      c.padding_mode = a.string("padding");
    else
      c.padding = a.integers("padding");
    c.dilation = a.integers("dilation");
    c.groups = a.integer("groups");
    if (transposed) c.output_padding = a.integers("output_padding");
    return prepare_conv(c);
  };
  return e;
}

std::vector<EntrySpec> entries() {
  std::vector<EntrySpec> list;
  for (bool transposed : {false, true})
    for (int spatial : {1, 2, 3}) list.push_back(entry(spatial, transposed));
  return list;
}

// A [n, c, h, w] input, or its channels-last twin (NHWC memory, NCHW shape).
Tensor image(int64_t n, int64_t c, int64_t h, int64_t w, bool channels_last, DType dtype, Device device, bool random) {
  if (!channels_last)
    return random ? random_tensor({n, c, h, w}, dtype, 1, device) : Tensor::zeros({n, c, h, w}, dtype).to(device);
  const Tensor nhwc =
      random ? random_tensor({n, h, w, c}, dtype, 1, device) : Tensor::zeros({n, h, w, c}, dtype).to(device);
  return Tensor::from_storage(nhwc.storage(), {n, c, h, w}, {h * w * c, 1, w * c, c}, nhwc.storage_offset(), dtype);
}

Form form() {
  Form f;
  f.entry = "conv2d";
  f.dims = {{"n", 1, "batch size"},
            {"c_in", 64, "input channels"},
            {"h", 56, "input height"},
            {"w", 56, "input width"},
            {"c_out", 64, "output channels"},
            {"k", 3, "kernel size (k x k)"},
            {"stride", 1, "stride"},
            {"padding", 1, "zero-padding of each side", 0},
            {"groups", 1, "groups (c_in for depthwise)"},
            {"channels_last", 0, "1: channels-last input (NHWC memory), 0: NCHW", 0},
            {"dilation", 1, "dilation"}};
  f.line_dims = 10;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    const int64_t groups = std::max<int64_t>(d[8], 1);
    const Tensor x = image(d[0], d[1], d[2], d[3], d[9] != 0, dtype, device, random);
    const Shape wshape = {d[4], d[1] / groups, d[5], d[5]};
    const Tensor w = random ? random_tensor(wshape, dtype, 2, device) : Tensor::zeros(wshape, dtype).to(device);
    return std::vector<std::pair<std::string, ArgValue>>{
        {"input", x},       {"weight", w},         {"stride", ArgValue{d[6]}}, {"padding", ArgValue{d[7]}},
        {"groups", groups}, {"dilation", ArgValue{d[10]}}};
  };
  return f;
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_cudnn_slot() {
  dispatch::Properties props;
  // Deterministic when asked: under cudnn.deterministic or
  // use_deterministic_algorithms(True) only deterministic engines are built.
  props.deterministic = true;
  props.reduced = dispatch::kTf32;  // fp32 under cudnn.conv.fp32_precision 'tf32' (the default)
  props.workspace = "the chosen engine's workspace, from Backplane's allocator (its size shows in explain)";
  return cuda_slot<Params>("cudnn:conv", "cudnn", props, cuda_checks::cudnn_checks(), cuda_checks::cudnn_run_flags());
}

std::unique_ptr<dispatch::Implementation> make_depthwise_cuda_slot() {
  dispatch::Properties props;
  props.workspace = "none";
  return cuda_slot<Params>("native:depthwise", "cuda", props, cuda_checks::depthwise_checks());
}

std::unique_ptr<dispatch::Implementation> make_ref_cuda_slot() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  dispatch::Properties props;
  props.workspace = "none";
  return cuda_slot<Params>("ref:cuda", "cuda", props, std::move(checks));
}

dispatch::Op& conv_op() {
  static dispatch::Op& op = dispatch_op("conv");
  return op;
}

OpSpec spec() {
  OpSpec s;
  s.config = config();
  s.implementations = implementations();
  s.entries = entries();
  s.form = form();
  s.bench.peer_libraries = {"onednn"};
  s.bench.peer_text = "oneDNN";
  return s;
}

}  // namespace bp::ops::conv
