"""backplane.backends dispatch surface: list_implementations, explain,
implementations(...), preferred_blas_library, autotune_cache, trace."""

import threading

import numpy as np
import pytest

import backplane
from backplane import backends

from conftest import cpu_has, run_python

A = np.ones((32, 32), np.float32)


pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def test_list_implementations_records_in_order():
    recs = backends.list_implementations("matmul")
    names = [str(r) for r in recs]
    assert names[:4] == ["builtin:avx512_bf16", "builtin:avx512", "builtin:avx2", "builtin:generic"]
    assert names[-1] == "ref:any" and "openblas:gemm" in names and "onednn:matmul" in names
    assert all(r.name == str(r) and r.library == r.name.split(":")[0] for r in recs)
    assert recs[-1].built and recs[-1].available
    with pytest.raises(ValueError, match="op: expected one of: .*matmul"):
        backends.list_implementations("nosuchop")


def test_explain_rows_and_text():
    table = backends.explain("matmul", A, A)
    assert [r.implementation for r in table] == [str(r) for r in backends.list_implementations("matmul")]
    assert table.chosen in [r.implementation for r in table if r.status == "chosen"]
    assert "matmul: batch=1 m=32 n=32 k=32 f32" in str(table)
    with pytest.raises(ValueError, match="explain: expected one of"):
        backends.explain("nosuchop", A)
    # The entry's own signature binds explain's arguments (Python's TypeError for a missing one).
    with pytest.raises(TypeError, match=r"missing required argument\(s\) 'b'; its signature is matmul\(a, b\)"):
        backends.explain("matmul", A)


def test_implementations_scope_by_prefix_and_thread_local():
    with backends.implementations("matmul", "ref"):
        assert backends.explain("matmul", A, A).chosen == "ref:any"
        seen = []
        t_a = backplane.asarray(A)  # (the thread has no fixture scope: keep leaked predicates off NumPy arrays)
        t = threading.Thread(target=lambda: seen.append(backends.explain("matmul", t_a, t_a).chosen))
        t.start()
        t.join()
        assert seen[0] != "ref:any"
        excluded = backends.explain("matmul", A, A).row("openblas:gemm")
        assert excluded.status == "excluded" and excluded.reasons == [
            'excluded: outside this thread\'s implementations("matmul", ...) scope (ref)']
    assert backends.explain("matmul", A, A).chosen != "ref:any"


def test_implementations_unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match=r"builtin:avx512.*got 'mkl:sgemm'"):
        with backends.implementations("matmul", "mkl:sgemm"):
            pass
    with pytest.raises(TypeError):
        backends.implementations("matmul", 3)


def test_enable_flags_still_apply_inside_a_scope():
    with backends.implementations("matmul", "onednn"), backends.mkldnn.flags(enabled=False):
        with pytest.raises(backends.NoImplementationError) as info:
            backplane.matmul(A, A)
    e = info.value
    assert isinstance(e, RuntimeError)
    assert "enabled: expected mkldnn.enabled = True, got False" in str(e)
    rows = {name: (status, reasons) for name, status, reasons in e.table}
    assert rows["onednn:matmul"][0] == "rejected"
    assert e.decision["chosen"] is None


@pytest.mark.parametrize("lib", ["builtin", "openblas", "onednn"])
def test_preferred_blas_library_moves_first(lib):
    try:
        assert backends.cpu.preferred_blas_library(lib) == lib
        table = backends.explain("matmul", A, A)
        assert table[0].implementation.startswith(lib + ":")
        assert table.chosen.startswith(lib + ":")
        assert any("tried first" in n for n in table.notes)
    finally:
        backends.cpu.preferred_blas_library("default")
    with pytest.raises(ValueError, match="one of: default, builtin, openblas, onednn"):
        backends.cpu.preferred_blas_library("mkl")


def test_preferred_library_that_rejects_falls_back_in_explain():
    try:
        backends.cpu.preferred_blas_library("openblas")
        b16 = backplane.asarray(A).to("bfloat16")
        table = backends.explain("matmul", b16, b16)
        assert table.row("openblas:gemm").reasons == ["dtype: expected float32, float64, complex64 or complex128, got bfloat16"]
        assert table.chosen != "openblas:gemm"
    finally:
        backends.cpu.preferred_blas_library("default")


def test_deterministic_and_precision_knobs_choose():
    backplane.set_float32_matmul_precision("medium")
    try:
        medium = backends.explain("matmul", A, A)
    finally:
        backplane.set_float32_matmul_precision("highest")
    row = backends.explain("matmul", A, A).row("builtin:avx512_bf16")
    if cpu_has("avx512_bf16"):
        assert medium.chosen == "builtin:avx512_bf16"
        assert row.status == "rejected" and row.reasons[0].startswith("precision: expected fp32 precision 'bf16'")
    else:  # the permission has no taker here, and explain says so
        assert medium.chosen != "builtin:avx512_bf16" and row.status == "not available"
        assert any("but nothing here can use it" in n or "onednn:matmul use it" in n for n in medium.notes)


def test_autotune_cache_roundtrip(tmp_path):
    cache = backends.autotune_cache
    cache.clear()
    backends.cpu.benchmark = True
    try:
        before = backplane._C.autotune_runs()
        backplane.matmul(A, A)
        assert backplane._C.autotune_runs() == before + 1 and cache.size == 1
        backplane.matmul(A, A)
        assert backplane._C.autotune_runs() == before + 1
        assert backends.explain("matmul", A, A).how == "autotune cache"
        path = tmp_path / "cache.txt"
        cache.save(path)
        cache.clear()
        assert cache.size == 0 and cache.load(path) == 1
        backplane.matmul(A, A)
        assert backplane._C.autotune_runs() == before + 1
    finally:
        backends.cpu.benchmark = False
        cache.clear()
    with pytest.raises(ValueError):
        cache.max_size = -1
    with pytest.raises(TypeError):
        cache.max_size = "big"


def test_autotune_cache_env_file_loads_and_saves(tmp_path):
    path = tmp_path / "env_cache.txt"
    code = ("import numpy as np, backplane; from backplane import backends; backends.cpu.benchmark = True; "
            "a = np.ones((16, 16), np.float32); backplane.matmul(a, a); print(backplane._C.autotune_runs())")
    first = run_python(code, env={"BACKPLANE_AUTOTUNE_CACHE": str(path)})
    assert first.stdout.strip() == "1" and path.exists()
    second = run_python(code, env={"BACKPLANE_AUTOTUNE_CACHE": str(path)})
    assert second.stdout.strip() == "0"


def test_trace_prints_decisions_and_runs():
    out = run_python("import numpy as np, backplane; a = np.ones((8, 8), np.float32); backplane.matmul(a, a)",
                     env={"BACKPLANE_TRACE": "1"})
    assert "dispatch matmul: builtin:" in out.stderr and "run matmul:" in out.stderr and " ms" in out.stderr
