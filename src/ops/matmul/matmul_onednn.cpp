// onednn:matmul: oneDNN's matmul primitive on strided memory descriptors
// (transposed views are strides, not copies), fp32 or bf16 operands, fp32
// result; alpha is an output scale, a bias goes in as a sum post-op over the
// prepared C.
//
// Under the "bf16" fp32 precision permission (set_float32_matmul_precision
// ("medium")), f32 operands are rounded to bf16 here and multiplied by a
// bf16 x bf16 -> f32 primitive: oneDNN 2.6's bf16 fpmath mode does not change
// f32 matmuls on this CPU, so the permission is applied by hand.
// Primitives are cached per shape, strides, dtype and attributes (creating one
// costs far more than running a small one). Compiled only with oneDNN.

#include <oneapi/dnnl/dnnl.hpp>

#include <mutex>
#include <unordered_map>

#include "backends/onednn/onednn_bf16.h"
#include "backplane/runtime.h"
#include "ops/matmul/checks.h"
#include "backplane/dispatch_checks.h"
#include "backplane/precision.h"
#include "ops/matmul/impls.h"

namespace bp::ops::matmul {
namespace {

using dnnl::memory;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// The thread count is part of the key: oneDNN's OpenMP build splits the work
// when the primitive is created, for the threads it sees then, and keeps that
// split (a primitive made under 1 thread runs on 1 thread forever).
struct PrimitiveKey {
  int64_t m, n, k, a_rs, a_cs, b_rs, b_cs, ldc, threads;
  memory::data_type src;
  float alpha;
  bool sum;
  bool operator==(const PrimitiveKey&) const = default;
};
struct PrimitiveKeyHash {
  std::size_t operator()(const PrimitiveKey& k) const {
    std::size_t h = 0;
    for (int64_t v : {k.m, k.n, k.k, k.a_rs, k.a_cs, k.b_rs, k.b_cs, k.ldc, k.threads, static_cast<int64_t>(k.src)})
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h ^ std::hash<float>()(k.alpha) ^ (k.sum ? 0x9e3779b9u : 0u);
  }
};

// The memory descriptors are given in full (strides included), so the
// primitive takes exactly these layouts and never reorders.
memory::desc a_desc(const PrimitiveKey& key) { return {{key.m, key.k}, key.src, memory::dims{key.a_rs, key.a_cs}}; }
memory::desc b_desc(const PrimitiveKey& key) { return {{key.k, key.n}, key.src, memory::dims{key.b_rs, key.b_cs}}; }
memory::desc c_desc(const PrimitiveKey& key) {
  return {{key.m, key.n}, memory::data_type::f32, memory::dims{key.ldc, 1}};
}

dnnl::matmul make_primitive(const PrimitiveKey& key) {
  const memory::desc a = a_desc(key), b = b_desc(key), c = c_desc(key);
  dnnl::primitive_attr attr;
  if (key.alpha != 1.0f) attr.set_output_scales(0, {key.alpha});
  if (key.sum) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  return dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, engine()));
}

dnnl::matmul primitive(const PrimitiveKey& key) {
  static std::mutex mutex;
  static std::unordered_map<PrimitiveKey, dnnl::matmul, PrimitiveKeyHash> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();  // bounded: shapes of a long-running process vary
  return cache.emplace(key, make_primitive(key)).first->second;
}

// Copies a strided f32 matrix into a dense row-major bf16 one.
void round_to_bf16(const float* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, uint16_t* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = bfloat16_from_float(src[i * rs + j * cs]).bits;
}

void run_onednn(const Params& p) {
  // The bf16 permission is not a check (oneDNN takes f32 either way) but a
  // choice of arithmetic, so the run reads the precision tree (run_reads).
  // Where oneDNN has no bf16 the permission goes unused: f32 stays f32.
  const bool to_bf16 = p.dtype == DType::f32 && backends::onednn::has_bf16() &&
                       precision::resolved(precision::Backend::mkldnn, precision::Op::matmul) == flags::Precision::bf16;
  StoragePtr staging;
  uint16_t *a16 = nullptr, *b16 = nullptr;
  if (to_bf16) {
    staging = allocate_storage(Device::cpu(), static_cast<std::size_t>(p.m * p.k + p.k * p.n) * sizeof(uint16_t));
    a16 = static_cast<uint16_t*>(staging->data());
    b16 = a16 + p.m * p.k;
  }
  dnnl::stream stream(engine());
  try {
    for_each_gemm(p, [&](const Gemm2D& g) {
      const void* a = g.a;
      const void* b = g.b;
      PrimitiveKey key{p.m, p.n, p.k, g.a_rs, g.a_cs, g.b_rs, g.b_cs, g.ldc, get_num_threads(),
                       p.dtype == DType::f32 && !to_bf16 ? memory::data_type::f32 : memory::data_type::bf16,
                       static_cast<float>(g.alpha), g.beta != 0.0};
      if (to_bf16) {
        round_to_bf16(static_cast<const float*>(g.a), p.m, p.k, g.a_rs, g.a_cs, a16);
        round_to_bf16(static_cast<const float*>(g.b), p.k, p.n, g.b_rs, g.b_cs, b16);
        a = a16, b = b16;
        key.a_rs = p.k, key.a_cs = 1, key.b_rs = p.n, key.b_cs = 1;
      }
      const dnnl::matmul prim = primitive(key);
      memory am(a_desc(key), engine(), const_cast<void*>(a));
      memory bm(b_desc(key), engine(), const_cast<void*>(b));
      memory cm(c_desc(key), engine(), g.c);
      prim.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      stream.wait();
    }, kernels::cpu::GemmIsa::avx512);  // oneDNN picks its own ISA too: the widest the hardware has
  } catch (const dnnl::error& e) {
    throw_runtime("onednn:matmul", std::string("oneDNN failed: ") + e.what());
  }
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_onednn_matmul() {
  dispatch::Properties props;
  props.reduced = dispatch::kBf16;
  props.workspace = "A and B as bf16 under the bf16 precision permission";
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(enabled<Params>(flags::Id::mkldnn_enabled));
  list.push_back(dtype_in<Params>({DType::f32, DType::bf16}));
  list.push_back(backends::onednn::bf16_support_check<Params>());
  list.push_back({"layout", checks::blas_layout});
  return std::make_unique<dispatch::Impl<Params>>("onednn:matmul", "onednn", props, std::move(list), run_onednn,
                                                  precision::path(precision::Backend::mkldnn, precision::Op::matmul));
}

}  // namespace bp::ops::matmul
