// The fft front end: torch.fft's transform entries (fft, ifft, rfft, irfft,
// hfft, ihfft, their 2-D and N-D forms) resolved into one transform (Note
// [One transform] in params.h). Errors follow PyTorch's texts, naming the
// entry and the argument.

#include <algorithm>
#include <cmath>

#include "core/recycled.h"
#include "core/tensor_internal.h"
#include "ops/fft/params.h"

namespace bp::ops::fft {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::c2c: return "c2c";
    case Kind::r2c: return "r2c";
    case Kind::c2r: return "c2r";
  }
  return "?";
}

int64_t Params::signal_elements() const {
  int64_t total = 1;
  for (int64_t s : n) total *= s;
  return total;
}

int64_t Params::batch() const {
  // The product of out's sizes over the dims not transformed (batch_dims(), without its vector).
  int64_t b = 1;
  for (int64_t d = 0; d < out.ndim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) b *= out.size(d);
  return b;
}

dispatch::Op& fft_op() {
  static dispatch::Op& op = dispatch_op("fft");
  return op;
}

namespace {

enum class Norm { backward, ortho, forward };

// The order one_d() and n_d() declare their arguments in: prepare() reads
// them by position (Args::at), with no name lookups.
enum OneDArg : std::size_t { kOneDInput, kOneDN, kOneDDim, kOneDNorm };
enum NdArg : std::size_t { kNdInput, kNdS, kNdDim, kNdNorm };

// norm=None is "backward". The value is None or one of the choices checked
// when binding.
Norm parse_norm(const ArgValue& norm) {
  const auto* s = std::get_if<std::string>(&norm);
  if (s == nullptr) return Norm::backward;
  return *s == "ortho" ? Norm::ortho : *s == "forward" ? Norm::forward : Norm::backward;
}

// The factor of a transform over `elements` points: a forward transform is
// unscaled under "backward", an inverse one under "forward" (torch.fft's
// norm). hfft is a forward transform and ihfft an inverse one, whatever
// kind computes them.
double norm_scale(Norm norm, bool forward, int64_t elements) {
  const double n = static_cast<double>(elements);
  switch (norm) {
    case Norm::ortho: return 1.0 / std::sqrt(n);
    case Norm::backward: return forward ? 1.0 : 1.0 / n;
    case Norm::forward: return forward ? 1.0 / n : 1.0;
  }
  return 1.0;
}

// torch.fft computes integers and bools as the default float dtype (float32).
// f16 and bf16 are computed in float32 too (Backplane: PyTorch's CPU refuses
// them; docs/differences.md).
DType real_dtype_of(DType t) { return t == DType::f64 ? DType::f64 : DType::f32; }
DType complex_dtype_of(DType t) {
  if (is_complex(t)) return t;
  return t == DType::f64 ? DType::c128 : DType::c64;
}

std::string torch_dtype_name(DType t) {
  switch (t) {
    case DType::c64: return "ComplexFloat";
    case DType::c128: return "ComplexDouble";
    default: return dtype_name(t);
  }
}

[[noreturn]] void bad_points(const std::string& entry, int64_t n) {
  throw Error(ErrorKind::Runtime, entry + ": Invalid number of data points (" + std::to_string(n) + ") specified",
              entry, std::to_string(n), "a number of points >= 1");
}

// `view`, in place, with dim dims[i] of size sizes[i]: trimmed (a view) or
// zero-padded (a copy), for every dim at once so a padded input is copied
// once. When every size already matches (the usual call) the tensor is left
// as it is: no copy, no move.
void resize_to(Tensor& view, const Shape& dims, const Shape& sizes) {
  bool grow = false;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (sizes[i] < view.size(d)) view = view.slice(d, 0, sizes[i]);
    grow = grow || sizes[i] > view.size(d);
  }
  if (!grow) return;
  Shape target = view.shape();
  for (std::size_t i = 0; i < dims.size(); ++i) target[static_cast<std::size_t>(dims[i])] = sizes[i];
  // Zeros, then the kept region copied in (on the host for a device tensor:
  // the core has no device kernels).
  const Device device = view.device();
  Tensor host = device.is_cpu() ? view : view.to(Device::cpu());
  Tensor padded = Tensor::zeros(target, view.dtype());
  Tensor region = padded;
  for (int64_t d = 0; d < view.ndim(); ++d) region = region.slice(d, 0, view.size(d));
  region.copy_from(host);
  view = device.is_cpu() ? std::move(padded) : padded.to(device);
}

