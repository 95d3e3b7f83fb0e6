// The op "linalg", declared once (backplane/op_spec.h): its ordered list,
// the entries of backplane.linalg (and backplane.cholesky_solve), its shape
// form and its benchmark. docs/adding_an_op.md is the recipe this follows.
//
// The list, in the default preference:
//   builtin:blocked   our recursive Cholesky / LU / triangular solves on our
//                     GEMM kernels (f32, f64)
//   lapack:<routine>  OpenBLAS's LAPACK, every dtype
//   cublas:getrf_batched, cusolver:<routine>
//                     CUDA slots that backplane_cuda fills; cuda.
//                     preferred_linalg_library chooses among them (Note
//                     [Linalg library preference])
//   magma:any         listed so a "magma" preference explains itself; not built
//   ref:any           the unblocked reference, every routine and dtype
//
// Note [Linalg library preference]
// PyTorch's cuda.preferred_linalg_library is advisory: "default" lets
// PyTorch choose per routine (heuristics that pick MAGMA for some batched
// problems when MAGMA is built), "cusolver" and "magma" prefer a library
// where it implements the routine. MAGMA is not built here, so:
// "default" is cuBLAS's batched LU for batches (> 1) of square matrices
// smaller than 512 (PyTorch's rule for lu_factor) and cuSOLVER otherwise;
// "cusolver" moves the cuSOLVER rows first (looped cuSOLVER for every
// batch); "magma" finds its row not built and falls back to the default
// order, and explain says so.

#include <cmath>

#include "backplane/dispatch_checks.h"
#include "backplane_build_config.h"
#include "ops/common/cuda_slot.h"
#include "ops/linalg/checks_cuda.h"
#include "ops/linalg/entries.h"
#include "ops/linalg/params.h"
#include "ops/linalg/small.h"
#include "ops/sdpa/gemm_isa.h"

