#pragma once
// The op "rnn" (docs/adding_an_op.md): the forward pass of PyTorch's
// nn.RNN (tanh / relu), nn.LSTM (with proj_size) and nn.GRU over a packed
// weight buffer. Every implementation receives these parameters; the front
// end (rnn.cpp) has validated them, made the input time-major and
// contiguous, filled the initial states (zeros when none were given) and
// allocated the outputs.
//
// Note [RNN weight buffer]
// The weights of all layers and directions live in ONE 1-D buffer; a
// WeightLayout says where each parameter starts and what shape it has, in
// PyTorch's _flat_weights order (per layer, per direction: weight_ih,
// weight_hh, [bias_ih, bias_hh], [weight_hr]). Which layout a buffer has
// depends on the implementation that reads it: the CPU implementations use
// cpu_layout() below (the parameters back to back in that order, each
// starting at a multiple of kCpuAlign elements, so every row block starts
// 64-byte aligned for f32 when the rows are); cudnn:rnn uses cuDNN's weight
// space, whose offsets only cuDNN knows (cudnnGetRNNWeightParams), asked
// through cudnn_layout() when backplane_cuda is loaded. The Python modules'
// flatten_parameters() packs into the layout of the device's
// implementations and re-points every parameter at its view of the buffer.
//
// Note [RNN variable lengths]
// Sequences of different lengths arrive padded (time-major [T, B, I]) with
// one length per batch entry (any order). Entry b runs the forward
// direction over steps 0 .. len_b - 1 and the reverse direction over
// len_b - 1 .. 0, from its initial state; outputs at steps >= len_b are
// zero and h_n / c_n hold the state after the entry's last step. This is
// cuDNN's padded layout and what PyTorch computes for a PackedSequence.
//
// Implementations rebuild every output on each run and never read them
// (autotuning runs them several times on the same parameters); dropout's
// random numbers come from a stream reserved once by the front end, so
// every implementation (and every rerun) draws the same mask.

#include <memory>
#include <string>
#include <vector>

#include "backplane/op_spec.h"
#include "backplane/runtime.h"

namespace bp::ops::rnn {

// cuDNN's cudnnRNNMode_t numbering (and torch.backends.cudnn.rnn.get_cudnn_mode's).
enum class Mode : uint8_t { rnn_relu = 0, rnn_tanh = 1, lstm = 2, gru = 3 };
const char* mode_name(Mode m);  // "RNN_RELU", "RNN_TANH", "LSTM", "GRU"
// A mode from its name; ValueError "rnn: Unrecognized RNN mode: <name>" otherwise.
Mode parse_mode(const std::string& name);

struct Config {
  Mode mode = Mode::lstm;
  int64_t input_size = 1, hidden_size = 1, proj_size = 0, num_layers = 1;
  bool bidirectional = false, has_bias = true;

