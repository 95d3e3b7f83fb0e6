// onednn:conv: oneDNN's convolution_forward (and deconvolution_forward for
// the transposed forms), the library behind PyTorch's CPU convolutions.
//
// Layouts as PyTorch's ideep path: a channels-last input and output go to
// the primitive as they are (nhwc / ndhwc); NCDHW ones let oneDNN choose
// its blocked format (format_tag::any) and are reordered in and out. The
// weight is reordered into the primitive's format on every call (it may
// change between calls; nothing is cached by pointer). Primitives and their
// reorders are cached per problem, layout, arithmetic and thread count
// (oneDNN's OpenMP build splits the work for the team it sees at creation).
//
// Knobs:
// - mkldnn.enabled: a check.
// - mkldnn.conv.fp32_precision "bf16" (Note [fp32 precision tree]): f32
//   problems run with bf16 source and weights (the reorders round them) and
//   an f32 destination; oneDNN 2.6's fpmath attribute does not change f32
//   convolutions on this CPU, so the permission is applied by hand, as
//   onednn:matmul does.
// - mkldnn.deterministic and use_deterministic_algorithms: oneDNN 2.6 has no
//   deterministic mode (the attribute PyTorch sets arrived in oneDNN 3.0),
//   so Backplane cannot ask oneDNN for deterministic results: the
//   implementation is declared nondeterministic (use_deterministic_algorithms
//   skips it, warn_only warns) and mkldnn.deterministic = True rejects it
//   (a check); Backplane's own implementations, deterministic by
//   construction, run instead (docs/differences.md).
// Compiled only with oneDNN.

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "backends/onednn/onednn_bf16.h"
#include "backends/onednn/onednn_checks.h"
#include "backplane/dispatch_checks.h"
#include "backplane/precision.h"
#include "backplane/runtime.h"
#include "core/threads.h"
#include "ops/conv/impls.h"
#include "ops/conv/params.h"

