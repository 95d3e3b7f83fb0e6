#pragma once
// The constants of the vector expf of the attention softmax (the AVX-512 and
// AVX2 twins in attention_flash_avx512.cpp / _avx2.cpp): x = n·ln2 + r with
// ln2 split in a high part exact in few bits and a low correction (so n·ln2
// is subtracted without rounding), then exp(r) = 1 + r + r²·P(r) on
// |r| <= ln2/2 with Cephes' expf polynomial P (degree 5, ~1 ulp).

namespace bp::kernels::cpu::detail {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
// P's coefficients, highest degree first (Horner order).
inline constexpr float kExpPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                     4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// The softmax's shorter P (degree 3, so exp(r) is degree 5): a
// relative-error least-squares fit on Chebyshev nodes of |r| <= ln2/2,
// 1.2e-7 at most before rounding (the fp32 evaluation adds ~1 ulp). Two
// FMAs fewer per score than kExpPoly; the softmax issues one exp per score.
inline constexpr float kExpPolySoftmax[] = {8.333837613463402e-3f, 4.189857840538025e-2f, 1.666688621044159e-1f,
                                            4.9999141693115234e-1f};

}  // namespace bp::kernels::cpu::detail
