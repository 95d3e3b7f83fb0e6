// Conv's per-problem default order (Note [Conv default order] in order.h).

#include "ops/conv/order.h"

#include <algorithm>

#include "kernels/cpu/gemm.h"
#include "ops/conv/params.h"
#include "ops/conv/winograd_weight_cache.h"

namespace bp::ops::conv {
namespace {

// The problem signature's positions (op.cpp: batch, groups, c_in, c_out, d,
// h, w, kd, kh, kw, od, oh, ow, stride, padding, dilation).
enum Dim { kBatch, kGroups, kCin, kCout, kD, kH, kW, kKd, kKh, kKw, kOd, kOh, kOw, kStride, kPadding, kDilation };

std::string num(int64_t v) { return std::to_string(v); }

// f32, bf16 and f16 forward CPU 2-D problems on dense
// inputs with dilation 1: where every rule lives.
bool candidate(const dispatch::Problem& p) {
  const bool dtype = p.dtype == DType::f32 || p.dtype == DType::bf16 || p.dtype == DType::f16;
  if (!p.device.is_cpu() || !dtype || p.ndims != 16) return false;
  if (p.layout & (kTransposed | kStridedInput)) return false;
  const int64_t* d = p.dims;
  return d[kDilation] == 1 && d[kD] == 1 && d[kKd] == 1;
}

bool unit_dense(const int64_t* d) { return d[kStride] == 1 && d[kGroups] == 1; }
bool is_3x3(const int64_t* d) { return d[kKh] == 3 && d[kKw] == 3; }
bool is_1x1_unpadded(const int64_t* d) { return d[kKh] == 1 && d[kKw] == 1 && d[kPadding] == 0; }
// Depthwise with one output channel per group (the direct kernels' planes).
bool is_depthwise(const int64_t* d) { return d[kGroups] > 1 && d[kGroups] == d[kCin] && d[kCout] == d[kCin]; }
int64_t tiles(const int64_t* d) { return d[kBatch] * ((d[kOh] + 3) / 4) * ((d[kOw] + 3) / 4); }
int64_t out_points(const int64_t* d) { return d[kBatch] * d[kOh] * d[kOw]; }

// Whether cpu.conv_weight_cache would keep this layer's Winograd transform
// (winograd_weight_cache.h).
bool transform_kept(const int64_t* d) { return winograd_weight_kept(d[kCin], d[kCout]); }

int64_t winograd_lead_tiles(const int64_t* d) {
  return transform_kept(d) ? kWinogradLeadTilesCached : kWinogradLeadTiles;
}

bool winograd_leads(const int64_t* d) {
  return std::min(d[kCin], d[kCout]) >= kWinogradLeadChannels && tiles(d) >= winograd_lead_tiles(d);
}

// Outputs per 16 of the 4x4 tiles' points: the rest is computed and dropped
// (OH or OW not a multiple of 4).
bool tiles_filled(const int64_t* d) {
  const int64_t covered = ((d[kOh] + 3) / 4 * 4) * ((d[kOw] + 3) / 4 * 4);
  return d[kOh] * d[kOw] * 100 >= covered * kWinogradLeadBf16MinFillPercent;
}

// Note [Conv default order]: bf16's Winograd rule.
bool winograd_leads_bf16(const int64_t* d) {
  return std::min(d[kCin], d[kCout]) >= kWinogradLeadBf16MinChannels &&
         std::max(d[kCin], d[kCout]) <= kWinogradLeadBf16MaxChannels && tiles_filled(d) && winograd_leads(d);
}

// Note [Conv default order]: an f32 NCHW 3x3 layer at batch 1 whose one
// GEMM has a narrow last column strip (Note [GEMM narrow last strip]).
bool im2col_narrow_leads(const int64_t* d) {
  return d[kBatch] == 1 && d[kCout] * d[kCin] * d[kKh] * d[kKw] >= kIm2colLeadNarrowMinWeight &&
         kernels::cpu::gemm_narrow_last_strip(kernels::cpu::GemmIsa::avx512, DType::f32, d[kOh] * d[kOw]);
}

// Note [Conv default order]: an f16 channels-last 1x1 layer that widens its channels (the GEMM's
// output rows, c_out wide, fill its tiles; the direct kernel led where c_out <= c_in).
bool f16_1x1_expands(const int64_t* d) { return d[kCout] > d[kCin]; }

// Note [Conv default order]: the direct kernels' depthwise rules.
bool direct_leads_depthwise(const int64_t* d, bool channels_last, bool f32) {
  if (channels_last) return f32 && d[kStride] == 1 && out_points(d) >= kDirectLeadChannelsLastPoints;
  return f32 || d[kOw] >= kPlanarMinWidth || d[kStride] >= 2;
}

}  // namespace

Lead default_lead(const dispatch::Problem& p) {
  if (!candidate(p)) return Lead::list;
  const int64_t* d = p.dims;
  const bool channels_last = (p.layout & kChannelsLast) != 0;
  const bool f32 = p.dtype == DType::f32;
  // f16, which oneDNN declines on CPUs without AVX512-FP16: the GEMM where Winograd does not lead.
  if (p.dtype == DType::f16 && unit_dense(d) && is_3x3(d)) return winograd_leads(d) ? Lead::winograd : Lead::im2col;
  if (f32 && unit_dense(d) && is_3x3(d)) {
    if (winograd_leads(d)) return Lead::winograd;
    return !channels_last && im2col_narrow_leads(d) ? Lead::im2col : Lead::list;
  }
  if (p.dtype == DType::bf16 && unit_dense(d) && is_3x3(d)) return winograd_leads_bf16(d) ? Lead::winograd : Lead::list;
  if (unit_dense(d) && is_1x1_unpadded(d)) {
    if (!channels_last || d[kCin] >= kIm2colLeadChannelsLastMinCin || out_points(d) <= kIm2colLeadChannelsLastMaxPoints)
      return Lead::im2col;
    if (p.dtype == DType::f16 && f16_1x1_expands(d)) return Lead::im2col;
  }
  if (p.dtype != DType::f16 && is_depthwise(d) && direct_leads_depthwise(d, channels_last, f32)) return Lead::direct;
  return Lead::list;
}

const char* lead_name(Lead lead) {
  switch (lead) {
    case Lead::winograd: return "winograd:f4x3";
    case Lead::im2col: return "im2col:gemm";
    case Lead::direct: return "direct";
    case Lead::list: break;
  }
  return "";
}

std::string default_order_note(const dispatch::Problem& p) {
  const int64_t* d = p.dims;
  if (p.dtype == DType::f16 && default_lead(p) == Lead::im2col)
    return "default order: im2col:gemm first (f16 " +
           (is_3x3(d) ? "3x3 stride 1 with " + num(tiles(d)) + " output tiles of 4x4, too few for Winograd"
                      : std::string("1x1 stride 1, ") + ((p.layout & kChannelsLast) ? "channels-last" : "NCHW") +
                            ", " + num(d[kCin]) + " -> " + num(d[kCout]) + " channels") +
           ": one GEMM on matmul's f16 path, faster there than the direct kernels; oneDNN has no f16 convolution "
           "on CPUs without AVX512-FP16)";
  switch (default_lead(p)) {
    case Lead::winograd:
      if (p.dtype == DType::bf16)
        return "default order: winograd:f4x3 first (bf16 3x3 stride 1 with " + num(d[kCin]) + " -> " +
               num(d[kCout]) + " channels, within " + num(kWinogradLeadBf16MinChannels) + ".." +
               num(kWinogradLeadBf16MaxChannels) + ", " + num(tiles(d)) +
               " output tiles of 4x4 filled to >= " + num(kWinogradLeadBf16MinFillPercent) +
               "%: its fp32 GEMMs do a quarter of the multiplies of oneDNN's bf16 dot products)";
      if (transform_kept(d))
        return "default order: winograd:f4x3 first (3x3 stride 1, " + num(tiles(d)) + " output tiles of 4x4 (>= " +
               num(kWinogradLeadTilesCached) + ") and >= " + num(kWinogradLeadChannels) +
               " channels: cpu.conv_weight_cache keeps the weight's transform, so calls after the first do 2.25 "
               "multiplies per output instead of 9 and compare the weight)";
      return "default order: winograd:f4x3 first (3x3 stride 1, " + num(tiles(d)) + " output tiles of 4x4 (>= " +
             num(kWinogradLeadTiles) + ") and >= " + num(kWinogradLeadChannels) +
             " channels: the per-call weight transform (cpu.conv_weight_cache is off or too small for it) is "
             "spread over enough tiles for 2.25 multiplies per output instead of 9 to win)";
    case Lead::im2col:
      if (is_3x3(d))
        return "default order: im2col:gemm first (NCHW 3x3 stride 1 at batch 1 with " + num(d[kOh] * d[kOw]) +
               " output points, too few tiles for Winograd: one GEMM whose last column strip Backplane's kernel "
               "computes as dot products, faster than oneDNN's convolution there)";
      if ((p.layout & kChannelsLast) == 0)
        return "default order: im2col:gemm first (NCHW 1x1 stride 1: one GEMM per image on the caller's memory, "
               "where oneDNN reorders into its blocked format and back)";
      if (d[kCin] >= kIm2colLeadChannelsLastMinCin)
        return "default order: im2col:gemm first (channels-last 1x1 stride 1 with c_in " + num(d[kCin]) + " >= " +
               num(kIm2colLeadChannelsLastMinCin) +
               ": one GEMM for the whole batch on the caller's memory, where oneDNN's 1x1 kernel is slow on a long "
               "reduction)";
      return "default order: im2col:gemm first (channels-last 1x1 stride 1 over " + num(out_points(d)) +
             " output points <= " + num(kIm2colLeadChannelsLastMaxPoints) +
             ": one GEMM of that few rows, which matmul's order gives to oneDNN's inner product, faster there "
             "than oneDNN's 1x1 convolution)";
    case Lead::direct:
      if ((p.layout & kChannelsLast) != 0)
        return "default order: direct kernels first (channels-last stride-1 depthwise over " + num(out_points(d)) +
               " output points >= " + num(kDirectLeadChannelsLastPoints) + ")";
      if (d[kOw] < kPlanarMinWidth && p.dtype != DType::f32)
        return "default order: direct kernels first (NCHW depthwise, stride " + num(d[kStride]) + ", output rows " +
               num(d[kOw]) + " < " + num(kPlanarMinWidth) +
               " wide: staged to channels-last fp32 a few images at a time, the direct kernel beat oneDNN's)";
      if (d[kOw] < kPlanarMinWidth)
        return "default order: direct kernels first (NCHW depthwise, output rows " + num(d[kOw]) + " < " +
               num(kPlanarMinWidth) +
               " wide: staged to channels-last by register transposes, the direct kernel beat oneDNN's)";
      return "default order: direct kernels first (NCHW depthwise, output rows " + num(d[kOw]) + " wide (>= " +
             num(kPlanarMinWidth) +
             "): the kernels' planes read NCHW in place and in its own dtype, where oneDNN reorders it)";
    case Lead::list: break;
  }
  return "default order: the list's (onednn:conv first); no rule of Note [Conv default order] applies (the rules "
         "move winograd:f4x3, im2col:gemm or the direct kernels first for f32, bf16 and f16 layers where they were "
         "measured faster)";
}

int default_rank(const dispatch::Implementation& impl, const dispatch::Problem& p) {
  const Lead lead = default_lead(p);
  if (lead == Lead::list) return 1;
  const char* name = lead_name(lead);
  return impl.name() == name || impl.library() == name ? 0 : 1;
}

}  // namespace bp::ops::conv