namespace bp::ops::conv {
namespace {

using dnnl::memory;
using Dims = memory::dims;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

memory::data_type dnnl_type(DType d) {
  switch (d) {
    case DType::f32: return memory::data_type::f32;
    case DType::bf16: return memory::data_type::bf16;
    case DType::f16: return memory::data_type::f16;
    default: return memory::data_type::undef;
  }
}

// Where oneDNN has no bf16 (AVX2 machines) the permission goes unused.
bool bf16_arithmetic(const Params& p) {
  return p.dtype == DType::f32 && backends::onednn::has_bf16() &&
         precision::resolved(precision::Backend::mkldnn, precision::Op::conv) == flags::Precision::bf16;
}

// The spatial axes of (D, H, W) this problem uses: the last `spatial` ones.
int first_axis(const Params& p) { return 3 - p.spatial; }

// A 5-D tensor's plain oneDNN descriptor, without the unused spatial axes.
memory::desc plain_desc(const Tensor& t, memory::data_type type, int first) {
  Dims dims = {t.size(0), t.size(1)}, strides = {t.stride(0), t.stride(1)};
  for (int a = first; a < 3; ++a) {
    dims.push_back(t.size(2 + a));
    strides.push_back(t.stride(2 + a));
  }
  return memory::desc(dims, type, strides);
}

// The user's weight as oneDNN's weights dims: forward [G,] OC/G, IC/G, k...;
// deconvolution the same (oneDNN keeps (oc, ic) order; PyTorch's transposed
// weight is [IC, OC/G, k...], so the strides swap).
memory::desc user_weight_desc(const Params& p, memory::data_type type) {
  const Tensor& w = p.w;
  const int first = first_axis(p);
  Dims dims, strides;
  const int64_t G = p.groups, cg = p.cg(), kg = p.kg();
  if (!p.transposed) {
    if (G > 1) dims = {G, kg, cg}, strides = {kg * w.stride(0), w.stride(0), w.stride(1)};
    else dims = {p.k, p.c}, strides = {w.stride(0), w.stride(1)};
  } else {
    if (G > 1) dims = {G, kg, cg}, strides = {cg * w.stride(0), w.stride(1), w.stride(0)};
    else dims = {p.k, p.c}, strides = {w.stride(1), w.stride(0)};
  }
  for (int a = first; a < 3; ++a) {
    dims.push_back(p.kernel[a]);
    strides.push_back(w.stride(2 + a));
  }
  return memory::desc(dims, type, strides);
}

memory::desc any_desc(const memory::desc& like, memory::data_type type) {
  return memory::desc(like.dims(), type, memory::format_tag::any);
}

// Everything a cached primitive depends on.
std::string key_of(const Params& p, bool bf16, int threads) {
  std::string k = std::to_string(threads) + (p.transposed ? "T" : "F") + (bf16 ? "b" : "") + dtype_name(p.dtype) + "|";
  for (const Tensor* t : {&p.x, &p.w, &p.out})
    for (int d = 0; d < 5; ++d) k += std::to_string(t->size(d)) + ":" + std::to_string(t->stride(d)) + ",";
  for (int a = 0; a < 3; ++a)
    k += "|" + std::to_string(p.stride[a]) + "," + std::to_string(p.pad[a]) + "," + std::to_string(p.pad_hi[a]) + "," +
         std::to_string(p.dilation[a]);
  k += "|g" + std::to_string(p.groups) + (p.has_bias() ? "b" : "");
  return k;
}

struct Built {
  std::string error;  // empty when oneDNN has a primitive for the problem
  dnnl::primitive conv;
  memory::desc user_src, user_wei, user_dst, src, wei, dst, bias;
  dnnl::reorder src_in, wei_in, dst_out;  // used when the descs differ
  std::string kernel;                     // oneDNN's implementation name
};

std::shared_ptr<Built> build(const Params& p, bool bf16) {
  auto b = std::make_shared<Built>();
  const int first = first_axis(p);
  const memory::data_type io = dnnl_type(p.dtype);
  const memory::data_type math = bf16 ? memory::data_type::bf16 : io;
  b->user_src = plain_desc(p.x, io, first);
  b->user_dst = plain_desc(p.out, io, first);
  b->user_wei = user_weight_desc(p, io);
  const bool cl_src = dense_ndhwc(p.x) && !dense_ncdhw(p.x);
  const memory::desc src = cl_src && !bf16 ? b->user_src : any_desc(b->user_src, math);
  const memory::desc dst = p.channels_last ? b->user_dst : any_desc(b->user_dst, io);
  const memory::desc wei = any_desc(b->user_wei, math);
  const memory::desc bias = p.has_bias() ? memory::desc({p.k}, memory::data_type::f32, memory::format_tag::a)
                                         : memory::desc();
  Dims strides, dilates, pad_l, pad_r;
  for (int a = first; a < 3; ++a) {
    strides.push_back(p.stride[a]);
    dilates.push_back(p.dilation[a] - 1);  // oneDNN counts the gaps
    pad_l.push_back(p.pad[a]);
    pad_r.push_back(p.pad_hi[a]);
  }
  try {
    if (!p.transposed) {
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                        wei, bias, dst, strides, dilates, pad_l, pad_r);
      dnnl::convolution_forward::primitive_desc pd(d, engine());
      b->src = pd.src_desc(), b->wei = pd.weights_desc(), b->dst = pd.dst_desc(), b->bias = bias;
      b->kernel = pd.impl_info_str();
      b->conv = dnnl::convolution_forward(pd);
    } else {
      dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                          src, wei, bias, dst, strides, dilates, pad_l, pad_r);
      dnnl::deconvolution_forward::primitive_desc pd(d, engine());
      b->src = pd.src_desc(), b->wei = pd.weights_desc(), b->dst = pd.dst_desc(), b->bias = bias;
      b->kernel = pd.impl_info_str();
      b->conv = dnnl::deconvolution_forward(pd);
    }
    if (b->src != b->user_src) b->src_in = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), b->user_src, engine(), b->src));
    if (b->wei != b->user_wei) b->wei_in = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), b->user_wei, engine(), b->wei));
    if (b->dst != b->user_dst) b->dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), b->dst, engine(), b->user_dst));
  } catch (const dnnl::error& e) {
    b->error = std::string("oneDNN has no ") + (p.transposed ? "deconvolution" : "convolution") + " for it (" +
               (bf16 ? "bf16 arithmetic, " : "") + dtype_name(p.dtype) + "): " + e.what();
  }
  return b;
}

