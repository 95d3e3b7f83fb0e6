// What every linalg implementation shares around its own arithmetic: the
// routine names, loading the inputs into the column-major outputs, the
// triangle a Cholesky factor leaves, the batch loop (Note [Linalg routines]).

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "core/threads.h"
#include "ops/linalg/params.h"

namespace bp::ops::linalg {

const char* routine_name(Routine r) {
  switch (r) {
    case Routine::potrf: return "potrf";
    case Routine::potrs: return "potrs";
    case Routine::getrf: return "getrf";
    case Routine::getrs: return "getrs";
    case Routine::gesv: return "gesv";
    case Routine::inv: return "inv";
    case Routine::qr: return "qr";
    case Routine::eigh: return "eigh";
    case Routine::svd: return "svd";
    case Routine::lstsq: return "lstsq";
  }
  return "?";
}

namespace {

template <std::size_t Bytes>
struct Item {
  unsigned char b[Bytes];
};

// dst (physical [batch..., cols, rows], contiguous) = src (logical [batch...,
// rows, cols], any strides, the same dtype), in 32 x 32 tiles so that both
// sides stay in cache: Tensor::copy_from's element-wise walk of a
// transposing copy costs several times a factorization's O(n^2) share.
#if defined(__SSE2__)
// dst (4 x 4, columns `ld` apart) = the transpose of src (4 rows of 4
// consecutive 4-byte items, `rs` apart).
template <class E>
inline void transpose4(const E* src, int64_t rs, E* dst, int64_t ld) {
  static_assert(sizeof(E) == 4);
  __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(src));
  __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(src + rs));
  __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float*>(src + 2 * rs));
  __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float*>(src + 3 * rs));
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(reinterpret_cast<float*>(dst), r0);
  _mm_storeu_ps(reinterpret_cast<float*>(dst + ld), r1);
  _mm_storeu_ps(reinterpret_cast<float*>(dst + 2 * ld), r2);
  _mm_storeu_ps(reinterpret_cast<float*>(dst + 3 * ld), r3);
}
#endif

template <std::size_t Bytes>
void gather_columns(const Tensor& src, const Tensor& dst) {
  using E = Item<Bytes>;
  const int64_t nd = src.ndim(), rows = src.size(-2), cols = src.size(-1);
  const int64_t rs = src.stride(-2), cs = src.stride(-1);
  // The batch dims (sizes and strides, broadcast ones included), read once:
  // Tensor::size per element would cost more than a 4 x 4 matrix's copy.
  std::vector<int64_t> sizes(src.shape().begin(), src.shape().end() - 2);
  std::vector<int64_t> strides(src.strides().begin(), src.strides().end() - 2);
  int64_t batch = 1;
  for (int64_t s : sizes) batch *= s;
  // One stride steps through the whole batch when its dims nest (a dense
  // batch, or one sliced along its first dim): no division per matrix.
  int64_t step = 0;
  bool nested = true;
  for (int64_t d = nd - 3, inner = 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (inner == 1 && step == 0) step = strides[d];
    else nested = nested && strides[d] == step * inner;
    inner *= sizes[d];
  }
  const E* base = static_cast<const E*>(src.data());
  E* out = static_cast<E*>(dst.data());
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t offset = 0, rest = b;
    if (nested) {
      offset = b * step;
    } else {
      for (int64_t d = nd - 3; d >= 0; --d) {
        offset += (rest % sizes[d]) * strides[d];
        rest /= sizes[d];
      }
    }
    const E* s = base + offset;
    E* o = out + b * rows * cols;
    for (int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile), i1 = std::min(rows, i0 + kTile);
        int64_t i4 = i0, j4 = j0;  // the part done by 4 x 4 register transposes
#if defined(__SSE2__)
        if constexpr (Bytes == 4) {
          if (cs == 1) {  // rows of the source are dense: 4 x 4 blocks through registers
            i4 = i0 + (i1 - i0) / 4 * 4, j4 = j0 + (j1 - j0) / 4 * 4;
            for (int64_t j = j0; j < j4; j += 4)
              for (int64_t i = i0; i < i4; i += 4) transpose4(s + i * rs + j, rs, o + i + j * rows, rows);
          }
        }
#endif
        for (int64_t j = j0; j < j1; ++j)  // what the blocks left: rows i4.., then columns j4.. of the rest
          for (int64_t i = j < j4 ? i4 : i0; i < i1; ++i) o[i + j * rows] = s[i * rs + j * cs];
      }
  }
}

