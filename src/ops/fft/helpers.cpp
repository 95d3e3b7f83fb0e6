// torch.fft's helper entries: fftfreq, rfftfreq, fftshift, ifftshift. They
// compute nothing worth dispatching (a Call with compute = false whose
// result builds the tensor), but they are declared with the op so that
// backplane.fft has the whole torch.fft surface from one declaration.

#include "core/tensor_internal.h"
#include "ops/fft/params.h"

namespace bp::ops::fft {
namespace {

// dtype=None is PyTorch's default dtype, float32.
DType freq_dtype(const Args& a, const std::string& entry) {
  if (a.is_none("dtype")) return DType::f32;
  const DType t = parse_dtype(a.string("dtype"));
  if (!is_floating(t))
    throw_bad_value(entry + ": dtype", dtype_name(t), "a float dtype (float16, bfloat16, float32 or float64)");
  return t;
}

Device freq_device(const Args& a) { return a.is_none("device") ? Device::cpu() : parse_device(a.string("device")); }

// The sample frequencies of an n-point transform with sample spacing d:
// [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n), or for the real
// transform only the n // 2 + 1 non-negative ones.
Call prepare_freq(const Args& a, bool real) {
  const std::string entry = real ? "rfftfreq" : "fftfreq";
  const int64_t n = a.integer("n");
  if (n < 0) throw_bad_value(entry + ": n", std::to_string(n), "a number of points >= 0");
  const double d = a.real("d");
  const DType dtype = freq_dtype(a, entry);
  const Device device = freq_device(a);
  const int64_t count = real ? n / 2 + 1 : n;
  Call c;
  c.op = nullptr;  // nothing dispatched: explain says so
  c.compute = false;
  c.result = [=]() -> ArgValue {
    std::vector<double> v(static_cast<std::size_t>(n == 0 ? 0 : count));
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      const int64_t k = (real || i <= (n - 1) / 2) ? i : i - n;
      v[i] = static_cast<double>(k) / (d * static_cast<double>(n));
    }
    return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}).to(dtype).to(device);
  };
  return c;
}

// out[i] = in[(i + k) mod n] along dim d: two slice copies.
Tensor roll(const Tensor& t, int64_t d, int64_t k) {
  const int64_t n = t.size(d);
  k = n == 0 ? 0 : ((k % n) + n) % n;
  if (k == 0) return t;
  Tensor r = Tensor::empty(t.shape(), t.dtype());
  Tensor head = r.slice(d, 0, n - k), tail = r.slice(d, n - k, n);
  head.copy_from(t.slice(d, k, n));
  tail.copy_from(t.slice(d, 0, k));
  return r;
}

// fftshift moves the zero frequency to the middle: out[i] = in[(i - n // 2) mod n];
// ifftshift undoes it: out[i] = in[(i + n // 2) mod n].
Call prepare_shift(const Args& a, bool inverse) {
  const std::string entry = inverse ? "ifftshift" : "fftshift";
  const Tensor x = a.tensor("input");
  if (!x.defined()) throw_bad_value(entry + ": input", "None", "a Tensor");
  std::vector<int64_t> dims;
  if (a.is_none("dim")) {
    for (int64_t i = 0; i < x.ndim(); ++i) dims.push_back(i);
  } else {
    for (int64_t d : a.integers("dim")) dims.push_back(detail::wrap_dim(d, x.ndim(), entry.c_str(), "dim"));
  }
  Call c;
  c.op = nullptr;  // nothing dispatched: explain says so
  c.compute = false;
  c.result = [=]() -> ArgValue {
    // On the host for a device tensor: the core has no device kernels.
    Tensor t = x.device().is_cpu() ? x : x.to(Device::cpu());
    for (int64_t d : dims) {
      const int64_t n = t.size(d);
      t = roll(t, d, inverse ? n / 2 : n - n / 2);
    }
    t = t.is_contiguous() && t.storage() != x.storage() ? t : t.clone();  // a new tensor, as torch.roll returns
    return x.device().is_cpu() ? t : t.to(x.device());
  };
  return c;
}

ArgSpec optional_string(std::string name, std::string doc) {
  ArgSpec a;
  a.name = std::move(name);
  a.accepts = bit(ArgKind::string) | bit(ArgKind::none);
  a.default_value = ArgValue{};
  a.doc = std::move(doc);
  a.keyword_only = true;
  return a;
}

}  // namespace

EntrySpec fft_entry(const std::string& name, std::string doc) {
  EntrySpec e;
  e.name = name;
  e.python = "backplane.fft." + name;
  e.doc = std::move(doc);
  return e;
}

namespace {

EntrySpec freq_entry(bool real) {
  EntrySpec e = fft_entry(real ? "rfftfreq" : "fftfreq",
                          real ? "The sample frequencies of rfft's output (n // 2 + 1 of them), as torch.fft.rfftfreq."
                               : "The sample frequencies of an n-point fft, zero first then positive then negative, "
                                 "as torch.fft.fftfreq.");
  e.args = {arg::integer("n", 0, "the signal length"), arg::real("d", 1.0, "the sample spacing"),
            optional_string("dtype", "a float dtype name (None: float32)"),
            optional_string("device", "'cpu' or 'cuda:N' (None: cpu)")};
  e.args[0].default_value.reset();  // required
  e.prepare = [real](const Args& a) { return prepare_freq(a, real); };
  return e;
}

EntrySpec shift_entry(bool inverse) {
  EntrySpec e = fft_entry(inverse ? "ifftshift" : "fftshift",
                          inverse ? "Inverse of fftshift, as torch.fft.ifftshift."
                                  : "Moves the zero-frequency term to the centre of the given dims (all by "
                                    "default), as torch.fft.fftshift.");
  ArgSpec dim = arg::integers("dim", {}, "the dims to shift (None: all)");
  dim.accepts |= bit(ArgKind::none);
  dim.default_value = ArgValue{};
  e.args = {arg::tensor("input"), dim};
  e.prepare = [inverse](const Args& a) { return prepare_shift(a, inverse); };
  return e;
}

}  // namespace

std::vector<EntrySpec> helper_entries() {
  return {freq_entry(false), freq_entry(true), shift_entry(false), shift_entry(true)};
}

}  // namespace bp::ops::fft
