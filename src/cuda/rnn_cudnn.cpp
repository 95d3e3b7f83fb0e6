// cudnn:rnn: the run function of the rnn op's cudnn:rnn slot (its checks
// live in ops/rnn/checks_cuda.cpp), on cuDNN 9's RNN API
// (cudnnSetRNNDescriptor_v8, cudnnRNNForward), and the cuDNN weight-space
// layout the core asks for (ops::rnn::set_cudnn_layout_fn, Note [RNN weight
// buffer]).
//
// The packed buffer IS cuDNN's weight space: its parameters sit where
// cudnnGetRNNWeightParams says, so the run hands the buffer over with no
// copy. The layout is read once per configuration: every matrix of one
// PyTorch parameter (the G gates of weight_ih, ...) must be consecutive in
// the space, as PyTorch's get_parameters also requires; otherwise the
// layout query raises.
//
// Knobs, as PyTorch's cuDNN RNN path: fp32 uses CUDNN_DEFAULT_MATH (TF32
// tensor cores allowed) when cudnn.rnn.fp32_precision resolves to 'tf32',
// CUDNN_FMA_MATH otherwise; fp16 uses tensor cores. Sequences of different
// lengths use cuDNN's padded layout (Note [RNN variable lengths]). The work
// and reserve spaces come from Backplane's allocator.

#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "backplane/dispatch.h"
#include "backplane/error.h"
#include "backplane/precision.h"
#include "backplane/tensor.h"
#include "cuda_status.h"
#include "fills.h"
#include "gemm_common.h"
#include "ops/rnn/params.h"
#include "workspace.h"

