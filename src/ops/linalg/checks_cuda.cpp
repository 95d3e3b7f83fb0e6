// The CUDA rows of linalg and their checks (checks_cuda.h).

#include "ops/linalg/checks_cuda.h"

#include "backplane/dispatch_checks.h"
#include "ops/common/cuda_slot.h"

namespace bp::ops::linalg::cuda_checks {

bool batched_small(const Params& p, dispatch::Reasons& r) {
  return (p.batch > 1 && p.n == p.m && p.n < kBatchedLuMaxN) ||
         r.fail("a batch of more than one square matrix smaller than 512 (else cuSOLVER)", [&] {
           return "batch " + std::to_string(p.batch) + " of " + std::to_string(p.m) + "x" + std::to_string(p.n);
         });
}

bool svd_driver(const Params& p, dispatch::Reasons& r) {
  return p.driver.empty() || p.driver == "gesvd" ||
         r.fail("driver None or 'gesvd' (gesvdj and gesvda are not built)", [&] { return "'" + p.driver + "'"; });
}

namespace {

std::unique_ptr<dispatch::Implementation> slot(const char* name, const char* backend, std::vector<Routine> routines,
                                               std::vector<dispatch::Check<Params>> extra = {}) {
  dispatch::Properties props;
  props.workspace = "cuSOLVER's device workspace (allocated through Backplane) and the infos";
  std::vector<dispatch::Check<Params>> list;
  list.push_back(routine_in(std::move(routines)));
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64, DType::c64, DType::c128}));
  for (auto& c : extra) list.push_back(std::move(c));
  return cuda_slot<Params>(name, backend, props, std::move(list));
}

}  // namespace

std::vector<std::unique_ptr<dispatch::Implementation>> cuda_slots() {
  const std::vector<Routine> lu = {Routine::getrf, Routine::getrs, Routine::gesv, Routine::inv};
  std::vector<std::unique_ptr<dispatch::Implementation>> out;
  out.push_back(slot("cublas:getrf_batched", "cublas", lu, {{"batched", batched_small}}));
  out.push_back(slot("cusolver:potrf", "cusolver", {Routine::potrf, Routine::potrs}));
  out.push_back(slot("cusolver:getrf", "cusolver", lu));
  out.push_back(slot("cusolver:geqrf", "cusolver", {Routine::qr}));
  out.push_back(slot("cusolver:syevd", "cusolver", {Routine::eigh}));
  out.push_back(slot("cusolver:gesvd", "cusolver", {Routine::svd}, {{"driver", svd_driver}}));
  return out;
}

}  // namespace bp::ops::linalg::cuda_checks
