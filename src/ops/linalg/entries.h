#pragma once
// The entries of the linalg op, by family (factor_entries.cpp,
// spectral_entries.cpp); op.cpp lists them all.

#include <vector>

#include "backplane/op_spec.h"

namespace bp::ops::linalg {

// cholesky, cholesky_ex, cholesky_solve, lu_factor(_ex), lu, lu_solve, solve(_ex), inv(_ex), det, slogdet.
std::vector<EntrySpec> factor_entries();
// qr, eigh, eigvalsh, svd, svdvals, matrix_rank, pinv.
std::vector<EntrySpec> spectral_entries();

}  // namespace bp::ops::linalg