  int gates() const;                    // 4 (LSTM), 3 (GRU), 1 (RNN)
  int dirs() const { return bidirectional ? 2 : 1; }
  int64_t out_size() const { return proj_size > 0 ? proj_size : hidden_size; }  // h's size
  int64_t layer_input(int64_t layer) const { return layer == 0 ? input_size : dirs() * out_size(); }
  int params_per_direction() const { return 2 + (has_bias ? 2 : 0) + (proj_size > 0 ? 1 : 0); }
  // Validates the numbers (ValueError naming `subject`, the value and what is allowed).
  void validate(const std::string& subject) const;
};

enum class Which : uint8_t { w_ih, w_hh, b_ih, b_hh, w_hr };

struct ParamSlot {
  std::string name;  // PyTorch's: weight_ih_l0, bias_hh_l1_reverse, weight_hr_l0, ...
  Shape shape;
  int64_t offset = 0;  // in elements, from the start of the buffer
  int64_t numel() const;
};

struct WeightLayout {
  std::vector<ParamSlot> slots;  // PyTorch's _flat_weights order
  int64_t total = 0;             // the buffer's size in elements
  std::string kind = "cpu";      // "cpu" (cpu_layout) or "cudnn"
};

// The index in WeightLayout::slots (and in _flat_weights) of a parameter;
// -1 when the configuration has none (a bias without bias, weight_hr without proj_size).
int slot_index(const Config& c, int64_t layer, int dir, Which which);
// PyTorch's parameter names and shapes, in _flat_weights order.
std::vector<ParamSlot> parameter_slots(const Config& c);

inline constexpr int64_t kCpuAlign = 16;
WeightLayout cpu_layout(const Config& c);

// cuDNN's weight space for a configuration on a CUDA device (Note [RNN
// weight buffer]): filled in by backplane_cuda when it loads
// (set_cudnn_layout_fn); RuntimeError naming why when CUDA or cuDNN is not
// there.
using CudnnLayoutFn = WeightLayout (*)(const Config& c, DType dtype, int device);
void set_cudnn_layout_fn(CudnnLayoutFn fn);
WeightLayout cudnn_layout(const Config& c, DType dtype, int device);
// The layout of the implementations of `device`: cpu_layout on the CPU,
// cudnn_layout on CUDA.
WeightLayout layout_for(const Config& c, DType dtype, Device device);

struct Params {
  Config cfg;
  Tensor input;          // [T, B, input_size], contiguous, time-major
  Tensor weights;        // 1-D packed buffer (Note [RNN weight buffer]), contiguous
  WeightLayout layout;   // where each parameter is in `weights`
  Tensor h0, c0;         // [L * D, B, out_size] / [L * D, B, hidden_size] (c0: LSTM only), contiguous
  std::vector<int64_t> lengths;  // one per batch entry; empty: every entry runs T steps (Note [RNN variable lengths])
  Tensor output;         // [T, B, D * out_size], contiguous
  Tensor hn, cn;         // like h0 / c0
  double dropout = 0.0;  // applied to every layer's output but the last's when train
  bool train = false;
  PhiloxStream stream;   // dropout's numbers (Note [RNN dropout])
  int64_t steps = 0, batch = 0;
  DType dtype = DType::f32;
  Device device = Device::cpu();

  bool dropout_active() const { return train && dropout > 0.0 && cfg.num_layers > 1; }
  int64_t length(int64_t b) const { return lengths.empty() ? steps : lengths[static_cast<size_t>(b)]; }
  const ParamSlot* slot(int64_t layer, int dir, Which which) const;  // nullptr when absent
  // A view of one parameter of the buffer (undefined Tensor when absent).
  Tensor param(int64_t layer, int dir, Which which) const;
};

// Note [RNN dropout]
// Between layers l and l + 1 (train mode, dropout p > 0), element e of
// layer l's output [T, B, D * out_size] (row-major) is kept, times
// 1 / (1 - p), when stream.uniform(l * T * B * D * out_size + e) >= p, and
// zeroed otherwise (p = 1 zeroes all). Every implementation draws the same.
bool dropout_keep(const Params& p, int64_t layer, int64_t element);

// Layout bits of the problem (part of the autotune key).
enum LayoutBits : uint32_t { kVarLengths = 1u << 0, kDropout = 1u << 1, kNoBias = 1u << 2 };

// The op's declaration (op.cpp), the op, its problem, its front end (rnn.cpp).
OpSpec spec();
dispatch::Op& rnn_op();
dispatch::Problem problem_of(const Params& p);
std::vector<EntrySpec> entries();  // rnn.cpp: rnn, rnn_weight_layout, rnn_pack_weights

// `backplane bench rnn`'s extra measurements (bench_extras.cpp).
std::vector<std::pair<std::string, double>> bench_extras();

// The makers: rnn_packed.cpp, rnn_onednn.cpp (built with oneDNN only), rnn_ref.cpp, op.cpp's CUDA slot.
std::unique_ptr<dispatch::Implementation> make_packed();
std::unique_ptr<dispatch::Implementation> make_packed_bf16();
std::unique_ptr<dispatch::Implementation> make_onednn();
std::unique_ptr<dispatch::Implementation> make_ref();
std::unique_ptr<dispatch::Implementation> make_cudnn_slot();

}  // namespace bp::ops::rnn
