// The rnn front end: validates a call (errors as PyTorch's where PyTorch has
// one, otherwise naming the argument, the value and what is allowed), makes
// the input time-major and contiguous, fills the initial states and
// allocates the outputs (Note [RNN weight buffer], Note [RNN variable
// lengths] in params.h). Also the two helper entries the Python modules'
// flatten_parameters() stands on: the layout of a configuration and the
// packing of separate weights into one buffer.

#include <memory>

#include "core/tensor_internal.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {

dispatch::Op& rnn_op() {
  static dispatch::Op& op = dispatch_op("rnn");
  return op;
}

dispatch::Problem problem_of(const Params& p) {
  uint32_t bits = 0;
  if (!p.lengths.empty()) bits |= kVarLengths;
  if (p.dropout_active()) bits |= kDropout;
  if (!p.cfg.has_bias) bits |= kNoBias;
  const Config& c = p.cfg;
  return rnn_op().problem(p.device, p.dtype, bits,
                          {static_cast<int64_t>(c.mode), c.num_layers, c.dirs(), c.input_size, c.hidden_size,
                           c.proj_size, p.steps, p.batch});
}

namespace {

const char* kOp = "rnn";

[[noreturn]] void runtime_error(const std::string& message, const std::string& value, const std::string& allowed) {
  throw Error(ErrorKind::Runtime, message, kOp, value, allowed);
}

std::string tuple_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

std::string list_text(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The configuration arguments every entry of the op takes (keyword-only).
std::vector<ArgSpec> config_args() {
  return {arg::keyword_only(arg::choice("mode", {"RNN_TANH", "RNN_RELU", "LSTM", "GRU"}, "LSTM", "the cell")),
          arg::keyword_only(arg::integer("input_size", 1, "features of the input")),
          arg::keyword_only(arg::integer("hidden_size", 1, "features of the hidden state")),
          arg::keyword_only(arg::integer("num_layers", 1, "stacked layers")),
          arg::keyword_only(arg::integer("proj_size", 0, "LSTM projection size (0: none)")),
          arg::keyword_only(arg::boolean("bias", true, "whether the layers have biases")),
          arg::keyword_only(arg::boolean("bidirectional", false, "a reverse direction too"))};
}

Config config_of(const Args& a) {
  Config c;
  c.mode = parse_mode(a.string("mode"));
  c.input_size = a.integer("input_size");
  c.hidden_size = a.integer("hidden_size");
  c.num_layers = a.integer("num_layers");
  c.proj_size = a.integer("proj_size");
  c.has_bias = a.boolean("bias");
  c.bidirectional = a.boolean("bidirectional");
  c.validate(kOp);
  return c;
}

// An initial state as a contiguous [L * D, B, size] tensor (zeros when not given).
Tensor initial_state(const Tensor& given, const char* which, const Shape& expected, bool batched, const Params& p,
                     bool lstm) {
  if (!given.defined()) return Tensor::zeros(expected, p.dtype, p.device);
  if (given.dtype() != p.dtype)
    throw_bad_value(kOp, std::string(which) + " of dtype " + dtype_name(given.dtype()),
                    std::string(which) + " of the input's dtype " + dtype_name(p.dtype));
  if (given.device() != p.device)
    throw_bad_value(kOp, std::string(which) + " on " + given.device().str(),
                    std::string(which) + " on the input's device " + p.device.str());
  const Shape& s = given.shape();
  Shape want = expected;
  if (!batched) want.erase(want.begin() + 1);
  if (s != want) {
    const std::string label = lstm ? (std::string(which) == "hx" ? "hidden[0]" : "hidden[1]") : "hidden";
    runtime_error("Expected " + label + " size " + tuple_text(want) + ", got " + list_text(s), list_text(s),
                  tuple_text(want));
  }
  return given.reshape(expected).contiguous();
}

Call prepare_rnn(const Args& a) {
  auto p = std::make_shared<Params>();
  p->cfg = config_of(a);
  const Config& c = p->cfg;
  const Tensor input = a.tensor("input");
  const Tensor buf = a.tensor("weight_buf");
  const Tensor hx = a.tensor("hx"), cx = a.tensor("cx");
  const bool batch_first = a.boolean("batch_first");
  const bool lstm = c.mode == Mode::lstm;
  const std::string mode = mode_name(c.mode);

  if (!is_floating(input.dtype()))
    throw_bad_value(kOp, std::string("input of dtype ") + dtype_name(input.dtype()),
                    "float16, bfloat16, float32 or float64");
  if (input.ndim() != 2 && input.ndim() != 3)
    throw_bad_value(kOp, "input of " + std::to_string(input.ndim()) + " dims",
                    "a 2-D (unbatched) or 3-D input (" + mode + ": Expected input to be 2D or 3D)");
  const bool batched = input.ndim() == 3;
  if (hx.defined() && hx.ndim() != input.ndim()) {
    const std::string msg = batched ? "For batched 3-D input, hx should also be 3-D but got "
                                    : "For unbatched 2-D input, hx should also be 2-D but got ";
    runtime_error(msg + std::to_string(hx.ndim()) + "-D tensor", std::to_string(hx.ndim()) + "-D hx",
                  std::to_string(input.ndim()) + "-D hx");
  }
  if (lstm && hx.defined() != cx.defined())
    throw_bad_value(kOp, hx.defined() ? "hx without cx" : "cx without hx", "both hx and cx, or neither");
  if (!lstm && cx.defined()) throw_bad_value(kOp, "cx with mode " + mode, "cx only with mode LSTM");
  if (lstm && cx.defined() && cx.ndim() != input.ndim()) {
    const std::string msg = batched ? "For batched 3-D input, hx and cx should also be 3-D but got ("
                                    : "For unbatched 2-D input, hx and cx should also be 2-D but got (";
    runtime_error(msg + std::to_string(hx.ndim()) + "-D, " + std::to_string(cx.ndim()) + "-D) tensors",
                  std::to_string(cx.ndim()) + "-D cx", std::to_string(input.ndim()) + "-D cx");
  }
  if (input.size(-1) != c.input_size)
    runtime_error("input.size(-1) must be equal to input_size. Expected " + std::to_string(c.input_size) + ", got " +
                      std::to_string(input.size(-1)),
                  std::to_string(input.size(-1)), std::to_string(c.input_size));

  p->dtype = input.dtype();
  p->device = input.device();
  // Time-major [T, B, I], contiguous.
  Tensor x = input;
  if (!batched) x = x.reshape({x.size(0), 1, x.size(1)});
  else if (batch_first) x = x.transpose(0, 1);
  p->input = x.contiguous();
  p->steps = p->input.size(0);
  p->batch = p->input.size(1);
  if (p->steps == 0) runtime_error("Expected sequence length to be larger than 0 in RNN", "0", "a length > 0");

  if (buf.dtype() != p->dtype)
    throw_bad_value(kOp, std::string("weight_buf of dtype ") + dtype_name(buf.dtype()),
                    std::string("the input's dtype ") + dtype_name(p->dtype) + " (RNN input dtype must match weight dtype)");
  if (buf.device() != p->device)
    throw_bad_value(kOp, "weight_buf on " + buf.device().str(), "the input's device " + p->device.str());
  p->layout = layout_for(c, p->dtype, p->device);
  if (buf.ndim() != 1 || !buf.is_contiguous() || buf.numel() != p->layout.total)
    throw_bad_value(kOp, "weight_buf of shape " + detail::shape_str(buf.shape()) + (buf.is_contiguous() ? "" : " (strided)"),
                    "a contiguous 1-D buffer of " + std::to_string(p->layout.total) + " elements (the " +
                        p->layout.kind + " layout of this configuration)");
  p->weights = buf;

  const int64_t ld = c.num_layers * c.dirs();
  p->h0 = initial_state(hx, "hx", {ld, p->batch, c.out_size()}, batched, *p, lstm);
  if (lstm) p->c0 = initial_state(cx, "cx", {ld, p->batch, c.hidden_size}, batched, *p, lstm);

  const std::vector<int64_t> lengths = a.integers("lengths");
  if (!lengths.empty()) {
    if (static_cast<int64_t>(lengths.size()) != p->batch)
      throw_bad_value(kOp, std::to_string(lengths.size()) + " lengths", std::to_string(p->batch) + " lengths (one per batch entry)");
    for (int64_t n : lengths)
      if (n < 1 || n > p->steps)
        throw_bad_value(kOp, "a length of " + std::to_string(n), "lengths in [1, " + std::to_string(p->steps) + "] (the padded sequence length)");
    bool all_full = true;
    for (int64_t n : lengths) all_full = all_full && n == p->steps;
    if (!all_full) p->lengths = lengths;
  }

  p->dropout = a.real("dropout");
  if (!(p->dropout >= 0.0 && p->dropout <= 1.0))
    throw_bad_value(kOp, "dropout=" + std::to_string(p->dropout), "a probability in [0, 1]");
  p->train = a.boolean("train");
  if (p->dropout_active()) {
    const int64_t count = (c.num_layers - 1) * p->steps * p->batch * c.dirs() * c.out_size();
    p->stream = default_generator().reserve(static_cast<uint64_t>(count));
  }

  p->output = Tensor::empty({p->steps, p->batch, c.dirs() * c.out_size()}, p->dtype, p->device);
  p->hn = Tensor::empty(p->h0.shape(), p->dtype, p->device);
  if (lstm) p->cn = Tensor::empty(p->c0.shape(), p->dtype, p->device);

  Call call;
  call.op = &rnn_op();
  call.problem = problem_of(*p);
  call.params = p;
  call.compute = p->steps > 0 && p->batch > 0;
  call.result = [p, batched, batch_first, lstm]() -> ArgValue {
    Tensor out = p->output, hn = p->hn, cn = p->cn;
    if (!batched) {
      out = out.reshape({out.size(0), out.size(2)});
      hn = hn.reshape({hn.size(0), hn.size(2)});
      if (lstm) cn = cn.reshape({cn.size(0), cn.size(2)});
    } else if (batch_first) {
      out = out.transpose(0, 1).contiguous();
    }
    std::vector<Tensor> r{out, hn};
    if (lstm) r.push_back(cn);
    return r;
  };
  return call;
}

Device device_arg(const Args& a) { return parse_device(a.string("device")); }

// rnn_weight_layout: (total, offset of each parameter ...) in _flat_weights order.
Call prepare_layout(const Args& a) {
  const Config c = config_of(a);
  const DType dtype = parse_dtype(a.string("dtype"));
  const Device device = device_arg(a);
  Call call;
  call.op = nullptr;  // nothing dispatched
  call.compute = false;
  call.result = [c, dtype, device]() -> ArgValue {
    const WeightLayout w = layout_for(c, dtype, device);
    std::vector<int64_t> out{w.total};
    for (const ParamSlot& s : w.slots) out.push_back(s.offset);
    return out;
  };
  return call;
}

// rnn_pack_weights: one buffer in the layout of the weights' device holding
// copies of `weights` (in _flat_weights order), then a view of it per
// parameter: [buffer, view, view, ...].
Call prepare_pack(const Args& a) {
  const Config c = config_of(a);
  const std::vector<Tensor>& weights = a.tensors("weights");
  const std::vector<ParamSlot> names = parameter_slots(c);
  if (weights.size() != names.size())
    throw_bad_value("rnn_pack_weights", std::to_string(weights.size()) + " weights",
                    std::to_string(names.size()) + " weights (this configuration's _flat_weights)");
  const DType dtype = weights[0].dtype();
  const Device device = weights[0].device();
  for (size_t i = 0; i < weights.size(); ++i) {
    const Tensor& w = weights[i];
    if (w.dtype() != dtype || w.device() != device)
      throw_bad_value("rnn_pack_weights",
                      names[i].name + " of " + dtype_name(w.dtype()) + " on " + w.device().str(),
                      std::string("every weight of one dtype and device (") + dtype_name(dtype) + " on " +
                          device.str() + ")");
    if (w.shape() != names[i].shape)
      throw_bad_value("rnn_pack_weights", names[i].name + " of shape " + detail::shape_str(w.shape()),
                      names[i].name + " of shape " + detail::shape_str(names[i].shape));
  }
  if (!is_floating(dtype))
    throw_bad_value("rnn_pack_weights", std::string("weights of dtype ") + dtype_name(dtype), "a float dtype");
  Call call;
  call.op = nullptr;
  call.compute = false;
  call.result = [c, weights, dtype, device]() -> ArgValue {
    const WeightLayout w = layout_for(c, dtype, device);
    // Zeros: the alignment gaps (and any cuDNN padding) hold defined values.
    Tensor buf = Tensor::zeros({w.total}, dtype, device);
    std::vector<Tensor> out{buf};
    for (size_t i = 0; i < weights.size(); ++i) {
      const ParamSlot& s = w.slots[i];
      Tensor view = Tensor::from_storage(buf.storage(), s.shape, contiguous_strides(s.shape), s.offset, dtype);
      view.copy_from(weights[i]);
      out.push_back(view);
    }
    return out;
  };
  return call;
}

}  // namespace

std::vector<EntrySpec> entries() {
  std::vector<EntrySpec> list;
  {
    EntrySpec e;
    e.name = "rnn";
    e.python = "backplane.nn._rnn_native.rnn";
    e.doc = "The forward pass of a stacked RNN / LSTM / GRU over a packed weight buffer (Note [RNN weight buffer]): "
            "[output, h_n] or, for LSTM, [output, h_n, c_n].";
    e.args = {arg::tensor("input", "[T, B, input_size] ([B, T, ...] with batch_first; [T, input_size] unbatched)"),
              arg::tensor("weight_buf", "the packed weights, 1-D, in the layout of the input's device"),
              arg::optional_tensor("hx", "initial hidden state [L * D, B, out_size]"),
              arg::optional_tensor("cx", "initial cell state [L * D, B, hidden_size] (LSTM)")};
    for (ArgSpec& s : config_args()) e.args.push_back(std::move(s));
    e.args.push_back(arg::keyword_only(arg::boolean("batch_first", false, "input and output are [B, T, ...]")));
    e.args.push_back(arg::keyword_only(arg::real("dropout", 0.0, "dropout between layers (train only)")));
    e.args.push_back(arg::keyword_only(arg::boolean("train", false, "training mode (dropout applies)")));
    e.args.push_back(arg::keyword_only(arg::integers("lengths", {}, "per-entry lengths (empty: all T)")));
    e.prepare = prepare_rnn;
    list.push_back(std::move(e));
  }
  {
    EntrySpec e;
    e.name = "rnn_weight_layout";
    e.python = "backplane.nn._rnn_native.weight_layout";
    e.doc = "(total, offset of each parameter in _flat_weights order) of the packed buffer of a configuration on a "
            "device: Backplane's CPU layout, or cuDNN's weight space (cudnnGetRNNWeightParams) on CUDA.";
    e.args = config_args();
    e.args.push_back(arg::keyword_only(arg::choice("dtype", {}, "float32", "the weights' dtype")));
    e.args.push_back(arg::keyword_only(arg::choice("device", {}, "cpu", "'cpu' or 'cuda:N'")));
    e.prepare = prepare_layout;
    list.push_back(std::move(e));
  }
  {
    EntrySpec e;
    e.name = "rnn_pack_weights";
    e.python = "backplane.nn._rnn_native.pack_weights";
    e.doc = "Copies the weights (in _flat_weights order) into one new buffer in the layout of their device: "
            "[buffer, a view of it per weight].";
    e.args = {arg::tensors("weights", "every weight, in _flat_weights order")};
    for (ArgSpec& s : config_args()) e.args.push_back(std::move(s));
    e.prepare = prepare_pack;
    list.push_back(std::move(e));
  }
  return list;
}

}  // namespace bp::ops::rnn
