"""Op behaviours: matmul / addmm / SDPA numerics on the CPU, and the error
class of every bad call (PyTorch raises RuntimeError for shape, dtype, mask
and dropout errors; Backplane's errors must be catchable as that)."""

import numpy as np

from cases import case

_RNG = np.random.default_rng(11)


def _arr(shape, dtype=np.float32):
    return _RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- matmul numerics
MATMUL = {
    "2d f32": ((33, 17), (17, 9), np.float32), "2d f64": ((8, 5), (5, 7), np.float64),
    "1d @ 2d": ((5,), (5, 3), np.float32), "2d @ 1d": ((4, 5), (5,), np.float32), "1d @ 1d": ((6,), (6,), np.float32),
    "batched": ((3, 4, 5), (3, 5, 2), np.float32), "broadcast batch": ((2, 1, 4, 5), (3, 5, 6), np.float32),
    "batched @ 2d": ((3, 4, 5), (5, 2), np.float64), "empty k": ((3, 0), (0, 4), np.float32),
}
# Integer products: exact, wrapping as two's complement (int8 overflows here).
_INT = np.random.default_rng(12)
for _id, (_a, _b, _dt, _hi) in {"int64": ((5, 7), (7, 3), np.int64, 1000), "int32 batched": ((2, 4, 6), (6, 5), np.int32, 100),
                                "int8 wraps": ((3, 9), (9, 4), np.int8, 100)}.items():
    _x, _y = _INT.integers(-_hi, _hi, _a).astype(_dt), _INT.integers(-_hi, _hi, _b).astype(_dt)
    case(f"op:matmul {_id}")(lambda S, x=_x, y=_y: S.top.matmul(S.tensor(x), S.tensor(y)))
for _id, (_a, _b, _dt) in MATMUL.items():
    _x, _y = _arr(_a, _dt), _arr(_b, _dt)
    case(f"op:matmul {_id}")(lambda S, x=_x, y=_y: S.top.matmul(S.tensor(x), S.tensor(y)))

_x, _y, _c = _arr((4, 6)), _arr((6, 3)), _arr((4, 3))
case("op:addmm beta alpha")(lambda S: S.top.addmm(S.tensor(_c), S.tensor(_x), S.tensor(_y), beta=0.5, alpha=2.0))
case("op:linear")(lambda S: (S.F.linear if hasattr(S.F, "linear") else S.top.linear)(
    S.tensor(_x), S.tensor(_arr((5, 6))), S.tensor(_arr((5,)))))

MATMUL_ERRORS = {
    "shape mismatch": lambda S: S.top.matmul(S.tensor(_arr((2, 3))), S.tensor(_arr((4, 5)))),
    "dtype mismatch": lambda S: S.top.matmul(S.tensor(_arr((2, 3))), S.tensor(_arr((3, 2), np.float64))),
    "0-d operand": lambda S: S.top.matmul(S.tensor(np.float32(1.0)), S.tensor(_arr((3,)))),
    "batch mismatch": lambda S: S.top.matmul(S.tensor(_arr((2, 3, 4))), S.tensor(_arr((3, 4, 5)))),
    "addmm shapes": lambda S: S.top.addmm(S.tensor(_arr((2, 2))), S.tensor(_arr((2, 3))), S.tensor(_arr((4, 2)))),
    "bool matmul": lambda S: S.top.matmul(S.tensor(np.ones((2, 3), bool)), S.tensor(np.ones((3, 2), bool))),
}
for _id, _fn in MATMUL_ERRORS.items():
    case(f"op:matmul error {_id}")(_fn)


# ---------------------------------------------------------------- SDPA numerics
def _sdpa(q, k, v, mask=None, **kw):
    def run(S):
        m = None if mask is None else S.tensor(mask)
        return S.F.scaled_dot_product_attention(S.tensor(q), S.tensor(k), S.tensor(v), attn_mask=m, **kw)
    return run


