"""`backplane info`: the JSON lists every backend and flag, the text is what an
engineer reads, versions match what the libraries themselves say (read here
through ctypes, independently of Backplane), and CUDA can be hidden."""

import ctypes
import json
import pathlib
import re
import subprocess

import pytest
from conftest import clean_env, run_python

from backplane import _C, _cli


# The CLI is part of every build `make test` runs: not finding it is a failure, not a skip.
CLI = pathlib.Path(_cli.cli_path())


def info(*args, **env):
    proc = subprocess.run([str(CLI), "info", *args], env=clean_env(**env), capture_output=True, text=True,
                          timeout=120)
    return proc


def info_json(**env):
    proc = info("--json", **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def report():
    return info_json()


@pytest.fixture(scope="module")
def text():
    proc = info()
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def by_name(report):
    return {b["name"]: b for b in report["backends"]}


# ---------------------------------------------------------------- JSON

def test_json_lists_every_backend_in_order(report):
    assert [b["name"] for b in report["backends"]] == _C.backend_names()
    for b in report["backends"]:
        assert set(b) >= {"name", "built", "available", "reason", "version", "devices", "features", "details"}


def test_json_lists_every_flag_row_with_value_source_env_and_doc(report):
    rows = _C.flag_rows()
    assert [f["path"] for f in report["flags"]] == [r["path"] for r in rows]
    for f, r in zip(report["flags"], rows):
        assert f["env"][0] == r["env"] == "BACKPLANE_" + r["path"].upper().replace(".", "_")
        assert f["env"][1:] == ([r["vendor_env"]] if r["vendor_env"] else [])
        assert f["doc"] == r["doc"]
        assert f["source"] == "default" and f["value"] == r["default"]  # clean environment


def test_json_shows_an_env_set_flag_with_its_source():
    report = info_json(BACKPLANE_CUDNN_BENCHMARK="1", ATEN_CPU_CAPABILITY="avx2")
    flags = {f["path"]: f for f in report["flags"]}
    assert flags["cudnn.benchmark"]["value"] == "True" and flags["cudnn.benchmark"]["source"] == "env"
    assert flags["cpu.capability"]["value"] == "avx2" and flags["cpu.capability"]["source"] == "env"
    cap = report["cpu_capability"]
    assert cap["cap"] == "avx2" and cap["cap_source"] == "env"
    assert cap["chosen"] == ("AVX2" if cap["detected"] in ("AVX2", "AVX512") else "DEFAULT")


def test_json_build_section_matches_the_extension(report):
    assert report["version"] == _C.__version__
    assert report["build"]["with"] == dict(_C.built_with)


# ---------------------------------------------------------------- text

def test_text_has_one_aligned_line_per_backend_and_flag(text, report):
    lines = text.splitlines()
    backend_lines = [l for l in lines if re.match(r"^  [✓✗] \S", l)]
    assert [l.split()[1] for l in backend_lines] == [b["name"] for b in report["backends"]]
    # The built and available marks sit in the same columns on every line.
    columns = [[m.start() for m in re.finditer(r"\S+", l)][2:4] for l in backend_lines]
    assert all(c == columns[0] for c in columns), columns
    for f in report["flags"]:
        assert any(l.startswith("  " + f["path"] + " ") for l in lines), f["path"]


def test_text_on_the_reference_machine(text, report):
    """2-core AMD Zen 5: AVX-512 with AVX512_BF16, CUDA built but no GPU, library versions shown."""
    backends = by_name(report)
    if "avx512_bf16" not in open("/proc/cpuinfo").read():
        pytest.skip("not the reference CPU")
    assert re.search(r"detected\s+AVX512\s+\(AVX512_BF16: yes\)", text)
    assert re.search(r"chosen\s+AVX512", text)
    assert "avx512_bf16" in backends["cpu"]["features"]
    if backends["cuda"]["built"] and not backends["cuda"]["available"]:
        assert re.search(r"^  ✗ cuda\s+✓\s+✗.*not available: ", text, re.M)
    for name in ("cudnn", "openblas", "onednn", "fftw"):
        if backends[name]["built"]:
            assert backends[name]["version"], name
            assert re.search(rf"^  . {name}\s+✓\s+.\s+{re.escape(backends[name]['version'])}\b", text, re.M)


# ---------------------------------------------------------------- versions, checked through ctypes

def linked_library(binary, stem):
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith(stem) and "=>" in line:
            return line.split("=>")[1].split("(")[0].strip()
    pytest.skip(f"{binary.name} does not link {stem}")


LIB_DIR = CLI.parent.parent / "lib"


def test_openblas_version_is_the_librarys(report):
    b = by_name(report)["openblas"]
    if not b["built"]:
        pytest.skip("built without OpenBLAS")
    lib = ctypes.CDLL(linked_library(LIB_DIR / "libbackplane.so", "libopenblas"))
    lib.openblas_get_config.restype = ctypes.c_char_p
    assert lib.openblas_get_config().decode().split()[1] == b["version"]


def test_onednn_version_is_the_librarys(report):
    b = by_name(report)["onednn"]
    if not b["built"]:
        pytest.skip("built without oneDNN")

    class Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int)]

    lib = ctypes.CDLL(linked_library(LIB_DIR / "libbackplane.so", "libdnnl"))
    lib.dnnl_version.restype = ctypes.POINTER(Version)
    v = lib.dnnl_version().contents
    assert b["version"] == f"{v.major}.{v.minor}.{v.patch}"


