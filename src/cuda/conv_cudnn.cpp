// cudnn:conv: convolution through cuDNN's graph API, built with the
// header-only cuDNN C++ frontend (found at configure time, as cudnn:sdpa's):
// the run function of the conv op's cudnn:conv slot (its checks live in
// ops/conv/checks_cuda.cpp). Forward problems are a conv_fprop node; the
// transposed forms are the data gradient of the forward convolution they
// are the adjoint of (conv_dgrad), as in PyTorch. The bias is added by a
// small kernel after the graph (conv_kernels.cu).
//
// Knobs, as PyTorch's cuDNN v8 path (spec §5.4):
// - fp32 problems may use TF32 tensor cores only when cudnn.conv.fp32_precision
//   resolves to 'tf32' (cudnn.allow_tf32); otherwise tensor-core engines are
//   filtered out. Engines that down-convert inputs are always filtered out.
// - cudnn.deterministic or use_deterministic_algorithms(True): engines with
//   the NONDETERMINISTIC note are filtered out.
// - cudnn.benchmark: up to cudnn.benchmark_limit engine configurations (0:
//   all) are built and timed on the call's own data, once per problem key;
//   the fastest one's name is kept in the autotune cache as a tuned detail
//   (Note [Tuned details]), so a later process with the same key builds that
//   plan without timing. Otherwise cuDNN's heuristics choose (the first plan
//   that builds).
// Workspaces come from Backplane's allocator (memory_stats counts them);
// the chosen plan and its workspace size show in explain's notes.

#include "backplane/dispatch.h"
#include "fills.h"
#include "ops/conv/impls.h"

#if BP_CUDA_HAVE_CUDNN_FRONTEND

#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backplane/error.h"
#include "backplane/flags.h"
#include "backplane/precision.h"
#include "backplane/tensor.h"
#include "cuda_status.h"
#include "gemm_common.h"
#include "ops/conv/checks_cuda.h"
#include "ops/conv/params.h"
#include "workspace.h"

