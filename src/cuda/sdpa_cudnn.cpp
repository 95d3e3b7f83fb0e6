// cudnn:sdpa: scaled-dot-product attention through cuDNN's graph API, built
// with the header-only cuDNN C++ frontend (PyPI nvidia-cudnn-frontend, found
// at configure time): the run function of the sdpa op's cudnn:sdpa slot.
//
// Its checks are PyTorch's can_use_cudnn_attention (ops/sdpa/checks_cuda.h),
// plus one that only cuDNN can answer: whether a graph for this problem
// builds ("cudnn_support", the frontend's own message when not). Graphs are
// built once per problem signature and cached (building takes milliseconds;
// running, microseconds). It is marked nondeterministic, as PyTorch's
// check_cudnn_deterministic treats it.
//
// What the graph gets: q, k, v as the caller's 4-D strided views (GQA and
// MQA natively: k/v with fewer heads), the output as p.out (contiguous
// [B, Hq, L, Ev]), the scale by value, is_causal as cuDNN's top-left causal
// mask, an attn_mask as an additive bias [1|B, 1|Hq, L, S] in the input
// dtype (bool masks become 0 / -65504, as PyTorch passes them), dropout
// from backplane.manual_seed's generator (seed and offset as device
// scalars; cuDNN's own Philox numbering, so not the math path's mask).

#include "backplane/dispatch.h"
#include "fills.h"
#include "ops/sdpa/impls.h"

#if BP_CUDA_HAVE_CUDNN_FRONTEND

#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backplane/error.h"
#include "backplane/flags.h"
#include "backplane/runtime.h"
#include "backplane/tensor.h"
#include "cuda_status.h"
#include "gemm_common.h"
#include "ops/sdpa/checks_cuda.h"
#include "workspace.h"

namespace bp::cuda_impl {
namespace {

namespace fe = cudnn_frontend;
using dispatch::Reasons;
using ops::sdpa::Params;
constexpr const char* kName = "cudnn:sdpa";

enum Uid : int64_t { kQ = 1, kK, kV, kO, kBias, kSeed, kOffset };

cudnnHandle_t handle_for(int device) {
  return per_thread_handle<cudnnHandle_t>(device, [] {
    cudnnHandle_t h = nullptr;
    const cudnnStatus_t s = cudnnCreate(&h);
    if (s != CUDNN_STATUS_SUCCESS) throw_runtime(kName, std::string("cudnnCreate failed: ") + cudnnGetErrorString(s));
    return h;
  });
}

// The bias's broadcast shape: the mask's batch and head dims when it has
// them (4-D, non-1), else 1.
Shape bias_shape(const Params& p) {
  const Tensor& m = p.mask_in;
  const int64_t b = m.ndim() == 4 && m.size(0) != 1 ? p.q_in.size(0) : 1;
  const int64_t h = m.ndim() == 4 && m.size(1) != 1 ? p.q_in.size(1) : 1;
  return {b, h, p.L, p.S};
}

// The caller's mask as a contiguous additive bias of the input dtype on the
// device (Note at the top). Built on the host: masks are inputs, not hot data.
Tensor bias_of(const Params& p) {
  const Shape shape = bias_shape(p);
  const Tensor m = p.mask_in.to(Device::cpu());
  const bool boolean = m.dtype() == DType::boolean;
  const Tensor src = boolean ? m.contiguous() : m.to(DType::f32).contiguous();
  // Index into src with its own sizes: a size-1 dim always reads index 0.
  const int64_t nd = src.ndim();
  auto at = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    const int64_t idx[4] = {b, h, i, j};
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t v = idx[4 - nd + d];
      off += (src.size(d) == 1 ? 0 : v) * src.stride(d);
    }
    return off;
  };
  Tensor bias = Tensor::empty(shape, DType::f32);
  float* out = bias.data_ptr<float>();
  for (int64_t b = 0; b < shape[0]; ++b)
    for (int64_t h = 0; h < shape[1]; ++h)
      for (int64_t i = 0; i < p.L; ++i)
        for (int64_t j = 0; j < p.S; ++j) {
          const int64_t o = at(b, h, i, j);
          *out++ = boolean ? (src.data_ptr<bool>()[o] ? 0.0f : -65504.0f) : src.data_ptr<float>()[o];
        }
  return bias.to(p.dtype).to(p.device);
}

// Everything a built graph depends on.
std::string key_of(const Params& p) {
  std::string k = std::to_string(p.device.index) + "|" + dtype_name(p.dtype);
  for (const Tensor* t : {&p.q_in, &p.k_in, &p.v_in}) {
    for (int64_t d = 0; d < 4; ++d) k += "|" + std::to_string(t->size(d)) + ":" + std::to_string(t->stride(d));
  }
  char scale[32];
  std::snprintf(scale, sizeof scale, "%a", p.scale);
  k += std::string("|s") + scale + (p.is_causal ? "|causal" : "");
  if (p.mask_in.defined())
    for (int64_t d : bias_shape(p)) k += "|m" + std::to_string(d);
  if (p.dropout_p > 0) k += "|d" + std::to_string(p.dropout_p);
  return k;
}

