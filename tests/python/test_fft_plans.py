"""backends.cpu.fft_plan_cache and cpu.fft_planning_effort from Python: hits,
LRU order, max_size changes that evict, clear, size 0, the byte bound and
memory_stats; concurrent calls from threads; the planning effort; the trace's
planning line; FFTW wisdom saved and loaded (in a temp dir, never over a
file that is not wisdom)."""

import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import backplane
import backplane.fft as F
from backplane import backends
from conftest import run_python

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")

RNG = np.random.default_rng(1)


def crand(shape, dtype=np.complex64):
    return (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)).astype(dtype)


@pytest.fixture
def cache():
    """The CPU plan cache, empty, with its bounds restored afterwards."""
    c = backends.cpu.fft_plan_cache
    keep = c.max_size, c.max_bytes
    c.clear()
    yield c
    c.max_size, c.max_bytes = keep
    c.clear()


def is_cached(x):
    notes = backends.explain("fft", x).notes
    return any("is cached" in n for n in notes)


def test_hits_and_misses(cache):
    x = crand((64,))
    hits, misses = cache.hits, cache.misses
    want = np.fft.fft(x.astype(np.complex128))
    for _ in range(3):
        np.testing.assert_allclose(F.fft(x).numpy(), want, rtol=1e-5, atol=1e-5)
    assert (cache.hits - hits, cache.misses - misses) == (2, 1)
    assert cache.size == 1 and is_cached(x)
    F.fft(x.astype(np.complex128))  # another precision: another plan
    F.ifft(x)  # another direction: another plan
    assert cache.size == 3


def test_lru_order_and_shrinking_evict(cache):
    cache.max_size = 3
    a, b, c, d = (crand((n,)) for n in (16, 24, 32, 40))
    for x in (a, b, c):
        F.fft(x)
    F.fft(a)  # a is now the most recently used, b the least
    F.fft(d)  # over the bound: b goes
    assert [is_cached(x) for x in (a, b, c, d)] == [True, False, True, True]
    cache.max_size = 1  # shrinking evicts at once, least recently used first
    assert cache.size == 1
    assert [is_cached(x) for x in (a, c, d)] == [False, False, True]
    cache.clear()
    assert cache.size == 0 and cache.bytes == 0 and not is_cached(d)


def test_size_zero_disables_caching(cache):
    x = crand((50,))
    cache.max_size = 0
    misses = cache.misses
    for _ in range(3):
        np.testing.assert_allclose(F.fft(x).numpy(), np.fft.fft(x), rtol=1e-5, atol=1e-5)
    assert cache.size == 0 and cache.misses - misses == 3
    assert any("max_size = 0" in n for n in backends.explain("fft", x).notes)


def test_bounds_are_checked(cache):
    with pytest.raises(RuntimeError, match="non-negative, but got -1"):
        cache.max_size = -1
    with pytest.raises(RuntimeError, match="non-negative, but got -5"):
        cache.max_bytes = -5
    with pytest.raises(RuntimeError, match="read-only"):
        cache.size = 3
    assert cache.max_size == 4096 and cache.max_bytes == 0


def test_byte_bound_and_memory_stats(cache):
    base = backplane.memory_stats()["cpu"]["plan_bytes"]
    for n in (256, 512, 1024, 4096):
        F.fft(crand((n,)))
    held = cache.bytes
    assert held > 0
    assert backplane.memory_stats()["cpu"]["plan_bytes"] == base + held
    cache.max_bytes = held - 1  # evicts least recently used plans until the rest fit
    assert 0 < cache.bytes <= held - 1 and cache.size < 4
    assert not is_cached(crand((256,)))  # the least recently used went first
    assert is_cached(crand((4096,)))
    cache.clear()
    assert backplane.memory_stats()["cpu"]["plan_bytes"] == base


def test_concurrent_calls_from_threads(cache):
    cache.max_size = 5  # fewer than the problems: plans are evicted while others run
    problems = [crand((4, n), dt) for n in (12, 17, 64, 100, 243, 256, 1000, 97) for dt in (np.complex64, np.complex128)]
    wants = [np.fft.fft(x.astype(np.complex128)) for x in problems]

    def work(i):
        k = (i * 7) % len(problems)
        got = F.fft(problems[k]).numpy()
        if i % 17 == 0:
            cache.clear()
        return float(np.abs(got - wants[k]).max() / np.abs(wants[k]).max())

    with ThreadPoolExecutor(6) as pool:
        errors = list(pool.map(work, range(300)))
    assert max(errors) < 1e-5
    assert cache.size <= 5


