// onednn:rnn: oneDNN's RNN primitives (vanilla_rnn_forward with relu / tanh,
// lstm_forward with or without projection, lbr_gru_forward) on the packed
// weight buffer (Note [RNN weight buffer]), the library behind PyTorch's
// CPU RNNs under mkldnn.
//
// PyTorch's GRU is oneDNN's "linear before reset" GRU (r multiplies
// W_hn h + b_hn), so lbr_gru, never gru_forward. Gate orders, rows of
// W_ih / W_hh: LSTM i, f, g, o in both; GRU r, z, n in PyTorch, u (= z),
// r, o (= n) in oneDNN. Biases: one per gate (b_ih + b_hh), and LBR GRU's
// fourth, b_hn, kept apart since r multiplies it.
//
// Layers: oneDNN runs a stack of layers as one primitive when every layer
// has the same input width (its SLC must equal the output width P for
// L > 1), so layer 0 gets a primitive of its own unless input_size equals
// P, and the others share one. Bidirectional stacks are one primitive per
// layer: oneDNN's bidirectional_concat runs the two directions as separate
// stacks (layer l's forward direction reads only layer l-1's forward
// output), where PyTorch feeds each layer both directions' outputs. With
// dropout between layers (train) each layer is its own primitive too, and
// the mask (Note [RNN dropout]) is applied between them.
//
// Weights: oneDNN wants its own format (format_tag::any: blocked or packed
// for its GEMMs), so every call reorders W_ih, W_hh (and W_hr) into the
// primitive's format. The packed buffer's W_ih [G*H, I] row-major is
// oneDNN's ldgoi, with the layers and directions of a group evenly spaced
// (cpu_layout), so for LSTM and RNN (the same gate order) the reorders read
// the buffer itself through strided ldgoi / ldoi descriptors. GRU's weights
// (u, r are PyTorch's z, r swapped) are copied into plain ldgoi staging in
// oneDNN's order first: two reorders per weight (z, then r and n two gates
// apart, each into its gates of the primitive's format) measured slower
// than the copy plus one reorder. So are weights whose reorder oneDNN 2.6
// has only from dense sources (its packed GEMM format, rnn_packed, where
// it picks it: here LBR GRU's W_hh at batch 32, W_ih at one step): a
// failed strided reorder falls back to staging. Nothing is cached
// by the buffer's address: a packed buffer is rewritten in place
// (load_state_dict copies into the views, NumPy writes through DLPack) and
// tensors carry no version counter to tell. The staging and the reordered
// weights are kernel scratch slots (Note [Kernel scratch]; the two
// packed:cpu uses: the implementations never run inside each other).
//
// Declines (checks, with reasons explain shows): f64 and f16 (oneDNN 2.6 has
// f32 and bf16 RNNs on CPUs), bf16 where this CPU's oneDNN has none, bf16
// with proj_size (oneDNN has no bf16 projection LSTM), packed variable
// lengths (the primitives run every batch entry for all T steps), and
// mkldnn.enabled = False.
//
// Knobs:
// - mkldnn.enabled: a check.
// - mkldnn.rnn.fp32_precision "bf16" is not taken: oneDNN's bf16 RNN keeps
//   the hidden state and layer outputs in bf16, more rounding than the
//   permission (bf16 products, fp32 state) allows; packed:avx512_bf16 is
//   the row that uses it.
// - mkldnn.deterministic and use_deterministic_algorithms: as onednn:conv,
//   oneDNN 2.6 cannot be asked for deterministic results, so the
//   implementation is declared nondeterministic and mkldnn.deterministic =
//   True rejects it.
// Primitives are cached per configuration, shape, dtype and team size
// (oneDNN's OpenMP build splits the work for the team it sees at creation).
// Compiled only with oneDNN.

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "backends/onednn/onednn_bf16.h"
#include "backends/onednn/onednn_checks.h"
#include "backplane/dispatch_checks.h"
#include "core/threads.h"
#include "kernels/cpu/scratch.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

memory::data_type io_type(DType d) { return d == DType::bf16 ? memory::data_type::bf16 : memory::data_type::f32; }

// oneDNN's gate g holds PyTorch's gate pytorch_gate(mode, g) (the header note).
int pytorch_gate(Mode m, int g) {
  if (m != Mode::gru) return g;
  static constexpr int kGru[3] = {1, 0, 2};  // u = z, r = r, o = n
  return kGru[g];
}

// Layers [first, first + count), all with input width `in`: one primitive.
struct Group {
  int64_t first, count, in;
};

