// ref:any: the reference. Plain loops in double over the formulas of
// PyTorch's documentation (each cell written out, one step at a time), for
// every float dtype: the inputs are widened to f64 and the outputs rounded
// back. It accepts every valid CPU problem, so it is the list's last entry.

#include <cmath>

#include "backplane/dispatch_checks.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Weights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;  // f64, contiguous (undefined when absent)
};

Tensor widen(const Tensor& t) { return t.defined() ? t.to(DType::f64).contiguous() : Tensor(); }

// y[r] = sum_k w[r][k] * x[k] (+ b[r]).
void matvec(const Tensor& w, const double* x, const Tensor& b, double* y) {
  const int64_t rows = w.size(0), cols = w.size(1);
  const double* wp = w.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double s = b.defined() ? b.data_ptr<double>()[r] : 0.0;
    for (int64_t k = 0; k < cols; ++k) s += wp[r * cols + k] * x[k];
    y[r] = s;
  }
}

// One step of one batch entry: h (out_size), c (hidden_size, LSTM) updated in place.
void cell(const Config& cfg, const Weights& w, const double* x, std::vector<double>& h, std::vector<double>& c) {
  const int64_t H = cfg.hidden_size;
  std::vector<double> gi(static_cast<size_t>(cfg.gates() * H)), gh(gi.size());
  matvec(w.w_ih, x, w.b_ih, gi.data());
  matvec(w.w_hh, h.data(), w.b_hh, gh.data());
  switch (cfg.mode) {
    case Mode::rnn_tanh:
      for (int64_t j = 0; j < H; ++j) h[j] = std::tanh(gi[j] + gh[j]);
      break;
    case Mode::rnn_relu:
      for (int64_t j = 0; j < H; ++j) h[j] = std::max(0.0, gi[j] + gh[j]);
      break;
    case Mode::gru:
      // r, z, n in PyTorch's row order; n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).
      for (int64_t j = 0; j < H; ++j) {
        const double r = sigmoid(gi[j] + gh[j]);
        const double z = sigmoid(gi[H + j] + gh[H + j]);
        const double n = std::tanh(gi[2 * H + j] + r * gh[2 * H + j]);
        h[j] = (1.0 - z) * n + z * h[j];
      }
      break;
    case Mode::lstm: {
      // i, f, g, o in PyTorch's row order.
      std::vector<double> full(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        const double i = sigmoid(gi[j] + gh[j]);
        const double f = sigmoid(gi[H + j] + gh[H + j]);
        const double g = std::tanh(gi[2 * H + j] + gh[2 * H + j]);
        const double o = sigmoid(gi[3 * H + j] + gh[3 * H + j]);
        c[j] = f * c[j] + i * g;
        full[j] = o * std::tanh(c[j]);
      }
      if (w.w_hr.defined()) matvec(w.w_hr, full.data(), Tensor(), h.data());
      else h = full;
      break;
    }
  }
}

void run(const Params& p) {
  const Config& cfg = p.cfg;
  const int64_t T = p.steps, B = p.batch, P = cfg.out_size(), H = cfg.hidden_size, D = cfg.dirs();
  Tensor layer_in = widen(p.input);  // [T, B, in]
  const Tensor h0 = widen(p.h0), c0 = widen(p.c0);
  Tensor hn = Tensor::empty(p.hn.shape(), DType::f64), cn;
  if (cfg.mode == Mode::lstm) cn = Tensor::empty(p.cn.shape(), DType::f64);
  Tensor out;
  for (int64_t l = 0; l < cfg.num_layers; ++l) {
    const int64_t in = layer_in.size(2);
    out = Tensor::zeros({T, B, D * P}, DType::f64);
    double* op = out.data_ptr<double>();
    const double* ip = layer_in.data_ptr<double>();
    for (int d = 0; d < D; ++d) {
      const Weights w{widen(p.param(l, d, Which::w_ih)), widen(p.param(l, d, Which::w_hh)),
                      widen(p.param(l, d, Which::b_ih)), widen(p.param(l, d, Which::b_hh)),
                      widen(p.param(l, d, Which::w_hr))};
      const int64_t sd = l * D + d;
      for (int64_t b = 0; b < B; ++b) {
        std::vector<double> h(h0.data_ptr<double>() + (sd * B + b) * P, h0.data_ptr<double>() + (sd * B + b + 1) * P);
        std::vector<double> c;
        if (cfg.mode == Mode::lstm)
          c.assign(c0.data_ptr<double>() + (sd * B + b) * H, c0.data_ptr<double>() + (sd * B + b + 1) * H);
        const int64_t len = p.length(b);
        for (int64_t s = 0; s < len; ++s) {
          const int64_t t = d == 0 ? s : len - 1 - s;
          cell(cfg, w, ip + (t * B + b) * in, h, c);
          for (int64_t j = 0; j < P; ++j) op[(t * B + b) * D * P + d * P + j] = h[j];
        }
        for (int64_t j = 0; j < P; ++j) hn.data_ptr<double>()[(sd * B + b) * P + j] = h[j];
        if (cfg.mode == Mode::lstm)
          for (int64_t j = 0; j < H; ++j) cn.data_ptr<double>()[(sd * B + b) * H + j] = c[j];
      }
    }
    if (l + 1 < cfg.num_layers && p.dropout_active()) {
      const double scale = p.dropout < 1.0 ? 1.0 / (1.0 - p.dropout) : 0.0;
      for (int64_t e = 0; e < out.numel(); ++e) op[e] = dropout_keep(p, l, e) ? op[e] * scale : 0.0;
    }
    layer_in = out;
  }
  Tensor target = p.output;
  target.copy_from(out);
  target = p.hn;
  target.copy_from(hn);
  if (cfg.mode == Mode::lstm) {
    target = p.cn;
    target.copy_from(cn);
  }
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_ref() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", dispatch::Properties{}, std::move(checks), run);
}

}  // namespace bp::ops::rnn
