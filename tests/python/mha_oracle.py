"""An independent float64 NumPy oracle of torch.nn.MultiheadAttention and TransformerEncoderLayer
(eval mode), written from PyTorch's documented semantics apart from the kernels: masks where
bool True means "not attended" and floats are added, bias_k/bias_v and the zero-attention row appended
to keys and values, scores q·kᵀ/sqrt(head_dim), softmax (a row that attends to nothing is zeros,
as Backplane's sdpa), weights averaged over heads when asked."""

import math

import numpy as np


def _additive(mask):
    m = np.asarray(mask)
    if m.dtype == bool:
        return np.where(m, -np.inf, 0.0)
    return m.astype(np.float64)


def _softmax(s):
    mx = s.max(-1, keepdims=True)
    dead = np.isneginf(mx)
    e = np.exp(s - np.where(dead, 0.0, mx))
    e = np.where(dead, 0.0, e)
    tot = e.sum(-1, keepdims=True)
    return np.divide(e, tot, out=np.zeros_like(e), where=tot != 0)


def mha(query, key, value, num_heads, in_proj_weight=None, in_proj_bias=None, out_proj_weight=None,
        out_proj_bias=None, key_padding_mask=None, attn_mask=None, need_weights=True, average_attn_weights=True,
        bias_k=None, bias_v=None, add_zero_attn=False, q_proj_weight=None, k_proj_weight=None,
        v_proj_weight=None, batch_first=False):
    """(output, weights or None), in the caller's layout."""
    f = lambda a: None if a is None else np.asarray(a, np.float64)
    q, k, v = f(query), f(key), f(value)
    batched = q.ndim == 3
    if not batched:
        q, k, v = q[None], k[None], v[None]
    elif not batch_first:
        q, k, v = q.transpose(1, 0, 2), k.transpose(1, 0, 2), v.transpose(1, 0, 2)
    N, L, E = q.shape
    S = k.shape[1]
    H, D = num_heads, E // num_heads
    if in_proj_weight is not None:
        wq, wk, wv = np.split(f(in_proj_weight), 3)
    else:
        wq, wk, wv = f(q_proj_weight), f(k_proj_weight), f(v_proj_weight)
    bq, bk, bv = np.split(f(in_proj_bias), 3) if in_proj_bias is not None else (0.0, 0.0, 0.0)
    Q, K, V = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    am = None if attn_mask is None else _additive(attn_mask)
    if am is not None:
        am = am.reshape(1, 1, L, S) if am.ndim == 2 else am.reshape(N, H, L, S)
    kp = None if key_padding_mask is None else _additive(key_padding_mask).reshape(N, 1, 1, S)

    def widen(m):
        return None if m is None else np.concatenate([m, np.zeros(m.shape[:-1] + (1,))], -1)

    if bias_k is not None:
        K = np.concatenate([K, np.broadcast_to(f(bias_k), (N, 1, E))], 1)
        V = np.concatenate([V, np.broadcast_to(f(bias_v), (N, 1, E))], 1)
        am, kp = widen(am), widen(kp)
    if add_zero_attn:
        K = np.concatenate([K, np.zeros((N, 1, E))], 1)
        V = np.concatenate([V, np.zeros((N, 1, E))], 1)
        am, kp = widen(am), widen(kp)
    Sx = K.shape[1]
    split = lambda t, n: t.reshape(N, n, H, D).transpose(0, 2, 1, 3)
    Qh, Kh, Vh = split(Q, L), split(K, Sx), split(V, Sx)
    s = Qh @ Kh.transpose(0, 1, 3, 2) / math.sqrt(D)
    if am is not None:
        s = s + am
    if kp is not None:
        s = s + kp
    P = _softmax(s)
    O = (P @ Vh).transpose(0, 2, 1, 3).reshape(N, L, E)
    out = O @ f(out_proj_weight).T + (f(out_proj_bias) if out_proj_bias is not None else 0.0)
    w = P.mean(1) if average_attn_weights else P
    if not batched:
        out, w = out[0], w[0]
    elif not batch_first:
        out = out.transpose(1, 0, 2)
    return out, (w if need_weights else None)


