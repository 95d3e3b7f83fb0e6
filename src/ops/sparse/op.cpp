// The op "sparse": products with a 2:4 semi-structured weight, declared
// once (backplane/op_spec.h): its one ordered list, its entries and its
// shape form.
//
// The order is the default preference: cuSPARSELt on CUDA (a slot that
// backplane_cuda fills), our AVX-512 kernel on the compressed form, our
// AVX2 one (for CPUs without AVX-512, or a capability capped at AVX2), the
// dense fallback (decompress, then the matmul dispatcher; every CPU), the
// reference.
// The Python face (backplane.sparse, python/backplane/sparse.py) routes
// backplane.matmul / nn.functional.linear here when the weight is a
// SparseSemiStructuredTensor.

#include "backplane/op_spec.h"
#include "backplane/precision.h"
#include "backplane_build_config.h"
#include "kernels/cpu/sparse24.h"
#include "ops/common/cuda_slot.h"
#include "ops/sparse/checks_cuda.h"
#include "ops/sparse/front.h"
#include "ops/sparse/impls.h"
#include "ops/sparse/layout.h"

namespace bp::ops::sparse {
namespace {

std::vector<std::string> explain_notes(const dispatch::Problem& p) {
  std::vector<std::string> notes;
  notes.push_back("GFLOP/s count the dense product (2 * out * in * n), so sparse and dense rows compare directly");
  if (p.device.is_cuda()) {
    notes.push_back("cusparselt:spmma: the weight is compressed into cuSPARSELt's form once (keyed by its packed "
                    "and meta storages); cudnn.benchmark times algorithm ids 0..max once per problem, else alg 0");
    if (p.dtype == DType::f32)
      notes.push_back("float32 runs in TF32 on sparse tensor cores with a 1:2 structure (each pair of columns "
                      "holds at most one nonzero)");
    if (p.dtype == DType::i8) notes.push_back("int8: int32 accumulation, an int8 output");
  }
  if (!p.device.is_cpu()) return notes;
  const bool bf16_hw = kernels::cpu::sparse24_supported(true);
  const bool medium =
      precision::resolved(precision::Backend::mkldnn, precision::Op::matmul) == flags::Precision::bf16;
  if (p.dtype == DType::bf16)
    notes.push_back(bf16_hw ? "sparse24:cpu multiplies bf16 pairs with AVX512_BF16 (fp32 accumulation)"
                            : "sparse24:cpu widens bf16 to fp32 (this CPU lacks AVX512_BF16)");
  else if (p.dtype == DType::f32)
    notes.push_back(medium && bf16_hw
                        ? "fp32 precision 'bf16' (\"medium\") permits bf16 operands: sparse24:cpu multiplies in bf16 "
                          "with fp32 accumulation"
                        : "sparse24:cpu computes in fp32 (bf16 arithmetic needs the \"medium\" fp32 precision of "
                          "mkldnn.matmul and AVX512_BF16)");
  else if (p.dtype == DType::f16)
    notes.push_back("sparse24:cpu widens float16 to fp32");
  if (p.dtype != DType::f64)
    notes.push_back("sparse24:avx2 computes in fp32, widening bf16 and float16 as it loads them, whatever the fp32 "
                    "precision (AVX2 has no bf16 dot product)");
  return notes;
}

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "sparse";
  c.signature = {"out", "in", "n"};
  c.flops = [](const int64_t* d) { return 2.0 * double(d[0]) * double(d[1]) * double(d[2]); };
  c.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  // On CUDA, cudnn.benchmark (as conv): cusparselt:spmma, the one CUDA row,
  // times cuSPARSELt's algorithm ids once per problem through the autotune cache.
  c.autotune[static_cast<int>(DeviceType::cuda)] =
      dispatch::AutotuneFlags{flags::Id::cudnn_benchmark, flags::Id::cudnn_benchmark_limit};
  c.notes = explain_notes;
  return c;
}

// Declared in every build, as conv's cudnn:conv is, so its checks and the
// flags its run reads are the same everywhere (docs/flags.md is generated
// from them); a build without CUDA or without cuSPARSELt leaves it unfilled,
// and explain says which (cuda_slot; src/cuda/sparse_spmma.cpp).
std::unique_ptr<dispatch::Implementation> make_spmma_slot() {
  dispatch::Properties props;
  props.deterministic = false;  // split-k algorithms may reduce in any order
  props.workspace = "cuSPARSELt's matmul workspace; the weight in cuSPARSELt's compressed form, made once per weight";
  // The run's algorithm search reads cudnn.benchmark / benchmark_limit (src/cuda/sparse_spmma.cpp).
  return cuda_slot<Params>("cusparselt:spmma", "cusparselt", props, cuda_checks::spmma_checks(),
                           cuda_checks::spmma_run_flags());
}

std::vector<std::unique_ptr<dispatch::Implementation>> implementations() {
  std::vector<std::unique_ptr<dispatch::Implementation>> list;
  list.push_back(make_spmma_slot());
  list.push_back(make_sparse24_cpu());
  list.push_back(make_sparse24_avx2());
  list.push_back(make_dense());
  list.push_back(make_ref());
  return list;
}

Form form() {
  Form f;
  f.entry = "sparse_linear";
  f.dims = {{"out", 64, "rows of the weight (out_features)"},
            {"in", 64, "columns of the weight (in_features)"},
            {"n", 64, "rows of the input (activations)"}};
  f.line_dims = 3;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    const Tensor dense = random ? random_tensor({d[0], d[1]}, dtype, 3) : Tensor::zeros({d[0], d[1]}, dtype);
    const Compressed w = compress(prune(dense, "sparse form"), "sparse form");
    const Tensor x = random ? random_tensor({d[2], d[1]}, dtype, 4) : Tensor::zeros({d[2], d[1]}, dtype);
    return std::vector<std::pair<std::string, ArgValue>>{
        {"input", x.to(device)}, {"values", w.values.to(device)}, {"meta", w.meta.to(device)}};
  };
  return f;
}

