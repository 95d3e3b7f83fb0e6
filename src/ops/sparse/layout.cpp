// Pruning, compression and decompression of 2:4 weights (layout.h).

#include "ops/sparse/layout.h"

#include <cmath>
#include <cstring>
#include <string>

#include "backplane/error.h"
#include "core/tensor_internal.h"
#include "core/threads.h"
#include "kernels/cpu/sparse24.h"

namespace bp::ops::sparse {
namespace {

// Element i of a contiguous tensor as a double (magnitudes and zero tests).
double element(const Tensor& t, int64_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    const T v = static_cast<const T*>(t.data())[i];
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return to_float(v);
    } else if constexpr (std::is_arithmetic_v<T>) {
      return static_cast<double>(v);
    } else {
      return 0.0;  // cpu_dtype() admits no other dtype
    }
  });
}

Tensor checked_weight(const Tensor& w, const char* who) {
  if (!w.defined()) throw_bad_value(who, "an undefined tensor", "a 2-D weight tensor");
  if (w.ndim() != 2) throw_bad_value(who, "a weight of shape " + detail::shape_str(w.shape()), "a 2-D weight [out, in]");
  if (!w.device().is_cpu())
    throw_bad_value(who, "a weight on " + w.device().str(),
                    "a CPU weight (compress on the CPU, then move packed and meta to CUDA: cusparselt:spmma makes cuSPARSELt's "
                    "form from them on first use)");
  if (!cpu_dtype(w.dtype()))
    throw_bad_value(who, std::string("a weight of dtype ") + dtype_name(w.dtype()),
                    std::string("float32, bfloat16, float16 or float64 on the CPU") +
                        (w.dtype() == DType::i8 ? " (int8 2:4 products are cuSPARSELt's, on CUDA)" : ""));
  return w.contiguous();
}

// The code (Note [2:4 CPU layout]) of a group whose nonzero columns are the
// set bits of `keep` (at most two): those, then the lowest free columns.
unsigned code_of_mask(unsigned keep) {
  for (unsigned c = 0; c < 4 && __builtin_popcount(keep) < 2; ++c) keep |= 1u << c;
  const unsigned first = static_cast<unsigned>(__builtin_ctz(keep)), second = 31u - static_cast<unsigned>(__builtin_clz(keep));
  return first | second << 2;
}

std::string columns_text(int64_t row, int64_t c0, int64_t k) {
  return "row " + std::to_string(row) + ", columns " + std::to_string(c0) + ".." + std::to_string(std::min(c0 + 3, k - 1));
}

}  // namespace

bool cpu_dtype(DType d) { return d == DType::f32 || d == DType::bf16 || d == DType::f16 || d == DType::f64; }

Tensor prune(const Tensor& w_in, const char* who) {
  const Tensor w = checked_weight(w_in, who);
  const int64_t n = w.size(0), k = w.size(1);
  Tensor out = Tensor::zeros({n, k}, w.dtype());
  const std::size_t item = w.itemsize();
  const char* src = static_cast<const char*>(w.data());
  char* dst = static_cast<char*>(out.data());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t c0 = 0; c0 < k; c0 += 4) {
      const int count = static_cast<int>(std::min<int64_t>(4, k - c0));
      // The two largest magnitudes; NaN first, ties to the lower column.
      int best[2] = {-1, -1};
      auto larger = [&](int a, int b) {  // column a beats column b
        const double x = std::fabs(element(w, j * k + c0 + a)), y = std::fabs(element(w, j * k + c0 + b));
        if (std::isnan(x) != std::isnan(y)) return std::isnan(x);
        return x > y;
      };
      for (int c = 0; c < count; ++c) {
        if (best[0] < 0 || larger(c, best[0])) {
          best[1] = best[0];
          best[0] = c;
        } else if (best[1] < 0 || larger(c, best[1])) {
          best[1] = c;
        }
      }
      for (int b : best)
        if (b >= 0) std::memcpy(dst + (j * k + c0 + b) * item, src + (j * k + c0 + b) * item, item);
    }
  return out;
}

Compressed compress(const Tensor& w_in, const char* who) {
  const Tensor w = checked_weight(w_in, who);
  const int64_t n = w.size(0), k = w.size(1), g = groups_of(k);
  Compressed out{Tensor::zeros({n, 2 * g}, w.dtype()), Tensor::zeros({n, g / 2}, DType::i8)};
  const std::size_t item = w.itemsize();
  const char* src = static_cast<const char*>(w.data());
  char* values = static_cast<char*>(out.values.data());
  auto* meta = static_cast<uint8_t*>(out.meta.data());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t gi = 0; gi < g; ++gi) {
      const int64_t c0 = 4 * gi;
      unsigned keep = 0;
      int nonzeros = 0;
      for (int c = 0; c < 4 && c0 + c < k; ++c)
        if (element(w, j * k + c0 + c) != 0.0 || std::isnan(element(w, j * k + c0 + c))) {
          keep |= 1u << c;
          ++nonzeros;
        }
      if (nonzeros > 2)
        throw_bad_value(who, std::to_string(nonzeros) + " nonzeros in " + columns_text(j, c0, k),
                        "at most 2 nonzeros in every group of 4 consecutive columns of a row (2:4 sparsity; "
                        "backplane.sparse.to_sparse_semi_structured(w, prune=True) keeps the 2 largest)");
      const unsigned code = code_of_mask(keep);
      meta[j * (g / 2) + gi / 2] |= static_cast<uint8_t>(code << ((gi & 1) * 4));
      for (int s = 0; s < 2; ++s) {
        const int64_t c = c0 + ((code >> (2 * s)) & 3u);
        if (c < k) std::memcpy(values + (j * 2 * g + 2 * gi + s) * item, src + (j * k + c) * item, item);
      }
    }
  return out;
}

