// The op "matmul" (also serving addmm and linear), declared once
// (backplane/op_spec.h): its one ordered list, its entries and its shape
// form.
//
// The order is the default preference (first acceptable wins unless a
// library is preferred or autotuning is on): our own kernels from the widest
// ISA down, then the CPU libraries, then the CUDA libraries (slots that
// backplane_cuda fills; cuBLAS first, PyTorch's default, and
// preferred_blas_library("cublaslt") moves cuBLASLt ahead), then the
// reference, which accepts every valid CPU problem.

#include "backends/onednn/onednn_bf16.h"
#include "backplane/op_spec.h"
#include "backplane/precision.h"
#include "backplane_build_config.h"
#include "ops/common/cuda_slot.h"
#include "ops/matmul/checks_cuda.h"
#include "ops/matmul/front.h"
#include "ops/matmul/impls.h"
#include "ops/matmul/order.h"

namespace bp::ops::matmul {
namespace {

std::vector<std::string> explain_notes(const dispatch::Problem& p) {
  std::vector<std::string> notes;
  if (!p.device.is_cpu()) return notes;
  notes.push_back(default_order_note(p));
  if (p.dtype != DType::f32) return notes;
  const auto prec = precision::resolved(precision::Backend::mkldnn, precision::Op::matmul);
  if (prec == flags::Precision::tf32)
    notes.push_back("fp32 precision 'tf32' (\"high\") permits TF32, which no CPU has: CPU implementations stay "
                    "exact (fp32 arithmetic)");
  else if (prec == flags::Precision::bf16) {
    // Name only those that can use it on this machine: a permission is no promise.
    std::string users;
    if (kernels::cpu::gemm_isa_supported(kernels::cpu::GemmIsa::avx512_bf16)) users = "builtin:avx512_bf16";
    if (backends::onednn::built_with_bf16()) users += std::string(users.empty() ? "" : " and ") + "onednn:matmul";
    notes.push_back(users.empty()
                        ? "fp32 precision 'bf16' (\"medium\") permits bf16 operands, but nothing here can use it (this "
                          "CPU has no AVX512_BF16 and its oneDNN no bf16): every implementation computes in fp32"
                        : "fp32 precision 'bf16' (\"medium\") permits bf16 operands with fp32 accumulation: " + users +
                              " use it, the others stay exact");
  }
  else
    notes.push_back("fp32 precision permits no reduced arithmetic (\"highest\"): every implementation computes in "
                    "fp32");
  return notes;
}

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "matmul";
  c.signature = {"batch", "m", "n", "k"};
  c.flops = [](const int64_t* d) { return 2.0 * double(d[0]) * double(d[1]) * double(d[2]) * double(d[3]); };
  c.preferred_library[static_cast<int>(DeviceType::cpu)] = flags::Id::cpu_preferred_blas_library;
  c.preferred_library[static_cast<int>(DeviceType::cuda)] = flags::Id::cuda_preferred_blas_library;
  c.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  c.notes = explain_notes;
  c.rank = default_rank;  // Note [Matmul default order]
  return c;
}

std::vector<std::unique_ptr<dispatch::Implementation>> implementations() {
  using kernels::cpu::GemmIsa;
  std::vector<std::unique_ptr<dispatch::Implementation>> list;
  list.push_back(make_builtin(GemmIsa::avx512_bf16));
  list.push_back(make_builtin(GemmIsa::avx512));
  list.push_back(make_builtin(GemmIsa::avx2));
  list.push_back(make_builtin(GemmIsa::generic));
#if BP_HAVE_OPENBLAS
  list.push_back(make_openblas_gemm());
#else
  list.push_back(dispatch::not_built("openblas:gemm", "openblas", "OpenBLAS was not found at configure time"));
#endif
#if BP_HAVE_ONEDNN
  list.push_back(make_onednn_matmul());
#else
  list.push_back(dispatch::not_built("onednn:matmul", "onednn", "oneDNN was not found at configure time"));
#endif
  list.push_back(make_cuda_slot("cublas:gemm", "cublas", false));
  list.push_back(make_cuda_slot("cublaslt:gemm", "cublaslt", true));
  list.push_back(make_ref());
  return list;
}

Tensor operand(const std::vector<int64_t>& lead, int64_t rows, int64_t cols, DType dtype, Device device, bool random,
               unsigned seed) {
  Shape shape(lead.begin(), lead.end());
  shape.insert(shape.end(), {rows, cols});
  return random ? random_tensor(shape, dtype, seed, device) : Tensor::zeros(shape, dtype).to(device);
}

Form form() {
  Form f;
  f.entry = "matmul";
  f.dims = {{"m", 64, "rows of a"}, {"n", 64, "columns of b"}, {"k", 64, "the inner dimension"},
            {"batch", 0, "batch size (0: plain 2-D operands)"}};
  f.line_dims = 3;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    const std::vector<int64_t> lead = d[3] > 0 ? std::vector<int64_t>{d[3]} : std::vector<int64_t>{};
    return std::vector<std::pair<std::string, ArgValue>>{
        {"a", operand(lead, d[0], d[2], dtype, device, random, 1)},
        {"b", operand(lead, d[2], d[1], dtype, device, random, 2)}};
  };
  return f;
}