// The transform dims: wrapped, unique, in the order given, into `out`.
void wrap_dims_into(const char* entry, const std::vector<int64_t>& dims, int64_t ndim, Shape& out) {
  out.clear();
  out.reserve(dims.size());
  for (int64_t d : dims) {
    const int64_t w = detail::wrap_dim(d, ndim, entry, "dim");
    for (int64_t seen : out)
      if (seen == w) throw_bad_value(std::string(entry) + ": dim", "dims with " + std::to_string(w) + " repeated",
                                     "unique dims (FFT dims must be unique)");
    out.push_back(w);
  }
}

int64_t network_key(const Params& p) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (std::size_t i = 0; i < p.dims.size(); ++i) mix(p.dims[i]), mix(p.n[i]);
  for (int64_t s : p.in.shape()) mix(s);
  for (int64_t s : p.in.strides()) mix(s);
  return static_cast<int64_t>(h >> 2);
}

// Note [A lean transform call]
// A loop of cached transforms spends about as long in this front end as in
// the op's dispatch, and the issue bounds both together at a tenth of FFTW's
// execute (1-D 4096: ~0.4 us). So a call builds its Params in place, once:
// the entry's name, dims and sizes are written straight into the struct the
// implementations receive (no request struct copied into it), the tuple
// arguments are read where Args holds them, the output's shape is moved into
// the output tensor, and the input is copied once (into Params::in) and
// resized only when a size differs.
//
// What such a call costs is mostly not instructions but the cache lines it
// touches: FFTW's execute evicts L1 between calls, so every line of code and
// data the front end, dispatch and allocator touch is fetched again. Fewer
// of them is the lever (measured with callgrind: 370 -> 338 code lines, 5.7k
// -> 2.9k instructions per call outside FFTW): shapes held inline in the
// tensor (Note [Shapes without the heap]), arguments read by position
// (Args::at), the entry's name as a static pointer, no string built for an
// error that is not raised, the Call built in place, intra-library calls
// bound directly (-Bsymbolic-functions), thread-locals through TLS
// descriptors, and the Params and output storage blocks recycled per thread
// instead of a malloc and a free each (Note [Recycled call blocks]).

// What a call returns: its output, or, for a transform over no dims, the
// input converted.
ArgValue result_of(const Params& q) {
  if (q.dims.empty() && q.out.numel() > 0) {
    Tensor o = q.out;
    if (!o.device().is_cpu()) return q.in.clone();
    o.copy_from(q.in);
    return o;
  }
  return q.out;
}

