"""The SDPA oracle every SDPA test compares against (CPU tests here, GPU tests in tests/gpu):
softmax(q kᵀ · scale + mask) v in float64 NumPy, written from the definition, apart from the kernels.
Fully masked rows give 0 (as PyTorch's math path); GQA repeats k/v heads (repeat_interleave)."""

import numpy as np


def oracle(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    """softmax(q kᵀ scale + mask) v in float64, fully masked rows 0, GQA by repeating k/v heads."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    if gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    L, S = s.shape[-2:]
    if mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask.astype(np.float64)
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    dead = np.isneginf(mx)
    w = np.exp(s - np.where(dead, 0, mx))
    w = np.where(dead, 0, w / np.where(dead, 1, w.sum(axis=-1, keepdims=True)))
    return w @ v
