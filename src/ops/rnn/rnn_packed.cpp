// packed:cpu: Backplane's own CPU RNN, on the packed weight buffer (Note
// [RNN weight buffer]). Per layer and direction:
//   1. the input projections of all time steps as ONE product on the matmul
//      dispatcher (Properties::calls = {"matmul"}): X [T*B, in] @ W_ih^T,
//      so matmul's kernels, threads and knobs do the bulk of the flops; the
//      biases (b_ih + b_hh; GRU: b_ih only, its b_hn must stay inside
//      r * (...)) are added in the step's epilogue, where the projection is
//      read anyway (a broadcast bias in the product would cost a pass);
//   2. the recurrence, one step at a time, on W_hh packed once into panels
//      of V hidden units (Note [Recurrent panels] in cell_kernel.h) with the
//      cell's nonlinearity fused into the product's epilogue; threads split
//      the blocks of units, one barrier per step (two with a projection,
//      whose W_hr is packed the same way).
// Dropout between layers draws the stream the front end reserved (Note [RNN
// dropout]). f32 and f64; f16 / bf16 computed in f32 (widened once, rounded once).

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backplane/dispatch_checks.h"
#include "core/threads.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/scratch.h"
#include "ops/matmul/impls.h"
#include "ops/matmul/params.h"
#include "ops/rnn/cell_step.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {
namespace {

using cell::Epilogue;
using cell::StepArgs;

template <class T>
struct Typed;
template <>
struct Typed<float> {
  static void pack(cell::Isa i, const float* w, int g, int64_t u, int64_t k, float* p) { cell::pack_f32(i, w, g, u, k, p); }
  static void step(cell::Isa i, const StepArgs<float>& s) { cell::step_f32(i, s); }
};
template <>
struct Typed<double> {
  static void pack(cell::Isa i, const double* w, int g, int64_t u, int64_t k, double* p) { cell::pack_f64(i, w, g, u, k, p); }
  static void step(cell::Isa i, const StepArgs<double>& s) { cell::step_f64(i, s); }
};

// out [m, n] = a [m, k] @ w^T (w [n, k]), on the matmul dispatcher.
void input_projection(const Tensor& a, const Tensor& w, const Tensor& out, DType dtype) {
  matmul::Params mp;
  mp.a = a;
  mp.b = w.transpose(0, 1);
  mp.out = out;
  mp.m = a.size(0);
  mp.k = a.size(1);
  mp.n = w.size(0);
  mp.dtype = dtype;
  mp.device = Device::cpu();
  dispatch::execute(matmul::matmul_op(), matmul::problem_of(mp), &mp);
}

// The same product under the bf16 permission (packed:avx512_bf16): straight on Backplane's GEMM with its
// AVX512_BF16 variant, which rounds X and W_ih to bf16 while packing them and accumulates in fp32. The
// permission covers all of the RNN's products, as oneDNN's bf16 RNN does; the matmul dispatcher is not
// asked, since its own precision setting (for matmul) is not the one the user relaxed.
void input_projection_bf16(const Tensor& a, const Tensor& w, const Tensor& out) {
  using namespace kernels::cpu;
  const MatView<const float> av{a.data_ptr<float>(), a.size(0), a.size(1), a.stride(0), a.stride(1)};
  const MatView<const float> bv{w.data_ptr<float>(), w.size(1), w.size(0), w.stride(1), w.stride(0)};
  const MatView<float> cv{out.data_ptr<float>(), out.size(0), out.size(1), out.stride(0), out.stride(1)};
  gemm_f32(GemmIsa::avx512_bf16, av, bv, cv, 1.0f, 0.0f);
}

// A tensor over memory owned elsewhere (a kernel scratch slot, Note [Kernel scratch]).
Tensor over(void* data, const Shape& shape, DType dtype) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto storage = std::make_shared<Storage>(data, static_cast<std::size_t>(n) * dtype_itemsize(dtype), Device::cpu(),
                                           std::function<void()>());
  return Tensor::from_storage(storage, shape, contiguous_strides(shape), 0, dtype);
}