// The rest of a call, once the entry has filled p's entry, kind, direction,
// conj flags, dims and n: the input as the kind reads it (padded or
// trimmed), the output, the norm's scale and the dispatch problem.
Call finish(std::shared_ptr<Params> p, const Tensor& input, Norm norm, bool norm_forward) {
  const Kind kind = p->kind;
  p->device = input.device();
  // The input as the kind reads it: complex for c2c and c2r, real for r2c
  // (to() returns the tensor itself when the dtype is already right).
  // The input is copied into Params once (the caller's tensor stays in
  // Args); a conversion or a resize (rare in a loop of calls) replaces it.
  if (kind == Kind::r2c) {
    if (is_complex(input.dtype()))  // PyTorch's TypeError and text
      throw_bad_type(p->entry, torch_dtype_name(input.dtype()), "a real input tensor");
    const DType real = real_dtype_of(input.dtype());
    if (real == input.dtype()) p->in = input;
    else p->in = input.to(real);
    p->dtype = complex_dtype_of(p->in.dtype());
  } else {
    p->dtype = complex_dtype_of(input.dtype());
    if (p->dtype == input.dtype()) p->in = input;
    else p->in = input.to(p->dtype);
  }
  // Pad or trim to the signal sizes (the halved dim of a c2r input to n/2 + 1).
  if (kind == Kind::c2r && !p->n.empty()) {
    Shape in_sizes = p->n;
    in_sizes.back() = in_sizes.back() / 2 + 1;
    resize_to(p->in, p->dims, in_sizes);
  } else {
    resize_to(p->in, p->dims, p->n);
  }
  Shape out_shape = p->in.shape();
  for (std::size_t i = 0; i < p->dims.size(); ++i) out_shape[static_cast<std::size_t>(p->dims[i])] = p->n[i];
  if (kind == Kind::r2c && !p->dims.empty()) out_shape[static_cast<std::size_t>(p->dims.back())] = p->n.back() / 2 + 1;
  const DType out_dtype = kind == Kind::c2r ? (p->is_double() ? DType::f64 : DType::f32) : p->dtype;
  p->out = Tensor::empty(std::move(out_shape), out_dtype, p->device);
  p->scale = norm_scale(norm, norm_forward, p->signal_elements());

  const int64_t batch = p->batch();
  const int kind_code = kind == Kind::c2c ? (p->forward ? 0 : 1) : kind == Kind::r2c ? 2 : 3;
  uint32_t layout = p->in.is_contiguous() ? 0u : kStrided;
  if (p->conj_in || p->conj_out) layout |= kConj;
  Params* q = p.get();  // the Call's params keep *q alive while run() calls result()
  auto size_at = [q](std::size_t i) { return i < q->n.size() ? q->n[i] : 0; };
  dispatch::Op& op = fft_op();
  return Call{
      .op = &op,
      .problem = op.problem(q->device, q->dtype, layout,
                            {kind_code, batch, static_cast<int64_t>(q->dims.size()), size_at(0), size_at(1),
                             size_at(2), network_key(*q)}),
      .params = std::move(p),
      // A transform over no dims (fftn of a 0-d tensor) or of no elements is a copy, or nothing.
      .compute = q->out.numel() > 0 && !q->dims.empty(),
      // Lambdas holding a plain pointer keep the std::functions free of heap allocations.
      .result = [q]() -> ArgValue { return result_of(*q); },
      // run(Call&&): the call is dropped after it, so the output moves out.
      .take_result = [q]() -> ArgValue { return q->dims.empty() ? result_of(*q) : std::move(q->out); }};
}

const Tensor& input_of(const ArgValue& v, const char* entry) {
  const Tensor* x = std::get_if<Tensor>(&v);
  if (x == nullptr || !x->defined()) throw_bad_value(std::string(entry) + ": input", "None", "a Tensor");
  return *x;
}

// A call's Params with what every transform entry starts from: its name, kind, direction.
std::shared_ptr<Params> params_of(const char* entry, Kind kind, bool forward) {
  auto p = detail::make_recycled<Params>();  // Note [Recycled call blocks]
  p->entry = entry;
  p->kind = kind;
  p->forward = kind == Kind::c2c ? forward : kind == Kind::r2c;
  return p;
}

[[noreturn]] void mismatched_s(const std::string& entry, std::size_t s, std::size_t dims) {
  throw_bad_value(entry + ": s", "s with " + std::to_string(s) + " values and dim with " + std::to_string(dims),
                  "s and dim of the same length (When given, dim and shape arguments must have the same length)");
}

// The index-th argument, an int (checked when binding; Args' own error
// otherwise).
int64_t integer_at(const Args& a, std::size_t index) {
  if (const auto* x = std::get_if<int64_t>(&a.at(index))) return *x;
  return a.integer(a.entry().args[index].name);
}

// The index-th argument, a tuple of ints, where Args holds it (one int: a
// one-element tuple, in `one`), or nullptr for None.
const std::vector<int64_t>* ints_of(const Args& a, std::size_t index, std::vector<int64_t>& one) {
  const ArgValue& v = a.at(index);
  if (const auto* xs = std::get_if<std::vector<int64_t>>(&v)) return xs;
  if (std::holds_alternative<std::monostate>(v)) return nullptr;
  one = a.integers(a.entry().args[index].name);  // an int, or Args' own error
  return &one;
}