namespace bp::cuda_impl {

void add_conv_bias(const ops::conv::Params& p);  // conv_cuda.cpp

namespace {

namespace fe = cudnn_frontend;
using dispatch::Reasons;
using ops::conv::Params;
constexpr const char* kName = "cudnn:conv";

enum Uid : int64_t { kX = 1, kW, kY };

cudnnHandle_t handle_for(int device) {
  return per_thread_handle<cudnnHandle_t>(device, [] {
    cudnnHandle_t h = nullptr;
    const cudnnStatus_t s = cudnnCreate(&h);
    if (s != CUDNN_STATUS_SUCCESS) throw_runtime(kName, std::string("cudnnCreate failed: ") + cudnnGetErrorString(s));
    return h;
  });
}

fe::DataType_t io_type(DType d) {
  switch (d) {
    case DType::f16: return fe::DataType_t::HALF;
    case DType::bf16: return fe::DataType_t::BFLOAT16;
    case DType::f64: return fe::DataType_t::DOUBLE;
    default: return fe::DataType_t::FLOAT;
  }
}

// A 5-D view as cuDNN's 4-D (conv1d/2d: D dropped) or 5-D tensor. Size-1
// dims may carry any stride in our views; cuDNN wants the strides of the
// layout, so dense views get their layout's strides.
void dims_of(const Params& p, const Tensor& t, std::vector<int64_t>& dims, std::vector<int64_t>& strides) {
  const bool drop_d = p.spatial < 3;
  const bool cl = !ops::conv::dense_ncdhw(t) && ops::conv::dense_ndhwc(t);
  const bool dense = ops::conv::dense_ncdhw(t) || cl;
  dims.clear(), strides.clear();
  for (int d = 0; d < 5; ++d)
    if (!(drop_d && d == 2)) dims.push_back(t.size(d));
  if (!dense) {
    for (int d = 0; d < 5; ++d)
      if (!(drop_d && d == 2)) strides.push_back(t.stride(d));
    return;
  }
  // Order of the dims from the innermost: W, H, (D,) C, N for NCDHW; C first for channels-last.
  const int nd = static_cast<int>(dims.size());
  std::vector<int> order;  // innermost first, indices into dims
  if (cl) order.push_back(1);
  for (int d = nd - 1; d >= 2; --d) order.push_back(d);
  if (!cl) order.push_back(1);
  order.push_back(0);
  strides.assign(nd, 1);
  int64_t s = 1;
  for (int d : order) {
    strides[d] = s;
    s *= dims[d];
  }
}

bool tf32_allowed() {
  return precision::resolved(precision::Backend::cuda, precision::Op::conv) == flags::Precision::tf32;
}
bool deterministic_wanted() {
  return flags::get_raw(flags::Id::cudnn_deterministic) != 0 ||
         flags::get_raw(flags::Id::generic_deterministic_algorithms) != 0;
}

// Everything a graph depends on, and the engine filters.
// cudnn.benchmark is part of it, so turning it on tunes problems that ran
// before under the heuristic choice.
std::string key_of(const Params& p, bool tf32, bool deterministic, bool benchmark) {
  std::string k = std::to_string(p.device.index) + "|" + dtype_name(p.dtype) + (p.transposed ? "|T" : "|F") +
                  (tf32 ? "|tf32" : "") + (deterministic ? "|det" : "") + (benchmark ? "|bench" : "");
  for (const Tensor* t : {&p.x, &p.w, &p.out}) {
    std::vector<int64_t> dims, strides;
    dims_of(p, *t, dims, strides);
    for (std::size_t d = 0; d < dims.size(); ++d) k += "|" + std::to_string(dims[d]) + ":" + std::to_string(strides[d]);
  }
  for (int a = 0; a < 3; ++a)
    k += "|" + std::to_string(p.stride[a]) + "," + std::to_string(p.pad[a]) + "," + std::to_string(p.pad_hi[a]) + "," +
         std::to_string(p.dilation[a]);
  return k;
}

struct Built {
  std::shared_ptr<fe::graph::Graph> graph;
  std::string error;  // empty when there are candidates
  bool chosen = false;  // a plan has been chosen (and built)
  int64_t plan = -1;    // its index, or -1 for the frontend's candidate (cuDNN's heuristic choice)
  std::string plan_name;
  int64_t workspace = 0;
  std::mutex mutex;  // choosing a plan (timing, building) happens once
};

std::shared_ptr<Built> make_graph(const Params& p, bool tf32, bool deterministic) {
  auto b = std::make_shared<Built>();
  auto g = std::make_shared<fe::graph::Graph>();
  const fe::DataType_t io = io_type(p.dtype);
  g->set_io_data_type(io)
      .set_intermediate_data_type(p.dtype == DType::f64 ? fe::DataType_t::DOUBLE : fe::DataType_t::FLOAT)
      .set_compute_data_type(p.dtype == DType::f64 ? fe::DataType_t::DOUBLE : fe::DataType_t::FLOAT);
  auto tensor = [&](const char* name, int64_t uid, const Tensor& t) {
    std::vector<int64_t> dims, strides;
    dims_of(p, t, dims, strides);
    return g->tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(strides));
  };
  std::vector<int64_t> pre, post, stride, dilation;
  for (int a = 3 - std::max(p.spatial, 2); a < 3; ++a) {
    pre.push_back(p.pad[a]);
    // Transposed: the forward convolution's own (symmetric) padding; the
    // output size, given explicitly, carries output_padding.
    post.push_back(p.transposed ? p.pad[a] : p.pad_hi[a]);
    stride.push_back(p.stride[a]);
    dilation.push_back(p.dilation[a]);
  }
  auto x = tensor("x", kX, p.x), w = tensor("w", kW, p.w);
  std::vector<int64_t> ydims, ystrides;
  dims_of(p, p.out, ydims, ystrides);
  std::shared_ptr<fe::graph::Tensor_attributes> y;
  if (!p.transposed) {
    y = g->conv_fprop(x, w,
                      fe::graph::Conv_fprop_attributes()
                          .set_name("conv")
                          .set_pre_padding(pre)
                          .set_post_padding(post)
                          .set_stride(stride)
                          .set_dilation(dilation));
  } else {
    y = g->conv_dgrad(x, w,
                      fe::graph::Conv_dgrad_attributes()
                          .set_name("conv_transpose")
                          .set_pre_padding(pre)
                          .set_post_padding(post)
                          .set_stride(stride)
                          .set_dilation(dilation));
  }
  y->set_output(true).set_uid(kY).set_dim(ydims).set_stride(ystrides).set_data_type(io);
  cudnnHandle_t handle = handle_for(p.device.index);
  auto fail = [&](fe::error_t status) {
    b->error = status.get_message();
    return b;
  };
  if (auto s = g->validate(); s.is_bad()) return fail(s);
  if (auto s = g->build_operation_graph(handle); s.is_bad()) return fail(s);
  if (auto s = g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}); s.is_bad())
    return fail(s);
  std::vector<fe::NumericalNote_t> barred = {fe::NumericalNote_t::DOWN_CONVERT_INPUTS};
  if (p.dtype == DType::f32 && !tf32) barred.push_back(fe::NumericalNote_t::TENSOR_CORE);
  if (deterministic) barred.push_back(fe::NumericalNote_t::NONDETERMINISTIC);
  g->deselect_numeric_notes(barred);
  if (auto s = g->check_support(handle); s.is_bad()) return fail(s);
  b->graph = g;
  return b;
}