// Extra rows of W_ih (zeros) in the input projection, so that its rows, one per batch entry, are not a
// multiple of 1 KiB apart: with G * H * itemsize such a multiple (LSTM 4 x 512: 8 KiB) the lines a step's
// epilogue reads for one unit block (rows x gates) fell into a few L1 sets and evicted each other, a
// third of the epilogue's time at batch 32. One cache line of padding spreads them over the sets; it
// costs a copy of W_ih per call and 16 more columns of the product (under 1% of its flops).
int64_t projection_pad(int64_t gh, int64_t batch, std::size_t itemsize) {
  return batch > 1 && (gh * static_cast<int64_t>(itemsize)) % 1024 == 0 ? 64 / static_cast<int64_t>(itemsize) : 0;
}

// `count` elements of T in a scratch slot (reused across calls: a fresh block of
// tens of MiB would be faulted in page by page on every call).
template <class T>
T* scratch_of(kernels::cpu::ScratchSlot slot, int64_t count) {
  const auto floats = static_cast<std::size_t>(count) * sizeof(T) / sizeof(float);
  return reinterpret_cast<T*>(kernels::cpu::scratch(slot, std::max<std::size_t>(floats, 1)));
}

// How many bytes of input projections packed:cpu computes ahead of the steps that read them.
constexpr int64_t kProjectionBytes = int64_t{16} << 20;

Epilogue epilogue_of(Mode m) {
  switch (m) {
    case Mode::lstm: return Epilogue::lstm;
    case Mode::gru: return Epilogue::gru;
    case Mode::rnn_relu: return Epilogue::relu;
    default: return Epilogue::tanh;
  }
}