// ---------------------------------------------------------------- 1-D entries

struct OneD {
  const char* name;
  Kind kind;
  bool forward;  // for norm
  bool conj_in, conj_out;
};

Call prepare_1d(const OneD& e, const Args& a) {
  auto p = params_of(e.name, e.kind, e.forward);
  p->conj_in = e.conj_in;
  p->conj_out = e.conj_out;
  const Tensor& input = input_of(a.at(kOneDInput), p->entry);
  const int64_t dim = detail::wrap_dim(integer_at(a, kOneDDim), input.ndim(), p->entry, "dim");
  int64_t n;
  if (!std::holds_alternative<std::monostate>(a.at(kOneDN))) {  // an int or None
    n = integer_at(a, kOneDN);
  } else {
    n = input.size(dim);
    // The real output of a c2r by default: 2 * (m - 1) points.
    if (e.kind == Kind::c2r) n = 2 * (n - 1);
  }
  if (n < 1) bad_points(p->entry, n);
  p->dims = {dim};
  p->n = {n};
  return finish(std::move(p), input, parse_norm(a.at(kOneDNorm)), e.forward);
}

// ---------------------------------------------------------------- N-D entries

struct ND {
  const char* name;
  Kind kind;
  bool forward;
  bool two_d;  // fft2 and friends: dim defaults to (-2, -1)
};

Call prepare_nd(const ND& e, const Args& a) {
  auto p = params_of(e.name, e.kind, e.forward);
  const char* entry = p->entry;
  const Tensor& input = input_of(a.at(kNdInput), entry);
  const int64_t ndim = input.ndim();
  std::vector<int64_t> one_s, one_dim;
  const std::vector<int64_t>* s_given = ints_of(a, kNdS, one_s);
  const std::vector<int64_t>* dim_given = ints_of(a, kNdDim, one_dim);
  const bool has_s = s_given != nullptr;
  const std::vector<int64_t>& s = has_s ? *s_given : one_s;
  if (dim_given != nullptr) {
    const std::vector<int64_t>& dims = *dim_given;
    if (has_s && s.size() != dims.size()) mismatched_s(entry, s.size(), dims.size());
    wrap_dims_into(entry, dims, ndim, p->dims);
  } else if (has_s) {
    // s without dim: the last len(s) dims.
    if (static_cast<int64_t>(s.size()) > ndim)
      throw_bad_value(std::string(entry) + ": s", "a shape with " + std::to_string(s.size()) + " values",
                      "at most as many values as the input has dims (" + std::to_string(ndim) + ")");
    for (int64_t i = ndim - static_cast<int64_t>(s.size()); i < ndim; ++i) p->dims.push_back(i);
  } else {
    for (int64_t i = 0; i < ndim; ++i) p->dims.push_back(i);
  }
  if (p->dims.empty() && e.kind != Kind::c2c)
    throw_bad_value(std::string(entry) + ": dim", "no dims",
                    "at least one dim (" + std::string(entry) + " must transform at least one axis)");
  p->n.reserve(p->dims.size());
  for (std::size_t i = 0; i < p->dims.size(); ++i) {
    int64_t n = has_s ? s[i] : -1;
    if (n == -1) {
      n = input.size(p->dims[i]);
      if (e.kind == Kind::c2r && i + 1 == p->dims.size()) n = 2 * (n - 1);
    }
    if (n < 1) bad_points(entry, n);
    p->n.push_back(n);
  }
  return finish(std::move(p), input, parse_norm(a.at(kNdNorm)), e.forward);
}

// ---------------------------------------------------------------- declarations