std::shared_ptr<Built> built_for(const Params& p) {
  const bool bf16 = bf16_arithmetic(p);
  // The team this call runs on (dispatch may have lowered it for a small
  // problem: Note [Small problems on fewer threads]); oneDNN sizes its
  // regions by it when the primitive is created.
  const std::string key = key_of(p, bf16, threads::team_size(INT64_MAX));
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<Built>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::shared_ptr<Built> b = build(p, bf16);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 256) cache.clear();  // bounded: shapes of a long-running process vary
  return cache.emplace(key, std::move(b)).first->second;
}

// Runs last: earlier failures say why already, and building a primitive costs time.
bool onednn_support(const Params& p, dispatch::Reasons& r) {
  if (r.failures() > 0) return true;
  const std::shared_ptr<Built> b = built_for(p);
  return b->error.empty() || r.fail("a problem oneDNN has a convolution primitive for", b->error);
}

void run(const Params& p) {
  const std::shared_ptr<Built> b = built_for(p);
  if (!b->error.empty()) throw_runtime("onednn:conv", "onednn:conv: " + b->error);
  dnnl::stream stream(engine());
  try {
    memory user_src(b->user_src, engine(), const_cast<void*>(p.x.data()));
    memory user_wei(b->user_wei, engine(), const_cast<void*>(p.w.data()));
    memory user_dst(b->user_dst, engine(), p.out.data());
    memory src = user_src, wei = user_wei, dst = user_dst;
    if (b->src != b->user_src) {
      src = memory(b->src, engine());
      b->src_in.execute(stream, user_src, src);
    }
    if (b->wei != b->user_wei) {
      wei = memory(b->wei, engine());
      b->wei_in.execute(stream, user_wei, wei);
    }
    if (b->dst != b->user_dst) dst = memory(b->dst, engine());
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    Tensor bias;
    if (p.has_bias()) {
      bias = p.bias.to(DType::f32).contiguous();
      args.emplace(DNNL_ARG_BIAS, memory(b->bias, engine(), bias.data()));
    }
    b->conv.execute(stream, args);
    if (b->dst != b->user_dst) b->dst_out.execute(stream, dst, user_dst);
    stream.wait();
  } catch (const dnnl::error& e) {
    throw_runtime("onednn:conv", std::string("onednn:conv: oneDNN failed: ") + e.what());
  }
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_onednn_conv() {
  dispatch::Properties props;
  props.deterministic = false;  // oneDNN 2.6 cannot be asked for determinism (the note at the top)
  props.reduced = dispatch::kBf16;
  props.workspace = "oneDNN's blocked copies of input, weight and output (NCDHW inputs); weights reordered per call";
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list = backends::onednn::mkldnn_gate_checks<Params>();
  list.push_back(dtype_in<Params>({DType::f32, DType::bf16, DType::f16}));
  list.push_back(backends::onednn::bf16_support_check<Params>());
  list.push_back({"onednn_support", onednn_support});
  return std::make_unique<dispatch::Impl<Params>>("onednn:conv", "onednn", props, std::move(list), run,
                                                  precision::path(precision::Backend::mkldnn, precision::Op::conv));
}

}  // namespace bp::ops::conv