std::vector<EntrySpec> entries() {
  EntrySpec linear;
  linear.name = "sparse_linear";
  linear.python = "backplane.sparse.semi_structured_linear";
  linear.doc = "input @ W.T (+ bias) for a 2:4 weight W given as its compressed values and meta "
               "(SparseSemiStructuredTensor.packed / .meta); backplane.nn.functional.linear(input, w) with a "
               "SparseSemiStructuredTensor w calls it.";
  linear.args = {arg::tensor("input"), arg::tensor("values"), arg::tensor("meta"), arg::optional_tensor("bias")};
  linear.prepare = [](const Args& a) {
    return prepare_linear(a.tensor("input"), a.tensor("values"), a.tensor("meta"), a.tensor("bias"));
  };

  EntrySpec mm;
  mm.name = "sparse_mm";
  mm.python = "backplane.sparse.semi_structured_mm";
  mm.doc = "W @ b for a 2:4 weight W given as its compressed values and meta, b 2-D [in, m]; "
           "backplane.matmul(w, b) with a SparseSemiStructuredTensor w calls it.";
  mm.args = {arg::tensor("values"), arg::tensor("meta"), arg::tensor("b")};
  mm.prepare = [](const Args& a) { return prepare_mm(a.tensor("values"), a.tensor("meta"), a.tensor("b")); };
  return {linear, mm};
}

}  // namespace

OpSpec spec() {
  OpSpec s;
  s.config = config();
  s.implementations = implementations();
  s.entries = entries();
  s.form = form();
  s.bench.peer_libraries = {"dense"};
  s.bench.peer_text = "dense:matmul (decompress + our dense GEMM)";
  return s;
}

}  // namespace bp::ops::sparse
