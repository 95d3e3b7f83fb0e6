"""backplane.linalg.LinAlgError: raised where PyTorch raises torch.linalg.LinAlgError (a matrix that is
singular or not positive-definite, with or without the _ex entries' check_errors=True), a RuntimeError
subclass so `except RuntimeError` still catches it, and not raised for bad arguments (plain RuntimeError
there, as PyTorch)."""

import numpy as np
import pytest

import backplane
import backplane.linalg as LA
from backplane import backends

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")

CPU_ROWS = [i.name for i in backends.list_implementations("linalg")
            if i.available and i.name in ("builtin:blocked", "lapack:getrf", "lapack:potrf", "ref:any")]


def T(x):
    return backplane.asarray(x)


def singular(n=3):
    a = np.eye(n) + 0.5
    a[:, 1] = 0
    return a


def not_pd(n=3):
    a = np.eye(n)
    a[1, 1] = -1
    return a


def test_the_class():
    assert issubclass(LA.LinAlgError, RuntimeError)
    assert LA.LinAlgError.__module__ == "backplane.linalg" and LA.LinAlgError.__name__ == "LinAlgError"
    assert "LinAlgError" in LA.__all__
    assert backplane.linalg.LinAlgError is LA.LinAlgError


NUMERICAL_FAILURES = [
    ("cholesky", lambda: LA.cholesky(T(not_pd()))),
    ("cholesky_ex check_errors", lambda: LA.cholesky_ex(T(not_pd()), check_errors=True)),
    ("inv", lambda: LA.inv(T(singular()))),
    ("inv_ex check_errors", lambda: LA.inv_ex(T(singular()), check_errors=True)),
    ("solve", lambda: LA.solve(T(singular()), T(np.ones((3, 1))))),
    ("solve_ex check_errors", lambda: LA.solve_ex(T(singular()), T(np.ones((3, 1))), check_errors=True)),
    ("lu_factor", lambda: LA.lu_factor(T(singular()))),
    ("lu_factor_ex check_errors", lambda: LA.lu_factor_ex(T(singular()), check_errors=True)),
    ("batched cholesky", lambda: LA.cholesky(T(np.stack([np.eye(3), not_pd()])))),
]


@pytest.mark.parametrize("impl", CPU_ROWS)
@pytest.mark.parametrize("name,call", NUMERICAL_FAILURES, ids=[n for n, _ in NUMERICAL_FAILURES])
def test_numerical_failures_raise_linalg_error(impl, name, call):
    if impl == ("lapack:getrf" if "cholesky" in name else "lapack:potrf"):
        pytest.skip("the other LAPACK row serves this routine")
    with backends.implementations("linalg", impl):
        with pytest.raises(LA.LinAlgError):
            call()
        try:  # code written for PyTorch's RuntimeError still catches it
            call()
        except RuntimeError as e:
            assert type(e) is LA.LinAlgError and str(e).startswith(("linalg.", "torch.linalg."))
        else:
            pytest.fail("no error")


def test_ex_entries_return_info_without_raising():
    _, info = LA.inv_ex(T(singular()))
    assert int(info.numpy()) == 2
    _, info = LA.cholesky_ex(T(not_pd()))
    assert int(info.numpy()) == 2


@pytest.mark.parametrize("call", [
    lambda: LA.inv(T(np.ones((2, 3)))),                            # not square
    lambda: LA.solve(T(np.eye(3)), T(np.ones((4, 1)))),             # incompatible shapes
    lambda: LA.cholesky(T(np.ones(3))),                             # not a matrix
])
def test_bad_arguments_are_not_linalg_errors(call):
    with pytest.raises(RuntimeError) as e:
        call()
    assert not isinstance(e.value, LA.LinAlgError)
