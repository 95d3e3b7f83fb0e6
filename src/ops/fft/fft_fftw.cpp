// fftw:dft: every transform kind through FFTW's guru64 interface, which
// takes the input's strides as they are (batched and strided views are
// never copied; only a c2r input is, because FFTW overwrites it), with
// fftwf for complex64 and fftw for complex128.
//
// Note [FFTW plans]
// A plan is made once per problem description and kept in
// backends.cpu.fft_plan_cache, keyed by (kind, sign, precision, sizes and
// strides of the transform and batch dims, planning effort, threads, the
// arrays' alignment): everything FFTW's new-array execute functions require
// to be equal between planning and execution (FFTW manual, "New-array
// Execute Functions"). Planning and destroying plans hold FFTW's planner
// lock (backends/fftw/fftw_planner.h); execution does not, so calls from
// several threads run in parallel. With effort "estimate" (the default)
// FFTW does not touch the arrays while planning, so the call's own arrays
// are used; "measure" and "patient" time candidate plans on the arrays, so
// they plan on scratch arrays of the same extent and alignment.

#include <fftw3.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdlib>
#include <cstring>

#include "backends/fftw/fftw_planner.h"
#include "backplane/backends/fft_plan_cache.h"
#include "backplane/dispatch_checks.h"
#include "backplane/log.h"
#include "backplane/runtime.h"
#include "core/tensor_internal.h"
#include "ops/fft/fftw_plan.h"
#include "ops/fft/params.h"

namespace bp::ops::fft {
namespace fftw_detail {
namespace {

using Clock = std::chrono::steady_clock;

// Below this many output elements a transform runs on one thread: FFTW's
// threads cost more than they save on small problems.
constexpr int64_t kThreadedElements = int64_t{1} << 16;

unsigned effort_flag(int64_t effort) {
  switch (static_cast<flags::FftPlanningEffort>(effort)) {
    case flags::FftPlanningEffort::Measure: return FFTW_MEASURE;
    case flags::FftPlanningEffort::Patient: return FFTW_PATIENT;
    case flags::FftPlanningEffort::Estimate: break;
  }
  return FFTW_ESTIMATE;
}

int alignment_of(bool single, const void* p) {
  return single ? fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p)))
                : fftw_alignment_of(static_cast<double*>(const_cast<void*>(p)));
}

// Bytes the C heap holds now (to measure what the planner keeps).
int64_t heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

template <class Dim>
std::vector<Dim> to_fftw(const std::vector<Iodim>& dims) {
  std::vector<Dim> out;
  for (const Iodim& d : dims) out.push_back(Dim{static_cast<ptrdiff_t>(d.n), static_cast<ptrdiff_t>(d.is), static_cast<ptrdiff_t>(d.os)});
  return out;
}

// FFTW's API of one precision: fftwf_* (Single) or fftw_*.
template <bool Single> struct Api;
#define BP_FFTW_API(SINGLE, PREFIX, REAL)                           \
  template <> struct Api<SINGLE> {                                  \
    using Plan = PREFIX##_plan;                                     \
    using Complex = PREFIX##_complex;                               \
    using Real = REAL;                                              \
    using Dim = PREFIX##_iodim64;                                   \
    static constexpr auto with_nthreads = &PREFIX##_plan_with_nthreads; \
    static constexpr auto plan_c2c = &PREFIX##_plan_guru64_dft;     \
    static constexpr auto plan_r2c = &PREFIX##_plan_guru64_dft_r2c; \
    static constexpr auto plan_c2r = &PREFIX##_plan_guru64_dft_c2r; \
    static constexpr auto exec_c2c = &PREFIX##_execute_dft;         \
    static constexpr auto exec_r2c = &PREFIX##_execute_dft_r2c;     \
    static constexpr auto exec_c2r = &PREFIX##_execute_dft_c2r;     \
    static constexpr auto destroy = &PREFIX##_destroy_plan;         \
  };
