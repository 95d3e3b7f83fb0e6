#pragma once
// Element types of bp::Tensor, their names, sizes and the C++ types that hold
// them, plus exact f16/bf16 <-> f32/f64 conversions for kernels.
//
// Note [Half-precision storage types]
// f16 and bf16 are stored as their raw 16-bit patterns in bp::Half and
// bp::BFloat16. The structs do no arithmetic: kernels convert to float with
// to_float() and back with half_from_float() / bfloat16_from_float(), which
// round to nearest, ties to even (IEEE 754 default, what NumPy and
// ml_dtypes do), keep NaN a NaN and overflow to infinity.

#include <complex>
#include <cstring>
#include <cstdint>
#include <string>
#include <string_view>

namespace bp {

enum class DType : uint8_t { f16, bf16, f32, f64, c64, c128, i8, i32, i64, boolean };

inline constexpr DType kAllDTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64, DType::c64,
                                       DType::c128, DType::i8, DType::i32, DType::i64, DType::boolean};

// The canonical (NumPy) name: "float16", "bfloat16", "float32", ..., "bool".
const char* dtype_name(DType t);
// The short name: "f16", "bf16", "f32", ..., "bool".
const char* dtype_short_name(DType t);
// Bytes per element.
std::size_t dtype_itemsize(DType t);
bool is_floating(DType t);  // f16, bf16, f32, f64
bool is_complex(DType t);   // c64, c128
bool is_integral(DType t);  // i8, i32, i64 (not bool)