std::vector<Group> groups_of(const Params& p) {
  const Config& c = p.cfg;
  const int64_t L = c.num_layers, wide = c.dirs() * c.out_size();
  std::vector<Group> g;
  if (p.dropout_active() || c.dirs() == 2) {
    for (int64_t l = 0; l < L; ++l) g.push_back({l, 1, c.layer_input(l)});
  } else if (L == 1 || c.input_size == wide) {
    g.push_back({0, L, c.input_size});
  } else {
    g.push_back({0, 1, c.input_size});
    g.push_back({1, L - 1, wide});
  }
  return g;
}

struct Built {
  std::string error;  // empty when oneDNN has a primitive for the group
  dnnl::primitive rnn;
  // The data as Backplane holds them (the primitive takes these formats).
  memory::desc src_layer, src_iter, src_iter_c, dst_layer, dst_iter, dst_iter_c, bias;
  // The weights: the primitive's format (layer, iter, proj), what the reorders into it read (from_*: the
  // packed buffer itself, strided, where direct_*; plain ldgoi / ldoi staging with oneDNN's gates otherwise)
  // and the reorders (empty when the formats agree).
  memory::desc layer, iter, proj, from_layer, from_iter, from_proj;
  bool direct_layer = false, direct_iter = false, direct_proj = false;
  dnnl::reorder layer_in, iter_in, proj_in;
};

memory::desc any_like(const memory::desc& d) { return memory::desc(d.dims(), d.data_type(), Tag::any); }

// Where a group's weights sit in the packed buffer: the steps, in elements, from one layer (direction) of the
// group to the next, alike for W_ih, W_hh and W_hr (cpu_layout keeps a direction's parameters together, and a
// group's layers have the same shapes). `even` is false when some parameter is off that grid: then it is staged.
struct Spacing {
  bool even = false;
  int64_t layer = 0, dir = 0;
};

Spacing spacing_of(const Params& p, const Group& g) {
  const int D = p.cfg.dirs();
  auto at = [&](int64_t l, int d, Which w) { return p.slot(g.first + l, d, w)->offset; };
  Spacing s;
  s.layer = g.count > 1 ? at(1, 0, Which::w_ih) - at(0, 0, Which::w_ih) : 0;
  s.dir = D == 2 ? at(0, 1, Which::w_ih) - at(0, 0, Which::w_ih) : 0;
  for (Which w : {Which::w_ih, Which::w_hh, Which::w_hr}) {
    if (p.slot(g.first, 0, w) == nullptr) continue;
    for (int64_t l = 0; l < g.count; ++l)
      for (int d = 0; d < D; ++d)
        if (at(l, d, w) != at(0, 0, w) + l * s.layer + d * s.dir) return Spacing{};
  }
  s.even = true;
  return s;
}

// The packed buffer's W_ih (W_hh) of a group as oneDNN's ldgoi, dims {L, D, I, G, O}: row gate * O + o of
// [G * O, I], row-major, every layer / direction `s` apart. Strides of one-long dims are those of a dense tensor.
memory::desc strided_ldgoi(int64_t L, int64_t D, int64_t I, int64_t G, int64_t O, memory::data_type t,
                           const Spacing& s) {
  const int64_t dir = D > 1 ? s.dir : G * O * I, layer = L > 1 ? s.layer : D * dir;
  return memory::desc({L, D, I, G, O}, t, memory::dims{layer, dir, 1, O * I, I});
}

// W_hr [P][H] (oneDNN's ldoi dims {L, D, H, P}) likewise.
memory::desc strided_ldoi(int64_t L, int64_t D, int64_t H, int64_t P, memory::data_type t, const Spacing& s) {
  const int64_t dir = D > 1 ? s.dir : P * H, layer = L > 1 ? s.layer : D * dir;
  return memory::desc({L, D, H, P}, t, memory::dims{layer, dir, 1, H});
}