BP_FFTW_API(true, fftwf, float)
BP_FFTW_API(false, fftw, double)
#undef BP_FFTW_API

template <bool Single>
void* plan_in(const Guru& g, void* in, void* out) {
  using A = Api<Single>;
  using C = typename A::Complex;
  using R = typename A::Real;
  const unsigned flags = g.effort | (g.kind == Kind::c2r ? FFTW_DESTROY_INPUT : 0u);
  const int rank = static_cast<int>(g.dims.size()), hrank = static_cast<int>(g.howmany.size());
  if (backends::fftw::threads_ready(Single)) A::with_nthreads(g.threads);
  const auto dims = to_fftw<typename A::Dim>(g.dims);
  const auto many = to_fftw<typename A::Dim>(g.howmany);
  switch (g.kind) {
    case Kind::c2c:
      return A::plan_c2c(rank, dims.data(), hrank, many.data(), static_cast<C*>(in), static_cast<C*>(out), g.sign, flags);
    case Kind::r2c:
      return A::plan_r2c(rank, dims.data(), hrank, many.data(), static_cast<R*>(in), static_cast<C*>(out), flags);
    case Kind::c2r:
      return A::plan_c2r(rank, dims.data(), hrank, many.data(), static_cast<C*>(in), static_cast<R*>(out), flags);
  }
  return nullptr;
}

template <bool Single>
void execute_in(Kind kind, void* handle, void* in, void* out) {
  using A = Api<Single>;
  using C = typename A::Complex;
  using R = typename A::Real;
  const auto plan = static_cast<typename A::Plan>(handle);
  switch (kind) {
    case Kind::c2c: A::exec_c2c(plan, static_cast<C*>(in), static_cast<C*>(out)); return;
    case Kind::r2c: A::exec_r2c(plan, static_cast<R*>(in), static_cast<C*>(out)); return;
    case Kind::c2r: A::exec_c2r(plan, static_cast<C*>(in), static_cast<R*>(out)); return;
  }
}

// The FFTW plan for g on arrays in/out; nullptr when FFTW cannot plan it.
// planner_mutex() held.
void* plan_on(const Guru& g, void* in, void* out) {
  return g.single ? plan_in<true>(g, in, out) : plan_in<false>(g, in, out);
}

// Scratch memory covering a view of `shape`/`strides` with elements of
// `item` bytes, whose element 0 has FFTW alignment `align` (so a plan made
// on it executes on the real arrays).
struct Scratch {
  StoragePtr storage;
  void* element0 = nullptr;
};
Scratch scratch_for(const Shape& shape, const Shape& strides, int64_t item, int align) {
  const auto extent = detail::element_extent(shape, strides, "fft", item);
  const int64_t span = (extent.end - extent.lowest) * item;
  Scratch s;
  s.storage = allocate_storage(Device::cpu(), static_cast<std::size_t>(span + 64));
  char* base = static_cast<char*>(s.storage->data()) + align;
  std::memset(base, 0, static_cast<std::size_t>(span));
  s.element0 = base - extent.lowest * item;
  return s;
}

std::string dims_text(const std::vector<Iodim>& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i].n);
  return out + "]";
}

}  // namespace

std::string Guru::key() const {
  // The words gathered on the stack, then one copy into k.
  std::string k;
  int64_t words[8 + 3 * 2 * 32];
  std::size_t w = 0;
  auto put = [&](int64_t v) {
    if (w == std::size(words)) {  // a problem of more than 64 dims: let k grow
      k.append(reinterpret_cast<const char*>(words), w * sizeof(int64_t));
      w = 0;
    }
    words[w++] = v;
  };
  put(static_cast<int64_t>(kind)), put(single), put(sign), put(threads), put(effort), put(align_in), put(align_out);
  put(static_cast<int64_t>(dims.size()));
  for (const Iodim& d : dims) put(d.n), put(d.is), put(d.os);
  for (const Iodim& d : howmany) put(d.n), put(d.is), put(d.os);
  k.append(reinterpret_cast<const char*>(words), w * sizeof(int64_t));
  return k;
}

