// backplane.sparse's native pieces (python/backplane/sparse.py): pruning,
// compression and decompression of 2:4 weights (backplane/ops/sparse.h).
// The products are op entries (src/ops/sparse/op.cpp), bound generically.

#include <nanobind/stl/pair.h>

#include "backplane/ops/sparse.h"
#include "bindings.h"

namespace bp::py {

void bind_sparse(nb::module_& m) {
  m.def("sparse_prune", &sparse::prune_semi_structured, nb::arg("w"), nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "sparse_compress",
      [](const Tensor& w, bool prune) {
        auto s = sparse::to_sparse_semi_structured(w, prune);
        return std::make_pair(s.values, s.meta);
      },
      nb::arg("w"), nb::arg("prune"), nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "sparse_to_dense",
      [](const Tensor& values, const Tensor& meta, int64_t rows, int64_t cols) {
        return sparse::SemiStructured{values, meta, rows, cols}.to_dense();
      },
      nb::arg("values"), nb::arg("meta"), nb::arg("rows"), nb::arg("cols"), nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace bp::py
