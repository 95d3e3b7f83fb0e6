#pragma once
// The op "fft" (docs/adding_an_op.md): the transforms of torch.fft over
// complex64 / complex128 (real inputs of any float dtype arrive converted
// or as the real side of a real transform). Every implementation receives
// these parameters; the front end (fft.cpp) has resolved n / s, dim and norm
// into one multi-dimensional transform and allocated `out`.
//
// Note [One transform]
// Every entry (fft, ifft, rfft, irfft, hfft, ihfft, fft2, ..., irfftn)
// reduces to: over the dims `dims` of `in` (a view, strides as they are),
// a transform of `kind` whose signal sizes are `n`, then the result times
// `scale`. For the real kinds, the last of `dims` is the halved one (r2c:
// the output holds n/2 + 1 there; c2r: the input does). hfft is a c2r of the
// conjugated input (conj_in) and ihfft the conjugate of an r2c (conj_out),
// as in numpy.fft and torch.fft. Implementations rebuild `out` on every run
// (autotuning runs them several times) and never read it or write `in`.

#include <memory>
#include <string>
#include <vector>

#include "backplane/op_spec.h"

namespace bp::ops::fft {

enum class Kind : uint8_t { c2c, r2c, c2r };
const char* kind_name(Kind k);  // "c2c", "r2c", "c2r"

struct Params {
  Tensor in;                    // complex (c2c, c2r) or real f32/f64 (r2c): already padded or trimmed
  Tensor out;                   // contiguous, complex (c2c, r2c) or real (c2r)
  Kind kind = Kind::c2c;
  bool forward = true;          // c2c: the sign of the exponent (-1 forward); r2c forward, c2r backward always
  Shape dims;                   // transform dims of in/out, in order (real kinds: the last is the halved one)
  Shape n;                      // logical signal sizes, one per dim
  double scale = 1.0;           // the norm's factor
  bool conj_in = false;         // hfft: the input conjugated before the c2r
  bool conj_out = false;        // ihfft: the output conjugated after the r2c
  DType dtype = DType::c64;     // the complex dtype of the computation (c64 or c128)
  Device device = Device::cpu();
  const char* entry = "fft";    // the entry point called (for explain and errors): a static name

  int64_t signal_elements() const;  // the product of n
  int64_t batch() const;            // elements of out / elements of one transform's output
  bool is_double() const { return dtype == DType::c128; }
};

// Layout bits of the problem (part of the autotune key).
enum LayoutBits : uint32_t { kStrided = 1u << 0, kConj = 1u << 1 };

// The op's declaration (op.cpp), the op and its front ends (fft.cpp, helpers.cpp).
OpSpec spec();
dispatch::Op& fft_op();
std::vector<EntrySpec> transform_entries();
std::vector<EntrySpec> helper_entries();  // fftfreq, rfftfreq, fftshift, ifftshift
// An entry of backplane.fft: its name, Python name backplane.fft.<name> and doc.
EntrySpec fft_entry(const std::string& name, std::string doc);

// The makers (fft_fftw.cpp, fft_native.cpp, fft_ref.cpp, op.cpp's CUDA slot).
std::unique_ptr<dispatch::Implementation> make_fftw();
std::unique_ptr<dispatch::Implementation> make_native();
std::unique_ptr<dispatch::Implementation> make_ref();
std::unique_ptr<dispatch::Implementation> make_cufft_slot();

// explain's note on the plan of a call: whether cpu.fft_plan_cache holds it
// (fft_fftw.cpp; empty without FFTW).
std::vector<std::string> fftw_plan_notes(const Params& p);

// explain's note on how native:stockham does a call: each size's radices or
// Bluestein (fft_native.cpp).
std::vector<std::string> native_notes(const Params& p);

// Note [FFT warm-up at import]
// A process's first CPU transform pays once for what no later call pays:
// the availability of the list's CPU rows (the "cpu" backend's record, whose
// CPU detection reads /proc and /sys: about 0.25 ms) and FFTW's planner of
// the call's precision (created with the precision's first plan: about
// 0.45 ms each). `import backplane` calls prewarm(), which pays for all of
// it then (about 1.2 ms), so a first call costs what a new size costs.
// fftw_prewarm() makes both planners with 2-point plans it destroys
// (nothing enters cpu.fft_plan_cache).
void prewarm();
void fftw_prewarm();  // fft_fftw.cpp (fftw_absent.cpp: nothing)

// `backplane bench fft`'s extra measurements (bench_extras_fftw.cpp; empty without FFTW).
std::vector<std::pair<std::string, double>> bench_extras();

// Helpers shared by the implementations (layout.cpp).
// The shape of one transform's real/complex sides and the batch: the dims of
// `t` not in p.dims, in order.
std::vector<int64_t> batch_dims(const Params& p);
// A dense copy of `t` as complex `dtype`, conjugated when asked: the c2r
// input, which FFTW and cuFFT overwrite.
Tensor complex_copy(const Tensor& t, DType dtype, bool conjugate);
// Multiplies every element of the contiguous tensor t by `scale` and conjugates when asked
// (t's elements change, not the view: it may be const).
void scale_and_conj(const Tensor& t, double scale, bool conjugate);

}  // namespace bp::ops::fft