// A logical input into a column-major output (Note [Linalg routines]).
void load_matrix(const Tensor& src, const Tensor& dst) {
  if (src.device().is_cpu() && src.dtype() == dst.dtype() && dst.is_contiguous()) {
    switch (src.itemsize()) {
      case 4: return gather_columns<4>(src, dst);
      case 8: return gather_columns<8>(src, dst);
      case 16: return gather_columns<16>(src, dst);
      default: break;
    }
  }
  dst.T().copy_from(src);
}

}  // namespace

void load_inputs(const Params& p, bool with_a, bool with_identity) {
  if (!with_a)
    ;
  else if (p.a_row_major)  // Note [Cholesky without a transpose]: the memory as it is
    std::memcpy(p.a.data(), p.a_in.data(), p.a.nbytes());
  else if (p.a_in.defined())
    load_matrix(p.a_in, p.a);
  if (p.piv_in.defined()) Tensor(p.piv).copy_from(p.piv_in);
  if (p.b_in.defined() && p.routine == Routine::lstsq) {
    // B's m rows into b's first m (b has max(m, n) rows, LAPACK's ldb).
    Tensor(p.b).copy_from(Tensor::zeros(p.b.shape(), p.b.dtype()));
    p.b.slice(-1, 0, p.m).T().copy_from(p.b_in);
  } else if (p.b_in.defined()) {
    load_matrix(p.b_in, p.b);
  } else if (p.routine == Routine::inv && with_identity) {
    // B = I for every batch element.
    visit_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, std::complex<float>> ||
                    std::is_same_v<T, std::complex<double>>) {
        const int64_t n = p.n;
        T* base = static_cast<T*>(p.b.data());  // once: matrix() per element would cost more than a 4 x 4's fill
        std::fill(base, base + p.batch * n * n, T(0));
        for (int64_t i = 0; i < p.batch; ++i)
          for (int64_t j = 0; j < n; ++j) base[i * n * n + j + j * n] = T(1);
      }
    });
  }
}

void zero_other_triangle(const Params& p) {
  visit_dtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, std::complex<float>> ||
                  std::is_same_v<T, std::complex<double>>) {
      const int64_t n = p.n;
      T* base = static_cast<T*>(p.a.data());
      for (int64_t i = 0; i < p.batch; ++i) {
        T* x = base + i * n * n;
        for (int64_t c = 0; c < n; ++c) {
          // Column c: rows above the diagonal belong to U, below to L.
          if (p.upper)
            std::fill(x + c * n + c + 1, x + (c + 1) * n, T(0));
          else
            std::fill(x + c * n, x + c * n + c, T(0));
        }
      }
    }
  });
}

void for_each_matrix(const Params& p, const std::function<void(int64_t)>& body) {
  // Large matrices: one after another, each using every thread inside
  // (GEMM, LAPACK). Small ones: the batch is the parallelism.
  const int64_t size = p.m > p.n ? p.m : p.n;
  const int team = p.batch > 1 && size <= 128 ? threads::team_size(p.batch) : 1;
  if (team <= 1) {
    for (int64_t i = 0; i < p.batch; ++i) body(i);
    return;
  }
  std::exception_ptr error;
  std::mutex mutex;
#pragma omp parallel for schedule(static) num_threads(team)
  for (int64_t i = 0; i < p.batch; ++i) {
    try {
      body(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

dispatch::Check<Params> routine_in(std::vector<Routine> allowed) {
  return dispatch::Check<Params>{"routine", [allowed](const Params& p, dispatch::Reasons& r) {
                                   for (Routine x : allowed)
                                     if (x == p.routine) return true;
                                   return r.fail(
                                       [&] {
                                         std::string s;
                                         for (std::size_t i = 0; i < allowed.size(); ++i)
                                           s += (i ? (i + 1 == allowed.size() ? " or " : ", ") : "") +
                                                std::string(routine_name(allowed[i]));
                                         return s;
                                       }(),
                                       [&] { return std::string(routine_name(p.routine)); });
                                 }};
}

}  // namespace bp::ops::linalg
