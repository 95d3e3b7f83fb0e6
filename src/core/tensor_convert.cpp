// Element copies between strided CPU tensors of any two dtypes: copy_from,
// to(dtype), and through them contiguous() and clone().

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backplane/error.h"
#include "backplane/tensor.h"
#include "core/tensor_internal.h"

namespace bp {
namespace {

template <class T> struct is_complex_type : std::false_type {};
template <class T> struct is_complex_type<std::complex<T>> : std::true_type {};

// The value a storage type holds, widened to a type C++ can compute with:
// f16/bf16 to float, everything else unchanged.
template <class S>
auto widen(S v) {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) return to_float(v);
  else return v;
}

// Saturating float -> integer (Note in Tensor::to(DType)): C++'s own cast is
// undefined outside the range, and NaN has no integer.
template <class I>
I float_to_int(double x) {
  if (std::isnan(x)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  // max + 1 = -min is a power of two, exact in a double (int64's max is not).
  constexpr double hi_exclusive = -lo;
  if (x <= lo) return std::numeric_limits<I>::min();
  if (x >= hi_exclusive) return std::numeric_limits<I>::max();
  return static_cast<I>(x);  // truncates toward zero
}

// Converts one element from storage type S to storage type D.
template <class D, class S>
D convert(S raw) {
  const auto v = widen(raw);
  using V = std::remove_cv_t<decltype(v)>;
  if constexpr (std::is_same_v<D, S>) {
    return raw;
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != V{};
  } else if constexpr (is_complex_type<V>::value) {
    if constexpr (is_complex_type<D>::value) return D(v);
    else return convert<D>(v.real());  // complex -> real keeps the real part
  } else if constexpr (is_complex_type<D>::value) {
    return D(static_cast<typename D::value_type>(v), 0);
  } else if constexpr (std::is_same_v<D, Half> && std::is_same_v<V, float>) {
    return half_from_float(v);  // inline: the loop over a row vectorises
  } else if constexpr (std::is_same_v<D, Half>) {
    return Half{half_bits_from_double(static_cast<double>(v))};  // one rounding (not through float)
  } else if constexpr (std::is_same_v<D, BFloat16> && std::is_same_v<V, float>) {
    return bfloat16_from_float(v);  // inline: the loop over a row vectorises
  } else if constexpr (std::is_same_v<D, BFloat16>) {
    return BFloat16{bfloat16_bits_from_double(static_cast<double>(v))};
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<V>) {
    return float_to_int<D>(static_cast<double>(v));
  } else {
    return static_cast<D>(v);
  }
}

// Row by row (Note [Coalesced rows]), so that a same-dtype copy of unit-
// stride rows is a memmove per row (one for two dense tensors, or two views
// whose dims merge) and a conversion is a plain loop the compiler
// vectorises. memmove, not memcpy: a destination may overlap its source.
template <class D, class S>
void convert_strided(const Tensor& dst, const Tensor& src) {
  D* out = static_cast<D*>(dst.data());
  const S* in = static_cast<const S*>(src.data());
  detail::for_each_row_pair(dst.shape(), dst.strides(), src.strides(),
                            [&](int64_t d0, int64_t s0, int64_t inner, int64_t ds, int64_t ss) {
                              D* o = out + d0;
                              const S* i = in + s0;
                              if (ds == 1 && ss == 1) {
                                if constexpr (std::is_same_v<D, S>) {
                                  std::memmove(o, i, static_cast<std::size_t>(inner) * sizeof(D));
                                } else {
                                  for (int64_t k = 0; k < inner; ++k) o[k] = convert<D>(i[k]);
                                }
                              } else {
                                for (int64_t k = 0; k < inner; ++k) o[k * ds] = convert<D>(i[k * ss]);
                              }
                            });
}

}  // namespace

void Tensor::copy_from(const Tensor& src) {
  const char* op = "Tensor.copy_from";
  check_defined(op);
  src.check_defined(op);
  if (src.shape_ != shape_) {
    throw_bad_value(op, "a source of shape " + detail::shape_str(src.shape_),
                    "the destination's shape " + detail::shape_str(shape_));
  }
  if (!device().is_cpu() || !src.device().is_cpu()) {
    throw_not_implemented(op, std::string(op) + " works on cpu tensors only, got " + src.device().str() +
                                  " -> " + device().str() + "; use to(device) to move data");
  }
  if (storage_->read_only()) {
    throw_runtime(op, std::string(op) + ": the destination is read-only memory imported through DLPack");
  }
  visit_dtype(dtype_, [&](auto dst_tag) {
    visit_dtype(src.dtype_, [&](auto src_tag) {
      convert_strided<decltype(dst_tag), decltype(src_tag)>(*this, src);
    });
  });
}

Tensor Tensor::to(DType dtype) const {
  check_defined("Tensor.to");
  if (dtype == dtype_) return *this;
  if (device().is_cuda()) return to(Device::cpu()).to(dtype).to(device());
  Tensor out = empty(shape_, dtype);
  out.copy_from(*this);
  return out;
}

}  // namespace bp
