// The op "rnn", declared once (backplane/op_spec.h): its ordered list, the
// entries of backplane.nn._rnn_native (the forward pass and the two weight
// helpers of flatten_parameters), its shape form and its benchmark.
// docs/adding_an_op.md is the recipe this follows.
//
// The list: cudnn:rnn (a CUDA slot that backplane_cuda fills; cuDNN 9's RNN
// API on the packed buffer as its weight space), packed:avx512_bf16 (what
// mkldnn.rnn.fp32_precision = "bf16" permits: packed:cpu with bf16 dot
// products), packed:cpu (Backplane's own: input projections through matmul,
// pre-packed recurrent panels, fused cells), onednn:rnn (oneDNN's RNN
// primitives, governed by mkldnn.enabled; after packed:cpu, which is far
// faster at batch 1 and within 10% at batch 32, except for bf16 tensors,
// where the rank moves it first: Note [RNN default order]), then the
// reference, ref:any.

#include <algorithm>
#include <cmath>

#include "backplane_build_config.h"
#include "ops/common/cuda_slot.h"
#include "ops/rnn/checks_cuda.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {
namespace {

// Signature dims: mode, layers, dirs, input, hidden, proj, steps, batch.
double flops(const int64_t* d) {
  const Mode mode = static_cast<Mode>(d[0]);
  const double G = mode == Mode::lstm ? 4 : mode == Mode::gru ? 3 : 1;
  const double L = double(d[1]), D = double(d[2]), I = double(d[3]), H = double(d[4]), P = double(d[5]);
  const double T = double(d[6]), B = double(d[7]);
  const double out = P > 0 ? P : H;
  double per_dir = 0;
  for (int64_t l = 0; l < d[1]; ++l) {
    const double in = l == 0 ? I : D * out;
    per_dir += 2.0 * T * B * G * H * (in + out) + (P > 0 ? 2.0 * T * B * P * H : 0.0);
  }
  (void)L;
  return per_dir * D;
}

std::vector<std::string> notes(const dispatch::Problem& problem) {
  (void)problem;
  return {"packed:cpu: the input projections go through matmul (its knobs apply); the recurrent product runs on "
          "W_hh packed into panels, the cell fused (Note [Recurrent panels])",
          "cudnn:rnn: cuDNN 9's RNN API with the packed buffer as its weight space; fp32 math per "
          "cudnn.rnn.fp32_precision"};
}

// Note [RNN default order]
// The list puts packed:cpu before onednn:rnn: in fp32 it is 1.75x faster at
// batch 1 (the packed recurrent panels) and within 10 % at batch 32. With
// bf16 tensors packed:cpu widens every step to fp32, while oneDNN runs bf16
// GEMMs: LSTM 256 -> 512 x 2, seq 128, one thread, 75 against 179 ms at
// batch 32 and 14 against 19 ms at batch 1. So for bf16 problems the rank
// moves onednn:rnn first; when it declines (a projection LSTM, packed
// lengths, mkldnn.enabled off, a CPU without bf16), the list's order follows.
int default_rank(const dispatch::Implementation& impl, const dispatch::Problem& p) {
  return p.dtype == DType::bf16 && impl.name() == "onednn:rnn" ? 0 : 1;
}

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "rnn";
  c.signature = {"mode", "layers", "dirs", "input", "hidden", "proj", "steps", "batch"};
  c.flops = flops;
  c.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  c.autotune[static_cast<int>(DeviceType::cuda)] =
      dispatch::AutotuneFlags{flags::Id::cudnn_benchmark, flags::Id::cudnn_benchmark_limit};
  c.notes = notes;
  c.rank = default_rank;  // Note [RNN default order]
  return c;
}

// "mode layers dirs input hidden steps batch [proj]": mode 0 RNN_RELU, 1
// RNN_TANH, 2 LSTM, 3 GRU (cuDNN's numbers).
Form form() {
  Form f;
  f.entry = "rnn";
  f.dims = {{"mode", 2, "0 RNN_RELU, 1 RNN_TANH, 2 LSTM, 3 GRU", 0},
            {"layers", 2, "stacked layers"},
            {"dirs", 1, "1 or 2 (bidirectional)"},
            {"input", 256, "input features"},
            {"hidden", 512, "hidden features"},
            {"steps", 128, "sequence length"},
            {"batch", 32, "batch size"},
            {"proj", 0, "LSTM projection size (0: none)", 0}};
  f.line_dims = 7;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    Config c;
    c.mode = static_cast<Mode>(std::min<int64_t>(d[0], 3));
    c.num_layers = d[1];
    c.bidirectional = d[2] == 2;
    c.input_size = d[3];
    c.hidden_size = d[4];
    c.proj_size = d[7];
    const WeightLayout w = layout_for(c, dtype, device);
    const double scale = 1.0 / std::sqrt(double(c.hidden_size));
    Tensor buf = random ? random_tensor({w.total}, DType::f64, 7) : Tensor::zeros({w.total}, DType::f64);
    double* bp = buf.data_ptr<double>();
    for (int64_t i = 0; i < w.total; ++i) bp[i] *= scale;
    Tensor x = random ? random_tensor({d[5], d[6], d[3]}, dtype, 1, device)
                      : Tensor::zeros({d[5], d[6], d[3]}, dtype).to(device);
    return std::vector<std::pair<std::string, ArgValue>>{
        {"input", x},
        {"weight_buf", buf.to(dtype).to(device)},
        {"mode", std::string(mode_name(c.mode))},
        {"input_size", c.input_size},
        {"hidden_size", c.hidden_size},
        {"num_layers", c.num_layers},
        {"proj_size", c.proj_size},
        {"bidirectional", c.bidirectional}};
  };
  return f;
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_cudnn_slot() {
  dispatch::Properties props;
  props.deterministic = true;       // cuDNN's RNN forward (inference and training) is deterministic
  props.reduced = dispatch::kTf32;  // fp32 under cudnn.rnn.fp32_precision 'tf32' (the default)
  props.workspace = "cuDNN's work and reserve space, from Backplane's allocator";
  return cuda_slot<Params>("cudnn:rnn", "cudnn", props, cuda_checks::cudnn_checks(), cuda_checks::cudnn_run_flags());
}

OpSpec spec() {
  OpSpec s;
  s.config = config();
  s.implementations.push_back(make_cudnn_slot());
  s.implementations.push_back(make_packed_bf16());  // only under the bf16 permission
  s.implementations.push_back(make_packed());
#if BP_HAVE_ONEDNN
  s.implementations.push_back(make_onednn());
#else
  s.implementations.push_back(dispatch::not_built("onednn:rnn", "onednn", "oneDNN was not found at configure time"));
#endif
  s.implementations.push_back(make_ref());  // the reference, last
  s.entries = entries();
  s.form = form();
  s.bench.peer_libraries = {"ref"};
  s.bench.peer_text = "the reference (python -m backplane.bench rnn --peer torch adds PyTorch's CPU LSTM)";
  s.bench.extras_title = "flatten_parameters: a packed buffer vs weights repacked on every call (1 thread)";
  s.bench.extras = bench_extras;
  return s;
}

}  // namespace bp::ops::rnn
