// Modes, configurations and weight layouts of the rnn op (Note [RNN weight
// buffer] in params.h).

#include <atomic>

#include "backends/cuda/cuda_loader.h"
#include "ops/common/cuda_slot.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::rnn_relu: return "RNN_RELU";
    case Mode::rnn_tanh: return "RNN_TANH";
    case Mode::lstm: return "LSTM";
    case Mode::gru: return "GRU";
  }
  return "?";
}

Mode parse_mode(const std::string& name) {
  for (Mode m : {Mode::rnn_relu, Mode::rnn_tanh, Mode::lstm, Mode::gru})
    if (name == mode_name(m)) return m;
  throw Error(ErrorKind::Value, "rnn: Unrecognized RNN mode: " + name + " (expected RNN_TANH, RNN_RELU, LSTM or GRU)",
              "rnn", name, "RNN_TANH, RNN_RELU, LSTM or GRU");
}

int Config::gates() const { return mode == Mode::lstm ? 4 : mode == Mode::gru ? 3 : 1; }

void Config::validate(const std::string& subject) const {
  auto positive = [&](const char* what, int64_t v) {
    if (v <= 0) throw_bad_value(subject, std::string(what) + "=" + std::to_string(v), std::string(what) + " > 0");
  };
  positive("input_size", input_size);
  positive("hidden_size", hidden_size);
  positive("num_layers", num_layers);
  if (proj_size < 0)
    throw_bad_value(subject, "proj_size=" + std::to_string(proj_size),
                    "proj_size >= 0 (a positive integer, or zero to disable projections)");
  if (proj_size > 0 && mode != Mode::lstm)
    throw_bad_value(subject, std::string("proj_size=") + std::to_string(proj_size) + " with mode " + mode_name(mode),
                    "proj_size only with LSTM");
  if (proj_size >= hidden_size && proj_size > 0)
    throw_bad_value(subject, "proj_size=" + std::to_string(proj_size) + ", hidden_size=" + std::to_string(hidden_size),
                    "proj_size smaller than hidden_size");
}

int64_t ParamSlot::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int slot_index(const Config& c, int64_t layer, int dir, Which which) {
  const int base = static_cast<int>(layer * c.dirs() + dir) * c.params_per_direction();
  switch (which) {
    case Which::w_ih: return base;
    case Which::w_hh: return base + 1;
    case Which::b_ih: return c.has_bias ? base + 2 : -1;
    case Which::b_hh: return c.has_bias ? base + 3 : -1;
    case Which::w_hr: return c.proj_size > 0 ? base + (c.has_bias ? 4 : 2) : -1;
  }
  return -1;
}

std::vector<ParamSlot> parameter_slots(const Config& c) {
  std::vector<ParamSlot> out;
  const int64_t gh = c.gates() * c.hidden_size;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    for (int d = 0; d < c.dirs(); ++d) {
      const std::string suffix = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      out.push_back({"weight_ih" + suffix, {gh, c.layer_input(l)}});
      out.push_back({"weight_hh" + suffix, {gh, c.out_size()}});
      if (c.has_bias) {
        out.push_back({"bias_ih" + suffix, {gh}});
        out.push_back({"bias_hh" + suffix, {gh}});
      }
      if (c.proj_size > 0) out.push_back({"weight_hr" + suffix, {c.proj_size, c.hidden_size}});
    }
  }
  return out;
}

WeightLayout cpu_layout(const Config& c) {
  WeightLayout w;
  w.kind = "cpu";
  w.slots = parameter_slots(c);
  int64_t at = 0;
  for (ParamSlot& s : w.slots) {
    s.offset = at;
    at += (s.numel() + kCpuAlign - 1) / kCpuAlign * kCpuAlign;
  }
  w.total = at;
  return w;
}

namespace {
std::atomic<CudnnLayoutFn> g_cudnn_layout{nullptr};
}

void set_cudnn_layout_fn(CudnnLayoutFn fn) { g_cudnn_layout.store(fn); }

WeightLayout cudnn_layout(const Config& c, DType dtype, int device) {
  (void)rnn_op();  // the ops are registered ...
  (void)bp::cuda::api();  // ... and backplane_cuda loaded (its fill sets the function), when it can be
  const CudnnLayoutFn fn = g_cudnn_layout.load();
  if (fn == nullptr) {
    const auto why = unfilled_cuda_slot("cudnn");
    throw_runtime("rnn", "rnn: cuDNN's RNN weight layout (CUDA device " + std::to_string(device) +
                             ") needs cudnn:rnn, which is " + (why ? why->reason : std::string("not filled")));
  }
  if (cuda_device_env(Device::cuda(device)).sm_major == 0)
    throw_runtime("rnn", "rnn: cuDNN's RNN weight layout needs CUDA device " + std::to_string(device) +
                             ", which is not available here (backplane.cuda.unavailable_reason() says why)");
  c.validate("rnn");
  return fn(c, dtype, device);
}

WeightLayout layout_for(const Config& c, DType dtype, Device device) {
  if (device.is_cuda()) return cudnn_layout(c, dtype, device.index);
  return cpu_layout(c);
}

const ParamSlot* Params::slot(int64_t layer, int dir, Which which) const {
  const int i = slot_index(cfg, layer, dir, which);
  return i < 0 ? nullptr : &layout.slots[static_cast<size_t>(i)];
}

Tensor Params::param(int64_t layer, int dir, Which which) const {
  const ParamSlot* s = slot(layer, dir, which);
  if (s == nullptr) return Tensor();
  return Tensor::from_storage(weights.storage(), s->shape, contiguous_strides(s->shape),
                              weights.storage_offset() + s->offset, weights.dtype());
}

bool dropout_keep(const Params& p, int64_t layer, int64_t element) {
  const int64_t per_layer = p.steps * p.batch * p.cfg.dirs() * p.cfg.out_size();
  return static_cast<double>(p.stream.uniform(static_cast<uint64_t>(layer * per_layer + element))) >= p.dropout;
}

}  // namespace bp::ops::rnn
