"""The sparse op on a CUDA machine (scripts/gpu-check): backends.cusparselt's
answers in a build with cuSPARSELt, and the cusparselt:spmma row's place in
explain for CUDA operands. Skipped without a device.

cusparselt:spmma has no CUDA run in this build yet (docs/dispatch.md, sparse):
the row must say why it is not available, and the call must fail with the
whole table rather than run elsewhere."""

import numpy as np
import pytest

from gpu_common import requires_cuda  # first: it puts this checkout's package on sys.path

import backplane
import backplane.backends as B
from backplane import sparse

pytestmark = requires_cuda


def test_cusparselt_module_answers_with_the_linked_library():
    if not B.cusparselt.is_available():
        pytest.skip("built without cuSPARSELt")
    version = B.cusparselt.version()
    assert isinstance(version, int) and version >= 400
    assert B.cusparselt.get_max_alg_id() == {400: 4, 502: 5, 602: 37}.get(version)


def test_cuda_operands_list_cusparselt_and_say_why_it_does_not_run():
    w = sparse.to_sparse_semi_structured(np.random.default_rng(0).uniform(-1, 1, (64, 64)).astype(np.float16),
                                         prune=True)
    x = backplane.asarray(np.ones((32, 64), np.float16)).to("cuda")
    packed, meta = w.packed.to("cuda"), w.meta.to("cuda")
    table = B.explain("sparse_linear", x, packed, meta)
    row = table.row("cusparselt:spmma")
    assert row.status in ("not built", "not available") and row.reasons
    for cpu_row in ("sparse24:cpu", "dense:matmul", "ref:any"):
        assert table.row(cpu_row).status != "chosen"
    with pytest.raises(B.NoImplementationError):
        sparse.semi_structured_linear(x, packed, meta)
