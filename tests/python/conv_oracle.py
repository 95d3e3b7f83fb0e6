"""An independent float64 oracle for convolutions, in NumPy: the definition of
torch.nn.functional.conv{1,2,3}d and conv_transpose{1,2,3}d written as sums of
strided slices (one einsum per kernel tap), apart from Backplane's kernels
and its reference."""

import itertools

import numpy as np


def _tuple(v, n):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


def conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Forward convolution of batched x [N, C, *S] with w [K, C/G, *k] in float64."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    sp = x.ndim - 2
    s, d = _tuple(stride, sp), _tuple(dilation, sp)
    k = w.shape[2:]
    if padding == "valid":
        lo = hi = (0,) * sp
    elif padding == "same":
        total = [d[i] * (k[i] - 1) for i in range(sp)]
        lo = tuple(t // 2 for t in total)
        hi = tuple(total[i] - lo[i] for i in range(sp))
    else:
        lo = hi = _tuple(padding, sp)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(lo[i], hi[i]) for i in range(sp)])
    out_sizes = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(sp)]
    n, c = x.shape[:2]
    kk = w.shape[0]
    g = groups
    out = np.zeros((n, g, kk // g) + tuple(out_sizes))
    wg = w.reshape((g, kk // g, c // g) + k)
    for tap in itertools.product(*[range(t) for t in k]):
        sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + (out_sizes[i] - 1) * s[i] + 1, s[i]) for i in range(sp))
        patch = xp[(slice(None), slice(None)) + sl].reshape((n, g, c // g) + tuple(out_sizes))
        out += np.einsum("ngc...,gkc->ngk...", patch, wg[(Ellipsis,) + tap])
    out = out.reshape((n, kk) + tuple(out_sizes))
    if b is not None:
        out += np.asarray(b, np.float64).reshape((1, kk) + (1,) * sp)
    return out


def conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed convolution of batched x [N, C, *S] with w [C, K/G, *k] in float64: each input
    point scatters w * x into the full output, which is then cropped by `padding`."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    sp = x.ndim - 2
    s, d, p, op = (_tuple(v, sp) for v in (stride, dilation, padding, output_padding))
    k = w.shape[2:]
    n, c = x.shape[:2]
    g = groups
    kg = w.shape[1]
    ins = x.shape[2:]
    full = [(ins[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(sp)]
    out = np.zeros((n, g, kg) + tuple(full))
    xg = x.reshape((n, g, c // g) + ins)
    wg = w.reshape((g, c // g, kg) + k)
    for tap in itertools.product(*[range(t) for t in k]):
        sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + (ins[i] - 1) * s[i] + 1, s[i]) for i in range(sp))
        out[(slice(None), slice(None), slice(None)) + sl] += np.einsum("ngc...,gck->ngk...", xg, wg[(Ellipsis,) + tap])
    crop = tuple(slice(p[i], full[i] - p[i]) for i in range(sp))
    out = out.reshape((n, g * kg) + tuple(full))[(slice(None), slice(None)) + crop]
    if b is not None:
        out = out + np.asarray(b, np.float64).reshape((1, g * kg) + (1,) * sp)
    return out