std::shared_ptr<Built> graph_for(const Params& p) {
  const bool tf32 = tf32_allowed(), deterministic = deterministic_wanted();
  const std::string key = key_of(p, tf32, deterministic, flags::get_raw(flags::Id::cudnn_benchmark) != 0);
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<Built>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::shared_ptr<Built> built = make_graph(p, tf32, deterministic);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 256) cache.clear();  // bounded: shapes in a process are few
  return cache.emplace(key, std::move(built)).first->second;
}

std::string plan_name(const Built& b, int64_t index) {
  std::string name;
  if (b.graph->get_plan_name_at_index(index, name).is_bad()) return "#" + std::to_string(index);
  return name;
}

// Times plan `index` on the call's data: one warm-up, then the best of three.
double time_plan(const Params& p, Built& b, int64_t index, std::unordered_map<int64_t, void*>& pack) {
  int64_t bytes = 0;
  if (b.graph->get_workspace_size_plan_at_index(index, bytes).is_bad()) return -1;
  const Workspace ws = gemm_workspace(p.device.index, WorkspaceUser::cudnn, static_cast<size_t>(bytes));
  cudnnHandle_t handle = handle_for(p.device.index);
  if (b.graph->execute_plan_at_index(handle, pack, ws.data, index).is_bad()) return -1;
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  float best = -1;
  for (int i = 0; i < 3; ++i) {
    check_cuda(cudaEventRecord(start), "cudaEventRecord");
    const bool ok = b.graph->execute_plan_at_index(handle, pack, ws.data, index).is_good();
    check_cuda(cudaEventRecord(stop), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (ok && (best < 0 || ms < best)) best = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

// Chooses the plan of a graph once: a tuned detail from the autotune cache,
// else timing (cudnn.benchmark), else cuDNN's heuristic order.
void choose_plan(const Params& p, Built& b, std::unordered_map<int64_t, void*>& pack) {
  const bool benchmark = flags::get_raw(flags::Id::cudnn_benchmark) != 0;
  const int64_t count = b.graph->get_execution_plan_count();
  if (!benchmark) {
    if (auto s = b.graph->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE); s.is_bad())
      throw_runtime(kName, std::string(kName) + ": no cuDNN plan builds: " + s.get_message());
    b.plan = -1;  // the first plan of the heuristic order that built
    if (b.graph->get_plan_name(b.plan_name).is_bad()) b.plan_name = "(heuristic choice)";
    if (b.graph->get_workspace_size(b.workspace).is_bad()) b.workspace = 0;
    b.chosen = true;
    return;
  }
  const dispatch::Op& op = ops::conv::conv_op();
  const dispatch::Implementation& self = *op.find(kName);
  const dispatch::Problem problem = ops::conv::problem_of(p);
  if (auto detail = dispatch::tuned_detail(op, problem, self)) {  // a plan timed before, maybe in another process
    for (int64_t i = 0; i < count; ++i)
      if ("plan " + plan_name(b, i) == *detail && b.graph->build_plan_at_index(i).is_good()) {
        b.plan = i, b.plan_name = plan_name(b, i);
        if (b.graph->get_workspace_size_plan_at_index(i, b.workspace).is_bad()) b.workspace = 0;
        b.chosen = true;
        return;
      }
  }
  const int64_t limit = flags::get_raw(flags::Id::cudnn_benchmark_limit);
  const int64_t tried = limit == 0 ? count : std::min(limit, count);
  double best = -1;
  int64_t fastest = -1;
  for (int64_t i = 0; i < tried; ++i) {
    if (b.graph->build_plan_at_index(i).is_bad()) continue;
    const double ms = time_plan(p, b, i, pack);
    if (ms >= 0 && (best < 0 || ms < best)) best = ms, fastest = i;
  }
  if (fastest < 0) throw_runtime(kName, std::string(kName) + ": none of the " + std::to_string(tried) +
                                            " cuDNN plans timed could run");
  b.plan = fastest, b.chosen = true;
  b.plan_name = plan_name(b, b.plan);
  if (b.graph->get_workspace_size_plan_at_index(b.plan, b.workspace).is_bad()) b.workspace = 0;
  dispatch::store_tuned_detail(op, problem, self, "plan " + b.plan_name, best);
}

// Runs last: earlier failures already say why (and a graph needs a device).
bool cudnn_support(const Params& p, Reasons& r) {
  if (r.failures() > 0) return true;
  const std::shared_ptr<Built> built = graph_for(p);
  return built->error.empty() || r.fail("a problem cuDNN has a convolution engine for", built->error);
}

void run(const Params& p) {
  const std::shared_ptr<Built> built = graph_for(p);
  if (!built->graph) throw_runtime(kName, std::string(kName) + ": cuDNN cannot run this convolution: " + built->error);
  const int device = p.device.index;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  std::unordered_map<int64_t, void*> pack = {
      {kX, const_cast<void*>(p.x.data())}, {kW, const_cast<void*>(p.w.data())}, {kY, p.out.data()}};
  {
    std::lock_guard<std::mutex> lock(built->mutex);
    if (!built->chosen) {
      choose_plan(p, *built, pack);
      ops::conv::cuda_checks::record_cudnn_workspace(ops::conv::problem_of(p).str(), built->workspace,
                                                     built->plan_name);
    }
  }
  const Workspace ws = gemm_workspace(device, WorkspaceUser::cudnn, static_cast<size_t>(built->workspace));
  cudnnHandle_t handle = handle_for(device);
  auto status = built->plan >= 0 ? built->graph->execute_plan_at_index(handle, pack, ws.data, built->plan)
                                       : built->graph->execute(handle, pack, ws.data);
  if (status.is_bad()) throw_runtime(kName, std::string(kName) + ": cuDNN execute failed: " + status.get_message());
  if (p.has_bias()) add_conv_bias(p);
}

}  // namespace

void fill_conv_cudnn() {
  std::vector<dispatch::Check<Params>> extra;
  extra.push_back(dispatch::Check<Params>{"cudnn_support", cudnn_support});
  dispatch::fill<Params>(ops::conv::conv_op(), kName, run, std::move(extra));
}

}  // namespace bp::cuda_impl

#else  // no frontend headers: the slot says what is missing

namespace bp::cuda_impl {
void fill_conv_cudnn() {
  dispatch::fill_not_built(ops::conv::conv_op(), "cudnn:conv", kNoCudnnFrontend);
}
}  // namespace bp::cuda_impl

#endif