def test_fftw_version_is_the_librarys(report):
    b = by_name(report)["fftw"]
    if not b["built"]:
        pytest.skip("built without FFTW")
    lib = ctypes.CDLL(linked_library(LIB_DIR / "libbackplane.so", "libfftw3."))
    # fftw_version is a char array, not a pointer: take its address.
    text = ctypes.cast(ctypes.addressof(ctypes.c_char.in_dll(lib, "fftw_version")), ctypes.c_char_p).value.decode()
    assert text.split("-")[1] == b["version"]


def test_cudnn_version_is_the_librarys(report):
    b = by_name(report)["cudnn"]
    if not b["built"] or not b["version"]:
        pytest.skip("cuDNN not built or backplane_cuda not loadable")
    lib = ctypes.CDLL(linked_library(LIB_DIR / "libbackplane_cuda.so", "libcudnn.so"))
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    v = lib.cudnnGetVersion()
    assert b["version"] == f"{v // 10000}.{v // 100 % 100}.{v % 100}"


# ---------------------------------------------------------------- CUDA hidden, selftest

HIDDEN = {"BACKPLANE_CUDA_LIBRARY": "/nonexistent/libbackplane_cuda.so"}


def test_info_works_with_cuda_hidden(tmp_path):
    report = info_json(LD_LIBRARY_PATH=str(tmp_path), **HIDDEN)
    cuda = by_name(report)["cuda"]
    if not cuda["built"]:
        pytest.skip("built without CUDA")
    assert not cuda["available"]
    assert cuda["reason"].startswith("not available: cannot load /nonexistent/libbackplane_cuda.so")
    assert by_name(report)["cudnn"]["reason"].startswith("not available: cannot load")
    text = info(LD_LIBRARY_PATH=str(tmp_path), **HIDDEN)
    assert text.returncode == 0 and "cannot load /nonexistent/libbackplane_cuda.so" in text.stdout


def test_import_works_with_cuda_hidden(tmp_path):
    code = (
        "import backplane, backplane.cuda as c\n"
        "from backplane import _C\n"
        "assert not c.is_available() and c.device_count() == 0\n"
        "assert len(_C.list_backends()) > 0\n"
        "print(c.unavailable_reason()); print(_C.cudnn_version())\n"
    )
    proc = run_python(code, env={"LD_LIBRARY_PATH": str(tmp_path), **HIDDEN})
    reason, cudnn_version = proc.stdout.splitlines()
    if _C.cuda_is_built():
        assert reason.startswith("not available: cannot load /nonexistent/libbackplane_cuda.so")
    assert cudnn_version == "None"


def test_selftest_runs_where_cuda_is_available_and_is_skipped_elsewhere():
    proc = info("--json", "--selftest")
    report = json.loads(proc.stdout)
    st = report["selftest"]
    if by_name(report)["cuda"]["available"]:
        assert st["ran"] and st["ok"], st
        assert proc.returncode == 0
    else:
        assert not st["ran"] and st["message"].startswith("skipped: CUDA is not ")
        assert proc.returncode == 0
    text = info("--selftest").stdout
    assert "CUDA selftest" in text
