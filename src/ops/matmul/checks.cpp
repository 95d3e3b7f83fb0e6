// The matmul checks that read no flag (checks.h).

#include "ops/matmul/checks.h"

#include <algorithm>
#include <climits>

#include "backplane/dispatch_checks.h"

namespace bp::ops::matmul::checks {
namespace {

std::string strides_text(const char* name, const Tensor& t) {
  return std::string(name) + " strides (" + std::to_string(t.stride(-2)) + ", " + std::to_string(t.stride(-1)) + ")";
}

}  // namespace

bool is_f32(const Params& p) { return p.dtype == DType::f32; }

dispatch::Check<Params> bf16_permitted() {
  return dispatch::checks::precision_permits<Params>(precision::Backend::mkldnn, precision::Op::matmul,
                                                     flags::Precision::bf16, is_f32);
}

bool blas_matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, BlasMatrix& out) {
  // A dimension of size 1 may carry any stride: choose the one BLAS likes.
  if (cs == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) {
      out = {false, ld};
      return true;
    }
  }
  if (rs == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) {
      out = {true, ld};
      return true;
    }
  }
  return false;
}

bool blas_layout(const Params& p, Reasons& r) {
  BlasMatrix ma, mb;
  const bool a_ok = blas_matrix(p.m, p.k, p.a.stride(-2), p.a.stride(-1), ma);
  const bool b_ok = blas_matrix(p.k, p.n, p.b.stride(-2), p.b.stride(-1), mb);
  if (a_ok && b_ok) return true;
  return r.fail("a and b each with a unit stride in one dimension and a leading dimension covering the other "
                "(transposed views are fine)",
                [&] { return !a_ok ? strides_text("a", p.a) : strides_text("b", p.b); });
}

bool blas_int_range(const Params& p, Reasons& r) {
  const int64_t biggest = std::max({p.m, p.n, p.k, p.a.stride(-2), p.a.stride(-1), p.b.stride(-2), p.b.stride(-1)});
  return biggest <= INT_MAX || r.fail("dims and strides <= 2147483647 (32-bit BLAS integers)",
                                      [&] { return std::to_string(biggest); });
}

}  // namespace bp::ops::matmul::checks
