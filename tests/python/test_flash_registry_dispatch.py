"""nn.attention's flash-attention registry joins the SDPA dispatch list: a provider's register_fn installs a
Python kernel as flash:<name>, which runs first (under enable_flash_sdp), shows in explain, may refuse calls,
and goes away on restore."""

import numpy as np
import pytest

import backplane
from backplane import backends
import backplane.nn.functional as F
from backplane.nn import attention

from sdpa_oracle import oracle


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.fixture
def provider():
    calls = []

    def kernel(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa):
        calls.append((tuple(q.shape), is_causal, scale))
        return oracle(q.numpy(), k.numpy(), v.numpy(), causal=is_causal, scale=scale).astype(np.float32)

    def accepts(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa):
        return q.shape[-1] <= 16  # the provider's kernel takes head sizes up to 16

    attention.register_flash_attention_impl(
        "TestFA", register_fn=lambda: attention.install_flash_attention("TestFA", kernel, accepts=accepts))
    yield calls
    if attention.current_flash_attention_impl() == "TestFA":
        attention.restore_flash_attention_impl()


def test_an_activated_implementation_runs_first_and_restores(provider):
    q, k, v = rand((1, 2, 5, 8), 1), rand((1, 2, 7, 8), 2), rand((1, 2, 7, 8), 3)
    assert backends.explain("sdpa", q, k, v).chosen == "flash:cpu"
    attention.activate_flash_attention_impl("TestFA")
    assert attention.current_flash_attention_impl() == "TestFA"
    table = backends.explain("sdpa", q, k, v, is_causal=True)
    assert table.chosen == "flash:TestFA" and table[0].implementation == "flash:TestFA"
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    np.testing.assert_allclose(out, oracle(q, k, v, causal=True), rtol=1e-5, atol=1e-6)
    assert provider == [((1, 2, 5, 8), True, pytest.approx(8 ** -0.5))]
    # Its predicate refuses head size 32: the built-in flash runs, and explain says why.
    big = rand((1, 1, 4, 32))
    row = backends.explain("sdpa", big, big, big).row("flash:TestFA")
    assert row.status == "rejected" and row.reasons == ["accepts: expected a call its provider accepts, got refused"]
    # Under enable_flash_sdp(False) it is off like the built-in flash.
    with attention.sdpa_kernel([attention.SDPBackend.MATH]):
        assert backends.explain("sdpa", q, k, v).chosen == "math:any"
    attention.restore_flash_attention_impl()
    assert attention.current_flash_attention_impl() is None
    assert "flash:TestFA" not in [str(r) for r in backends.list_implementations("sdpa")]
    assert backends.explain("sdpa", q, k, v).chosen == "flash:cpu"


def test_activating_again_replaces_and_ids_are_reused(provider):
    q = rand((1, 1, 4, 8))
    for _ in range(70):  # more than the 64 ids an op has: removal gives them back
        attention.activate_flash_attention_impl("TestFA")
        assert backends.explain("sdpa", q, q, q).chosen == "flash:TestFA"
    with backends.implementations("sdpa", "math"):  # scopes still name the list's entries
        assert backends.explain("sdpa", q, q, q).chosen == "math:any"


def test_a_provider_that_fails_is_a_clear_error(provider):
    def broken(*args):
        raise ZeroDivisionError("kernel bug")

    handle = attention.install_flash_attention("Broken", broken)
    try:
        q = rand((1, 1, 4, 8))
        with pytest.raises(RuntimeError, match="flash:Broken: the provider's implementation raised ZeroDivisionError: kernel bug"):
            F.scaled_dot_product_attention(q, q, q)
        with pytest.raises(ValueError, match="a name not yet registered"):
            attention.install_flash_attention("Broken", broken)
    finally:
        handle.remove()
        handle.remove()  # once only
    wrong = attention.install_flash_attention("Wrong", lambda *a: np.zeros((3, 3), np.float32))
    try:
        q = rand((1, 1, 4, 8))
        with pytest.raises(RuntimeError, match="flash:Wrong: the provider's implementation returned"):
            F.scaled_dot_product_attention(q, q, q)
    finally:
        wrong.remove()
    with pytest.raises(ValueError, match="flash attention implementation name"):
        attention.install_flash_attention("bad name!", broken)