int64_t check_compressed(const char* who, const Tensor& values, const Tensor& meta, int64_t k) {
  if (!values.defined() || !meta.defined())
    throw_bad_value(who, "an undefined values or meta tensor", "the values and meta of a 2:4 weight");
  const int64_t g = groups_of(k);
  if (values.ndim() != 2 || values.size(1) != 2 * g)
    throw_bad_value(who, "values of shape " + detail::shape_str(values.shape()) + " for " + std::to_string(k) +
                             " input features",
                    "values [out, " + std::to_string(2 * g) + "] (2 per group of 4 columns, k padded to a multiple of 8)");
  const int64_t n = values.size(0);
  if (meta.ndim() != 2 || meta.size(0) != n || meta.size(1) != g / 2 || meta.dtype() != DType::i8)
    throw_bad_value(who, std::string("meta ") + dtype_name(meta.dtype()) + " " + detail::shape_str(meta.shape()),
                    "int8 meta [" + std::to_string(n) + ", " + std::to_string(g / 2) + "] (a 4-bit code per group)");
  if (values.device() != meta.device())
    throw_bad_value(who, "values on " + values.device().str() + " and meta on " + meta.device().str(), "one device");
  if ((n > 1 && values.size(1) > 1 && values.stride(1) != 1) || (meta.size(1) > 1 && meta.stride(1) != 1))
    throw_bad_value(who, "values strides " + detail::shape_str(values.strides()) + ", meta strides " +
                             detail::shape_str(meta.strides()),
                    "rows of unit stride (the tensors to_sparse_semi_structured makes)");
  return n;
}

namespace {

// Scatters the stored entries of each row (raw element bits U), rows in parallel:
// the dense fallback pays this on every call.
template <class U>
void scatter_rows(const U* values, const uint8_t* codes, int64_t n, int64_t k, int64_t g, U* dense) {
  const int team = threads::team_size(n / 16 + 1);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t j = 0; j < n; ++j) {
    U* row = dense + j * k;
    const U* v = values + j * 2 * g;
    const uint8_t* c = codes + j * (g / 2);
    std::fill(row, row + k, U{0});
    for (int64_t gi = 0; gi < g; ++gi) {
      const unsigned code = (c[gi / 2] >> ((gi & 1) * 4)) & 15u;
      // A stored entry past k is padding (zero); a repeated column (a code
      // no compression writes) keeps the second entry.
      const int64_t c0 = 4 * gi + (code & 3u), c1 = 4 * gi + (code >> 2);
      if (c0 < k) row[c0] = v[2 * gi];
      if (c1 < k) row[c1] = v[2 * gi + 1];
    }
  }
}

}  // namespace

void decompress_into(const Tensor& values_in, const Tensor& meta_in, int64_t k, const char* who, void* dst) {
  const int64_t n = check_compressed(who, values_in, meta_in, k), g = groups_of(k);
  if (!values_in.device().is_cpu()) throw_bad_value(who, "a weight on " + values_in.device().str(), "a CPU weight");
  const Tensor values = values_in.contiguous(), meta = meta_in.contiguous();
  const auto* codes = static_cast<const uint8_t*>(meta.data());
  switch (values.itemsize()) {
    // int8: weights made for cusparselt:spmma, which decompresses them on the host once
    case 1: scatter_rows(static_cast<const uint8_t*>(values.data()), codes, n, k, g, static_cast<uint8_t*>(dst)); break;
    case 2: scatter_rows(static_cast<const uint16_t*>(values.data()), codes, n, k, g, static_cast<uint16_t*>(dst)); break;
    case 4: scatter_rows(static_cast<const uint32_t*>(values.data()), codes, n, k, g, static_cast<uint32_t*>(dst)); break;
    case 8: scatter_rows(static_cast<const uint64_t*>(values.data()), codes, n, k, g, static_cast<uint64_t*>(dst)); break;
    default: throw_bad_value(who, std::string("values of dtype ") + dtype_name(values.dtype()), "a 2:4 weight dtype");
  }
}

Tensor decompress(const Tensor& values, const Tensor& meta, int64_t k, const char* who) {
  const int64_t n = check_compressed(who, values, meta, k);
  Tensor out = Tensor::empty({n, k}, values.dtype());
  decompress_into(values, meta, k, who, out.data());
  return out;
}

}  // namespace bp::ops::sparse
