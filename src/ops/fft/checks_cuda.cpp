// The checks of cufft:dft (checks_cuda.h).

#include "ops/fft/checks_cuda.h"

#include "backplane/dispatch_checks.h"

namespace bp::ops::fft::cuda_checks {
namespace {

bool rank_ok(const Params& p, dispatch::Reasons& r) {
  return (p.dims.size() >= 1 && p.dims.size() <= kMaxRank) ||
         r.fail("1 to 3 transform dims (cuFFT's ranks)", [&] { return std::to_string(p.dims.size()) + " dims"; });
}

}  // namespace

std::vector<dispatch::Check<Params>> cufft_checks() {
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dispatch::checks::dtype_in<Params>({DType::c64, DType::c128}));
  list.push_back({"rank", rank_ok});
  return list;
}

}  // namespace bp::ops::fft::cuda_checks
