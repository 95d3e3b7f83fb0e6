#pragma once
// Conv's per-problem default order (OpConfig::rank): which implementation,
// if any, moves ahead of onednn:conv for a problem.
//
// Note [Conv default order]
// The list in op.cpp is the fallback order (oneDNN first, as PyTorch's CPU
// convolutions). For f32 (and bf16, below) forward 2-D CPU problems of the kinds below,
// measured with `backplane bench conv` (ResNet-50 and MobileNet-V2 layers,
// batch 1 and 8, both layouts: docs/dispatch.md's conv section), another
// implementation is faster than oneDNN by a margin worth a rule, and the
// rank moves it first; the rest of the list keeps its order behind it:
//   - winograd:f4x3 for 3x3 stride-1 one-group layers with at least
//     kWinogradLeadChannels input and output channels and enough output
//     tiles of 4x4 (batch x tiles per image) for its weight transform (36 x
//     C x K whatever the batch). When cpu.conv_weight_cache keeps that
//     transform (Note [Winograd weight cache]: caching on and the entry
//     within the byte bound), a call after the first pays only a comparison
//     of the weight, and Winograd led oneDNN from 8 tiles (its own minimum)
//     at every size measured: 1.06x at 512 channels and 8 tiles, 1.4-1.7x
//     at 16-32 tiles, 1.6-2.1x at 49-196 tiles (kWinogradLeadTilesCached).
//     Transformed on every call, it lost with 16 tiles (0.57-0.70x oneDNN at
//     128-256 channels, 14 x 14) and 32 (0.76-0.82x at 512 channels, 7 x 7,
//     batch 8) and won from 49 (kWinogradLeadTiles);
//   - winograd:f4x3 for bf16 such layers too, where also every input and
//     output channel count is within kWinogradLeadBf16MinChannels..
//     kWinogradLeadBf16MaxChannels and the 4x4 tiles cover the output with
//     little waste (kWinogradLeadBf16MinFillPercent: OH and OW multiples of
//     4, or large). Winograd stages bf16 to fp32 and multiplies in fp32,
//     half the rate of oneDNN's bf16 dot products, so its quarter of the
//     multiplies leaves a smaller margin than in f32. Once its tiles went
//     through per-thread blocks (Note [Winograd thread blocks]), it ran
//     1.1-1.3x oneDNN at 96-192 channels on 20 x 20 to 56 x 56 images,
//     batch 1 and 8, one and two threads; at 64 channels (a short GEMM
//     reduction) 0.9-1.16x, at 256-512 (a larger transformed weight,
//     7 x 7 and 14 x 14 images) 0.71-1.13x, and on 14 x 14 images (a
//     quarter of each edge tile's outputs dropped) 0.93-1.02x: those stay
//     oneDNN's;
//   - im2col:gemm for NCHW 1x1 stride-1 unpadded one-group layers: one GEMM
//     per image straight on the caller's memory (W[K, C] x X[C, H*W]), where
//     oneDNN reorders NCHW into its blocked format and back; and for
//     channels-last ones with c_in >= kIm2colLeadChannelsLastMinCin: one GEMM
//     for the whole batch (X[N*H*W, C] x W^T, the weight viewed, Note
//     [Channels-last weight rows]), where oneDNN's 1x1 kernel is slow on a
//     long reduction. (A rule for narrow outputs, c_out <= 32 from c_in >=
//     128, once measured at oneDNN 0.70-0.88x the GEMM on MobileNet-V2's
//     144 -> 24 layers, went when a calm run had oneDNN level at batch 1
//     and 0.91x-1.25x the GEMM at batch 8, the GEMM at 0.80x and 0.84x of
//     it on two of those rows.) The 1x1 rules are bf16's too (with
//     its Winograd rule above and the NCHW depthwise rule below): oneDNN 2.6's bf16
//     1x1 ran at 0.35-0.66x the GEMM's speed on every NCHW ResNet-50 1x1
//     layer and 0.21-0.67x on the channels-last 2048-channel ones (1 and 2
//     threads, in turns with the GEMM, Note [Interleaved bench rounds]);
//   - im2col:gemm also for channels-last 1x1 layers with at most
//     kIm2colLeadChannelsLastMaxPoints output points (batch x OH x OW): the
//     GEMM then has that few rows, and matmul's own order gives it to
//     oneDNN's inner product (Note [Matmul default order]), which ran
//     1.1-2x faster than oneDNN's 1x1 convolution there (ResNet-50's
//     256 -> 1024 at 14 x 14 and MobileNet-V2's 960 -> 160 at 7 x 7, batch 1
//     and 8, f32 and bf16);
//   - im2col:gemm for f32 NCHW 3x3 stride-1 one-group layers at batch 1
//     that Winograd does not lead, whose one GEMM (W[K, 9C] x cols[9C,
//     OH*OW]) has a last column strip the AVX-512 kernel computes as dot
//     products (Note [GEMM narrow last strip]: OH*OW = 49 at 7 x 7) and a
//     weight of at least kIm2colLeadNarrowMinWeight elements: the GEMM ran
//     1.36-1.45x oneDNN on ResNet-50's 512-channel 7 x 7 layer (one thread,
//     1.2-1.4x on two); at 64 channels oneDNN stayed 1.7x ahead;
//   - the direct kernels (widest ISA first) for depthwise layers (one
//     output channel per group): every f32 NCHW one (rows under
//     kPlanarMinWidth (params.h) wide are staged to channels-last by 8 x 8
//     register transposes; wider ones run on planes, which read NCHW in
//     place, where oneDNN reorders it), and bf16 NCHW ones with rows at
//     least kPlanarMinWidth wide (the planes read and write bf16 as it
//     is: Note [16-bit depthwise planes]) or a stride of 2 or more (staged
//     a few images at a time: Note [Staging by images]). Once the planes
//     took the end of a row several vectors at once (Note [Depthwise row
//     tails]), direct
//     ran 1.2-8x oneDNN on every MobileNet-V2 NCHW depthwise layer in f32
//     (batch 1 and 8, one thread; before, batch-1 rows 56 wide stayed
//     oneDNN's at 0.33-0.63x), and in bf16 1.4-3.4x on those with planes
//     but 96 channels at 112 x 112 stride 2, batch 1 (0.92x); of bf16's
//     narrow rows, staged, the strided ones ran 1.0-1.4x oneDNN (144
//     channels at 56 x 56 and 576 at 14 x 14, stride 2, batch 1 and 8,
//     once staged by images), the others 0.75-0.88x and stay oneDNN's;
//     Channels-last stride-1 f32 ones with at least
//     kDirectLeadChannelsLastPoints output points (batch x OH x OW).
//     Elsewhere oneDNN was faster, measured as `backplane bench` times a
//     layer (the same call repeated, its data warm): timed interleaved with
//     other layers, cold, the direct kernels won at batch 1, and a rule
//     built on that cost oneDNN's warm lead (0.53-0.8x);
//   - for f16, which oneDNN 2.6 declines on CPUs without AVX512-FP16 (so
//     its list order starts at winograd:f4x3, then the direct kernels, both
//     staging to fp32): winograd:f4x3 where the f32 Winograd rule holds,
//     else im2col:gemm (matmul's f16 GEMM) for 3x3 stride-1 one-group
//     layers, where the direct kernel ran 0.71x the GEMM (ResNet-50's
//     512-channel 7 x 7 layer at batch 1, 4 tiles, both layouts); and the
//     1x1 rules above, as f32's: on ResNet-50's NCHW 1x1 layers the direct
//     kernel ran 0.62-0.86x the GEMM on 8 of 10 rows (batch 1 and 8, one
//     thread), on the channels-last ones the rules' rows 0.76-0.90x. Of the
//     other channels-last 1x1 layers, im2col:gemm leads those that widen the
//     channels (c_out > c_in): the GEMM ran 1.13-1.21x the direct kernel on
//     ResNet-50's 64 -> 256 to 256 -> 1024 (batch 1 and 8) and 1.1-1.5x on
//     MobileNet-V2's expansions (16 -> 96 at 112 x 112, 24 -> 144, 32 ->
//     192, 160 -> 960; one and two threads; 0.89x at 24 -> 48, one thread),
//     while the direct kernel led the others 1.2-1.9x (64 -> 64, 256 -> 64,
//     512 -> 128, 144 -> 32, 576 -> 96). The stem and the strided 3x3 layers
//     stay the direct kernels' (1.4-6x the GEMM).
// Everything else keeps the list's order. The rank only reorders: each
// implementation still passes its checks, so knobs that reject one
// (mkldnn.enabled, mkldnn.deterministic, use_deterministic_algorithms, the
// CPU-capability cap, implementations(...)) work as before, and the next
// acceptable one in this order runs. The rank reads no flag, only the
// problem, so autotune keys are unchanged; cpu.benchmark_limit counts in
// this order. explain shows the rule that applied in a note. (The Winograd
// rule also reads the conv weight cache's bounds, which are not flags: they
// decide whether a transform is paid once or on every call.)