std::string Guru::text() const {
  std::string batch = howmany.empty() ? "" : " batch " + dims_text(howmany);
  return std::string(kind_name(kind)) + (kind == Kind::c2c ? (sign < 0 ? " forward" : " backward") : "") + " " +
         (single ? "single" : "double") + " " + dims_text(dims) + batch + ", " + std::to_string(threads) +
         " thread(s)";
}

// g := the problem of p whose input has strides `in_strides` and FFTW
// alignment align_in (g's vectors keep their memory).
void describe_into(const Params& p, const int64_t* in_strides, int align_in, int64_t effort, Guru& g) {
  g.kind = p.kind;
  g.single = !p.is_double();
  g.sign = p.forward ? FFTW_FORWARD : FFTW_BACKWARD;
  g.effort = effort_flag(effort);
  g.align_in = align_in;
  g.align_out = alignment_of(g.single, p.out.data());
  g.dims.clear();
  g.howmany.clear();
  const Shape& out_sizes = p.out.shape();
  const Shape& out_strides = p.out.strides();
  for (std::size_t i = 0; i < p.dims.size(); ++i)
    g.dims.push_back({p.n[i], in_strides[p.dims[i]], out_strides[static_cast<std::size_t>(p.dims[i])]});
  // The batch: the dims not transformed, in order (batch_dims(), without its vector).
  for (int64_t d = 0; d < static_cast<int64_t>(out_sizes.size()); ++d) {
    if (std::find(p.dims.begin(), p.dims.end(), d) != p.dims.end()) continue;
    const auto u = static_cast<std::size_t>(d);
    if (out_sizes[u] != 1) g.howmany.push_back({out_sizes[u], in_strides[d], out_strides[u]});
  }
  const bool threaded = backends::fftw::threads_linked() && p.out.numel() >= kThreadedElements;
  g.threads = threaded ? get_num_threads() : 1;
}

void describe_call_into(const Params& p, int64_t effort, Guru& g) {
  if (p.kind == Kind::c2r) {  // the input copy: dense, freshly allocated
    const Shape dense = contiguous_strides(p.in.shape());
    describe_into(p, dense.data(), 0, effort, g);
    return;
  }
  describe_into(p, p.in.strides().data(), alignment_of(!p.is_double(), p.in.data()), effort, g);
}

Guru describe_call(const Params& p, int64_t effort) {
  Guru g;
  describe_call_into(p, effort, g);
  return g;
}

Plan::~Plan() {
  std::lock_guard<std::mutex> lock(backends::fftw::planner_mutex());
  if (single) Api<true>::destroy(static_cast<Api<true>::Plan>(handle));
  else Api<false>::destroy(static_cast<Api<false>::Plan>(handle));
}

void Plan::execute(void* in, void* out) const {
  if (single) execute_in<true>(kind, handle, in, out);
  else execute_in<false>(kind, handle, in, out);
}