struct Built {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
  std::string error;  // empty when the graph built
};

std::shared_ptr<Built> build(const Params& p) {
  auto out = std::make_shared<Built>();
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(p.dtype == DType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto input = [&](const char* name, int64_t uid, const Tensor& t) {
    return g->tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(t.shape()).set_stride(t.strides()));
  };
  auto q = input("Q", kQ, p.q_in), k = input("K", kK, p.k_in), v = input("V", kV, p.v_in);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("sdpa")
                     .set_generate_stats(false)
                     .set_attn_scale(static_cast<float>(p.scale));
  if (p.is_causal) options.set_causal_mask(true);  // top-left, as PyTorch's is_causal
  if (p.mask_in.defined()) {
    const Shape shape = bias_shape(p);
    const Shape strides = {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1};
    options.set_bias(g->tensor(fe::graph::Tensor_attributes().set_name("bias").set_uid(kBias).set_dim(shape).set_stride(strides)));
  }
  if (p.dropout_p > 0) {
    auto scalar = [&](const char* name, int64_t uid) {
      return g->tensor(fe::graph::Tensor_attributes()
                           .set_name(name)
                           .set_uid(uid)
                           .set_dim({1, 1, 1, 1})
                           .set_stride({1, 1, 1, 1})
                           .set_data_type(fe::DataType_t::INT64));
    };
    options.set_dropout(static_cast<float>(p.dropout_p), scalar("seed", kSeed), scalar("offset", kOffset));
  }
  auto [o, stats] = g->sdpa(q, k, v, std::move(options));
  (void)stats;
  const int64_t hq = p.q_in.size(1);
  o->set_output(true).set_uid(kO).set_dim({p.q_in.size(0), hq, p.L, p.Ev}).set_stride({hq * p.L * p.Ev, p.L * p.Ev, p.Ev, 1});
  if (auto status = g->build(handle_for(p.device.index), {fe::HeurMode_t::A}); status.is_bad()) {
    out->error = status.get_message();
    return out;
  }
  if (auto status = g->get_workspace_size(out->workspace); status.is_bad()) {
    out->error = status.get_message();
    return out;
  }
  out->graph = g;
  return out;
}

// Built graphs by key; a bounded cache (cleared when full: shapes in a
// process are few, and rebuilding is only milliseconds).
std::shared_ptr<Built> graph_for(const Params& p) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<Built>> cache;
  constexpr std::size_t kMaxGraphs = 256;
  const std::string key = key_of(p);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::shared_ptr<Built> built = build(p);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxGraphs) cache.clear();
  cache.emplace(key, built);
  return built;
}

// Runs last: earlier failures already say why (and a graph needs a device).
bool cudnn_support(const Params& p, Reasons& r) {
  if (r.failures() > 0) return true;
  const std::shared_ptr<Built> built = graph_for(p);
  return built->error.empty() || r.fail("a problem cuDNN builds an attention graph for", built->error);
}

void run(const Params& p) {
  const std::shared_ptr<Built> built = graph_for(p);
  if (!built->graph) throw_runtime(kName, std::string(kName) + ": cuDNN could not build the graph: " + built->error);
  const int device = p.device.index;
  std::unordered_map<int64_t, void*> pack = {{kQ, const_cast<void*>(p.q_in.data())},
                                             {kK, const_cast<void*>(p.k_in.data())},
                                             {kV, const_cast<void*>(p.v_in.data())},
                                             {kO, p.out.data()}};
  Tensor bias, rng;
  if (p.mask_in.defined()) {
    bias = bias_of(p);
    pack[kBias] = bias.data();
  }
  if (p.dropout_p > 0) {
    const PhiloxStream stream = default_generator().reserve(static_cast<uint64_t>(p.batch * p.L * p.S));
    Tensor host = Tensor::empty(Shape{2}, DType::i64);
    host.data_ptr<int64_t>()[0] = static_cast<int64_t>(stream.seed);
    host.data_ptr<int64_t>()[1] = static_cast<int64_t>(stream.first_block * 4);
    rng = host.to(p.device);
    pack[kSeed] = rng.data();
    pack[kOffset] = static_cast<int64_t*>(rng.data()) + 1;
  }
  const Workspace ws = gemm_workspace(device, WorkspaceUser::cudnn, static_cast<size_t>(built->workspace));
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  if (auto status = built->graph->execute(handle_for(device), pack, ws.data); status.is_bad())
    throw_runtime(kName, std::string(kName) + ": cuDNN execute failed: " + status.get_message());
}

}  // namespace

void fill_sdpa_cudnn() {
  std::vector<dispatch::Check<Params>> extra;
  extra.push_back(dispatch::Check<Params>{"cudnn_support", cudnn_support});
  dispatch::fill<Params>(ops::sdpa::sdpa_op(), kName, run, std::move(extra));
}

}  // namespace bp::cuda_impl

#else  // no frontend headers: the slot says what is missing

namespace bp::cuda_impl {
void fill_sdpa_cudnn() {
  dispatch::fill_not_built(ops::sdpa::sdpa_op(), "cudnn:sdpa", kNoCudnnFrontend);
}
}  // namespace bp::cuda_impl

#endif