std::shared_ptr<Built> build(const Config& c, DType dtype, int64_t T, int64_t B, const Group& g, const Spacing& s) {
  auto b = std::make_shared<Built>();
  const int64_t L = g.count, D = c.dirs(), G = c.gates(), H = c.hidden_size, P = c.out_size();
  const bool lstm = c.mode == Mode::lstm, gru = c.mode == Mode::gru, proj = c.proj_size > 0;
  const memory::data_type io = io_type(dtype), f32 = memory::data_type::f32;
  b->src_layer = memory::desc({T, B, g.in}, io, Tag::tnc);
  b->dst_layer = memory::desc({T, B, D * P}, io, Tag::tnc);
  b->src_iter = b->dst_iter = memory::desc({L, D, B, P}, io, Tag::ldnc);
  if (lstm) b->src_iter_c = b->dst_iter_c = memory::desc({L, D, B, H}, f32, Tag::ldnc);  // c is f32 for bf16 too
  // The staging: PyTorch's rows are [gate][unit][input], oneDNN's ldgoi (the gates in oneDNN's order).
  b->from_layer = memory::desc({L, D, g.in, G, H}, io, Tag::ldgoi);
  b->from_iter = memory::desc({L, D, P, G, H}, io, Tag::ldgoi);
  if (proj) b->from_proj = memory::desc({L, D, H, P}, io, Tag::ldoi);  // W_hr [P][H]
  b->bias = memory::desc({L, D, gru ? 4 : G, H}, f32, Tag::ldgo);  // the CPU primitives need a bias
  const auto dir = D == 2 ? dnnl::rnn_direction::bidirectional_concat : dnnl::rnn_direction::unidirectional_left2right;
  const auto fwd = dnnl::prop_kind::forward_inference;
  const memory::desc layer = any_like(b->from_layer), iter = any_like(b->from_iter);
  try {
    if (lstm) {
      dnnl::lstm_forward::desc d(fwd, dir, b->src_layer, b->src_iter, b->src_iter_c, layer, iter, memory::desc(),
                                 proj ? any_like(b->from_proj) : memory::desc(), b->bias, b->dst_layer, b->dst_iter,
                                 b->dst_iter_c);
      dnnl::lstm_forward::primitive_desc pd(d, engine());
      b->layer = pd.weights_layer_desc(), b->iter = pd.weights_iter_desc();
      if (proj) b->proj = pd.weights_projection_desc();
      b->rnn = dnnl::lstm_forward(pd);
    } else if (gru) {
      dnnl::lbr_gru_forward::desc d(fwd, dir, b->src_layer, b->src_iter, layer, iter, b->bias, b->dst_layer,
                                    b->dst_iter);
      dnnl::lbr_gru_forward::primitive_desc pd(d, engine());
      b->layer = pd.weights_layer_desc(), b->iter = pd.weights_iter_desc();
      b->rnn = dnnl::lbr_gru_forward(pd);
    } else {
      const auto act = c.mode == Mode::rnn_relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_tanh;
      dnnl::vanilla_rnn_forward::desc d(fwd, act, dir, b->src_layer, b->src_iter, layer, iter, b->bias, b->dst_layer,
                                        b->dst_iter);
      dnnl::vanilla_rnn_forward::primitive_desc pd(d, engine());
      b->layer = pd.weights_layer_desc(), b->iter = pd.weights_iter_desc();
      b->rnn = dnnl::vanilla_rnn_forward(pd);
    }
    auto reorder = [](const memory::desc& from, const memory::desc& to) {
      return from == to ? dnnl::reorder() : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
    };
    // LSTM's and RNN's gates are in oneDNN's order already, so a reorder can read the packed buffer itself.
    // GRU's u, r are PyTorch's z, r swapped: staged (two reorders, z and r / n two gates apart, each into
    // its gates of the primitive's format, measured slower than the copy and one reorder). oneDNN 2.6's
    // reorders into its packed GEMM format (rnn_packed) take only dense sources: those weights are staged.
    auto direct = [&](const memory::desc& strided, memory::desc& from, dnnl::reorder& in, const memory::desc& to) {
      if (gru || !s.even) return false;
      try {
        in = reorder(strided, to);
      } catch (const dnnl::error&) {
        return false;
      }
      from = strided;
      return true;
    };
    b->direct_layer = direct(strided_ldgoi(L, D, g.in, G, H, io, s), b->from_layer, b->layer_in, b->layer);
    b->direct_iter = direct(strided_ldgoi(L, D, P, G, H, io, s), b->from_iter, b->iter_in, b->iter);
    if (proj) b->direct_proj = direct(strided_ldoi(L, D, H, P, io, s), b->from_proj, b->proj_in, b->proj);
    if (!b->direct_layer) b->layer_in = reorder(b->from_layer, b->layer);
    if (!b->direct_iter) b->iter_in = reorder(b->from_iter, b->iter);
    if (proj && !b->direct_proj) b->proj_in = reorder(b->from_proj, b->proj);
  } catch (const dnnl::error& e) {
    b->error = std::string("oneDNN has no ") + mode_name(c.mode) + " primitive for it (" + dtype_name(dtype) +
               (proj ? ", proj_size" : "") + (L > 1 ? ", " + std::to_string(L) + " layers" : "") + "): " + e.what();
  }
  return b;
}

