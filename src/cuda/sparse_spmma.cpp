// cusparselt:spmma, the sparse op's CUDA slot (src/ops/sparse/op.cpp; checks
// in src/ops/sparse/checks_cuda.cpp). This build links cuSPARSELt (its
// version answers backends.cusparselt.version()) but has no run for the row
// yet: 2:4 weights are compressed in the CPU layout only, and a run would
// compress them into cuSPARSELt's form (cusparseLtSpMMACompress) and search
// algorithms up to get_max_alg_id() under cudnn.benchmark. Until then the
// row says so, rather than "built without cusparselt". (Not named
// *_cusparselt.cpp: register.cpp calls fill_sparse() in every build.)

#include "fills.h"
#include "ops/sparse/params.h"

namespace bp::cuda_impl {

void fill_sparse() {
#ifdef BP_CUDA_HAVE_CUSPARSELT
  dispatch::fill_not_built(ops::sparse::sparse_op(), "cusparselt:spmma",
                           "backplane_cuda has no cuSPARSELt run for 2:4 products yet (weights are compressed in "
                           "the CPU layout only; docs/dispatch.md, sparse)");
#endif
}

}  // namespace bp::cuda_impl