ArgSpec optional_int(std::string name, std::string doc) {
  ArgSpec a = arg::integer(std::move(name), 0, std::move(doc));
  a.accepts |= bit(ArgKind::none);
  a.default_value = ArgValue{};
  return a;
}
ArgSpec optional_ints(std::string name, std::string doc) {
  ArgSpec a = arg::integers(std::move(name), {}, std::move(doc));
  a.accepts |= bit(ArgKind::none);
  a.default_value = ArgValue{};
  return a;
}
ArgSpec norm_arg() {
  ArgSpec a = arg::choice("norm", {"backward", "ortho", "forward"}, "backward",
                          "normalisation: 'backward' (None: forward unscaled, inverse by 1/n), 'ortho' "
                          "(1/sqrt(n) both ways) or 'forward' (forward by 1/n, inverse unscaled)");
  a.accepts |= bit(ArgKind::none);
  a.default_value = ArgValue{};
  return a;
}

EntrySpec one_d(OneD e, std::string doc) {
  EntrySpec s = fft_entry(e.name, std::move(doc));
  s.args = {arg::tensor("input"), optional_int("n", "signal length (pads with zeros or trims; None: from the input)"),
            arg::integer("dim", -1, "the dim to transform"), norm_arg()};  // in OneDArg's order
  s.prepare = [e](const Args& a) { return prepare_1d(e, a); };
  return s;
}

EntrySpec n_d(ND e, std::string doc) {
  EntrySpec s = fft_entry(e.name, std::move(doc));
  ArgSpec dim = e.two_d ? arg::integers("dim", {-2, -1}, "the dims to transform")
                        : optional_ints("dim", "the dims to transform (None: all, or the last len(s))");
  s.args = {arg::tensor("input"),
            optional_ints("s", "signal sizes per transformed dim (-1: the input's; pads or trims)"), dim,
            norm_arg()};  // in NdArg's order
  s.prepare = [e](const Args& a) { return prepare_nd(e, a); };
  return s;
}

}  // namespace

std::vector<EntrySpec> transform_entries() {
  std::vector<EntrySpec> out;
  out.push_back(one_d({"fft", Kind::c2c, true, false, false}, "One-dimensional discrete Fourier transform, as torch.fft.fft."));
  out.push_back(one_d({"ifft", Kind::c2c, false, false, false}, "Inverse of fft, as torch.fft.ifft."));
  out.push_back(one_d({"rfft", Kind::r2c, true, false, false},
                      "FFT of a real input: the n // 2 + 1 non-negative frequencies, as torch.fft.rfft."));
  out.push_back(one_d({"irfft", Kind::c2r, false, false, false},
                      "Inverse of rfft: a real signal of n points (default 2 * (m - 1)), as torch.fft.irfft."));
  out.push_back(one_d({"hfft", Kind::c2r, true, true, false},
                      "FFT of a Hermitian-symmetric signal given by its first half: real output of n points "
                      "(default 2 * (m - 1)), as torch.fft.hfft."));
  out.push_back(one_d({"ihfft", Kind::r2c, false, false, true},
                      "Inverse of hfft: the n // 2 + 1 first points of the inverse FFT of a real input, as "
                      "torch.fft.ihfft."));
  out.push_back(n_d({"fft2", Kind::c2c, true, true}, "Two-dimensional FFT, as torch.fft.fft2."));
  out.push_back(n_d({"ifft2", Kind::c2c, false, true}, "Inverse of fft2, as torch.fft.ifft2."));
  out.push_back(n_d({"rfft2", Kind::r2c, true, true}, "Two-dimensional FFT of a real input, as torch.fft.rfft2."));
  out.push_back(n_d({"irfft2", Kind::c2r, false, true}, "Inverse of rfft2, as torch.fft.irfft2."));
  out.push_back(n_d({"fftn", Kind::c2c, true, false}, "N-dimensional FFT, as torch.fft.fftn."));
  out.push_back(n_d({"ifftn", Kind::c2c, false, false}, "Inverse of fftn, as torch.fft.ifftn."));
  out.push_back(n_d({"rfftn", Kind::r2c, true, false},
                    "N-dimensional FFT of a real input (the last dim halved), as torch.fft.rfftn."));
  out.push_back(n_d({"irfftn", Kind::c2r, false, false}, "Inverse of rfftn, as torch.fft.irfftn."));
  return out;
}

}  // namespace bp::ops::fft