def _layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
    return y * (1.0 if w is None else np.asarray(w, np.float64)) + (0.0 if b is None else np.asarray(b, np.float64))


def gelu(x):
    from math import erf
    return 0.5 * x * (1.0 + np.vectorize(erf)(x / math.sqrt(2.0)))


def encoder_layer(src, p, num_heads, activation="relu", norm_first=False, eps=1e-5, src_mask=None,
                  src_key_padding_mask=None, batch_first=False):
    """TransformerEncoderLayer.forward in eval mode; `p` maps PyTorch's state_dict keys to arrays."""
    g = lambda k: None if p.get(k) is None else np.asarray(p[k], np.float64)
    x = np.asarray(src, np.float64)

    def sa(h):
        return mha(h, h, h, num_heads, g("self_attn.in_proj_weight"), g("self_attn.in_proj_bias"),
                   g("self_attn.out_proj.weight"), g("self_attn.out_proj.bias"),
                   key_padding_mask=src_key_padding_mask, attn_mask=src_mask, need_weights=False,
                   batch_first=batch_first)[0]

    act = {"relu": lambda t: np.maximum(t, 0.0), "gelu": gelu}.get(activation, activation)

    def ff(h):
        b1, b2 = g("linear1.bias"), g("linear2.bias")
        hid = act(h @ g("linear1.weight").T + (0.0 if b1 is None else b1))
        return hid @ g("linear2.weight").T + (0.0 if b2 is None else b2)

    n1 = lambda t: _layer_norm(t, g("norm1.weight"), g("norm1.bias"), eps)
    n2 = lambda t: _layer_norm(t, g("norm2.weight"), g("norm2.bias"), eps)
    if norm_first:
        x = x + sa(n1(x))
        return x + ff(n2(x))
    x = n1(x + sa(x))
    return n2(x + ff(x))


def decoder_layer(tgt, memory, p, num_heads, activation="relu", norm_first=False, eps=1e-5, tgt_mask=None,
                  memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, batch_first=False):
    """TransformerDecoderLayer.forward in eval mode; `p` maps PyTorch's state_dict keys to arrays."""
    g = lambda k: None if p.get(k) is None else np.asarray(p[k], np.float64)
    x = np.asarray(tgt, np.float64)
    mem = np.asarray(memory, np.float64)

    def attn(prefix, q, kv, mask, kpm):
        return mha(q, kv, kv, num_heads, g(prefix + "in_proj_weight"), g(prefix + "in_proj_bias"),
                   g(prefix + "out_proj.weight"), g(prefix + "out_proj.bias"), key_padding_mask=kpm,
                   attn_mask=mask, need_weights=False, batch_first=batch_first)[0]

    act = {"relu": lambda t: np.maximum(t, 0.0), "gelu": gelu}.get(activation, activation)

    def ff(h):
        b1, b2 = g("linear1.bias"), g("linear2.bias")
        hid = act(h @ g("linear1.weight").T + (0.0 if b1 is None else b1))
        return hid @ g("linear2.weight").T + (0.0 if b2 is None else b2)

    n = lambda i, t: _layer_norm(t, g(f"norm{i}.weight"), g(f"norm{i}.bias"), eps)
    sa = lambda h: attn("self_attn.", h, h, tgt_mask, tgt_key_padding_mask)
    ca = lambda h: attn("multihead_attn.", h, mem, memory_mask, memory_key_padding_mask)
    if norm_first:
        x = x + sa(n(1, x))
        x = x + ca(n(2, x))
        return x + ff(n(3, x))
    x = n(1, x + sa(x))
    x = n(2, x + ca(x))
    return n(3, x + ff(x))