std::shared_ptr<Built> built_for(const Params& p, const Group& g) {
  const Config& c = p.cfg;
  // The team this call runs on (Note [Small problems on fewer threads]): oneDNN sizes its regions by it.
  const int threads = threads::team_size(INT64_MAX);
  // The spacing is the direct sources' strides (it varies with has_bias): part of the key.
  const Spacing s = spacing_of(p, g);
  std::string key;
  for (int64_t v : {int64_t(c.mode), int64_t(c.dirs()), g.count, g.in, c.hidden_size, c.proj_size, p.steps, p.batch,
                    int64_t(p.dtype), int64_t(threads), int64_t(s.even), s.layer, s.dir})
    key += std::to_string(v) + ",";
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<Built>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::shared_ptr<Built> b = build(c, p.dtype, p.steps, p.batch, g, s);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 256) cache.clear();  // bounded: shapes of a long-running process vary
  return cache.emplace(key, std::move(b)).first->second;
}

// Runs last: earlier failures say why already, and creating primitives costs time.
bool onednn_support(const Params& p, dispatch::Reasons& r) {
  if (r.failures() > 0) return true;
  for (const Group& g : groups_of(p)) {
    const std::shared_ptr<Built> b = built_for(p, g);
    if (!b->error.empty()) return r.fail("a configuration oneDNN has an RNN primitive for", b->error);
  }
  return true;
}

bool full_lengths(const Params& p, dispatch::Reasons& r) {
  return p.lengths.empty() ||
         r.fail("every sequence running all steps (oneDNN's RNN primitives have no per-sequence lengths)",
                "a PackedSequence of different lengths");
}

bool no_bf16_projection(const Params& p, dispatch::Reasons& r) {
  return !(p.dtype == DType::bf16 && p.cfg.proj_size > 0) ||
         r.fail("no proj_size with bfloat16 (oneDNN 2.6 has no bf16 projection LSTM)",
                [&] { return "proj_size=" + std::to_string(p.cfg.proj_size) + " with bfloat16"; });
}

// The weights of `g` from the packed buffer into plain ldgoi / ldoi order (oneDNN's gates), in the
// stage_* that are not null.
void stage_weights(const Params& p, const Group& g, char* stage_layer, char* stage_iter, char* stage_proj) {
  const Config& c = p.cfg;
  const int64_t D = c.dirs(), G = c.gates(), H = c.hidden_size, P = c.out_size();
  const auto item = static_cast<int64_t>(dtype_itemsize(p.dtype));
  const auto* buf = static_cast<const char*>(p.weights.data());
  for (int64_t l = 0; l < g.count; ++l)
    for (int d = 0; d < D; ++d) {
      const int64_t ld = l * D + d;
      const ParamSlot* w_ih = p.slot(g.first + l, d, Which::w_ih);
      const ParamSlot* w_hh = p.slot(g.first + l, d, Which::w_hh);
      for (int gate = 0; gate < G; ++gate) {
        const int64_t from = pytorch_gate(c.mode, gate) * H;
        if (stage_layer != nullptr)
          std::memcpy(stage_layer + ((ld * G + gate) * H * g.in) * item, buf + (w_ih->offset + from * g.in) * item,
                      static_cast<size_t>(H * g.in * item));
        if (stage_iter != nullptr)
          std::memcpy(stage_iter + ((ld * G + gate) * H * P) * item, buf + (w_hh->offset + from * P) * item,
                      static_cast<size_t>(H * P * item));
      }
      if (stage_proj != nullptr)
        std::memcpy(stage_proj + ld * P * H * item, buf + p.slot(g.first + l, d, Which::w_hr)->offset * item,
                    static_cast<size_t>(P * H * item));
    }
}

float element(const Params& p, const ParamSlot* s, int64_t i) {
  if (s == nullptr) return 0.0f;
  const int64_t at = s->offset + i;
  if (p.dtype == DType::bf16) return bfloat16_bits_to_float(static_cast<const uint16_t*>(p.weights.data())[at]);
  return static_cast<const float*>(p.weights.data())[at];
}

