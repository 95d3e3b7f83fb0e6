// winograd:f4x3: Backplane's Winograd F(4x4, 3x3) (src/kernels/cpu/
// conv_winograd.h) for 2-D 3x3 convolutions with unit stride and dilation
// and one group, any padding. It does 2.25 multiplies per output and
// channel pair where a direct sum does 9, at the price of transforms and a
// few times the rounding error of a direct sum (still fp32 accumulation).
//
// The run picks its vector width and GEMM kernels from the hardware capped
// by the CPU capability (ATEN_CPU_CAPABILITY): avx512, avx2 or generic; it
// reads that flag (run_reads). Layouts and dtypes other than channels-last
// fp32 are staged, as for the direct kernels (a few images at a time while
// the weight's transform is cached). Deterministic: one thread sums each
// output in a fixed order, independent of the thread count.

#include "backplane/backends/cpu.h"
#include "backplane/dispatch_checks.h"
#include "kernels/cpu/conv_winograd.h"
#include "ops/conv/checks.h"
#include "ops/conv/impls.h"
#include "ops/conv/params.h"
#include "ops/conv/winograd_weight_cache.h"

namespace bp::ops::conv {
namespace {

using kernels::cpu::ConvIsa;

// The widest variant the hardware and the CPU-capability cap allow.
ConvIsa pick_isa() {
  using backends::cpu::CpuCapability;
  const int cap = static_cast<int>(backends::cpu::cpu_capability());
  if (cap >= static_cast<int>(CpuCapability::Avx512) && kernels::cpu::conv_isa_supported(ConvIsa::avx512))
    return ConvIsa::avx512;
  if (cap >= static_cast<int>(CpuCapability::Avx2) && kernels::cpu::conv_isa_supported(ConvIsa::avx2))
    return ConvIsa::avx2;
  return ConvIsa::generic;
}

// Winograd's transforms mix every input of a 6x6 patch into every output of
// its 4x4 tile, so one NaN or infinity would spoil the whole tile (and inf -
// inf makes NaN where a direct sum has inf): inputs must be finite, and
// problems with NaN or inf go to an implementation that sums directly.
bool finite(const Params& p, dispatch::Reasons& r) {
  if (all_finite(p.x) && all_finite(p.w)) return true;
  return r.fail("finite input and weight (Winograd's transforms would spread a NaN or an infinity over a 4x4 tile)",
                "a NaN or an infinity");
}

// The weight transform costs 36 x C x K writes whatever the batch, the tile
// products 72 x tiles x C x K flops: below a few tiles (a 7x7 image at batch
// 1 has 4) the transform dominates and a direct sum is faster.
constexpr int64_t kMinTiles = 8;

bool enough_tiles(const Params& p, dispatch::Reasons& r) {
  const int64_t tiles = p.n * ((p.outs[1] + 3) / 4) * ((p.outs[2] + 3) / 4);
  return tiles >= kMinTiles || r.fail("at least " + std::to_string(kMinTiles) +
                                          " output tiles of 4x4 (the weight transform would dominate)",
                                      [&] { return std::to_string(tiles) + " tiles"; });
}

bool one_group(const Params& p, dispatch::Reasons& r) {
  return p.groups == 1 || r.fail("groups == 1", [&] { return "groups=" + std::to_string(p.groups); });
}

void run(const Params& p) {
  const kernels::cpu::ConvShape shape = kernel_shape(p);
  const ConvIsa isa = pick_isa();
  // A staged batch goes a few images at a time (Note [Staging by images]) when the weight's transform is kept
  // (each chunk then only compares the weight); the whole batch at once otherwise, since an uncached
  // transform is paid per call.
  run_channels_last_f32(
      p, isa,
      [&](const kernels::cpu::ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
        const auto cached = winograd_weight(p, isa, shape, w);  // Note [Winograd weight cache]
        kernels::cpu::winograd_f4x3_f32(isa, s, x, w, bias, out, cached ? transformed(*cached) : nullptr);
      },
      winograd_weight_kept(p.c, p.k));
}

}  // namespace

std::vector<std::string> winograd_notes(const Params& p) {
  std::string note = winograd_weight_note(p, pick_isa());
  if (note.empty()) return {};
  return {std::move(note)};
}

std::unique_ptr<dispatch::Implementation> make_winograd() {
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32}));
  list.push_back({"transposed", checks::forward_only});
  list.push_back({"kernel", checks::winograd_3x3});
  list.push_back({"groups", one_group});
  list.push_back({"tiles", enough_tiles});
  list.push_back({"finite", finite});  // last: it reads the data
  dispatch::Properties props;
  props.workspace =
      "transformed weights (36 x C x K, kept in cpu.conv_weight_cache) and blocks of transformed input and output "
      "tiles (~512 KiB per thread, or one block of <= 8 MiB shared by the threads)";
  return std::make_unique<dispatch::Impl<Params>>("winograd:f4x3", "cpu", props, std::move(list), run,
                                                  std::vector<flags::Id>{flags::Id::cpu_capability});
}

}  // namespace bp::ops::conv
