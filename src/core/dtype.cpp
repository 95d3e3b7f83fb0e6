#include "backplane/dtype.h"

#include <bit>
#include <cmath>
#include <limits>

#include "backplane/error.h"

namespace bp {
namespace {

struct DTypeInfo {
  DType type;
  const char* name;
  const char* short_name;
  std::size_t itemsize;
};

constexpr DTypeInfo kInfo[] = {
    {DType::f16, "float16", "f16", 2},      {DType::bf16, "bfloat16", "bf16", 2},
    {DType::f32, "float32", "f32", 4},      {DType::f64, "float64", "f64", 8},
    {DType::c64, "complex64", "c64", 8},    {DType::c128, "complex128", "c128", 16},
    {DType::i8, "int8", "i8", 1},           {DType::i32, "int32", "i32", 4},
    {DType::i64, "int64", "i64", 8},        {DType::boolean, "bool", "bool", 1},
};

const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }

struct Alias {
  const char* name;
  DType type;
};
// PyTorch's spellings, so torch users can write what they know.
constexpr Alias kAliases[] = {{"half", DType::f16},      {"float", DType::f32},
                              {"double", DType::f64},    {"cfloat", DType::c64},
                              {"cdouble", DType::c128},  {"int", DType::i32},
                              {"long", DType::i64}};

// Rounds a double to a binary float format with EXP_BITS exponent bits and
// MANT_BITS stored mantissa bits (f16: 5/10, bf16: 8/7), round to nearest,
// ties to even; returns the bit pattern. A float argument converts exactly to
// double first, so this is also the correctly rounded f32 -> narrow path.
template <int EXP_BITS, int MANT_BITS>
uint16_t narrow_bits_from_double(double x) {
  constexpr int kBias = (1 << (EXP_BITS - 1)) - 1;
  constexpr int kMinNormalExp = 1 - kBias;
  constexpr uint16_t kInfBits = static_cast<uint16_t>(((1u << EXP_BITS) - 1) << MANT_BITS);
  constexpr uint16_t kQuietNanBits = kInfBits | (1u << (MANT_BITS - 1));
  constexpr int kDoubleMant = 52;

  const uint64_t b = std::bit_cast<uint64_t>(x);
  const uint16_t sign = static_cast<uint16_t>((b >> 63) << 15);
  const uint64_t magnitude = b & 0x7FFF'FFFF'FFFF'FFFFull;
  if (magnitude >= 0x7FF0'0000'0000'0000ull) {
    return static_cast<uint16_t>(sign | (magnitude == 0x7FF0'0000'0000'0000ull ? kInfBits : kQuietNanBits));
  }
  const int exp = static_cast<int>(magnitude >> kDoubleMant) - 1023;
  if (exp > kBias) return sign | kInfBits;
  // Mantissa with its implicit leading one (double subnormals are far below
  // the narrow format's range and round to zero below).
  const uint64_t mant = (magnitude & ((1ull << kDoubleMant) - 1)) | (1ull << kDoubleMant);
  // Bits to drop: the mantissa difference, plus the denormalisation shift
  // when the result is subnormal in the narrow format.
  int shift = kDoubleMant - MANT_BITS;
  if (exp < kMinNormalExp) shift += kMinNormalExp - exp;
  if (shift > kDoubleMant + 1) return sign;  // below half the smallest subnormal
  uint64_t kept = mant >> shift;
  const uint64_t rest = mant & ((1ull << shift) - 1);
  const uint64_t halfway = 1ull << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1))) ++kept;
  if (exp < kMinNormalExp) {
    // Subnormal: the exponent field is 0; a carry into bit MANT_BITS yields
    // the smallest normal number, which is the right answer.
    return static_cast<uint16_t>(sign | kept);
  }
  // kept includes the implicit one (bit MANT_BITS), which adds one to the
  // biased exponent placed just below; a rounding carry moves into the
  // exponent and, at the top, gives exactly the infinity pattern.
  const uint64_t bits = (static_cast<uint64_t>(exp + kBias - 1) << MANT_BITS) + kept;
  return static_cast<uint16_t>(sign | (bits >= kInfBits ? kInfBits : bits));
}

}  // namespace

const char* dtype_name(DType t) { return info(t).name; }
const char* dtype_short_name(DType t) { return info(t).short_name; }
std::size_t dtype_itemsize(DType t) { return info(t).itemsize; }
bool is_floating(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
}
bool is_complex(DType t) { return t == DType::c64 || t == DType::c128; }
bool is_integral(DType t) { return t == DType::i8 || t == DType::i32 || t == DType::i64; }

const std::string& dtype_allowed_names() {
  static const std::string names = [] {
    std::string s;
    for (const DTypeInfo& i : kInfo) {
      if (!s.empty()) s += ", ";
      s += i.name;
    }
    return s;
  }();
  return names;
}

DType parse_dtype(std::string_view text) {
  for (const DTypeInfo& i : kInfo) {
    if (text == i.name || text == i.short_name) return i.type;
  }
  for (const Alias& a : kAliases) {
    if (text == a.name) return a.type;
  }
  throw_bad_value("dtype", "'" + std::string(text) + "'",
                  "one of " + dtype_allowed_names() + " (or f16, bf16, f32, ... / half, float, double, long)");
}

uint16_t half_bits_from_double(double x) { return narrow_bits_from_double<5, 10>(x); }
uint16_t bfloat16_bits_from_double(double x) { return narrow_bits_from_double<8, 7>(x); }

}  // namespace bp