namespace bp::cuda_impl {
namespace {

using ops::rnn::Config;
using ops::rnn::Mode;
using ops::rnn::Params;
using ops::rnn::WeightLayout;
constexpr const char* kName = "cudnn:rnn";

void check_cudnn(cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS) throw_runtime(kName, std::string(call) + " failed: " + cudnnGetErrorString(s));
}

cudnnHandle_t handle_for(int device) {
  return per_thread_handle<cudnnHandle_t>(device, [] {
    cudnnHandle_t h = nullptr;
    check_cudnn(cudnnCreate(&h), "cudnnCreate");
    return h;
  });
}

cudnnDataType_t data_type(DType d) {
  switch (d) {
    case DType::f16: return CUDNN_DATA_HALF;
    case DType::f64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

cudnnRNNMode_t cell_mode(Mode m) {
  switch (m) {
    case Mode::rnn_relu: return CUDNN_RNN_RELU;
    case Mode::rnn_tanh: return CUDNN_RNN_TANH;
    case Mode::lstm: return CUDNN_LSTM;
    case Mode::gru: return CUDNN_GRU;
  }
  return CUDNN_LSTM;
}

cudnnMathType_t math_type(DType d) {
  if (d == DType::f16) return CUDNN_TENSOR_OP_MATH;
  if (d == DType::f32)
    return precision::resolved(precision::Backend::cuda, precision::Op::rnn) == flags::Precision::tf32
               ? CUDNN_DEFAULT_MATH
               : CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

// An RNN descriptor (and its no-dropout descriptor) for a configuration.
struct RnnDesc {
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnDropoutDescriptor_t dropout = nullptr;
  RnnDesc(cudnnHandle_t h, const Config& c, DType dtype) {
    check_cudnn(cudnnCreateDropoutDescriptor(&dropout), "cudnnCreateDropoutDescriptor");
    // No dropout: cuDNN takes no state buffer for a probability of 0.
    check_cudnn(cudnnSetDropoutDescriptor(dropout, h, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
    check_cudnn(cudnnCreateRNNDescriptor(&rnn), "cudnnCreateRNNDescriptor");
    const cudnnDataType_t t = data_type(dtype);
    // fp16 data with fp32 arithmetic (cuDNN allows either for half; fp32 keeps the state accurate).
    const cudnnDataType_t math = dtype == DType::f16 ? CUDNN_DATA_FLOAT : t;
    check_cudnn(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, cell_mode(c.mode),
                                         c.has_bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
                                         c.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                         CUDNN_LINEAR_INPUT, t, math, math_type(dtype), static_cast<int32_t>(c.input_size),
                                         static_cast<int32_t>(c.hidden_size),
                                         static_cast<int32_t>(c.proj_size > 0 ? c.proj_size : c.hidden_size),
                                         static_cast<int32_t>(c.num_layers), dropout, CUDNN_RNN_PADDED_IO_ENABLED),
                "cudnnSetRNNDescriptor_v8");
  }
  ~RnnDesc() {
    if (rnn) cudnnDestroyRNNDescriptor(rnn);
    if (dropout) cudnnDestroyDropoutDescriptor(dropout);
  }
  RnnDesc(const RnnDesc&) = delete;
  RnnDesc& operator=(const RnnDesc&) = delete;
};

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { check_cudnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor"); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

// cuDNN's weight space for a configuration: asked of cuDNN for each
// pseudo-layer and linear layer, with a placeholder base address (offsets
// are all that is kept; nothing is read or written).
WeightLayout layout(const Config& c, DType dtype, int device) {
  cudnnHandle_t h = handle_for(device);
  RnnDesc desc(h, c, dtype);
  size_t bytes = 0;
  check_cudnn(cudnnGetRNNWeightSpaceSize(h, desc.rnn, &bytes), "cudnnGetRNNWeightSpaceSize");
  const size_t elem = dtype_itemsize(dtype);
  WeightLayout w;
  w.kind = "cudnn";
  w.slots = ops::rnn::parameter_slots(c);
  w.total = static_cast<int64_t>(bytes / elem);
  char* const base = reinterpret_cast<char*>(uintptr_t{1} << 40);
  TensorDesc m, b;
  const int G = c.gates();
  auto query = [&](int pseudo, int lin, bool want_bias) -> int64_t {
    void* m_addr = nullptr;
    void* b_addr = nullptr;
    check_cudnn(cudnnGetRNNWeightParams(h, desc.rnn, pseudo, bytes, base, lin, m.d, &m_addr, b.d, &b_addr),
                "cudnnGetRNNWeightParams");
    void* addr = want_bias ? b_addr : m_addr;
    if (addr == nullptr) throw_runtime(kName, "cudnnGetRNNWeightParams gave no address for linear layer " + std::to_string(lin));
    return static_cast<int64_t>((static_cast<char*>(addr) - base) / static_cast<std::ptrdiff_t>(elem));
  };
  for (int64_t l = 0; l < c.num_layers; ++l) {
    for (int d = 0; d < c.dirs(); ++d) {
      const int pseudo = static_cast<int>(l * c.dirs() + d);
      auto place = [&](ops::rnn::Which which, int first_lin, bool bias) {
        const int i = ops::rnn::slot_index(c, l, d, which);
        if (i < 0) return;
        auto& s = w.slots[static_cast<size_t>(i)];
        s.offset = query(pseudo, first_lin, bias);
        // The gates of one parameter must follow each other (PyTorch's views need it too).
        const int gates = which == ops::rnn::Which::w_hr ? 1 : G;
        const int64_t per_gate = s.numel() / gates;
        for (int g = 1; g < gates; ++g)
          if (query(pseudo, first_lin + g, bias) != s.offset + g * per_gate)
            throw_runtime(kName, "cuDNN's weight space does not keep the gates of " + s.name + " consecutive");
      };
      place(ops::rnn::Which::w_ih, 0, false);
      place(ops::rnn::Which::w_hh, G, false);
      place(ops::rnn::Which::b_ih, 0, true);
      place(ops::rnn::Which::b_hh, G, true);
      place(ops::rnn::Which::w_hr, 2 * G, false);  // LSTM's projection: linear layer 8
    }
  }
  return w;
}

// One layout per (configuration, dtype, device): cuDNN's answer does not change in a process.
WeightLayout cached_layout(const Config& c, DType dtype, int device) {
  using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, bool, bool, int, int>;
  static std::mutex mutex;
  static std::map<Key, WeightLayout> cache;
  const Key key{static_cast<int>(c.mode), c.input_size, c.hidden_size, c.proj_size, c.num_layers, c.bidirectional,
                c.has_bias, static_cast<int>(dtype), device};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  WeightLayout w = layout(c, dtype, device);
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, std::move(w)).first->second;
}

struct RnnData {
  cudnnRNNDataDescriptor_t d = nullptr;
  RnnData() { check_cudnn(cudnnCreateRNNDataDescriptor(&d), "cudnnCreateRNNDataDescriptor"); }
  ~RnnData() { cudnnDestroyRNNDataDescriptor(d); }
  RnnData(const RnnData&) = delete;
  RnnData& operator=(const RnnData&) = delete;
};

void set_state_desc(cudnnTensorDescriptor_t d, DType dtype, int64_t a, int64_t b, int64_t c) {
  const int dims[3] = {static_cast<int>(a), static_cast<int>(b), static_cast<int>(c)};
  const int strides[3] = {static_cast<int>(b * c), static_cast<int>(c), 1};
  check_cudnn(cudnnSetTensorNdDescriptor(d, data_type(dtype), 3, dims, strides), "cudnnSetTensorNdDescriptor");
}

void run(const Params& p) {
  const Config& c = p.cfg;
  const int device = p.device.index;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  cudnnHandle_t h = handle_for(device);
  RnnDesc desc(h, c, p.dtype);
  std::vector<int32_t> lengths(static_cast<size_t>(p.batch));
  for (int64_t b = 0; b < p.batch; ++b) lengths[static_cast<size_t>(b)] = static_cast<int32_t>(p.length(b));
  const Tensor dev_lengths = Tensor::from_vector(lengths, {p.batch}).to(p.device);
  RnnData x, y;
  double fill = 0.0;  // padded outputs are zero (cuDNN reads the fill as the data type; 0 is 0 in every one)
  check_cudnn(cudnnSetRNNDataDescriptor(x.d, data_type(p.dtype), CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                        static_cast<int>(p.steps), static_cast<int>(p.batch),
                                        static_cast<int>(c.input_size), lengths.data(), &fill),
              "cudnnSetRNNDataDescriptor");
  check_cudnn(cudnnSetRNNDataDescriptor(y.d, data_type(p.dtype), CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                        static_cast<int>(p.steps), static_cast<int>(p.batch),
                                        static_cast<int>(c.dirs() * c.out_size()), lengths.data(), &fill),
              "cudnnSetRNNDataDescriptor");
  TensorDesc hd, cd;
  const int64_t ld = c.num_layers * c.dirs();
  set_state_desc(hd.d, p.dtype, ld, p.batch, c.out_size());
  set_state_desc(cd.d, p.dtype, ld, p.batch, c.hidden_size);
  const cudnnForwardMode_t fwd = p.train ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
  size_t work_bytes = 0, reserve_bytes = 0;
  check_cudnn(cudnnGetRNNTempSpaceSizes(h, desc.rnn, fwd, x.d, &work_bytes, &reserve_bytes),
              "cudnnGetRNNTempSpaceSizes");
  const Workspace ws = gemm_workspace(device, WorkspaceUser::cudnn, work_bytes);
  // The reserve space matters only to a backward pass, which Backplane does not run.
  const Tensor reserve = Tensor::empty({static_cast<int64_t>(reserve_bytes)}, DType::i8, p.device);
  const bool lstm = c.mode == Mode::lstm;
  check_cudnn(cudnnRNNForward(h, desc.rnn, fwd, dev_lengths.data_ptr<int32_t>(), x.d, p.input.data(), y.d,
                              p.output.data(), hd.d, p.h0.data(), p.hn.data(), cd.d, lstm ? p.c0.data() : nullptr,
                              lstm ? p.cn.data() : nullptr, p.weights.nbytes(), p.weights.data(), ws.bytes, ws.data,
                              reserve_bytes, reserve_bytes ? reserve.data() : nullptr),
              "cudnnRNNForward");
}

}  // namespace

void fill_rnn_cudnn() {
  ops::rnn::set_cudnn_layout_fn(cached_layout);
  dispatch::fill<Params>(ops::rnn::rnn_op(), kName, run);
}

}  // namespace bp::cuda_impl