namespace bp::ops::linalg {
namespace {

// Signature dims: routine, batch, m, n, k. The FLOP counts of LAPACK's
// working notes, per matrix (complex: 4x).
double flops(const int64_t* d) {
  const auto r = static_cast<Routine>(d[0]);
  const double b = static_cast<double>(d[1]), m = static_cast<double>(d[2]), n = static_cast<double>(d[3]),
               k = static_cast<double>(d[4]);
  double f = 0;
  switch (r) {
    case Routine::potrf: f = n * n * n / 3; break;
    case Routine::potrs: f = 2 * n * n * k; break;
    case Routine::getrf: f = m * n * std::min(m, n) - (m + n) * std::pow(std::min(m, n), 2) / 2 +
                             std::pow(std::min(m, n), 3) / 3; break;
    case Routine::getrs: f = 2 * n * n * k; break;
    case Routine::gesv:
    case Routine::inv: f = 2 * n * n * n / 3 + 2 * n * n * k; break;
    case Routine::qr: f = 2 * m * n * n - 2 * n * n * n / 3; break;
    case Routine::eigh: f = 4 * n * n * n / 3; break;  // tridiagonalisation; vectors add about 2x
    case Routine::svd: f = 4 * m * n * n - 4 * n * n * n / 3; break;  // bidiagonalisation (m >= n)
    case Routine::lstsq: f = 2 * m * n * n - 2 * n * n * n / 3 + 4 * m * n * k; break;  // QR and its application
  }
  return b * std::max(f, 0.0);
}

std::vector<std::string> notes(const dispatch::Problem& p) {
  std::vector<std::string> out;
  const auto r = static_cast<Routine>(p.dims[0]);
  if (p.device.is_cpu())
    out.push_back("CPU order: builtin:blocked first for batches of tiny matrices and, with AVX-512 GEMM kernels, for "
                  "inv / solve / lu_solve of n >= 128; after the LAPACK rows otherwise (Note [Linalg CPU order])");
  if (p.device.is_cpu() && p.dtype == DType::f32 &&
      (r == Routine::potrf || r == Routine::getrf || r == Routine::gesv || r == Routine::inv ||
       r == Routine::potrs || r == Routine::getrs)) {
    const auto prec = precision::resolved(precision::Backend::mkldnn, precision::Op::matmul);
    out.push_back(prec == flags::Precision::bf16
                      ? "fp32 precision 'bf16' (\"medium\") permits bf16 operands: builtin:blocked runs its GEMM "
                        "updates on the AVX512_BF16 kernel where the CPU has it"
                      : "builtin:blocked runs its GEMM updates in fp32 (fp32 precision permits no bf16)");
  }
  if (p.device.is_cuda())
    out.push_back("cuda.preferred_linalg_library: 'default' takes cuBLAS's batched LU for batches of square "
                  "matrices smaller than 512 and cuSOLVER otherwise; 'cusolver' puts cuSOLVER first; MAGMA is "
                  "not built here");
  return out;
}

// Note [Linalg CPU order]
// builtin:blocked is listed first but ranks first only where it measured
// faster than OpenBLAS's LAPACK (bench/shapes/linalg, one thread, 2026-12):
// batches of tiny matrices (n <= 16, its unrolled path), and inv, solve and
// lu_solve from n = 128 up (its getri-style inverse and GEMM-bound solves)
// where its GEMM runs the AVX-512 kernels. With AVX2 at most (the CPU or the
// capability cap) OpenBLAS's Zen / Haswell kernels win those too (n = 1024
// float32 on Zen 3: solve 48 ms against 64, inv 50 against 53), so there
// the lapack rows come first for them as well.
// OpenBLAS's own potrf and getrf beat its Cholesky and LU, so for those the
// lapack rows come first; without OpenBLAS builtin:blocked still serves them.
int rank(const dispatch::Implementation& impl, const dispatch::Problem& p) {
  if (impl.name() != "builtin:blocked") return 1;  // a stable sort keeps the rest in list order
  const auto r = static_cast<Routine>(p.dims[0]);
  const int64_t n = p.dims[3];
  const bool tiny = n <= kSmallN && p.dims[2] == n;
  const kernels::cpu::GemmIsa isa = sdpa::pick_gemm_isa();
  const bool wide_gemm = isa == kernels::cpu::GemmIsa::avx512 || isa == kernels::cpu::GemmIsa::avx512_bf16;
  const bool gemm_bound =
      wide_gemm && (r == Routine::inv || r == Routine::gesv || r == Routine::getrs) && n >= 128;
  return tiny || gemm_bound ? 0 : 2;
}

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "linalg";
  c.signature = {"routine", "batch", "m", "n", "k"};
  c.flops = flops;
  c.preferred_library[static_cast<int>(DeviceType::cuda)] = flags::Id::cuda_preferred_linalg_library;
  c.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  c.notes = notes;
  c.rank = rank;
  return c;
}

std::unique_ptr<dispatch::Implementation> magma_row() {
  dispatch::Properties props;
  props.device = DeviceType::cuda;
  return std::make_unique<dispatch::Impl<Params>>(
      "magma:any", "magma", props, std::vector<dispatch::Check<Params>>{},
      [](const Params&) { throw_not_implemented("magma:any", "magma:any is not built"); },
      std::vector<flags::Id>{}, [] {
        return std::optional<dispatch::Availability>(dispatch::Availability{
            false, false, "not built: MAGMA is not part of Backplane (PyTorch's CUDA wheels carry it)"});
      });
}

// ---------------------------------------------------------------- shape form

// The function a bench line names by its first number.
struct Fn {
  const char* entry;
  bool positive_definite, rhs;
};
constexpr Fn kFns[] = {{"linalg.cholesky", true, false}, {"linalg.inv", false, false},
                       {"linalg.solve", false, true},    {"linalg.lu_factor", false, false},
                       {"linalg.qr", false, false},      {"linalg.eigh", true, false},
                       {"linalg.svd", false, false},     {"linalg.det", false, false}};
constexpr int64_t kFnCount = sizeof(kFns) / sizeof(kFns[0]);

const Fn& fn_of(const std::vector<int64_t>& d) { return kFns[std::clamp<int64_t>(d[0], 0, kFnCount - 1)]; }

// A well-conditioned problem: uniform values plus n on the diagonal (Hermitian for cholesky and eigh).
Tensor problem_matrix(const Fn& fn, int64_t n, int64_t batch, DType dtype, Device device, bool random) {
  Shape shape;
  if (batch > 1) shape.push_back(batch);
  shape.insert(shape.end(), {n, n});
  Tensor a = random ? random_tensor(shape, dtype, 1) : Tensor::zeros(shape, dtype);
  if (dtype != DType::f32 && dtype != DType::f64) return a.to(device);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* x = a.data_ptr<T>();
      for (int64_t b = 0; b < std::max<int64_t>(batch, 1); ++b) {
        T* m = x + b * n * n;
        for (int64_t i = 0; i < n; ++i) {
          if (fn.positive_definite)
            for (int64_t j = 0; j < i; ++j) m[j * n + i] = m[i * n + j];
          m[i * n + i] += static_cast<T>(n);
        }
      }
    }
  });
  return a.to(device);
}

