// The dispatcher and the portable bodies of the fp32 -> 16-bit roundings
// (convert.h).

#include "kernels/cpu/convert.h"

#include <cstring>

#include "backplane/dtype.h"

namespace bp::kernels::cpu {

void round_f32_to_bf16_generic(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &src[i], sizeof u);
    const bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
    dst[i] = nan ? static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7FC0u)  // the canonical quiet NaN, sign kept
                 : static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  }
}

void round_f32_to_f16_generic(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = half_from_float(src[i]).bits;
}

namespace {
bool has(GemmIsa isa) { return gemm_isa_supported(isa); }
}  // namespace

void round_f32_to_bf16(GemmIsa isa, const float* src, uint16_t* dst, int64_t n) {
  if ((isa == GemmIsa::avx512 || isa == GemmIsa::avx512_bf16) && has(GemmIsa::avx512))
    return round_f32_to_bf16_avx512(src, dst, n);
  if (isa != GemmIsa::generic && has(GemmIsa::avx2)) return round_f32_to_bf16_avx2(src, dst, n);
  round_f32_to_bf16_generic(src, dst, n);
}

void round_f32_to_f16(GemmIsa isa, const float* src, uint16_t* dst, int64_t n) {
  if ((isa == GemmIsa::avx512 || isa == GemmIsa::avx512_bf16) && has(GemmIsa::avx512))
    return round_f32_to_f16_avx512(src, dst, n);
  if (isa != GemmIsa::generic && has(GemmIsa::avx2)) return round_f32_to_f16_avx2(src, dst, n);
  round_f32_to_f16_generic(src, dst, n);
}

}  // namespace bp::kernels::cpu