// bf16: packed:avx512_bf16 (T = float): W_hh in bf16 pair panels, h rounded to bf16 pairs for the products.
template <class T>
void run_typed(const Params& p, bool bf16) {
  const Config& cfg = p.cfg;
  const int64_t TT = p.steps, B = p.batch, H = cfg.hidden_size, P = cfg.out_size(), D = cfg.dirs();
  const int G = cfg.gates();
  const bool proj = cfg.proj_size > 0, lstm = cfg.mode == Mode::lstm, gru = cfg.mode == Mode::gru;
  const cell::Isa isa = bf16 ? cell::Isa::avx512 : cell::pick_isa();  // the bf16 row's checks ask for AVX-512
  const int64_t V = cell::lanes(isa, sizeof(T) == 8);
  const int64_t blocks = (H + V - 1) / V, proj_blocks = (P + V - 1) / V;
  const DType dt = p.dtype;

  using kernels::cpu::ScratchSlot;
  // The projections of `chunk` steps at a time (16 MiB): a long sequence's do not all go to memory and
  // back, and each product still has thousands of rows (every product packs W_ih anew, so not fewer).
  const int64_t chunk = std::clamp<int64_t>(kProjectionBytes / std::max<int64_t>(B * G * H * int64_t(sizeof(T)), 1), 1, TT);
  const int64_t xw_ld = G * H + projection_pad(G * H, B, sizeof(T));
  T* const xw_mem = scratch_of<T>(ScratchSlot::rnn_projection, chunk * B * xw_ld);
  // (bf16 pairs take the room of one T each.)
  const int64_t panel_size = bf16 ? blocks * ((P + 1) / 2) * G * V : blocks * P * G * V;
  const int64_t proj_size = proj ? proj_blocks * H * V : 0;
  const int64_t xw_pad = xw_ld - G * H, widest_in = std::max(cfg.input_size, D * P);
  const int64_t padded_size = xw_pad > 0 ? xw_ld * widest_in : 0;  // W_ih with its padding rows
  T* const panel = scratch_of<T>(ScratchSlot::rnn_panels, panel_size + proj_size + padded_size);
  T* const proj_panel = panel + panel_size;
  T* const padded_w_ih = proj_panel + proj_size;
  auto* const panel16 = reinterpret_cast<uint16_t*>(panel);
  std::vector<T> hbuf(static_cast<size_t>(2 * B * P)), hfull(proj ? static_cast<size_t>(B * H) : 0),
      cbuf(lstm ? static_cast<size_t>(B * H) : 0);
  std::vector<uint8_t> active_at(p.lengths.empty() ? 0 : static_cast<size_t>(TT * B));
  for (int64_t t = 0; t < static_cast<int64_t>(active_at.size()) / std::max<int64_t>(B, 1); ++t)
    for (int64_t b = 0; b < B; ++b) active_at[static_cast<size_t>(t * B + b)] = t < p.length(b) ? 1 : 0;

  Tensor layer_in = p.input.reshape({TT * B, cfg.input_size});
  Tensor layer_out;
  for (int64_t l = 0; l < cfg.num_layers; ++l) {
    layer_out = (l + 1 == cfg.num_layers) ? p.output : Tensor::empty({TT, B, D * P}, dt);
    T* outp = layer_out.data_ptr<T>();
    for (int d = 0; d < D; ++d) {
      const int64_t sd = l * D + d;
      // 1. Input projections of every step (LSTM / RNN: both biases folded into one, added per step).
      Tensor bias;
      if (cfg.has_bias) {
        bias = p.param(l, d, Which::b_ih);
        if (!gru) {
          bias = bias.clone();
          T* bp = bias.data_ptr<T>();
          const T* bh = p.param(l, d, Which::b_hh).template data_ptr<T>();
          for (int64_t j = 0; j < G * H; ++j) bp[j] += bh[j];
        }
      }
      Tensor w_ih = p.param(l, d, Which::w_ih);
      if (xw_pad > 0) {
        const Tensor padded = over(padded_w_ih, {xw_ld, w_ih.size(1)}, dt);
        padded.slice(0, 0, G * H).copy_from(w_ih);
        std::fill(padded_w_ih + G * H * w_ih.size(1), padded_w_ih + xw_ld * w_ih.size(1), T(0));
        w_ih = padded;
      }
      const T* x_bias = bias.defined() ? bias.template data_ptr<T>() : nullptr;
      // 2. The recurrence.
      // Batch 1 streams W_hh (and W_hr) once a step whatever their order (Note [Recurrent panels]): fp32
      // on AVX-512 packs them (16 x 16 transposes, a tenth of a step's time) for the panels' single
      // sequential stream, with no horizontal sums; the other variants, whose packing gathers element by
      // element, read them where they lie, row by row.
      const bool by_rows = B == 1 && !bf16 && !(isa == cell::Isa::avx512 && std::is_same_v<T, float>);
      const T* w_hh = p.param(l, d, Which::w_hh).template data_ptr<T>();
      const T* w_hr = proj ? p.param(l, d, Which::w_hr).template data_ptr<T>() : nullptr;
      if (bf16) {
        cell::pack_bf16(reinterpret_cast<const float*>(w_hh), G, H, P, panel16);
        if (proj) Typed<T>::pack(isa, w_hr, 1, P, H, proj_panel);
      } else if (!by_rows) {
        Typed<T>::pack(isa, w_hh, G, H, P, panel);
        if (proj) Typed<T>::pack(isa, w_hr, 1, P, H, proj_panel);
      }
      std::memcpy(hbuf.data(), p.h0.data_ptr<T>() + sd * B * P, sizeof(T) * static_cast<size_t>(B * P));
      if (lstm) std::memcpy(cbuf.data(), p.c0.data_ptr<T>() + sd * B * H, sizeof(T) * static_cast<size_t>(B * H));
      const T* b_hh = gru && cfg.has_bias ? p.param(l, d, Which::b_hh).template data_ptr<T>() : nullptr;
      std::vector<T> zero_bias(gru && !cfg.has_bias ? static_cast<size_t>(G * H) : 0, T(0));
      if (gru && !cfg.has_bias) b_hh = zero_bias.data();
      const int team = threads::team_size(B * H >= 4096 ? blocks : 1);
      for (int64_t s0 = 0; s0 < TT; s0 += chunk) {
        // Steps s0 .. s1-1 run times [t0, t0 + n): increasing forward, decreasing in reverse.
        const int64_t s1 = std::min(TT, s0 + chunk), n = s1 - s0, t0 = d == 0 ? s0 : TT - s1;
        const Tensor xw = over(xw_mem, {n * B, xw_ld}, dt);
        if (bf16) input_projection_bf16(layer_in.slice(0, t0 * B, (t0 + n) * B), w_ih, xw);
        else input_projection(layer_in.slice(0, t0 * B, (t0 + n) * B), w_ih, xw, dt);
#pragma omp parallel num_threads(team) if (team > 1)
      {
        // Each thread rounds all of h_prev to bf16 pairs for itself (B x P values: far less than a step's
        // products, and no extra barrier).
        std::vector<uint32_t> pairs(bf16 ? static_cast<size_t>(B * ((P + 1) / 2)) : 0);
#ifdef _OPENMP
        const int64_t tid = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        const int64_t tid = 0, nt = 1;
#endif
        for (int64_t s = s0; s < s1; ++s) {
          const int64_t t = d == 0 ? s : TT - 1 - s;
          T* prev = hbuf.data() + (s % 2) * B * P;
          T* next = hbuf.data() + ((s + 1) % 2) * B * P;
          const uint8_t* active = active_at.empty() ? nullptr : active_at.data() + t * B;
          StepArgs<T> a;
          a.epilogue = epilogue_of(cfg.mode);
          a.gates = G;
          a.rows = B;
          a.K = P;
          a.units = H;
          a.panel = panel;
          a.w_rows = by_rows ? w_hh : nullptr;
          if (bf16) {
            cell::pairs_bf16(reinterpret_cast<const float*>(prev), B, P, pairs.data());
            a.panel_bf16 = panel16;
            a.a_bf16 = pairs.data();
          }
          a.a = prev;
          a.lda = P;
          a.xw = xw_mem + (t - t0) * B * xw_ld;
          a.xw_ld = xw_ld;
          a.x_bias = x_bias;
          a.b_hh = b_hh;
          a.c = lstm ? cbuf.data() : nullptr;
          a.c_ld = H;
          a.out = proj ? hfull.data() : next;
          a.out_ld = H;
          a.keep = proj ? nullptr : prev;  // K == H without a projection
          a.keep_ld = P;
          a.active = active;
          // This thread's share of the unit blocks (as a static omp for would split them), in alternating
          // order: a step starts on the panels the previous one read last, which are still in L2 (a batch-1
          // step is bound by streaming W_hh from L3, and L2 holds a quarter of a 512-unit LSTM's).
          const int64_t lo = blocks * tid / nt, hi = blocks * (tid + 1) / nt;
          for (int64_t i = lo; i < hi; ++i) {
            const int64_t u = s % 2 == 0 ? i : lo + hi - 1 - i;
            a.u0 = u;
            a.u1 = u + 1;
            a.next_unit = i + 1 >= hi ? -1 : s % 2 == 0 ? u + 1 : u - 1;
            if constexpr (std::is_same_v<T, float>) {
              if (bf16) cell::step_bf16(a);
              else Typed<T>::step(isa, a);
            } else {
              Typed<T>::step(isa, a);
            }
          }
#pragma omp barrier
          if (proj) {
            StepArgs<T> q;
            q.epilogue = Epilogue::store;
            q.gates = 1;
            q.rows = B;
            q.K = H;
            q.units = P;
            q.panel = proj_panel;
            q.w_rows = by_rows ? w_hr : nullptr;
            q.a = hfull.data();
            q.lda = H;
            q.out = next;
            q.out_ld = P;
            q.keep = prev;
            q.keep_ld = P;
            q.active = active;
#pragma omp for schedule(static)
            for (int64_t u = 0; u < proj_blocks; ++u) {
              q.u0 = u;
              q.u1 = u + 1;
              Typed<T>::step(isa, q);
            }
          }
          // This step's output rows (zero where the entry has ended); the
          // next step writes the other buffer, so no barrier is needed here.
#pragma omp for schedule(static) nowait
          for (int64_t b = 0; b < B; ++b) {
            T* o = outp + (t * B + b) * D * P + d * P;
            if (active == nullptr || active[b]) std::memcpy(o, next + b * P, sizeof(T) * static_cast<size_t>(P));
            else std::fill(o, o + P, T(0));
          }
        }
      }
      }
      std::memcpy(p.hn.data_ptr<T>() + sd * B * P, hbuf.data() + (TT % 2) * B * P, sizeof(T) * static_cast<size_t>(B * P));
      if (lstm) std::memcpy(p.cn.data_ptr<T>() + sd * B * H, cbuf.data(), sizeof(T) * static_cast<size_t>(B * H));
    }
    if (l + 1 < cfg.num_layers && p.dropout_active()) {
      const T scale = p.dropout < 1.0 ? T(1.0 / (1.0 - p.dropout)) : T(0);
      const int64_t n = layer_out.numel();
      for (int64_t e = 0; e < n; ++e) outp[e] = dropout_keep(p, l, e) ? outp[e] * scale : T(0);
    }
    layer_in = layer_out.reshape({TT * B, D * P});
  }
}