// oneDNN's bias [L][D][gates][H] in f32: b_ih + b_hh per gate, and LBR GRU's b_hn as a fourth.
std::vector<float> bias_of(const Params& p, const Group& g) {
  const Config& c = p.cfg;
  const int64_t D = c.dirs(), G = c.gates(), H = c.hidden_size;
  const bool gru = c.mode == Mode::gru;
  const int64_t gb = gru ? 4 : G;
  std::vector<float> bias(static_cast<size_t>(g.count * D * gb * H), 0.0f);
  if (!c.has_bias) return bias;
  for (int64_t l = 0; l < g.count; ++l)
    for (int d = 0; d < D; ++d) {
      const ParamSlot* b_ih = p.slot(g.first + l, d, Which::b_ih);
      const ParamSlot* b_hh = p.slot(g.first + l, d, Which::b_hh);
      float* out = bias.data() + (l * D + d) * gb * H;
      for (int gate = 0; gate < G; ++gate) {
        const int64_t from = pytorch_gate(c.mode, gate) * H;
        const bool candidate = gru && gate == 2;  // o = n: b_in only; b_hn stays inside r * (...)
        for (int64_t j = 0; j < H; ++j)
          out[gate * H + j] = element(p, b_ih, from + j) + (candidate ? 0.0f : element(p, b_hh, from + j));
      }
      if (gru)
        for (int64_t j = 0; j < H; ++j) out[3 * H + j] = element(p, b_hh, 2 * H + j);
    }
  return bias;
}

// Note [RNN dropout] on layer `layer`'s output, in place.
void dropout(const Params& p, int64_t layer, const Tensor& out) {
  const double scale = p.dropout < 1.0 ? 1.0 / (1.0 - p.dropout) : 0.0;
  const int64_t n = out.numel();
  if (p.dtype == DType::f32) {
    float* o = static_cast<float*>(out.data());
    for (int64_t e = 0; e < n; ++e) o[e] = dropout_keep(p, layer, e) ? float(o[e] * scale) : 0.0f;
  } else {
    auto* o = static_cast<uint16_t*>(out.data());
    for (int64_t e = 0; e < n; ++e)
      o[e] = dropout_keep(p, layer, e) ? bfloat16_bits_from_double(bfloat16_bits_to_float(o[e]) * scale) : 0;
  }
}

// `bytes` of a scratch slot, 64-byte aligned.
char* scratch_bytes(kernels::cpu::ScratchSlot slot, std::size_t bytes) {
  return reinterpret_cast<char*>(kernels::cpu::scratch(slot, std::max<std::size_t>(bytes / sizeof(float) + 1, 1)));
}

std::size_t round_up(std::size_t n) { return (n + 63) / 64 * 64; }