// Parses a canonical name, a short name or a PyTorch alias ("half", "float",
// "double", "cfloat", "cdouble", "int", "long"). Anything else is a
// ValueError naming the value and the canonical names.
DType parse_dtype(std::string_view text);
// "float16, bfloat16, ..., bool", for error messages.
const std::string& dtype_allowed_names();

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// Round to nearest, ties to even; NaN becomes the quiet NaN with its sign,
// overflow infinity.
uint16_t half_bits_from_double(double x);
uint16_t bfloat16_bits_from_double(double x);
// IEEE binary16 -> binary32, exact (subnormals and infinities; a NaN keeps
// its sign and payload), on the bits and inline: every f16 -> f32 copy of a
// tensor and the GEMM's f16 packing go through here (out of line, through
// ldexp, it was a function call and a scalbnf per element).
inline float half_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  uint32_t u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    u = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    u = sign;
  } else {  // a subnormal: normalise it
    uint32_t e = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    u = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
// bf16 is the top half of an f32, so widening is a shift.
// (memcpy rather than std::bit_cast: CUDA sources include this header as C++17.)
inline float bfloat16_bits_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
// The same bits as bfloat16_bits_from_double(x), inline and without the
// double: bf16 keeps f32's exponent, so rounding is on the f32 bits (the
// carry of a rounding up walks into the exponent, and from the largest
// finite values into the infinity pattern; f32 subnormals land on bf16's).
// Every f32 -> bf16 copy of a tensor goes through here, so it must not cost
// an out-of-line call per element.
inline uint16_t bfloat16_bits_from_float(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7FC0u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// The same bits as half_bits_from_double(x), inline, on the f32 bits and
// without branches, so that a loop over a row (f32 -> f16 copies of a tensor)
// vectorises. Normal results: rebias the exponent and round the 13 dropped
// bits to nearest even by adding 0xFFF plus the kept lowest bit (a carry
// walks into the exponent; from 65520 up it would reach infinity's pattern,
// which is set outright). Subnormal results (|x| < 2^-14): adding 0.5 puts
// the half subnormals' step, 2^-24, at the last place of the f32 sum, so
// the FPU's own round-to-nearest-even does the rounding (the default
// rounding mode; f32 inputs that DAZ would flush round to 0 anyway).
inline uint16_t half_bits_from_float(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7FFFFFFFu;
  float magnitude;
  std::memcpy(&magnitude, &a, sizeof magnitude);
  const float shifted = magnitude + 0.5f;
  uint32_t s;
  std::memcpy(&s, &shifted, sizeof s);
  const uint32_t subnormal = s - 0x3F000000u;
  const uint32_t normal = (a - 0x38000000u + 0xFFFu + ((a >> 13) & 1u)) >> 13;
  uint32_t h = a < 0x38800000u ? subnormal : normal;
  h = a >= 0x477FF000u ? 0x7C00u : h;  // 65520 and up (and infinity)
  h = a > 0x7F800000u ? 0x7E00u : h;   // NaN: the quiet NaN, with its sign
  return static_cast<uint16_t>(sign | h);
}

inline Half half_from_float(float x) { return Half{half_bits_from_float(x)}; }
inline BFloat16 bfloat16_from_float(float x) { return BFloat16{bfloat16_bits_from_float(x)}; }
inline float to_float(Half h) { return half_bits_to_float(h.bits); }
inline float to_float(BFloat16 b) { return bfloat16_bits_to_float(b.bits); }

// The C++ type stored for each dtype, and back.
template <DType T> struct dtype_cpp;
template <> struct dtype_cpp<DType::f16> { using type = Half; };
template <> struct dtype_cpp<DType::bf16> { using type = BFloat16; };
template <> struct dtype_cpp<DType::f32> { using type = float; };
template <> struct dtype_cpp<DType::f64> { using type = double; };
template <> struct dtype_cpp<DType::c64> { using type = std::complex<float>; };
template <> struct dtype_cpp<DType::c128> { using type = std::complex<double>; };
template <> struct dtype_cpp<DType::i8> { using type = int8_t; };
template <> struct dtype_cpp<DType::i32> { using type = int32_t; };
template <> struct dtype_cpp<DType::i64> { using type = int64_t; };
template <> struct dtype_cpp<DType::boolean> { using type = bool; };
template <DType T> using dtype_cpp_t = typename dtype_cpp<T>::type;

template <class T> struct cpp_dtype;
template <> struct cpp_dtype<Half> { static constexpr DType value = DType::f16; };
template <> struct cpp_dtype<BFloat16> { static constexpr DType value = DType::bf16; };
template <> struct cpp_dtype<float> { static constexpr DType value = DType::f32; };
template <> struct cpp_dtype<double> { static constexpr DType value = DType::f64; };
template <> struct cpp_dtype<std::complex<float>> { static constexpr DType value = DType::c64; };
template <> struct cpp_dtype<std::complex<double>> { static constexpr DType value = DType::c128; };
template <> struct cpp_dtype<int8_t> { static constexpr DType value = DType::i8; };
template <> struct cpp_dtype<int32_t> { static constexpr DType value = DType::i32; };
template <> struct cpp_dtype<int64_t> { static constexpr DType value = DType::i64; };
template <> struct cpp_dtype<bool> { static constexpr DType value = DType::boolean; };
template <class T> inline constexpr DType cpp_dtype_v = cpp_dtype<T>::value;

// Calls fn(tag) with tag a value of the C++ type of `t` (value-initialised),
// so kernels can be written once as a generic lambda:
//   visit_dtype(t.dtype(), [&](auto tag) { using T = decltype(tag); ... });
template <class Fn>
decltype(auto) visit_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::f16: return fn(Half{});
    case DType::bf16: return fn(BFloat16{});
    case DType::f32: return fn(float{});
    case DType::f64: return fn(double{});
    case DType::c64: return fn(std::complex<float>{});
    case DType::c128: return fn(std::complex<double>{});
    case DType::i8: return fn(int8_t{});
    case DType::i32: return fn(int32_t{});
    case DType::i64: return fn(int64_t{});
    case DType::boolean: return fn(bool{});
  }
  return fn(float{});  // unreachable: every enumerator is handled above
}

}  // namespace bp
