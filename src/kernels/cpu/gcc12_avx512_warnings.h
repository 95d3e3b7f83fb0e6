#pragma once
// Included by the AVX-512 kernel files: GCC 12's unmasked AVX-512
// intrinsics (_mm512_reduce_add_ps and friends among them) start from
// _mm512_undefined_ps() and warn about it once inlined (GCC PR105593, fixed
// in 13): a false positive, silenced for the rest of the including file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
