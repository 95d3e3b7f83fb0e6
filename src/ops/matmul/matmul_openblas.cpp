// openblas:gemm: cblas_sgemm / cblas_dgemm. (Debian's OpenBLAS 0.3.21 is
// built without BUILD_BFLOAT16: its cblas.h declares cblas_sbgemm but the
// library does not export it, so bf16 is not offered here.) Strided views go in as (NoTrans | Trans, ld):
// a transposed view is a BLAS transpose, never a copy; a view with no unit
// stride is rejected by the "layout" check (the builtin kernels take it).
// Compiled only when OpenBLAS is found (Note [Source layout and globbing]).

#include <cblas.h>

#include "ops/matmul/checks.h"
#include "backplane/dispatch_checks.h"
#include "ops/matmul/impls.h"

namespace bp::ops::matmul {
namespace {

struct Blas {
  CBLAS_TRANSPOSE ta, tb;
  blasint lda, ldb;
};

Blas blas_args(const Params& p, const Gemm2D& g) {
  checks::BlasMatrix ma{}, mb{};
  checks::blas_matrix(p.m, p.k, g.a_rs, g.a_cs, ma);  // accepted by the layout check
  checks::blas_matrix(p.k, p.n, g.b_rs, g.b_cs, mb);
  return {ma.transposed ? CblasTrans : CblasNoTrans, mb.transposed ? CblasTrans : CblasNoTrans,
          static_cast<blasint>(ma.ld), static_cast<blasint>(mb.ld)};
}

void run_openblas(const Params& p) {
  const auto m = static_cast<blasint>(p.m), n = static_cast<blasint>(p.n), k = static_cast<blasint>(p.k);
  for_each_gemm(p, [&](const Gemm2D& g) {
    const Blas b = blas_args(p, g);
    const auto ldc = static_cast<blasint>(std::max<int64_t>(g.ldc, 1));
    switch (p.dtype) {
      case DType::f64:
        cblas_dgemm(CblasRowMajor, b.ta, b.tb, m, n, k, g.alpha, static_cast<const double*>(g.a), b.lda,
                    static_cast<const double*>(g.b), b.ldb, g.beta, static_cast<double*>(g.c), ldc);
        break;
      case DType::f32:
        cblas_sgemm(CblasRowMajor, b.ta, b.tb, m, n, k, static_cast<float>(g.alpha), static_cast<const float*>(g.a),
                    b.lda, static_cast<const float*>(g.b), b.ldb, static_cast<float>(g.beta),
                    static_cast<float*>(g.c), ldc);
        break;
      default: throw_bad_value("openblas:gemm", dtype_name(p.dtype), "float32 or float64");
    }
  });
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_openblas_gemm() {
  dispatch::Properties props;
  props.workspace = "OpenBLAS's own buffers";
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64}));
  list.push_back({"layout", checks::blas_layout});
  list.push_back({"size", checks::blas_int_range});
  return std::make_unique<dispatch::Impl<Params>>("openblas:gemm", "openblas", props, std::move(list), run_openblas);
}

}  // namespace bp::ops::matmul
