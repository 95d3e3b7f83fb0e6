// ref:any: the reference. Plain loops over the definition (Note [Conv
// params]) in float64, written apart from the kernels: every dtype, any
// strides, forward and transposed, every stride / padding / dilation /
// groups. It accepts every valid problem, so it is the list's last entry.

#include "backplane/dispatch_checks.h"
#include "core/threads.h"
#include "ops/conv/impls.h"
#include "ops/conv/params.h"

namespace bp::ops::conv {
namespace {

struct Dense {
  Tensor t;  // f64, NCDHW-contiguous
  const double* data;
  int64_t s[5];
};

Dense dense(const Tensor& t) {
  Dense d;
  d.t = t.to(DType::f64).contiguous();
  d.data = d.t.data_ptr<double>();
  for (int i = 0; i < 5; ++i) d.s[i] = d.t.stride(i);
  return d;
}

void forward(const Params& p, const Dense& x, const Dense& w, const double* bias, double* out) {
  const int64_t OD = p.outs[0], OH = p.outs[1], OW = p.outs[2];
  const int64_t cg = p.cg(), kg = p.kg();
  const int team = threads::team_size(p.n * p.k);
#pragma omp parallel for schedule(dynamic) num_threads(team) if (team > 1)
  for (int64_t nk = 0; nk < p.n * p.k; ++nk) {
    const int64_t n = nk / p.k, k = nk % p.k, g = k / kg;
    double* o = out + nk * OD * OH * OW;
    for (int64_t od = 0; od < OD; ++od)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? bias[k] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t td = 0; td < p.kernel[0]; ++td) {
              const int64_t id = od * p.stride[0] - p.pad[0] + td * p.dilation[0];
              if (id < 0 || id >= p.in[0]) continue;
              for (int64_t th = 0; th < p.kernel[1]; ++th) {
                const int64_t ih = oh * p.stride[1] - p.pad[1] + th * p.dilation[1];
                if (ih < 0 || ih >= p.in[1]) continue;
                for (int64_t tw = 0; tw < p.kernel[2]; ++tw) {
                  const int64_t iw = ow * p.stride[2] - p.pad[2] + tw * p.dilation[2];
                  if (iw < 0 || iw >= p.in[2]) continue;
                  acc += x.data[n * x.s[0] + (g * cg + ci) * x.s[1] + id * x.s[2] + ih * x.s[3] + iw * x.s[4]] *
                         w.data[k * w.s[0] + ci * w.s[1] + td * w.s[2] + th * w.s[3] + tw * w.s[4]];
                }
              }
            }
          o[(od * OH + oh) * OW + ow] = acc;
        }
  }
}

// The adjoint: every input point scatters into the outputs it reaches. A
// thread owns a (batch, group) pair, so no two threads write one output.
void transposed(const Params& p, const Dense& x, const Dense& w, const double* bias, double* out) {
  const int64_t OD = p.outs[0], OH = p.outs[1], OW = p.outs[2], ovol = OD * OH * OW;
  const int64_t cg = p.cg(), kg = p.kg();
  const int team = threads::team_size(p.n * p.groups);
#pragma omp parallel for schedule(dynamic) num_threads(team) if (team > 1)
  for (int64_t ng = 0; ng < p.n * p.groups; ++ng) {
    const int64_t n = ng / p.groups, g = ng % p.groups;
    double* o = out + (n * p.k + g * kg) * ovol;
    for (int64_t kk = 0; kk < kg; ++kk)
      for (int64_t i = 0; i < ovol; ++i) o[kk * ovol + i] = bias ? bias[g * kg + kk] : 0.0;
    for (int64_t ci = 0; ci < cg; ++ci) {
      const int64_t c = g * cg + ci;
      for (int64_t id = 0; id < p.in[0]; ++id)
        for (int64_t ih = 0; ih < p.in[1]; ++ih)
          for (int64_t iw = 0; iw < p.in[2]; ++iw) {
            const double v = x.data[n * x.s[0] + c * x.s[1] + id * x.s[2] + ih * x.s[3] + iw * x.s[4]];
            for (int64_t kk = 0; kk < kg; ++kk)
              for (int64_t td = 0; td < p.kernel[0]; ++td) {
                const int64_t od = id * p.stride[0] - p.pad[0] + td * p.dilation[0];
                if (od < 0 || od >= OD) continue;
                for (int64_t th = 0; th < p.kernel[1]; ++th) {
                  const int64_t oh = ih * p.stride[1] - p.pad[1] + th * p.dilation[1];
                  if (oh < 0 || oh >= OH) continue;
                  for (int64_t tw = 0; tw < p.kernel[2]; ++tw) {
                    const int64_t ow = iw * p.stride[2] - p.pad[2] + tw * p.dilation[2];
                    if (ow < 0 || ow >= OW) continue;
                    o[kk * ovol + (od * OH + oh) * OW + ow] +=
                        v * w.data[c * w.s[0] + kk * w.s[1] + td * w.s[2] + th * w.s[3] + tw * w.s[4]];
                  }
                }
              }
          }
    }
  }
}

void run(const Params& p) {
  const Dense x = dense(p.x), w = dense(p.w);
  const Tensor b = p.has_bias() ? p.bias.to(DType::f64).contiguous() : Tensor();
  const double* bias = b.defined() ? b.data_ptr<double>() : nullptr;
  Tensor out = Tensor::empty(p.out.shape(), DType::f64);
  (p.transposed ? transposed : forward)(p, x, w, bias, out.data_ptr<double>());
  Tensor target = p.out;
  target.copy_from(out);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_ref() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  dispatch::Properties props;
  props.workspace = "float64 copies of input, weight and output";
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", props, std::move(checks), run);
}

}  // namespace bp::ops::conv