Form form() {
  Form f;
  f.entry = "linalg.cholesky";
  f.dims = {{"fn", 0, "0 cholesky, 1 inv, 2 solve, 3 lu_factor, 4 qr, 5 eigh, 6 svd, 7 det", 0},
            {"n", 256, "matrix size"},
            {"batch", 1, "matrices per call (1: one 2-D matrix)"}};
  f.line_dims = 3;
  f.entry_of = [](const std::vector<int64_t>& d) { return std::string(fn_of(d).entry); };
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    // linalg has no 16-bit dtypes (PyTorch refuses them): a 16-bit request measures float32.
    if (dtype == DType::f16 || dtype == DType::bf16) dtype = DType::f32;
    const Fn& fn = fn_of(d);
    std::vector<std::pair<std::string, ArgValue>> args{{"A", problem_matrix(fn, d[1], d[2], dtype, device, random)}};
    if (fn.rhs) {
      Shape shape;
      if (d[2] > 1) shape.push_back(d[2]);
      shape.insert(shape.end(), {d[1], d[1]});
      args.emplace_back("B", (random ? random_tensor(shape, dtype, 2) : Tensor::zeros(shape, dtype)).to(device));
    }
    return args;
  };
  return f;
}

}  // namespace

dispatch::Op& linalg_op() {
  static dispatch::Op& op = dispatch_op("linalg");
  return op;
}

OpSpec spec() {
  OpSpec s;
  s.config = config();
  s.implementations.push_back(make_blocked());
#if BP_HAVE_OPENBLAS
  for (auto& impl : make_lapack()) s.implementations.push_back(std::move(impl));
#else
  for (const char* name : {"lapack:potrf", "lapack:getrf", "lapack:geqrf", "lapack:syevd", "lapack:gesdd", "lapack:gels"})
    s.implementations.push_back(dispatch::not_built(name, "openblas", "OpenBLAS (and its LAPACK) was not found at "
                                                                      "configure time"));
#endif
  for (auto& impl : cuda_checks::cuda_slots()) s.implementations.push_back(std::move(impl));
  s.implementations.push_back(magma_row());
  s.implementations.push_back(make_ref());  // the reference, last
  s.entries = factor_entries();
  for (EntrySpec& e : spectral_entries()) s.entries.push_back(std::move(e));
  s.form = form();
  s.bench.peer_libraries = {"openblas"};
  s.bench.peer_text = "OpenBLAS's LAPACK through lapack:<routine>";
  return s;
}

}  // namespace bp::ops::linalg
