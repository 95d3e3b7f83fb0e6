// The op "fft", declared once (backplane/op_spec.h): its ordered list, the
// torch.fft entries of backplane.fft, its shape form and its benchmark.
// docs/adding_an_op.md is the recipe this follows.
//
// The list: fftw:dft (plans in backends.cpu.fft_plan_cache), native:stockham
// (Backplane's own FFT: what the CPU gets when FFTW is absent or excluded),
// cufft:dft (a CUDA slot that backplane_cuda fills; plans in
// cuda.cufft_plan_cache[i]), then the reference, ref:any, which accepts
// every valid CPU problem.

#include <bit>
#include <cmath>

#include "backplane/backends/cufft_plan_cache.h"
#include "backplane_build_config.h"
#include "ops/common/cuda_slot.h"
#include "ops/fft/checks_cuda.h"
#include "ops/fft/params.h"

namespace bp::ops::fft {
namespace {

// log2 of a transform's point count: free for powers of two (the usual
// sizes; every call computes its problem's FLOPs), libm's log2 otherwise.
double log2_points(double n) {
  const auto k = static_cast<uint64_t>(n);
  if (static_cast<double>(k) == n && std::has_single_bit(k)) return static_cast<double>(std::countr_zero(k));
  return std::log2(n);
}

// Signature dims: kind (0 c2c forward, 1 c2c backward, 2 r2c, 3 c2r), the
// batch, the rank, the first three signal sizes and a hash of the layout.
double flops(const int64_t* d) {
  double n = 1;
  for (int i = 3; i < 6; ++i)
    if (d[i] > 0) n *= static_cast<double>(d[i]);
  const double per = 5.0 * n * (n > 1 ? log2_points(n) : 0.0);
  return (d[0] >= 2 ? 0.5 : 1.0) * per * static_cast<double>(d[1]);
}

std::vector<std::string> call_notes(const dispatch::Problem& problem, const void* params) {
  const auto& p = *static_cast<const Params*>(params);
  std::vector<std::string> notes;
  if (p.device.is_cpu()) {
    notes = fftw_plan_notes(p);
    for (std::string& n : native_notes(p)) notes.push_back(std::move(n));
  } else if (p.device.is_cuda()) {
    try {
      const auto& cache = backends::cuda::cufft_plan_cache(p.device.index);
      notes.push_back("cufft:dft: cuda.cufft_plan_cache[" + std::to_string(p.device.index) + "] holds " +
                      std::to_string(cache.size()) + " plan(s) of at most " + std::to_string(cache.max_size()) +
                      " (" + std::to_string(cache.hits()) + " hits, " + std::to_string(cache.misses()) + " misses)");
    } catch (const Error&) {
    }
  }
  if (p.conj_in) notes.push_back(std::string(p.entry) + ": a c2r of the conjugated input (numpy's and torch's hfft)");
  if (p.conj_out) notes.push_back(std::string(p.entry) + ": the conjugate of an r2c (numpy's and torch's ihfft)");
  (void)problem;
  return notes;
}

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "fft";
  c.signature = {"kind", "batch", "rank", "n0", "n1", "n2", "key"};
  c.flops = flops;
  c.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  c.call_notes = call_notes;
  return c;
}

// Uniform random complex values (both parts in [-1, 1)).
Tensor random_complex(const Shape& shape, DType dtype, Device device) {
  Shape pairs = shape;
  pairs.push_back(2);
  const Tensor r = random_tensor(pairs, dtype == DType::c128 ? DType::f64 : DType::f32, 1);
  return Tensor::from_storage(r.storage(), shape, contiguous_strides(shape), 0, dtype).to(device);
}

// "batch rows n": a batch of rows x n 2-D transforms (rows = 1: 1-D
// transforms of n points; batch = 1: no batch dim). dtype float32 and
// float64 benchmark complex64 and complex128 inputs; float16 and bfloat16
// real ones (computed in float32).
Form form() {
  Form f;
  f.entry = "fftn";
  f.dims = {{"batch", 1, "transforms per call (1: no batch dim)"},
            {"rows", 1, "rows of a 2-D transform (1: 1-D transforms)"},
            {"n", 4096, "points per row"}};
  f.line_dims = 3;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    Shape shape;
    if (d[0] > 1) shape.push_back(d[0]);
    if (d[1] > 1) shape.push_back(d[1]);
    shape.push_back(d[2]);
    DType in = dtype == DType::f32 ? DType::c64 : dtype == DType::f64 ? DType::c128 : dtype;
    Tensor x = !random ? Tensor::zeros(shape, in).to(device)
               : is_complex(in) ? random_complex(shape, in, device)
                                : random_tensor(shape, in, 1, device);
    const std::vector<int64_t> dims = d[1] > 1 ? std::vector<int64_t>{-2, -1} : std::vector<int64_t>{-1};
    return std::vector<std::pair<std::string, ArgValue>>{{"input", x}, {"dim", dims}};
  };
  return f;
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_cufft_slot() {
  dispatch::Properties props;
  props.workspace = "the plan's work area (allocated through Backplane, counted in memory_stats)";
  return cuda_slot<Params>("cufft:dft", "cufft", props, cuda_checks::cufft_checks());
}

void prewarm() {
  for (const dispatch::Implementation* impl : fft_op().implementations())
    if (impl->properties().device == DeviceType::cpu) (void)impl->availability();
  fftw_prewarm();
}

OpSpec spec() {
  OpSpec s;
  s.config = config();
#if BP_HAVE_FFTW
  s.implementations.push_back(make_fftw());
#else
  s.implementations.push_back(dispatch::not_built("fftw:dft", "fftw", "FFTW was not found at configure time"));
#endif
  s.implementations.push_back(make_native());
  s.implementations.push_back(make_cufft_slot());
  s.implementations.push_back(make_ref());  // the reference, last
  s.entries = transform_entries();
  for (EntrySpec& e : helper_entries()) s.entries.push_back(std::move(e));
  s.form = form();
  s.bench.peer_libraries = {"fftw"};
  s.bench.peer_text = "FFTW through fftw:dft";
  s.bench.extras_title =
      "plan cached: one op call vs a bare FFTW execute of the same plan (us of thread CPU time, medians of 31 "
      "alternating batches; complex64, 1 thread)";
  s.bench.extras = bench_extras;
  return s;
}

}  // namespace bp::ops::fft