void run_group(const Params& p, const Group& g, const Built& b, const Tensor& in, const Tensor& out,
               dnnl::stream& stream) {
  const Config& c = p.cfg;
  const int64_t D = c.dirs(), P = c.out_size(), B = p.batch;
  const bool lstm = c.mode == Mode::lstm, proj = c.proj_size > 0;
  const auto item = dtype_itemsize(p.dtype);
  using kernels::cpu::ScratchSlot;
  // Staging for the weights not read from the buffer itself.
  const bool stage_layer = !b.direct_layer, stage_iter = !b.direct_iter, stage_proj = proj && !b.direct_proj;
  const std::size_t sl = stage_layer ? round_up(b.from_layer.get_size()) : 0,
                    si = stage_iter ? round_up(b.from_iter.get_size()) : 0,
                    sp = stage_proj ? round_up(b.from_proj.get_size()) : 0;
  char* stage = sl + si + sp > 0 ? scratch_bytes(ScratchSlot::rnn_projection, sl + si + sp) : nullptr;
  stage_weights(p, g, stage_layer ? stage : nullptr, stage_iter ? stage + sl : nullptr,
                stage_proj ? stage + sl + si : nullptr);
  // The primitive's weights: reordered into `packed` (unless its format is the source's).
  const std::size_t rl = b.layer_in ? round_up(b.layer.get_size()) : 0, ri = b.iter_in ? round_up(b.iter.get_size()) : 0,
                    rp = proj && b.proj_in ? round_up(b.proj.get_size()) : 0;
  char* packed = scratch_bytes(ScratchSlot::rnn_panels, rl + ri + rp);
  char* const buf = static_cast<char*>(const_cast<void*>(p.weights.data()));  // reorders only read a source
  auto weights = [&](bool direct, Which w, char* staged, const memory::desc& from, const dnnl::reorder& in,
                     const memory::desc& to, char* at) {
    memory src(from, engine(), direct ? buf + p.slot(g.first, 0, w)->offset * static_cast<int64_t>(item) : staged);
    if (!in) return src;
    memory dst(to, engine(), at);
    in.execute(stream, src, dst);
    return dst;
  };
  const memory layer = weights(b.direct_layer, Which::w_ih, stage, b.from_layer, b.layer_in, b.layer, packed);
  const memory iter = weights(b.direct_iter, Which::w_hh, stage + sl, b.from_iter, b.iter_in, b.iter, packed + rl);
  const memory projection = proj ? weights(b.direct_proj, Which::w_hr, stage + sl + si, b.from_proj, b.proj_in,
                                           b.proj, packed + rl + ri)
                                 : memory();
  std::vector<float> bias = bias_of(p, g);
  const int64_t h_at = g.first * D * B * P;  // the group's first layer in h0 / hn
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC_LAYER, memory(b.src_layer, engine(), const_cast<void*>(in.data()))},
      {DNNL_ARG_SRC_ITER, memory(b.src_iter, engine(), static_cast<char*>(const_cast<void*>(p.h0.data())) + h_at * item)},
      {DNNL_ARG_WEIGHTS_LAYER, layer},
      {DNNL_ARG_WEIGHTS_ITER, iter},
      {DNNL_ARG_BIAS, memory(b.bias, engine(), bias.data())},
      {DNNL_ARG_DST_LAYER, memory(b.dst_layer, engine(), out.data())},
      {DNNL_ARG_DST_ITER, memory(b.dst_iter, engine(), static_cast<char*>(p.hn.data()) + h_at * item)}};
  if (proj) args.emplace(DNNL_ARG_WEIGHTS_PROJECTION, projection);
  // The cell states in f32 (oneDNN's for every dtype): bf16's are widened and rounded back.
  Tensor c0, cn;
  if (lstm) {
    const int64_t rows = g.first * D, n = g.count * D;
    c0 = p.c0.slice(0, rows, rows + n);
    cn = p.cn.slice(0, rows, rows + n);
    if (p.dtype != DType::f32) {
      c0 = c0.to(DType::f32);
      cn = Tensor::empty(cn.shape(), DType::f32);
    }
    args.emplace(DNNL_ARG_SRC_ITER_C, memory(b.src_iter_c, engine(), const_cast<void*>(c0.data())));
    args.emplace(DNNL_ARG_DST_ITER_C, memory(b.dst_iter_c, engine(), cn.data()));
  }
  b.rnn.execute(stream, args);
  stream.wait();
  if (lstm && p.dtype != DType::f32) {
    Tensor target = p.cn.slice(0, g.first * D, (g.first + g.count) * D);
    target.copy_from(cn);
  }
}

void run(const Params& p) {
  const Config& c = p.cfg;
  const std::vector<Group> groups = groups_of(p);
  dnnl::stream stream(engine());
  Tensor in = p.input;
  try {
    for (size_t i = 0; i < groups.size(); ++i) {
      const Group& g = groups[i];
      const std::shared_ptr<Built> b = built_for(p, g);
      if (!b->error.empty()) throw_runtime("onednn:rnn", "onednn:rnn: " + b->error);
      const bool last = i + 1 == groups.size();
      const Tensor out = last ? p.output : Tensor::empty({p.steps, p.batch, c.dirs() * c.out_size()}, p.dtype);
      run_group(p, g, *b, in, out, stream);
      if (!last && p.dropout_active()) dropout(p, g.first, out);  // dropout: one layer per group
      in = out;
    }
  } catch (const dnnl::error& e) {
    throw_runtime("onednn:rnn", std::string("onednn:rnn: oneDNN failed: ") + e.what());
  }
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_onednn() {
  dispatch::Properties props;
  props.deterministic = false;  // oneDNN 2.6 cannot be asked for determinism (the note at the top)
  props.workspace =
      "W_ih, W_hh (and W_hr) reordered into oneDNN's format per call: from the packed buffer (LSTM, RNN), from a "
      "copy in oneDNN's gate order (GRU)";
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list = backends::onednn::mkldnn_gate_checks<Params>();
  list.push_back(dtype_in<Params>({DType::f32, DType::bf16}));
  list.push_back(backends::onednn::bf16_support_check<Params>());
  list.push_back({"lengths", full_lengths});
  list.push_back({"projection", no_bf16_projection});
  list.push_back({"onednn_support", onednn_support});
  return std::make_unique<dispatch::Impl<Params>>("onednn:rnn", "onednn", props, std::move(list), run);
}

}  // namespace bp::ops::rnn