std::vector<EntrySpec> entries() {
  EntrySpec mm;
  mm.name = "matmul";
  mm.python = "backplane.matmul";
  mm.doc = "a @ b with torch.matmul semantics (1-D and N-D, batch broadcasting).";
  mm.args = {arg::tensor("a"), arg::tensor("b")};
  mm.prepare = [](const Args& a) { return prepare_matmul(a.tensor("a"), a.tensor("b")); };

  EntrySpec addmm;
  addmm.name = "addmm";
  addmm.python = "backplane.addmm";
  addmm.doc = "beta * bias + alpha * (a @ b); a and b 2-D, bias broadcastable to the product.";
  addmm.args = {arg::tensor("bias"), arg::tensor("a"), arg::tensor("b"), arg::keyword_only(arg::real("beta", 1.0)),
                arg::keyword_only(arg::real("alpha", 1.0))};
  addmm.prepare = [](const Args& a) {
    return prepare_addmm(a.tensor("bias"), a.tensor("a"), a.tensor("b"), a.real("beta"), a.real("alpha"));
  };

  EntrySpec linear;
  linear.name = "linear";
  linear.python = "backplane.nn.functional.linear";  // torch.nn.functional.linear
  linear.python_aliases = {"backplane.linear"};
  linear.doc = "input @ weight.T (+ bias): weight is [out_features, in_features].";
  linear.args = {arg::tensor("input"), arg::tensor("weight"), arg::optional_tensor("bias")};
  linear.prepare = [](const Args& a) {
    return prepare_linear(a.tensor("input"), a.tensor("weight"), a.tensor("bias"));
  };
  return {mm, addmm, linear};
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_cuda_slot(const char* name, const char* backend, bool lt) {
  dispatch::Properties props;
  props.reduced = dispatch::kTf32 | dispatch::kFp16Accumulation;
  props.workspace =
      lt ? "the cuBLASLt workspace (cublaslt_workspace_size)" : "the cuBLAS workspace (cublas_workspace_size)";
  return cuda_slot<Params>(name, backend, props, cuda_checks::gemm_checks(lt), cuda_checks::gemm_run_flags());
}

dispatch::Op& matmul_op() {
  static dispatch::Op& op = dispatch_op("matmul");
  return op;
}

OpSpec spec() {
  OpSpec s;
  s.config = config();
  s.implementations = implementations();
  s.entries = entries();
  s.form = form();
  s.bench.peer_libraries = {"openblas", "onednn"};
  s.bench.peer_text = "OpenBLAS/oneDNN";
  s.bench.extras_title = "dispatch overhead (1x1x1, warm)";
  s.bench.extras = dispatch_overhead;
  return s;
}

}  // namespace bp::ops::matmul
