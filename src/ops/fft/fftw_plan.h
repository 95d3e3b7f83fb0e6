#pragma once
// fftw:dft's plans (Note [FFTW plans] in fft_fftw.cpp), shared with the
// benchmark's bare-execute measurement (bench_extras_fftw.cpp). SDK-free: the FFTW
// plan is an opaque handle here.

#include <memory>
#include <string>
#include <vector>

#include "backplane/backends/fft_plan_cache.h"
#include "ops/fft/params.h"

namespace bp::ops::fft::fftw_detail {

struct Iodim {
  int64_t n, is, os;  // size, input stride, output stride (elements)
  bool operator==(const Iodim&) const = default;
};

// A problem as FFTW's guru64 interface sees it, with what else a plan depends on.
struct Guru {
  Kind kind = Kind::c2c;
  bool single = true;  // fftwf (complex64) or fftw (complex128)
  int sign = -1;
  unsigned effort = 0;  // FFTW_ESTIMATE, FFTW_MEASURE or FFTW_PATIENT
  int threads = 1;
  int align_in = 0, align_out = 0;  // fftw_alignment_of of the arrays
  std::vector<Iodim> dims, howmany;
  bool operator==(const Guru&) const = default;  // same problem: same key
  std::string key() const;   // the plan cache key
  std::string text() const;  // "c2c forward single [4096], 1 thread(s)"
};

// The problem of a call under planning effort `effort` (a cpu.fft_planning_effort value).
Guru describe_call(const Params& p, int64_t effort);
// The same into g, reusing its vectors' memory (the cached call's path).
void describe_call_into(const Params& p, int64_t effort, Guru& g);

// Note [Buffered passes]
// With effort "estimate", FFTW plans a transform along a dim whose elements
// are far apart (the columns of a matrix, any dim but the last of a dense
// array) with a loop that walks memory with that stride: ten times slower
// than along rows (512 x 512 complex64: 10 ms against 0.2 ms on the
// reference machine), because its estimate counts operations, not cache
// misses. So a c2c transform with such a dim is planned as passes: the dim
// that is the output's last (if transformed) by one FFTW plan from the
// input, then each other dim in place on the output, gathered
// `kBlockColumns` lines at a time into a dense buffer, transformed there by
// a plan of contiguous rows and scattered back (what pocketfft does).
// "measure" and "patient" plans measure their way to good strides and are
// left whole.
inline constexpr int64_t kBlockColumns = 32;

struct Plan;
struct Pass {
  int64_t outer = 1, n = 1, inner = 1;  // the output as [outer, n, inner], transformed along n
  std::shared_ptr<Plan> block, tail;    // kBlockColumns lines, and the inner % kBlockColumns left over
};

struct Plan {
  void* handle = nullptr;  // fftwf_plan or fftw_plan (null for a plan of passes whose first is a copy)
  Kind kind = Kind::c2c;
  bool single = true;
  int threads = 1;
  double plan_ms = 0;
  int64_t bytes = 0;  // what the C heap grew by while planning
  bool passes_only = false;   // Note [Buffered passes]: `handle` (if any) is the first pass
  std::vector<Pass> passes;
  ~Plan();                    // under the planner lock
  // The raw FFTW execute of `handle`.
  void execute(void* in, void* out) const;
  // The whole plan on a call's arrays (the input as planned, the dense output).
  void run(const Tensor& in, const Tensor& out) const;
};

// A new plan for g on arrays like in/out (Note [FFTW plans]); RuntimeError
// when FFTW cannot plan it.
backends::cpu::FftPlanCache::Made make_plan(const Guru& g, const Tensor& in, const Tensor& out);

}  // namespace bp::ops::fft::fftw_detail