_q, _k, _v = _arr((2, 3, 7, 16)), _arr((2, 3, 9, 16)), _arr((2, 3, 9, 16))
SDPA = {
    "plain": (_q, _k, _v, None, {}),
    "causal": (_q, _arr((2, 3, 7, 16)), _arr((2, 3, 7, 16)), None, {"is_causal": True}),
    "causal L != S": (_q, _k, _v, None, {"is_causal": True}),
    "float mask": (_q, _k, _v, _arr((7, 9)), {}),
    "bool mask": (_q, _k, _v, _RNG.random((2, 1, 7, 9)) > 0.3, {}),
    "scale": (_q, _k, _v, None, {"scale": 0.3}),
    "gqa": (_arr((1, 4, 5, 8)), _arr((1, 2, 6, 8)), _arr((1, 2, 6, 8)), None, {"enable_gqa": True}),
    "v head dim differs": (_q, _k, _arr((2, 3, 9, 5)), None, {}),
    "3-d": (_arr((3, 7, 16)), _arr((3, 9, 16)), _arr((3, 9, 16)), None, {}),
    "f64": (_q.astype(np.float64), _k.astype(np.float64), _v.astype(np.float64), None, {}),
    "dropout 0": (_q, _k, _v, None, {"dropout_p": 0.0}),
}
for _id, (_qq, _kk, _vv, _m, _kw) in SDPA.items():
    case(f"op:sdpa {_id}")(_sdpa(_qq, _kk, _vv, _m, **_kw))

SDPA_ERRORS = {
    "1-d": (_arr((8,)), _arr((8,)), _arr((8,)), None, {}),
    "head dims differ q k": (_q, _arr((2, 3, 9, 15)), _v, None, {}),
    "heads differ": (_arr((1, 4, 4, 8)), _arr((1, 3, 4, 8)), _arr((1, 3, 4, 8)), None, {}),
    "gqa heads do not divide": (_arr((1, 4, 4, 8)), _arr((1, 3, 4, 8)), _arr((1, 3, 4, 8)), None,
                                {"enable_gqa": True}),
    "mask shape": (_q, _k, _v, _arr((3, 3)), {}),
    "int mask": (_q, _k, _v, np.ones((7, 9), np.int64), {}),
    "causal with mask": (_q, _k, _v, _arr((7, 9)), {"is_causal": True}),
    "dropout 2": (_q, _k, _v, None, {"dropout_p": 2.0}),
    "dtypes differ": (_q, _k.astype(np.float64), _v, None, {}),
    "int inputs": (np.ones((1, 2, 4, 8), np.int64),) * 3 + (None, {}),
    "is_causal int": (_q, _k, _v, None, {"is_causal": 1}),
    "scale str": (_q, _k, _v, None, {"scale": "x"}),
}
for _id, (_qq, _kk, _vv, _m, _kw) in SDPA_ERRORS.items():
    case(f"op:sdpa error {_id}")(_sdpa(_qq, _kk, _vv, _m, **_kw))
case("op:sdpa key and value lengths differ")(_sdpa(_q, _k, _arr((2, 3, 8, 16))))


# ---------------------------------------------------------------- einsum numerics
EINSUM = {
    "matmul": ("ij,jk->ik", [(4, 5), (5, 3)]), "trace": ("ii", [(4, 4)]), "diagonal": ("ii->i", [(5, 5)]),
    "batched": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), "ellipsis": ("...ij->...ji", [(2, 3, 4)]),
    "implicit chain": ("ij,jk,kl", [(3, 4), (4, 5), (5, 2)]), "outer": ("i,j->ij", [(3,), (4,)]),
    "sum": ("ijk->", [(2, 3, 4)]), "broadcast": ("ij,ij->i", [(3, 1), (1, 4)][:1] + [(3, 4)]),
}
for _id, (_eq, _shapes) in EINSUM.items():
    _ops = [_arr(s, np.float64) for s in _shapes]
    case(f"op:einsum {_id}")(lambda S, eq=_eq, xs=_ops: S.top.einsum(eq, *[S.tensor(x) for x in xs]))
