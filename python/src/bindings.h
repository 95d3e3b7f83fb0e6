#pragma once
// Declarations of the per-area binding functions of backplane._C.

#include <nanobind/nanobind.h>

#include "backplane/dispatch.h"

namespace bp::py {
namespace nb = nanobind;

void bind_build(nb::module_& m);     // bind_build.cpp: version and build configuration
void bind_errors(nb::module_& m);    // bind_errors.cpp: bp::Error -> Python exceptions, warnings
void bind_flags(nb::module_& m);     // bind_flags.cpp: the flag table, scopes, precision
void bind_tensor(nb::module_& m);    // bind_tensor.cpp: Tensor, DLPack, threads, memory, seed
void bind_registry(nb::module_& m);  // bind_registry.cpp: backends registry, cuda device queries
void bind_plan_cache(nb::module_& m);  // bind_plan_cache.cpp: plan caches (cufft_plan_cache)
void bind_dispatch(nb::module_& m);    // bind_dispatch.cpp: implementations, explain, scopes, autotune cache
void bind_ops(nb::module_& m);         // bind_ops.cpp: every op entry point, generically
void bind_attention(nb::module_& m);   // bind_attention.cpp: SDPA implementations supplied from Python
void bind_opt_einsum(nb::module_& m);  // bind_opt_einsum.cpp: backends.opt_einsum's native contract_path
void bind_sparse(nb::module_& m);      // bind_sparse.cpp: 2:4 weights: prune, compress, to_dense

// A decision table as the dict the package wraps (bind_dispatch.cpp).
nb::dict decision_dict(const dispatch::Decision& d);

}  // namespace bp::py
