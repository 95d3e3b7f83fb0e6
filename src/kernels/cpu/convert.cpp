// The dispatchers and the portable bodies of the fp32 <-> 16-bit
// conversions (convert.h).

#include "kernels/cpu/convert.h"

#include <algorithm>

#include "backplane/dtype.h"
#include "backplane/error.h"
#include "core/threads.h"

namespace bp::kernels::cpu {

void round_f32_to_bf16_generic(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bfloat16_bits_from_float(src[i]);
}

void round_f32_to_f16_generic(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = half_from_float(src[i]).bits;
}

void widen_bf16_to_f32_generic(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bfloat16_bits_to_float(src[i]);
}

void widen_f16_to_f32_generic(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = half_bits_to_float(src[i]);
}

namespace {
bool has(GemmIsa isa) { return gemm_isa_supported(isa); }
bool avx512(GemmIsa isa) { return (isa == GemmIsa::avx512 || isa == GemmIsa::avx512_bf16) && has(GemmIsa::avx512); }
bool avx2(GemmIsa isa) { return isa != GemmIsa::generic && has(GemmIsa::avx2); }

// body(begin, count) over [0, n) in chunks, on the caller's threads.
template <class Body>
void in_chunks(int64_t n, Body&& body) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const int team = chunks > 1 ? threads::team_size(chunks) : 1;
  if (team == 1) return body(int64_t{0}, n);
#pragma omp parallel for num_threads(team) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) body(c * kChunk, std::min(kChunk, n - c * kChunk));
}

void require_16bit(DType dtype, const char* what) {
  if (dtype != DType::bf16 && dtype != DType::f16) throw_bad_value(what, dtype_name(dtype), "bfloat16 or float16");
}
}  // namespace

// The body for dtype (bf16 or f16) of the widest variant isa allows that
// this CPU has, from bodies[generic, avx2, avx512][bf16, f16].
template <class Fn>
Fn variant(const Fn (&bodies)[3][2], DType dtype, GemmIsa isa, const char* what) {
  require_16bit(dtype, what);
  const int level = avx512(isa) ? 2 : avx2(isa) ? 1 : 0;
  return bodies[level][dtype == DType::bf16 ? 0 : 1];
}

RoundFn round_variant(DType dtype, GemmIsa isa) {
  static constexpr RoundFn kBodies[3][2] = {{&round_f32_to_bf16_generic, &round_f32_to_f16_generic},
                                            {&round_f32_to_bf16_avx2, &round_f32_to_f16_avx2},
                                            {&round_f32_to_bf16_avx512, &round_f32_to_f16_avx512}};
  return variant(kBodies, dtype, isa, "round_f32_to");
}

WidenFn widen_variant(DType dtype, GemmIsa isa) {
  static constexpr WidenFn kBodies[3][2] = {{&widen_bf16_to_f32_generic, &widen_f16_to_f32_generic},
                                            {&widen_bf16_to_f32_avx2, &widen_f16_to_f32_avx2},
                                            {&widen_bf16_to_f32_avx512, &widen_f16_to_f32_avx512}};
  return variant(kBodies, dtype, isa, "widen_to_f32");
}

void round_f32_to_bf16(GemmIsa isa, const float* src, uint16_t* dst, int64_t n) {
  round_variant(DType::bf16, isa)(src, dst, n);
}

void round_f32_to_f16(GemmIsa isa, const float* src, uint16_t* dst, int64_t n) {
  round_variant(DType::f16, isa)(src, dst, n);
}

void widen_bf16_to_f32(GemmIsa isa, const uint16_t* src, float* dst, int64_t n) {
  widen_variant(DType::bf16, isa)(src, dst, n);
}

void widen_f16_to_f32(GemmIsa isa, const uint16_t* src, float* dst, int64_t n) {
  widen_variant(DType::f16, isa)(src, dst, n);
}

void round_f32_to(DType dtype, GemmIsa isa, const float* src, uint16_t* dst, int64_t n) {
  const RoundFn round = round_variant(dtype, isa);
  in_chunks(n, [&](int64_t begin, int64_t count) { round(src + begin, dst + begin, count); });
}

void widen_to_f32(DType dtype, GemmIsa isa, const uint16_t* src, float* dst, int64_t n) {
  const WidenFn widen = widen_variant(dtype, isa);
  in_chunks(n, [&](int64_t begin, int64_t count) { widen(src + begin, dst + begin, count); });
}

}  // namespace bp::kernels::cpu