_a3, _b3 = _arr((3, 4), np.float64), _arr((4, 2), np.float64)
case("op:einsum sublist")(lambda S: S.top.einsum(S.tensor(_a3), [0, 1], S.tensor(_b3), [1, 2], [0, 2]))
case("op:einsum error bad subscript")(lambda S: S.top.einsum("ij,j1->i", S.tensor(_arr((2, 3))), S.tensor(_arr((3,)))))
case("op:einsum error operand count")(lambda S: S.top.einsum("ij,jk->ik", S.tensor(_arr((2, 3)))))


# ---------------------------------------------------------------- conv numerics
def _conv(fn, x, w, b=None, **kw):
    def run(S):
        return getattr(S.F, fn)(S.tensor(x), S.tensor(w), None if b is None else S.tensor(b), **kw)
    return run


_x2, _w2 = _arr((2, 4, 9, 11)), _arr((6, 4, 3, 3))
CONV = {
    "conv1d": ("conv1d", _arr((2, 3, 17)), _arr((5, 3, 4)), _arr((5,)), {}),
    "conv1d stride dilation": ("conv1d", _arr((1, 2, 20)), _arr((3, 2, 3)), None, {"stride": 2, "dilation": 3}),
    "conv2d": ("conv2d", _x2, _w2, _arr((6,)), {}),
    "conv2d padding stride": ("conv2d", _x2, _w2, None, {"stride": (2, 1), "padding": (1, 2)}),
    "conv2d same": ("conv2d", _x2, _arr((6, 4, 4, 3)), None, {"padding": "same", "dilation": 2}),
    "conv2d valid": ("conv2d", _x2, _w2, None, {"padding": "valid"}),
    "conv2d groups": ("conv2d", _x2, _arr((8, 2, 3, 3)), _arr((8,)), {"groups": 2}),
    "conv2d depthwise": ("conv2d", _x2, _arr((4, 1, 5, 5)), None, {"groups": 4, "padding": 2}),
    "conv2d 1x1": ("conv2d", _x2, _arr((3, 4, 1, 1)), None, {}),
    "conv2d f64": ("conv2d", _x2.astype(np.float64), _w2.astype(np.float64), None, {"padding": 1}),
    "conv2d unbatched": ("conv2d", _arr((4, 9, 11)), _w2, None, {}),
    "conv3d": ("conv3d", _arr((1, 2, 5, 6, 7)), _arr((3, 2, 2, 3, 2)), _arr((3,)), {"padding": 1}),
    "conv_transpose1d": ("conv_transpose1d", _arr((2, 3, 8)), _arr((3, 4, 3)), _arr((4,)), {"stride": 2}),
    "conv_transpose2d": ("conv_transpose2d", _arr((1, 4, 5, 6)), _arr((4, 3, 3, 3)), None,
                         {"stride": 2, "padding": 1, "output_padding": 1}),
    "conv_transpose2d groups dilation": ("conv_transpose2d", _arr((1, 4, 5, 5)), _arr((4, 2, 2, 3)), None,
                                         {"groups": 2, "dilation": 2}),
    "conv_transpose3d": ("conv_transpose3d", _arr((1, 2, 3, 4, 3)), _arr((2, 2, 2, 2, 2)), None, {"stride": 2}),
}
for _id, (_fn, _xx, _ww, _bb, _kw) in CONV.items():
    case(f"op:conv {_id}")(_conv(_fn, _xx, _ww, _bb, **_kw))

