// What the fft op asks of FFTW in a build without it: no plan notes, no
// bare-execute measurement and no planner to create (fft_fftw.cpp and
// bench_extras_fftw.cpp otherwise). Not named *_fftw.cpp: CMake drops those
// files exactly when FFTW is absent (Note [Source layout and globbing]).

#include "backplane_build_config.h"
#include "ops/fft/params.h"

namespace bp::ops::fft {

#if !BP_HAVE_FFTW
std::vector<std::string> fftw_plan_notes(const Params&) { return {}; }
std::vector<std::pair<std::string, double>> bench_extras() { return {}; }
void fftw_prewarm() {}
#endif

}  // namespace bp::ops::fft