#include <string>

#include "backplane/dispatch.h"

namespace bp::ops::conv {

// Measured thresholds (Note [Conv default order]).
inline constexpr int64_t kWinogradLeadTiles = 48;          // output tiles of 4x4, batch included
inline constexpr int64_t kWinogradLeadTilesCached = 8;     // ... when the weight's transform is cached
inline constexpr int64_t kWinogradLeadChannels = 16;
inline constexpr int64_t kWinogradLeadBf16MinChannels = 96;   // bf16: input and output channels within
inline constexpr int64_t kWinogradLeadBf16MaxChannels = 192;  // ... these bounds
inline constexpr int64_t kWinogradLeadBf16MinFillPercent = 90;  // ... and outputs per point of the tiles
inline constexpr int64_t kIm2colLeadChannelsLastMinCin = 2048;  // channels-last 1x1
inline constexpr int64_t kIm2colLeadChannelsLastMaxPoints = 512;  // ... or with few output points
inline constexpr int64_t kDirectLeadChannelsLastPoints = int64_t{1} << 16;  // channels-last depthwise, stride 1
inline constexpr int64_t kIm2colLeadNarrowMinWeight = int64_t{1} << 20;  // NCHW 3x3, batch 1, narrow last strip

// What the default order puts first for a problem (cheap: rank calls it
// for every row of every selection).
enum class Lead { list, winograd, im2col, direct };
Lead default_lead(const dispatch::Problem& p);
// The implementation name (or library, "direct") of a lead; "" for list.
const char* lead_name(Lead lead);
// explain's note: which rule applied and why (the measured reason), or
// that the list's order stands.
std::string default_order_note(const dispatch::Problem& p);

// OpConfig::rank: 0 for the lead's rows, 1 for the rest (a stable sort
// keeps the list's order within each).
int default_rank(const dispatch::Implementation& impl, const dispatch::Problem& p);

}  // namespace bp::ops::conv