def test_planning_effort_is_part_of_the_key(cache):
    x = crand((3, 120))
    want = np.fft.fft(x.astype(np.complex128))
    assert backends.cpu.fft_planning_effort == "estimate"
    F.fft(x)
    for effort in ("measure", "patient"):
        backends.cpu.fft_planning_effort = effort
        assert not is_cached(x)
        np.testing.assert_allclose(F.fft(x).numpy(), want, rtol=1e-5, atol=1e-5)
        assert any(f"effort '{effort}'" in n for n in backends.explain("fft", x).notes)
    assert cache.size == 3
    with pytest.raises(ValueError, match="estimate, measure, patient"):
        backends.cpu.fft_planning_effort = "exhaustive"


def test_measuring_plans_leave_the_input_alone(cache):
    # "measure" times candidates on scratch arrays, never on the caller's.
    backends.cpu.fft_planning_effort = "measure"
    x = crand((8, 96))
    keep = x.copy()
    r = RNG.uniform(-1, 1, (8, 96))
    keep_r = r.copy()
    F.fft(x), F.rfft(r), F.irfft(x)
    np.testing.assert_array_equal(x, keep)
    np.testing.assert_array_equal(r, keep_r)


def test_effort_from_the_environment():
    out = run_python("from backplane import backends; print(backends.cpu.fft_planning_effort)",
                     env={"BACKPLANE_CPU_FFT_PLANNING_EFFORT": "measure"})
    assert out.stdout.strip() == "measure"


def test_trace_shows_the_planning_time():
    code = ("import numpy as np, backplane.fft as F; x = np.ones(100, np.complex64); F.fft(x); F.fft(x)")
    err = run_python(code, env={"BACKPLANE_TRACE": "1"}).stderr
    plan_lines = [line for line in err.splitlines() if "plan fft: fftw:dft" in line]
    assert len(plan_lines) == 1, err  # the second call finds the plan cached
    assert "planned in" in plan_lines[0] and "effort estimate" in plan_lines[0]


# ---------------------------------------------------------------- wisdom

def test_wisdom_round_trip_in_a_temp_dir(cache, tmp_path):
    backends.cpu.fft_planning_effort = "measure"
    F.fft(crand((128,)))
    F.fft(crand((64,), np.complex128))
    path = tmp_path / "fft.wisdom"
    cache.save(path)
    text = path.read_text()
    assert text.startswith("# backplane fftw wisdom v1\n")
    assert "fftwf_wisdom" in text and "fftw_wisdom" in text
    assert sorted(os.listdir(tmp_path)) == ["fft.wisdom", "fft.wisdom.lock"]  # no temporary file left
    assert cache.load(path) is True
    cache.save(path)  # merged with itself: still one valid file
    assert path.read_text().startswith("# backplane fftw wisdom v1\n")


def test_wisdom_is_never_written_over_another_file(cache, tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n")
    with pytest.raises(RuntimeError, match="not an FFTW wisdom file"):
        cache.save(other)
    assert other.read_text() == "my notes\n"
    with pytest.raises(ValueError, match="notes.txt"):
        cache.load(other)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert cache.load(tmp_path / "absent.wisdom") is False
    assert any("no wisdom file" in str(w.message) for w in seen)
    assert not (tmp_path / "absent.wisdom").exists()


PLAN_4096 = """
import numpy as np, backplane.fft as F
from backplane import backends
backends.cpu.fft_planning_effort = "measure"
{before}
x = np.ones(4096, np.complex64)
F.fft(x)
note = [n for n in backends.explain("fft", x).notes if "planned in" in n][0]
print(float(note.split("planned in ")[1].split(" ms")[0]))
{after}
"""


def test_wisdom_makes_measured_planning_cheap_in_a_new_process(tmp_path):
    path = str(tmp_path / "fft.wisdom")
    first = float(run_python(PLAN_4096.format(before="", after=f"backends.cpu.fft_plan_cache.save({path!r})")).stdout)
    again = float(run_python(PLAN_4096.format(before=f"backends.cpu.fft_plan_cache.load({path!r})", after="")).stdout)
    assert again < first / 4, (first, again)


def test_import_creates_the_planner_but_caches_no_plan():
    # Note [FFT warm-up at import]: the import pays for FFTW's planners and
    # the CPU rows' availability; nothing enters the plan cache.
    code = ("import backplane; from backplane import backends; c = backends.cpu.fft_plan_cache; "
            "print(c.size, c.misses, c.bytes, backplane.memory_stats()['cpu']['plan_bytes'])")
    assert run_python(code).stdout.split() == ["0", "0", "0", "0"]