// f16 / bf16: computed in fp32 (inputs, weights and states widened once, outputs rounded once).
void run_widened(const Params& p) {
  Params q = p;
  q.dtype = DType::f32;
  q.input = p.input.to(DType::f32);
  q.weights = p.weights.to(DType::f32);
  q.h0 = p.h0.to(DType::f32);
  q.output = Tensor::empty(p.output.shape(), DType::f32);
  q.hn = Tensor::empty(p.hn.shape(), DType::f32);
  if (p.c0.defined()) {
    q.c0 = p.c0.to(DType::f32);
    q.cn = Tensor::empty(p.cn.shape(), DType::f32);
  }
  run_typed<float>(q, false);
  for (auto [to, from] : {std::pair{p.output, q.output}, std::pair{p.hn, q.hn}, std::pair{p.cn, q.cn}})
    if (to.defined()) to.copy_from(from);
}

void run(const Params& p) {
  switch (p.dtype) {
    case DType::f64: return run_typed<double>(p, false);
    case DType::f32: return run_typed<float>(p, false);
    default: return run_widened(p);
  }
}
void run_bf16(const Params& p) { run_typed<float>(p, true); }

bool is_f32(const Params& p) { return p.dtype == DType::f32; }

}  // namespace

std::unique_ptr<dispatch::Implementation> make_packed() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64, DType::f16, DType::bf16}));
  dispatch::Properties props;
  props.calls = {"matmul"};  // the input projections go through matmul's dispatch
  props.workspace = "the input projections of a layer [T*B, gates*hidden] and W_hh packed into panels";
  return std::make_unique<dispatch::Impl<Params>>("packed:cpu", "cpu", props, std::move(checks), run);
}

std::unique_ptr<dispatch::Implementation> make_packed_bf16() {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dtype_in<Params>({DType::f32}));
  checks.push_back(cpu_capability_at_least<Params>(backends::cpu::CpuCapability::Avx512));
  checks.push_back(precision_permits<Params>(precision::Backend::mkldnn, precision::Op::rnn, flags::Precision::bf16,
                                             is_f32));
  dispatch::Properties props;
  props.calls = {};  // its input projections run on the GEMM directly (input_projection_bf16)
  props.reduced = dispatch::kBf16;
  props.workspace = "as packed:cpu's, W_hh as bf16 pairs";
  return std::make_unique<dispatch::Impl<Params>>(
      "packed:avx512_bf16", "cpu", props, std::move(checks), run_bf16, std::vector<flags::Id>{},
      []() -> std::optional<dispatch::Availability> {
        if (cell::bf16_supported()) return dispatch::Availability{true, true, ""};
        return dispatch::Availability{true, false, "not available: this CPU lacks the avx512_bf16 instructions"};
      });
}

}  // namespace bp::ops::rnn
