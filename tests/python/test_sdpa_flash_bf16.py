"""flash:cpu with bf16 inputs (Note [bf16 flash softmax step]: lazy rescaling, the short exp, P rounded
two vectors at a time) against the NumPy float64 oracle: lengths across the default 192 x 384 tile,
scores whose maxima grow across key blocks (slowly: weights above 1 against a stale maximum; by a jump:
the block is redone), a row masked with finfo.min (uniform weights), a fully masked row, NaN rows."""

import ml_dtypes
import numpy as np
import pytest

from backplane import backends
from backplane.nn import functional as F
from sdpa_oracle import oracle

BF16 = ml_dtypes.bfloat16
TOL = 2e-2  # bf16 weights and output on values of size ~1 (test_sdpa.py's bf16 tolerance)


def rand(rng, shape):
    return rng.uniform(-1, 1, size=shape).astype(BF16)


def growing_mask(rng, L, S):
    """Additive mask: rows 0 mod 4 grow by 12 over the keys (several lazy blocks, then redone ones), rows 1 mod 4
    jump by 300 at one key of the second block, row 2 is finfo.min everywhere, row 3 sees no key, the rest noise."""
    m = rng.standard_normal((L, S)).astype(np.float32)
    m[0::4] += np.linspace(0, 12, S, dtype=np.float32)
    m[1::4, min(S - 1, 400)] += 300  # past fp32's exp range unless the block is redone
    if L > 3:
        m[2] = float(ml_dtypes.finfo(BF16).min)
        m[3] = -np.inf
    return m.astype(BF16)


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("L,S", [(1, 385), (17, 800), (193, 769), (400, 1000)])
@pytest.mark.parametrize("causal", [False, True])
def test_bf16_flash_matches_the_oracle(D, L, S, causal):
    rng = np.random.default_rng(L * 7 + S + D)
    q, k, v = rand(rng, (1, 2, L, D)), rand(rng, (1, 2, S, D)), rand(rng, (1, 2, S, D))
    with backends.implementations("sdpa", "flash:cpu"):
        # Key scale growing along the keys: the maxima move in every block.
        kg = (k.astype(np.float32) * np.linspace(1, 6, S, dtype=np.float32)[:, None]).astype(BF16)
        got = np.asarray(F.scaled_dot_product_attention(q, kg, v, is_causal=causal).numpy(), np.float64)
        assert np.abs(got - oracle(q, kg, v, causal=causal)).max() <= TOL
        if causal:
            return  # sdpa takes a mask or is_causal, not both
        mask = growing_mask(rng, L, S)
        got = np.asarray(F.scaled_dot_product_attention(q, k, v, attn_mask=mask).numpy(), np.float64)
        want = oracle(q, k, v, mask)
        assert np.abs(got - want).max() <= TOL
        if L > 3:
            assert (got[:, :, 3] == 0).all()
        q = q.copy()
        q[0, 1, L // 2, 0] = np.nan  # that row is NaN, every other row finite
        got = np.asarray(F.scaled_dot_product_attention(q, k, v, attn_mask=mask).numpy(), np.float64)
        nan_rows = np.isnan(got).any(axis=-1)
        assert nan_rows[0, 1, L // 2] and nan_rows.sum() == 1 and np.isnan(got[0, 1, L // 2]).all()


@pytest.mark.parametrize("L,S", [(385, 385), (450, 700), (500, 300), (577, 577), (640, 641)])
def test_bf16_causal_staircase_matches_the_oracle(L, S):
    """Note [Causal staircase]: the diagonal key block of each 192-query task runs per group of 64 query
    columns (scores, softmax and the value product over the keys the group sees): odd lengths, L != S (S > L
    cuts the diagonal block short, S < L leaves rows that see every key), a NaN key (the rows from it on are
    NaN, the rows before it finite) and a NaN query row."""
    rng = np.random.default_rng(L * 3 + S)
    q, k, v = rand(rng, (1, 2, L, 64)), rand(rng, (1, 2, S, 64)), rand(rng, (1, 2, S, 64))
    k = (k.astype(np.float32) * 3).astype(BF16)  # sharper weights: a wrongly kept or dropped key shows
    with backends.implementations("sdpa", "flash:cpu"):
        got = np.asarray(F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy(), np.float64)
        assert np.abs(got - oracle(q, k, v, causal=True)).max() <= TOL
        bad = min(S - 1, 200)  # inside the second task's diagonal block
        kn, qn = k.copy(), q.copy()
        kn[0, 0, bad, 7] = np.nan
        qn[0, 1, L - 2, 3] = np.nan
        got = np.asarray(F.scaled_dot_product_attention(qn, kn, v, is_causal=True).numpy(), np.float64)
    nan_rows = np.isnan(got).any(axis=-1)
    assert nan_rows[0, 0, bad:].all() and not nan_rows[0, 0, :bad].any()
    assert nan_rows[0, 1, L - 2] and nan_rows[0, 1].sum() == 1
    kc = k.copy()
    kc[0, 0, bad] = 0  # the oracle's rows before the NaN key do not see it
    want = oracle(q, kc, v, causal=True)
    assert np.abs(got[0, 0, :bad] - want[0, 0, :bad]).max() <= TOL
    assert np.abs(np.delete(got[0, 1], L - 2, 0) - np.delete(want[0, 1], L - 2, 0)).max() <= TOL


@pytest.mark.parametrize("offset", [-250.0, 250.0, 300.0, -1e6])
def test_bf16_flash_shift_on_both_sides_of_the_fused_exp(offset):
    """Note [Fused exp shift]: column maxima within 2^8 take exp(x - m) as one FMA with m·log2e rounded once,
    larger ones the difference first; a constant added to every score (here by the mask) leaves the softmax
    as it is, on both sides of the bound."""
    rng = np.random.default_rng(int(abs(offset)))
    L, S = 200, 900
    q, k, v = rand(rng, (1, 2, L, 64)), rand(rng, (1, 2, S, 64)), rand(rng, (1, 2, S, 64))
    mask = (offset + 2 * rng.standard_normal((L, S))).astype(np.float32)
    with backends.implementations("sdpa", "flash:cpu"):
        got = np.asarray(F.scaled_dot_product_attention(q, k, v, attn_mask=mask).numpy(), np.float64)
    assert np.abs(got - oracle(q, k, v, mask)).max() <= TOL
