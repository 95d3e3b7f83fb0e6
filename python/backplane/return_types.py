"""Named results, as ``torch.return_types``: an op entry that returns several tensors returns one of these
tuples, so ``inv_ex(A).info`` and ``lstsq(A, B).solution`` read as in PyTorch and unpacking still works.
The table is keyed by the entry's Python name (``backplane.linalg.inv_ex`` -> ``linalg_inv_ex``)."""

import collections

# PyTorch's type names and field orders.
_FIELDS = {
    "linalg_cholesky_ex": ("L", "info"),
    "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_lu": ("P", "L", "U"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_inv_ex": ("inverse", "info"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_qr": ("Q", "R"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_svd": ("U", "S", "Vh"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
}

for _name, _fields in _FIELDS.items():
    globals()[_name] = collections.namedtuple(_name, _fields)

__all__ = sorted(_FIELDS)


def for_entry(python_name):
    """The named tuple type of the entry with this Python name, or None when it returns one value."""
    module, _, func = python_name.rpartition(".")
    return globals().get(f"{module.removeprefix('backplane').strip('.').replace('.', '_')}_{func}".lstrip("_"))
