"""backends.cpu.conv_weight_cache (Note [Winograd weight cache]): winograd:f4x3
keeps each weight's transform across calls, checked against the weight's
values on every call. Cached and uncached calls give the same bits, a weight
changed in place is transformed again, and the cache's bounds behave as the
plan caches' do."""

import threading

import ml_dtypes
import numpy as np
import pytest

import backplane
from backplane import backends
from conv_oracle import conv

F = backplane.nn.functional
CACHE = backends.cpu.conv_weight_cache
WINOGRAD = "winograd:f4x3"

pytestmark = [pytest.mark.usefixtures("no_leaked_overrides"),
              pytest.mark.skipif(not any(i.name == WINOGRAD and i.available
                                         for i in backends.list_implementations("conv")),
                                 reason="winograd:f4x3 not available")]


@pytest.fixture(autouse=True)
def fresh_cache():
    """Each test starts from an empty cache with the default bounds, and leaves them so."""
    size, nbytes = CACHE.max_size, CACHE.max_bytes
    CACHE.clear()
    yield
    CACHE.max_size, CACHE.max_bytes = size, nbytes
    CACHE.clear()


def problem(seed, n=2, c=8, k=8, hw=7, dtype=np.float32, channels_last=True):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, hw, hw, c)).astype(dtype).transpose(0, 3, 1, 2)
    if not channels_last:
        x = np.ascontiguousarray(x)
    w = rng.uniform(-1, 1, (k, c, 3, 3)).astype(dtype)
    return x, w


def winograd(x, w, **kw):
    with backends.implementations("conv", WINOGRAD):
        return np.asarray(F.conv2d(backplane.asarray(x), backplane.asarray(w), padding=1, **kw))


def check_oracle(got, x, w, rtol=2e-6 * 16):
    want = conv(x.astype(np.float64), w.astype(np.float64), padding=1)
    scale = np.abs(x).max() * np.abs(w).max() * w[0].size
    assert np.abs(got - want).max() <= rtol * scale


def lanes():
    return {"AVX512": 16, "AVX2": 8}.get(backends.cpu.get_cpu_capability(), 4)