namespace {

// A plan of g on arrays in/out, planner_mutex() held; its handle is null
// when FFTW cannot plan it.
std::shared_ptr<Plan> raw_plan(const Guru& g, void* in, void* out) {
  auto plan = std::make_shared<Plan>();
  plan->kind = g.kind;
  plan->single = g.single;
  plan->threads = g.threads;
  plan->handle = plan_on(g, in, out);
  return plan;
}

// Whether g is planned as passes (Note [Buffered passes]).
bool wants_passes(const Guru& g) {
  if (g.kind != Kind::c2c || g.effort != FFTW_ESTIMATE) return false;
  for (const Iodim& d : g.dims)
    if (d.n > 1 && d.os != 1) return true;
  return false;
}

// The buffer's row length for lines of n points: padded by a cache line so
// that power-of-two lengths do not map every row to the same cache sets.
int64_t row_of(int64_t n) { return n + 8; }

// 64-byte aligned scratch (fftw_alignment_of 0, as the buffers plans were made on).
struct Aligned {
  void* p;
  explicit Aligned(std::size_t bytes) : p(std::aligned_alloc(64, (bytes + 63) / 64 * 64)) {
    if (p == nullptr) throw_runtime("fft", "fft: out of memory for a " + std::to_string(bytes) + "-byte buffer");
  }
  ~Aligned() { std::free(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
};

// The pass plans of g (Note [Buffered passes]); planner_mutex() held.
// False when FFTW cannot plan one of them.
bool plan_passes(const Guru& g, void* in, void* out, Plan& whole, std::vector<std::shared_ptr<Plan>>& made) {
  whole.passes_only = true;
  const Iodim* last = nullptr;
  for (const Iodim& d : g.dims)
    if (d.n > 1 && d.os == 1) last = &d;
  int64_t total = 1;
  for (const Iodim& d : g.dims) total *= d.n;
  for (const Iodim& d : g.howmany) total *= d.n;
  if (last != nullptr) {  // the first pass: along the output's rows, from the input
    Guru rows = g;
    rows.dims = {*last};
    rows.howmany = g.howmany;
    for (const Iodim& d : g.dims)
      if (&d != last && d.n > 1) rows.howmany.push_back(d);
    whole.handle = plan_on(rows, in, out);
    if (whole.handle == nullptr) return false;
  }
  const std::size_t item = g.single ? 8 : 16;
  for (const Iodim& d : g.dims) {
    if (d.n <= 1 || &d == last) continue;
    Pass pass;
    pass.n = d.n;
    pass.inner = d.os;  // the output is dense: a dim's stride is the product of the sizes after it
    pass.outer = total / (pass.n * pass.inner);
    const int64_t cols = std::min(kBlockColumns, pass.inner);
    Aligned buf(static_cast<std::size_t>(cols * row_of(pass.n)) * item);
    auto block_guru = [&](int64_t columns) {
      Guru b;
      b.kind = Kind::c2c;
      b.single = g.single;
      b.sign = g.sign;
      b.effort = g.effort;
      b.dims = {{pass.n, 1, 1}};
      b.howmany = {{columns, row_of(pass.n), row_of(pass.n)}};
      return b;
    };
    pass.block = raw_plan(block_guru(cols), buf.p, buf.p);
    made.push_back(pass.block);
    if (pass.inner % cols != 0) {
      pass.tail = raw_plan(block_guru(pass.inner % cols), buf.p, buf.p);
      made.push_back(pass.tail);
    }
    whole.passes.push_back(std::move(pass));
  }
  for (const auto& part : made)
    if (part->handle == nullptr) return false;
  return true;
}

template <class T>
void run_pass(const Pass& pass, T* data, int threads) {
  const int64_t cols = std::min(kBlockColumns, pass.inner);
  const int64_t blocks_per_outer = (pass.inner + cols - 1) / cols;
  const int64_t blocks = pass.outer * blocks_per_outer;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int64_t row = row_of(pass.n);
    Aligned buf(static_cast<std::size_t>(cols * row) * sizeof(T));
    T* b = static_cast<T*>(buf.p);
#pragma omp for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t o = blk / blocks_per_outer, i0 = (blk % blocks_per_outer) * cols;
      const int64_t width = std::min(cols, pass.inner - i0);
      T* base = data + o * pass.n * pass.inner + i0;
      for (int64_t k = 0; k < pass.n; ++k)
        for (int64_t c = 0; c < width; ++c) b[c * row + k] = base[k * pass.inner + c];
      (width == cols ? pass.block : pass.tail)->execute(b, b);
      for (int64_t k = 0; k < pass.n; ++k)
        for (int64_t c = 0; c < width; ++c) base[k * pass.inner + c] = b[c * row + k];
    }
  }
}

}  // namespace

