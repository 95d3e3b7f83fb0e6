#pragma once
// fftw:dft's plans (Note [FFTW plans] in fft_fftw.cpp), shared with the
// benchmark's bare-execute measurement (bench_extras_fftw.cpp). SDK-free: the FFTW
// plan is an opaque handle here.

#include <string>
#include <vector>

#include "backplane/backends/fft_plan_cache.h"
#include "ops/fft/params.h"

namespace bp::ops::fft::fftw_detail {

struct Iodim {
  int64_t n, is, os;  // size, input stride, output stride (elements)
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
  std::string key() const;   // the plan cache key
  std::string text() const;  // "c2c forward single [4096], 1 thread(s)"
};

// The problem of a call under planning effort `effort` (a cpu.fft_planning_effort value).
Guru describe_call(const Params& p, int64_t effort);

struct Plan {
  void* handle = nullptr;  // fftwf_plan or fftw_plan
  Kind kind = Kind::c2c;
  bool single = true;
  int threads = 1;
  double plan_ms = 0;
  int64_t bytes = 0;  // what the C heap grew by while planning
  ~Plan();            // under the planner lock
  void execute(void* in, void* out) const;
};

// A new plan for g on arrays like in/out (Note [FFTW plans]); RuntimeError
// when FFTW cannot plan it.
backends::cpu::FftPlanCache::Made make_plan(const Guru& g, const Tensor& in, const Tensor& out);

}  // namespace bp::ops::fft::fftw_detail
