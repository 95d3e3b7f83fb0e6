// ref:any: the reference. A plain loop over the stored entries of each row
// (Note [2:4 CPU layout]) accumulating in float64, written apart from the
// kernel's packing and blocking: the slow, obvious definition of the product.

#include "backplane/dispatch_checks.h"
#include "ops/sparse/impls.h"
#include "ops/sparse/layout.h"
#include "ops/sparse/params.h"

namespace bp::ops::sparse {
namespace {

template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return to_float(v);
  } else {
    return static_cast<double>(v);
  }
}

// C(r, j) in float64, handed to put(r, j, value).
template <class T, class Put>
void product(const Params& p, Put&& put) {
  const int64_t g = groups_of(p.k);
  const T* values = static_cast<const T*>(p.values.data());
  const T* x = static_cast<const T*>(p.x.data());
  const auto* meta = static_cast<const uint8_t*>(p.meta.data());
  for (int64_t r = 0; r < p.m; ++r)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t gi = 0; gi < g; ++gi) {
        const unsigned code = (meta[j * p.meta.stride(0) + gi / 2] >> (4 * (gi % 2))) & 15u;
        for (int s = 0; s < 2; ++s) {
          const int64_t col = 4 * gi + ((code >> (2 * s)) & 3u);
          if (col >= p.k) continue;  // padding
          sum += as_double(values[j * p.values.stride(0) + 2 * gi + s]) *
                 as_double(x[r * p.x.stride(0) + col * p.x.stride(1)]);
        }
      }
      put(r, j, sum);
    }
}

void run(const Params& p) {
  if (p.dtype == DType::f64) {  // written in float64, the bias too
    auto* out = static_cast<double*>(p.out.data());
    const double* bias = p.bias.defined() ? static_cast<const double*>(p.bias.data()) : nullptr;
    product<double>(p, [&](int64_t r, int64_t j, double v) {
      out[r * p.out_rs + j * p.out_cs] = v + (bias ? bias[j * p.bias.stride(0)] : 0.0);
    });
    return;
  }
  Staging s = staging(p);
  auto put = [&](int64_t r, int64_t j, double v) { s.c[r * p.out_rs + j * p.out_cs] = static_cast<float>(v); };
  switch (p.dtype) {
    case DType::f32: product<float>(p, put); break;
    case DType::bf16: product<BFloat16>(p, put); break;
    case DType::f16: product<Half>(p, put); break;
    default: throw_bad_value("sparse ref:any", dtype_name(p.dtype), "float32, bfloat16, float16 or float64");
  }
  finish(p, s);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_ref() {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dtype_in<Params>({DType::f32, DType::bf16, DType::f16, DType::f64}));
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", dispatch::Properties{}, std::move(list), run);
}

}  // namespace bp::ops::sparse