def entry_bytes(c, k):
    pad = lambda v: -(-v // lanes()) * lanes()  # noqa: E731
    return (k * c * 9 + 36 * pad(c) * pad(k)) * 4


def test_repeated_calls_hit_and_count_bytes():
    x, w = problem(0, c=24, k=40)
    misses = CACHE.misses
    first = winograd(x, w)
    assert (CACHE.size, CACHE.misses, CACHE.bytes) == (1, misses + 1, entry_bytes(24, 40))
    hits = CACHE.hits
    again = winograd(x, w)
    assert CACHE.hits == hits + 1 and CACHE.size == 1
    assert np.array_equal(first, again)
    check_oracle(again, x, w)
    assert backplane.memory_stats()["cpu"]["plan_bytes"] >= entry_bytes(24, 40)


@pytest.mark.parametrize("c,k,n", [(8, 8, 2), (17, 33, 3), (176, 176, 2)])
def test_cached_and_uncached_give_the_same_bits(c, k, n):
    # 176 x 176 channels: U is 4.5 MB, so an uncached call transforms it a block
    # of output channels at a time (Note [Winograd weight blocks]); a cached one uses it whole.
    x, w = problem(1, n=n, c=c, k=k)
    cached = winograd(x, w)
    cached_again = winograd(x, w)
    CACHE.max_size = 0
    uncached = winograd(x, w)
    assert CACHE.size == 0
    assert np.array_equal(cached, cached_again)
    assert np.array_equal(cached, uncached)
    check_oracle(uncached, x, w)


def test_a_weight_changed_in_place_is_transformed_again():
    x, w = problem(2, c=16, k=16)
    bw = backplane.asarray(w)  # shares w's memory
    bx = backplane.asarray(x)
    with backends.implementations("conv", WINOGRAD):
        before = np.asarray(F.conv2d(bx, bw, padding=1))
        w[3, 5, 1, 2] += 0.5  # the same tensor, the same address, other values
        w[15] *= -1
        after = np.asarray(F.conv2d(bx, bw, padding=1))
    check_oracle(before, x, problem(2, c=16, k=16)[1])
    check_oracle(after, x, w)
    assert not np.allclose(before, after)
    assert CACHE.size == 1  # replaced, not added


def test_disabled_cache_keeps_nothing_and_stays_right():
    CACHE.max_size = 0
    for seed in range(3):
        x, w = problem(10 + seed, c=12, k=20)
        check_oracle(winograd(x, w), x, w)
    assert CACHE.size == 0 and CACHE.bytes == 0


def test_byte_bound_keeps_only_what_fits():
    CACHE.max_bytes = entry_bytes(16, 16) + 100
    x, w = problem(3, c=16, k=16)
    winograd(x, w)
    assert CACHE.size == 1
    x2, w2 = problem(4, c=32, k=32)  # larger than the whole bound: used, not kept
    check_oracle(winograd(x2, w2), x2, w2)
    assert CACHE.size == 1 and CACHE.bytes == entry_bytes(16, 16)
    CACHE.max_bytes = 10  # shrinking evicts at once
    assert CACHE.size == 0 and CACHE.bytes == 0


def test_least_recently_used_weight_is_evicted():
    CACHE.max_size = 2
    weights = [problem(20 + i, c=8, k=8) for i in range(3)]
    held = [(backplane.asarray(x), backplane.asarray(w)) for x, w in weights]  # distinct, live addresses
    with backends.implementations("conv", WINOGRAD):
        for bx, bw in held:
            F.conv2d(bx, bw, padding=1)
        assert CACHE.size == 2
        misses = CACHE.misses
        F.conv2d(*held[2], padding=1)  # the newest is still there
        assert CACHE.misses == misses
        F.conv2d(*held[0], padding=1)  # the oldest was evicted
        assert CACHE.misses == misses + 1


@pytest.mark.parametrize("dtype,rtol", [(ml_dtypes.bfloat16, 1.6e-2 * 16), (np.float16, 2e-3 * 16)])
def test_sixteen_bit_weights(dtype, rtol):
    x, w = problem(5, c=16, k=24, dtype=dtype)
    a = winograd(x, w)
    b = winograd(x, w)
    assert np.array_equal(a.astype(np.float32), b.astype(np.float32))
    check_oracle(b.astype(np.float64), x.astype(np.float64), w.astype(np.float64), rtol)


def test_nchw_input_and_strided_weight():
    x, w = problem(6, c=16, k=16, channels_last=False)
    wide = np.zeros((16, 16, 3, 6), np.float32)
    wide[..., ::2] = w
    strided = wide[..., ::2]  # a non-contiguous weight: staged each call, cached by the tensor it came from
    a = winograd(x, strided)
    b = winograd(x, strided)
    assert np.array_equal(a, b)
    check_oracle(b, x, w)


def test_threads_share_the_cache():
    x, w = problem(7, c=32, k=32)
    bx, bw = backplane.asarray(x), backplane.asarray(w)
    want = conv(x.astype(np.float64), w.astype(np.float64), padding=1)
    errors = []

    def work():
        try:
            with backends.implementations("conv", WINOGRAD):
                for _ in range(5):
                    got = np.asarray(F.conv2d(bx, bw, padding=1))
                    if np.abs(got - want).max() > 1e-3:
                        errors.append("wrong result")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert CACHE.size == 1


@pytest.mark.parametrize("attr", ["max_size", "max_bytes"])
def test_negative_bounds_are_refused_and_change_nothing(attr):
    before = getattr(CACHE, attr)
    with pytest.raises(RuntimeError, match="non-negative"):
        setattr(CACHE, attr, -1)
    assert getattr(CACHE, attr) == before


def test_size_is_read_only():
    with pytest.raises(RuntimeError, match="read-only"):
        CACHE.size = 3


def test_defaults_and_repr():
    assert CACHE.max_size == 256
    assert CACHE.max_bytes == 256 << 20
    assert "conv weight cache" in repr(CACHE).lower() or "ConvWeightCache" in repr(CACHE)


def test_explain_says_what_the_cache_holds():
    x, w = problem(8, c=16, k=16)
    bx, bw = backplane.asarray(x), backplane.asarray(w)

    def note():
        notes = [n for n in backends.explain("conv2d", bx, bw, padding=1).notes if n.startswith("winograd:f4x3:")]
        assert len(notes) == 1, notes
        return notes[0]

    assert "the first call transforms this weight" in note()
    other = w.copy()
    winograd(x, other)  # another weight, over other memory: not this one's entry
    assert "the first call transforms" in note()
    with backends.implementations("conv", WINOGRAD):
        F.conv2d(bx, bw, padding=1)
    assert "holds this weight's transform" in note()
    CACHE.max_bytes = 100
    assert "over cpu.conv_weight_cache.max_bytes" in note()
    CACHE.max_size = 0
    assert "max_size = 0: every call transforms" in note()
    strided = backends.explain("conv2d", bx, bw, padding=1, stride=2).notes
    assert any(n.startswith("winograd:f4x3:") for n in strided)  # still a 3x3 one-group layer: the state is shown
    one_by_one = backends.explain("conv2d", bx, backplane.asarray(w[:, :, :1, :1].copy())).notes
    assert not any(n.startswith("winograd:f4x3:") for n in one_by_one)
