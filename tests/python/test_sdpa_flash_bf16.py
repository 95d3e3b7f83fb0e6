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
