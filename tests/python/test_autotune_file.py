"""The autotune cache file as user data (DESIGN.md §10, issue 10 items 1-4):
concurrent savers lose nothing, a file that is not a cache is never written
over (nor a device, a FIFO or a symlink), a full disk is an error, reads are
bounded and never block, NUL bytes in paths are refused."""

import os
import subprocess
import sys
import time

import pytest

from backplane import backends
from conftest import clean_env, run_python

HEADER = "# backplane autotune cache v2"

# Autotunes one matmul of shape (n, n) x (n, n) with benchmark on.
TUNE = ("import numpy as np, backplane; from backplane import backends; backends.cpu.benchmark = True; "
        "a = np.ones(({n}, {n}), np.float32); backplane.matmul(a, a); ")


def entries(path):
    lines = path.read_text().splitlines()
    assert lines[0] == HEADER
    assert all(len(line.split("\t")) == 10 for line in lines[1:]), lines
    return lines[1:]


def test_eight_processes_saving_at_once_lose_nothing(tmp_path):
    path = tmp_path / "cache.txt"
    for round_ in range(2):
        start = time.time() + 3.0  # everyone saves at the same moment
        code = TUNE + "import time; time.sleep(max(0.0, {start} - time.time())); backends.autotune_cache.save({path!r})"
        procs = [subprocess.Popen([sys.executable, "-c", code.format(n=8 + 8 * round_ + i, start=start, path=str(path))],
                                  env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(8)]
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        lines = entries(path)
        assert len(lines) == 8 * (round_ + 1), lines
        assert len({tuple(line.split("\t")[:8]) for line in lines}) == len(lines)
    assert sorted(os.listdir(tmp_path)) == ["cache.txt", "cache.txt.lock"]  # no temporary file left


def test_save_refuses_a_file_that_is_not_a_cache(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("my notes\n")
    with pytest.raises(ValueError, match="notes.txt"):
        backends.autotune_cache.save(path)
    assert path.read_text() == "my notes\n"


def test_env_file_that_cannot_be_read_is_left_untouched_with_one_warning(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("my notes\n")
    proc = run_python(TUNE.format(n=16), env={"BACKPLANE_AUTOTUNE_CACHE": str(path)})
    assert path.read_text() == "my notes\n"
    assert proc.stderr.count("BACKPLANE_AUTOTUNE_CACHE") == 1, proc.stderr


def test_env_file_of_the_old_format_is_dropped_with_one_warning_and_replaced(tmp_path):
    path = tmp_path / "cache.txt"
    path.write_text("# backplane autotune cache v1\nmatmul\tcpu\t2\tf32\t0x0\t1,16,16,16\t\t\tref:any\t1\n")
    proc = run_python(TUNE.format(n=16), env={"BACKPLANE_AUTOTUNE_CACHE": str(path)})
    assert proc.stderr.count("warning") == 1 and "older format v1" in proc.stderr, proc.stderr
    assert len(entries(path)) == 1


def test_env_fifo_does_not_block_import(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-c", "import backplane"], env=clean_env(BACKPLANE_AUTOTUNE_CACHE=str(fifo)),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "FIFO" in proc.stderr, proc.stderr
    assert os.path.exists(fifo) and not os.path.isfile(fifo)


def test_load_of_a_device_is_refused_at_once():
    # In a child, so a regression hangs only the child.
    code = ("from backplane import backends\ntry:\n    backends.autotune_cache.load('/dev/zero')\n"
            "except ValueError as e:\n    print('refused:', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], env=clean_env(), capture_output=True, text=True, timeout=60)
    assert "refused:" in proc.stdout and "regular file" in proc.stdout, proc.stdout + proc.stderr


def test_symlinks_are_not_replaced(tmp_path):
    real = tmp_path / "real.txt"
    backends.autotune_cache.save(real)
    before = real.read_text()
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with pytest.raises(ValueError, match="symbolic link"):
        backends.autotune_cache.save(link)
    assert link.is_symlink() and real.read_text() == before


def test_nul_in_a_path_is_refused(tmp_path):
    with pytest.raises(ValueError, match="NUL"):
        backends.autotune_cache.save(str(tmp_path / "a\0b"))
    with pytest.raises(ValueError, match="NUL"):
        backends.autotune_cache.load(str(tmp_path / "a\0b"))
    assert os.listdir(tmp_path) == []


def test_a_full_disk_is_an_error_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "cache.txt"
    run_python(TUNE.format(n=16) + f"backends.autotune_cache.save({str(path)!r})")
    before = path.read_text()
    # A file-size limit makes every write past 64 bytes fail (EFBIG), as a full disk would.
    code = (TUNE.format(n=24) + "import resource, signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (64, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
            f"try:\n    backends.autotune_cache.save({str(path)!r})\nexcept RuntimeError as e:\n    print('failed:', e)\n")
    proc = run_python(code)
    assert "failed:" in proc.stdout and "cannot write" in proc.stdout, proc.stdout + proc.stderr
    assert path.read_text() == before
    assert sorted(os.listdir(tmp_path)) == ["cache.txt", "cache.txt.lock"]