void Plan::run(const Tensor& in, const Tensor& out) const {
  if (!passes_only) {
    execute(in.data(), out.data());
    return;
  }
  if (handle != nullptr) {
    execute(in.data(), out.data());
  } else {
    Tensor o = out;
    o.copy_from(in);
  }
  for (const Pass& pass : passes) {
    if (single) run_pass(pass, static_cast<std::complex<float>*>(out.data()), threads);
    else run_pass(pass, static_cast<std::complex<double>*>(out.data()), threads);
  }
}

backends::cpu::FftPlanCache::Made make_plan(const Guru& g, const Tensor& in, const Tensor& out) {
  const bool estimate = g.effort == FFTW_ESTIMATE;
  // Measuring plans write the arrays: they get scratch ones (Note [FFTW plans]).
  Scratch si, so;
  void* pin = in.data();
  void* pout = out.data();
  if (!estimate) {
    si = scratch_for(in.shape(), in.strides(), static_cast<int64_t>(in.itemsize()), g.align_in);
    so = scratch_for(out.shape(), out.strides(), static_cast<int64_t>(out.itemsize()), g.align_out);
    pin = si.element0;
    pout = so.element0;
  }
  auto plan = std::make_shared<Plan>();
  plan->kind = g.kind;
  plan->single = g.single;
  plan->threads = g.threads;
  // Sub-plans live outside the lock's scope: their destructors take it.
  std::vector<std::shared_ptr<Plan>> parts;
  bool ok = true;
  {
    std::lock_guard<std::mutex> lock(backends::fftw::planner_mutex());
    const auto t0 = Clock::now();
    // The first plan of a precision creates FFTW's planner (through its
    // threads' initialisation): counted in the planning time, not in the
    // plan's bytes (the planner's tables outlive every plan).
    (void)backends::fftw::threads_ready(g.single);
    const int64_t heap0 = heap_bytes();
    if (wants_passes(g)) {
      ok = plan_passes(g, pin, pout, *plan, parts);
    } else {
      plan->handle = plan_on(g, pin, pout);
      ok = plan->handle != nullptr;
    }
    plan->plan_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    // What the heap grew by while planning; at least the size of the
    // twiddle tables (one complex value per point of each transformed dim),
    // for when the heap cannot tell: another thread freed memory meanwhile,
    // or a sanitizer's allocator that mallinfo2 does not see.
    int64_t twiddles = 0;
    for (const Iodim& d : g.dims) twiddles += d.n * 2 * (g.single ? 4 : 8);
    plan->bytes = std::max<int64_t>(twiddles, heap_bytes() - heap0);
  }
  if (!ok)  // nothing to destroy: FFTW's destroy takes a null plan
    throw_runtime("fft", "fft: FFTW could not plan " + g.text() + " (fftw:dft)");
  return {std::static_pointer_cast<void>(plan), plan->bytes};
}

}  // namespace fftw_detail

