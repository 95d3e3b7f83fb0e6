// direct:avx512 / avx2 / generic: Backplane's direct convolution kernels
// (src/kernels/cpu/conv_direct.h), one entry per ISA variant, for every
// forward problem. Strongest where a lowering to GEMM wastes work: depthwise
// layers (vectors along the channels) and small channel counts.
//
// The kernels read channels-last fp32: other layouts and dtypes are staged
// (a channels-last fp32 copy of the input; the output computed in fp32 and
// rounded into place: Note [Conv staging]), so f16 / bf16 accumulate in
// fp32. Wide NCHW depthwise layers run on planes, which read and write
// f16 / bf16 as they are (Note [16-bit depthwise planes]). Availability is the
// hardware's answer; the CPU-capability cap (ATEN_CPU_CAPABILITY) is a check,
// so explain shows it. Deterministic: one thread sums each output in a fixed
// order, independent of the thread count.

#include "backplane/dispatch_checks.h"
#include "ops/conv/checks.h"
#include "ops/conv/impls.h"
#include "ops/conv/layout.h"
#include "ops/conv/params.h"

namespace bp::ops::conv {
namespace {

using kernels::cpu::ConvIsa;

template <ConvIsa Isa>
void run(const Params& p) {
  const kernels::cpu::ConvShape shape = kernel_shape(p);
  const bool planar = p.groups == p.c && p.groups == p.k && !p.channels_last && !dense_ndhwc(p.x) &&
                      p.outs[2] >= kPlanarMinWidth;  // params.h
  if (!planar) {
    // Image by image where staging a large batch would go through memory (Note [Staging by images]).
    run_channels_last_f32(
        p, Isa,
        [&](const kernels::cpu::ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
          kernels::cpu::direct_conv_f32(Isa, s, x, w, bias, out);
        },
        true);
    return;
  }
  // The planes are read and written in their own dtype where input and
  // output share it and are dense (Note [16-bit depthwise planes]); else
  // both are staged as fp32 (Note [Conv staging]).
  const bool native = p.x.dtype() == p.out.dtype() && dense_ncdhw(p.x) && dense_ncdhw(p.out);
  const Tensor x = native ? p.x : staged_input_5d(p.x, false, Isa);
  const Tensor w = contiguous_f32(p.w, Isa);
  const Tensor bias = p.has_bias() ? contiguous_f32(p.bias, Isa) : Tensor();
  const bool in_place = native || (p.out.dtype() == DType::f32 && dense_ncdhw(p.out));
  Tensor out = in_place ? p.out : staging_5d(Staged::output, p.out.shape(), false);
  kernels::cpu::direct_depthwise_nchw(Isa, shape, x.dtype(), x.data(), w.data_ptr<float>(),
                                      bias.defined() ? bias.data_ptr<float>() : nullptr, out.data());
  if (!in_place) {
    Tensor target = p.out;
    target.copy_from(out);
  }
}

std::optional<dispatch::Availability> hardware(ConvIsa isa) {
  if (kernels::cpu::conv_isa_supported(isa)) return dispatch::Availability{true, true, ""};
  return dispatch::Availability{true, false,
                                std::string("not available: this CPU lacks the ") + kernels::cpu::conv_isa_name(isa) +
                                    " instructions"};
}

template <ConvIsa Isa>
std::unique_ptr<dispatch::Implementation> make() {
  using namespace dispatch::checks;
  using backends::cpu::CpuCapability;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dtype_in<Params>({DType::f16, DType::bf16, DType::f32}));
  if constexpr (Isa == ConvIsa::avx512) list.push_back(cpu_capability_at_least<Params>(CpuCapability::Avx512));
  if constexpr (Isa == ConvIsa::avx2) list.push_back(cpu_capability_at_least<Params>(CpuCapability::Avx2));
  list.push_back({"transposed", checks::forward_only});
  dispatch::Properties props;
  props.workspace = "packed weights; a channels-last fp32 copy of input / output when they are not";
  return std::make_unique<dispatch::Impl<Params>>(std::string("direct:") + kernels::cpu::conv_isa_name(Isa), "cpu",
                                                  props, std::move(list), run<Isa>, std::vector<flags::Id>{},
                                                  [] { return hardware(Isa); });
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_direct(ConvIsa isa) {
  switch (isa) {
    case ConvIsa::avx512: return make<ConvIsa::avx512>();
    case ConvIsa::avx2: return make<ConvIsa::avx2>();
    case ConvIsa::generic: return make<ConvIsa::generic>();
  }
  throw_bad_value("make_direct", kernels::cpu::conv_isa_name(isa), "a ConvIsa");
}

}  // namespace bp::ops::conv