CONV_ERRORS = {
    "channels mismatch": ("conv2d", _x2, _arr((6, 3, 3, 3)), None, {}),
    "groups do not divide": ("conv2d", _x2, _arr((6, 2, 3, 3)), None, {"groups": 3}),
    "kernel larger than input": ("conv2d", _arr((1, 4, 2, 2)), _w2, None, {}),
    "negative padding": ("conv2d", _x2, _w2, None, {"padding": -1}),
    "zero stride": ("conv2d", _x2, _w2, None, {"stride": 0}),
    "same with stride": ("conv2d", _x2, _w2, None, {"padding": "same", "stride": 2}),
    "bad padding string": ("conv2d", _x2, _w2, None, {"padding": "full"}),
    "bias length": ("conv2d", _x2, _w2, _arr((5,)), {}),
    "weight rank": ("conv2d", _x2, _arr((6, 4, 3)), None, {}),
    "input rank": ("conv2d", _arr((9, 11)), _w2, None, {}),
    "dtypes differ": ("conv2d", _x2, _w2.astype(np.float64), None, {}),
    "output_padding too large": ("conv_transpose2d", _arr((1, 4, 5, 6)), _arr((4, 3, 3, 3)), None,
                                 {"stride": 2, "output_padding": 2}),
}
for _id, (_fn, _xx, _ww, _bb, _kw) in CONV_ERRORS.items():
    case(f"op:conv error {_id}")(_conv(_fn, _xx, _ww, _bb, **_kw))


# ---------------------------------------------------------------- fft numerics
def _fft(fn, x, **kw):
    return lambda S: getattr(S.top.fft, fn)(S.tensor(x), **kw)


_c = (_arr((6, 10)) + 1j * _arr((6, 10))).astype(np.complex64)
_r = _arr((6, 10))
FFT = {
    "fft": ("fft", _c, {}), "fft n pad": ("fft", _c, {"n": 16}), "fft n trim": ("fft", _c, {"n": 7}),
    "fft dim 0": ("fft", _c, {"dim": 0}), "fft real input": ("fft", _r, {}),
    "fft prime": ("fft", _arr((13,)).astype(np.complex64), {}), "ifft ortho": ("ifft", _c, {"norm": "ortho"}),
    "fft forward": ("fft", _c, {"norm": "forward"}), "fft complex128": ("fft", _c.astype(np.complex128), {}),
    "rfft": ("rfft", _r, {}), "rfft odd n": ("rfft", _r, {"n": 9}), "irfft": ("irfft", _c, {}),
    "irfft n": ("irfft", _c, {"n": 11}), "hfft": ("hfft", _c, {}), "ihfft": ("ihfft", _r, {}),
    "fft2": ("fft2", _c, {}), "ifft2 s": ("ifft2", _c, {"s": (4, 12)}), "fftn dims": ("fftn", _c, {"dim": (1,)}),
    "rfft2": ("rfft2", _r, {}), "irfft2": ("irfft2", _c, {}), "rfftn s": ("rfftn", _r, {"s": (5, 8)}),
    "irfftn": ("irfftn", _c, {"dim": (0, 1)}), "fftn 3d": ("fftn", _arr((3, 4, 5)).astype(np.complex64), {}),
    "fftshift": ("fftshift", _r, {}), "ifftshift dim": ("ifftshift", _r, {"dim": 1}),
}
for _id, (_fn, _xx, _kw) in FFT.items():
    case(f"op:fft {_id}")(_fft(_fn, _xx, **_kw))
case("op:fft fftfreq")(lambda S: S.top.fft.fftfreq(7, d=0.5))
case("op:fft rfftfreq")(lambda S: S.top.fft.rfftfreq(8))

FFT_ERRORS = {
    "bad norm": ("fft", _c, {"norm": "both"}), "n zero": ("fft", _c, {"n": 0}), "dim out of range": ("fft", _c, {"dim": 2}),
    "rfft complex input": ("rfft", _c, {}), "fft2 repeated dims": ("fft2", _c, {"dim": (0, 0)}),
    "s and dim lengths": ("fftn", _c, {"s": (4, 4), "dim": (0,)}), "irfft n negative": ("irfft", _c, {"n": -2}),
    "int input": ("fft", np.arange(8), {}),
}
for _id, (_fn, _xx, _kw) in FFT_ERRORS.items():
    case(f"op:fft error {_id}")(_fft(_fn, _xx, **_kw))
