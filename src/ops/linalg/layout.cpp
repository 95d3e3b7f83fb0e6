// What every linalg implementation shares around its own arithmetic: the
// routine names, loading the inputs into the column-major outputs, the
// triangle a Cholesky factor leaves, the batch loop (Note [Linalg routines]).

#include <exception>
#include <mutex>

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
  }
  return "?";
}

void load_inputs(const Params& p) {
  if (p.a_in.defined()) p.a.T().copy_from(p.a_in);
  if (p.piv_in.defined()) Tensor(p.piv).copy_from(p.piv_in);
  if (p.b_in.defined()) {
    p.b.T().copy_from(p.b_in);
  } else if (p.routine == Routine::inv) {
    // B = I for every batch element.
    visit_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, std::complex<float>> ||
                    std::is_same_v<T, std::complex<double>>) {
        const int64_t n = p.n;
        for (int64_t i = 0; i < p.batch; ++i) {
          T* x = matrix<T>(p.b, i);
          std::fill(x, x + n * n, T(0));
          for (int64_t j = 0; j < n; ++j) x[j + j * n] = T(1);
        }
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
      for (int64_t i = 0; i < p.batch; ++i) {
        T* x = matrix<T>(p.a, i);
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
