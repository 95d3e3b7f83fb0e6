"""backplane.linalg side by side with torch.linalg: values of every function
on well-posed inputs (outputs that LAPACK leaves free, such as eigenvector
signs, compared through what they must satisfy), the `_ex` infos, and the
error classes and texts of singular and non-positive-definite inputs."""

import numpy as np

from cases import case

_RNG = np.random.default_rng(21)


def _arr(shape, dtype=np.float64):
    a = _RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * _RNG.standard_normal(shape)
    return a.astype(dtype)


def _spd(n, batch=(), dtype=np.float64):
    a = _arr(batch + (n, n), dtype)
    return (a @ np.swapaxes(a.conj(), -1, -2) + n * np.eye(n)).astype(dtype)


def _numpy(x):
    """A result as NumPy (the side's tensor type), for the cases that post-process."""
    return np.asarray(x.numpy() if hasattr(x, "numpy") and not hasattr(x, "resolve_conj") else
                      x.resolve_conj().numpy())


def _la(fn, *arrays, **kw):
    return lambda S: getattr(S.top.linalg, fn)(*[S.tensor(a) for a in arrays], **kw)


_A = _arr((5, 5))
_B = _arr((5, 3))
_S = _spd(5)
VALUES = {
    "inv": ("inv", (_A,), {}), "inv batched f32": ("inv", (_arr((3, 4, 4), np.float32),), {}),
    "inv complex": ("inv", (_arr((4, 4), np.complex128),), {}),
    "det": ("det", (_A,), {}), "det batched": ("det", (_arr((2, 3, 4, 4)),), {}),
    "slogdet": ("slogdet", (_A,), {}), "slogdet complex": ("slogdet", (_arr((3, 3), np.complex64),), {}),
    "solve": ("solve", (_A, _B), {}), "solve vector": ("solve", (_A, _arr((5,))), {}),
    "solve right": ("solve", (_A, _arr((3, 5))), {"left": False}),
    "solve broadcast": ("solve", (_arr((2, 1, 4, 4)), _arr((3, 4, 2))), {}),
    "cholesky": ("cholesky", (_S,), {}), "cholesky upper": ("cholesky", (_S,), {"upper": True}),
    "cholesky batched complex": ("cholesky", (_spd(4, (2,), np.complex128),), {}),
    "cholesky f32": ("cholesky", (_spd(6, (), np.float32),), {}),
    "lu_factor": ("lu_factor", (_A,), {}), "lu_factor wide": ("lu_factor", (_arr((3, 5)),), {}),
    "lu": ("lu", (_arr((4, 6)),), {}), "lu tall": ("lu", (_arr((6, 4)),), {}),
    "eigvalsh": ("eigvalsh", (_S,), {}), "eigvalsh U": ("eigvalsh", (_arr((4, 4)),), {"UPLO": "U"}),
    "svdvals": ("svdvals", (_arr((6, 4)),), {}), "svdvals batched": ("svdvals", (_arr((2, 3, 5), np.float32),), {}),
    "matrix_rank": ("matrix_rank", (_arr((5, 2)) @ _arr((2, 6)),), {}),
    "pinv": ("pinv", (_arr((5, 3)),), {}),
    "inv_ex": ("inv_ex", (_A,), {}), "cholesky_ex": ("cholesky_ex", (_S,), {}),
    "solve_ex": ("solve_ex", (_A, _B), {}), "lu_factor_ex": ("lu_factor_ex", (_A,), {}),
}
for _id, (_fn, _args, _kw) in VALUES.items():
    case(f"linalg:{_id}")(_la(_fn, *_args, **_kw))

case("linalg:cholesky_solve")(lambda S: S.top.cholesky_solve(S.tensor(_B), S.top.linalg.cholesky(S.tensor(_S))))
case("linalg:cholesky_solve upper")(lambda S: S.top.cholesky_solve(
    S.tensor(_B), S.top.linalg.cholesky(S.tensor(_S), upper=True), upper=True))
case("linalg:lu_solve")(lambda S: S.top.linalg.lu_solve(*S.top.linalg.lu_factor(S.tensor(_A)), S.tensor(_B)))
case("linalg:lu_solve adjoint")(lambda S: S.top.linalg.lu_solve(*S.top.linalg.lu_factor(S.tensor(_A)), S.tensor(_B),
                                                                 adjoint=True))
case("linalg:lstsq solution")(lambda S: S.top.linalg.lstsq(S.tensor(_arr((6, 3))), S.tensor(_arr((6, 2)))).solution)


# Outputs LAPACK leaves free (signs, phases): compared through their invariants.
def _qr(mode):
    def run(S):
        a = _arr((5, 3)) if mode != "complete" else _arr((3, 5))
        q, r = S.top.linalg.qr(S.tensor(a), mode=mode)
        r = _numpy(r)
        return [q.shape if mode != "r" else None, r.shape, np.abs(r)]
    return run


for _mode in ("reduced", "complete", "r"):
    case(f"linalg:qr {_mode}")(_qr(_mode))


def _eigh(S):
    w, v = S.top.linalg.eigh(S.tensor(_S))
    return [_numpy(w), np.abs(_numpy(v))]


def _svd(full):
    def run(S):
        u, s, vh = S.top.linalg.svd(S.tensor(_arr((6, 4))), full_matrices=full)
        return [u.shape, _numpy(s), vh.shape, np.abs(_numpy(vh))]
    return run


case("linalg:eigh")(_eigh)
case("linalg:svd reduced")(_svd(False))
case("linalg:svd full")(_svd(True))

# Numerical failures: the `_ex` infos, and the classes and texts of the errors.
_SING = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
_NOT_PD = np.array([[[4.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
case("linalg:inv_ex singular info")(lambda S: S.top.linalg.inv_ex(S.tensor(_SING)).info)
case("linalg:cholesky_ex not pd info")(lambda S: S.top.linalg.cholesky_ex(S.tensor(_NOT_PD)).info)
case("linalg:lu_factor_ex singular info")(lambda S: S.top.linalg.lu_factor_ex(S.tensor(_SING)).info)


def _message(fn):
    def run(S):
        try:
            fn(S)
        except Exception as exc:  # noqa: BLE001
            text = str(exc)  # PyTorch names some functions torch.linalg.x: the module is not compared
            return text[len("torch."):] if text.startswith("torch.") else text.removeprefix("backplane.")
        return "no error"
    return run


ERRORS = {
    "inv singular": lambda S: S.top.linalg.inv(S.tensor(_SING)),
    "cholesky not pd batch": lambda S: S.top.linalg.cholesky(S.tensor(_NOT_PD)),
    "solve singular": lambda S: S.top.linalg.solve(S.tensor(_SING), S.tensor(_arr((3,)))),
    "inv not square": lambda S: S.top.linalg.inv(S.tensor(_arr((3, 4)))),
    "cholesky int": lambda S: S.top.linalg.cholesky(S.tensor(np.eye(3, dtype=np.int64))),
    "eigh bad UPLO": lambda S: S.top.linalg.eigh(S.tensor(_S), UPLO="X"),
    "solve shapes": lambda S: S.top.linalg.solve(S.tensor(_A), S.tensor(_arr((4, 2)))),
    "qr bad mode": lambda S: S.top.linalg.qr(S.tensor(_A), mode="economic"),
    "det 1-d": lambda S: S.top.linalg.det(S.tensor(_arr((4,)))),
}
for _id, _fn in ERRORS.items():
    case(f"linalg:error {_id}")(_fn)
for _id in ("inv singular", "cholesky not pd batch", "solve singular"):
    case(f"linalg:error text {_id}")(_message(ERRORS[_id]))