namespace {

using namespace fftw_detail;

// Note [The last plan of a thread]
// A loop of calls on one problem looks its plan up again and again. Each
// thread keeps the problem description and the cache slot of its last call
// (Note [Plan cache slots] in backplane/plan_cache.h), all in memory it
// reuses: a call whose problem equals the last one's (compared field by
// field; the key string is built only when it differs) takes its plan from
// the slot (still a counted hit that moves the plan to the front of the LRU
// order) without allocating, hashing or searching. A stale slot
// (something was evicted or cleared since) falls back to the lookup. The
// key holds everything the plan depends on (effort, threads, alignment), so
// a changed flag or array alignment gives a different key.
struct LastPlan {
  Guru guru;        // this call's problem (the vectors' memory reused)
  Guru last_guru;   // the last call's, whose plan `slot` holds
  backends::cpu::FftPlanCache::Slot slot;
};

LastPlan& last_plan() {
  thread_local LastPlan last;
  return last;
}

void run(const Params& p) {
  const int64_t effort = flags::get_raw(flags::Id::cpu_fft_planning_effort);
  // FFTW's c2r overwrites its input: it gets a copy (conjugated for hfft).
  Tensor copy;
  if (p.kind == Kind::c2r) copy = complex_copy(p.in, p.dtype, p.conj_in);
  const Tensor& in = p.kind == Kind::c2r ? copy : p.in;
  const Tensor& out = p.out;
  LastPlan& last = last_plan();
  const Guru& g = last.guru;
  describe_call_into(p, effort, last.guru);
  auto& cache = backends::cpu::fft_plan_cache();
  bool cached = true;
  std::shared_ptr<Plan> plan;
  // The same problem as the last call: its key is the same too, so compare
  // the problems and skip building the key string.
  if (g == last.last_guru) plan = std::static_pointer_cast<Plan>(cache.hit(last.slot));
  if (!plan) {
    plan = std::static_pointer_cast<Plan>(
        cache.get_or_create_sized(g.key(), [&] { return make_plan(g, in, out); }, &cached, &last.slot));
    last.last_guru = g;
  }
  plan->run(in, out);
  scale_and_conj(out, p.scale, p.conj_out);
  if (!cached && flags::get_raw(flags::Id::generic_trace) != 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, " planned in %.3f ms (effort %s, %lld bytes); cpu.fft_plan_cache holds %zu",
                  plan->plan_ms, flags::format(flags::Id::cpu_fft_planning_effort, effort).c_str(),
                  static_cast<long long>(plan->bytes), cache.size());
    log::trace("plan fft: fftw:dft " + g.text() + buf);
  }
}

}  // namespace

std::vector<std::string> fftw_plan_notes(const Params& p) {
  if (!p.device.is_cpu() || p.out.numel() == 0 || p.dims.empty()) return {};
  const int64_t effort = flags::get_raw(flags::Id::cpu_fft_planning_effort);
  const std::string effort_text = "'" + flags::format(flags::Id::cpu_fft_planning_effort, effort) + "'";
  auto& cache = backends::cpu::fft_plan_cache();
  const Guru g = describe_call(p, effort);
  if (cache.max_size() == 0)
    return {"fftw:dft: cpu.fft_plan_cache.max_size = 0: every call plans anew (" + g.text() + ", effort " +
            effort_text + ") and keeps nothing"};
  if (const auto held = std::static_pointer_cast<Plan>(cache.peek(g.key()))) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f ms", held->plan_ms);
    return {"fftw:dft: the plan is cached in cpu.fft_plan_cache (" + g.text() + ", effort " + effort_text +
            ", planned in " + buf + ")"};
  }
  return {"fftw:dft: the plan is not cached: the first call plans it (" + g.text() + ", effort " + effort_text +
          ", cpu.fft_planning_effort) and keeps it in cpu.fft_plan_cache"};
}

void fftw_prewarm() {
  std::lock_guard<std::mutex> lock(backends::fftw::planner_mutex());
  backends::fftw::threads_ready_for_wisdom();  // both precisions
  fftwf_complex f[2] = {};
  fftwf_destroy_plan(fftwf_plan_dft_1d(2, f, f, FFTW_FORWARD, FFTW_ESTIMATE));
  fftw_complex d[2] = {};
  fftw_destroy_plan(fftw_plan_dft_1d(2, d, d, FFTW_FORWARD, FFTW_ESTIMATE));
}

std::unique_ptr<dispatch::Implementation> make_fftw() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::c64, DType::c128}));
  dispatch::Properties props;
  props.workspace = "the plan (cpu.fft_plan_cache); a copy of a c2r input";
  return std::make_unique<dispatch::Impl<Params>>("fftw:dft", "fftw", props, std::move(checks), run,
                                                  std::vector<flags::Id>{flags::Id::cpu_fft_planning_effort});
}

}  // namespace bp::ops::fft
