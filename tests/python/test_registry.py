"""Backend discovery from Python: list_backends records, the CPU capability
cap, truthful not-built answers and CUDA answers without a GPU."""

import json
import os
import subprocess
import sys

import pytest
from conftest import clean_env

from backplane import _C

NEVER_BUILT = ["mkl", "nnpack", "mps", "miopen", "kleidiai", "rocm"]


def backends():
    return {b.name: b for b in _C.list_backends()}


def run_python(code, **env):
    """Runs `code` in a fresh interpreter (env is read once per process), warnings shown."""
    return subprocess.run([sys.executable, "-W", "always", "-c", code], env=clean_env(**env),
                          capture_output=True, text=True, timeout=60)


def cap_env_name():
    """The native env var of flag row cpu.capability, from the flag table itself."""
    for row in _C.flag_rows():
        if row["path"] == "cpu.capability":
            return row["env"]
    raise AssertionError("flag row cpu.capability is missing")


# ---------------------------------------------------------------- records

def test_records_have_attributes_and_a_useful_repr():
    cpu = backends()["cpu"]
    assert cpu.built and cpu.available and cpu.reason == ""
    assert "name='cpu'" in repr(cpu) and "available=True" in repr(cpu)
    assert cpu.devices and cpu.devices[0].name
    assert isinstance(cpu.details, dict) and cpu.details["capability"] == _C.get_cpu_capability()
    d = cpu.to_dict()
    assert d["name"] == "cpu" and d["features"] == list(cpu.features)
    json.dumps(d)  # plain data


def test_every_record_keeps_built_and_available_apart():
    for b in _C.list_backends():
        if not b.built:
            assert not b.available and b.reason.startswith("not built: "), b
        elif not b.available:
            assert b.reason.startswith("not available: "), b
        else:
            assert b.reason == "", b


@pytest.mark.parametrize("name", NEVER_BUILT)
def test_backends_this_build_never_has_say_not_built(name):
    b = _C.backend_info(name)
    assert not b.built and not b.available and b.reason.startswith("not built: ")


def test_not_built_module_answers_are_truthful():
    assert _C.mkl_is_available() is False
    assert _C.nnpack_is_available() is False
    assert _C.kleidiai_is_available() is False
    assert _C.mps_is_built() is False and _C.mps_is_available() is False
    assert _C.mps_is_macos_or_newer(13, 0) is False
    with pytest.raises(NotImplementedError):
        _C.mps_get_name()
    assert _C.mkldnn_is_acl_available() is False
    assert _C.mkldnn_is_available() == backends()["onednn"].built
    assert _C.openmp_is_available() == backends()["openmp"].built
    assert _C.cusparselt_is_available() == backends()["cusparselt"].built
    if not _C.cusparselt_is_available():
        assert _C.cusparselt_version() is None and _C.cusparselt_get_max_alg_id() is None


def test_cudnn_is_available_is_the_build_and_version_comes_from_the_library():
    cudnn = backends()["cudnn"]
    assert _C.cudnn_is_available() == cudnn.built
    v = _C.cudnn_version()
    if cudnn.built and cudnn.version:
        major, minor, patch = (int(x) for x in cudnn.version.split("."))
        assert v == major * 10000 + minor * 100 + patch
    elif not cudnn.built:
        assert v is None


def test_unknown_backend_is_a_value_error():
    with pytest.raises(ValueError, match="cudnn"):
        _C.backend_info("tpu")


# ---------------------------------------------------------------- cuda

def test_cuda_without_a_device_answers_not_available():
    import backplane.cuda as cuda
    assert cuda.is_built() == backends()["cuda"].built
    if cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert cuda.device_count() == 0
    assert cuda.unavailable_reason().startswith("not available: " if cuda.is_built() else "not built: ")
    assert backends()["cuda"].reason == cuda.unavailable_reason()


def test_cuda_is_built_on_this_machine_where_nvcc_is_present():
    if not os.path.exists("/usr/local/cuda/bin/nvcc"):
        pytest.skip("no nvcc here")
    if _C.built_why["cuda"].startswith("disabled"):
        pytest.skip("configured with BACKPLANE_USE_CUDA=OFF (the sanitizer build of make check)")
    assert _C.cuda_is_built() is True


def test_cuda_bad_index_names_the_index_and_the_range():
    import backplane.cuda as cuda
    n = cuda.device_count()
    with pytest.raises(IndexError, match=f"device index {n} is out of range"):
        cuda.get_device_name(n)
    with pytest.raises(IndexError, match=f"device index {n + 3}"):
        cuda.get_device_capability(n + 3)
    with pytest.raises(ValueError, match="-1"):
        cuda.get_device_name(-1)
    with pytest.raises(ValueError):
        cuda.get_device_name("gpu:0")
    with pytest.raises(TypeError):
        cuda.get_device_name(1.5)


def test_cuda_devices_have_names_and_capabilities():
    import backplane.cuda as cuda
    for i in range(cuda.device_count()):
        assert cuda.get_device_name(i) == cuda.get_device_name(f"cuda:{i}")
        major, minor = cuda.get_device_capability(i)
        assert major >= 3 and minor >= 0


# ---------------------------------------------------------------- cpu capability

def _proc_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _hardware_level():
    flags = _proc_flags()
    if {"avx512f", "avx512vl", "avx512bw", "avx512dq", "fma"} <= flags:
        return "AVX512"
    if {"avx2", "fma"} <= flags:
        return "AVX2"
    return "DEFAULT"


def test_detected_capability_matches_the_kernels_flags():
    if not _proc_flags():
        pytest.skip("no /proc/cpuinfo")
    assert _C.detected_cpu_capability() == _hardware_level()
    assert _C.cpu_has_avx512_bf16() == ("avx512_bf16" in _proc_flags())


CAPABILITY_PROBE = "from backplane import _C; print(_C.get_cpu_capability(), _C.detected_cpu_capability())"
ORDER = ["DEFAULT", "AVX2", "AVX512"]


@pytest.mark.parametrize("value,wanted", [("default", "DEFAULT"), ("avx2", "AVX2"), ("avx512", "AVX512")])
def test_aten_cpu_capability_caps_the_level(value, wanted):
    r = run_python(CAPABILITY_PROBE, ATEN_CPU_CAPABILITY=value)
    assert r.returncode == 0, r.stderr
    chosen, detected = r.stdout.split()
    # Never above the hardware (a deliberate difference from PyTorch).
    expected = ORDER[min(ORDER.index(wanted), ORDER.index(detected))]
    assert chosen == expected
    if ORDER.index(wanted) > ORDER.index(detected):
        assert "not supported by this CPU" in r.stderr


def test_upper_case_aten_cpu_capability_is_invalid_as_in_pytorch():
    # PyTorch compares the value case-sensitively (spec, 2.15 section).
    r = run_python(CAPABILITY_PROBE, ATEN_CPU_CAPABILITY="AVX2")
    chosen, detected = r.stdout.split()
    assert chosen == detected and "ignoring invalid value for ATEN_CPU_CAPABILITY: AVX2" in r.stderr


def test_bogus_aten_cpu_capability_warns_and_auto_detects():
    r = run_python(CAPABILITY_PROBE, ATEN_CPU_CAPABILITY="bogus")
    assert r.returncode == 0, r.stderr
    chosen, detected = r.stdout.split()
    assert chosen == detected
    assert "ignoring invalid value for ATEN_CPU_CAPABILITY: bogus" in r.stderr


def test_native_env_wins_over_aten_cpu_capability():
    r = run_python(CAPABILITY_PROBE, ATEN_CPU_CAPABILITY="default", **{cap_env_name(): "avx512"})
    assert r.returncode == 0, r.stderr
    chosen, detected = r.stdout.split()
    assert chosen == detected  # avx512 capped at the hardware; "default" ignored
    r = run_python(CAPABILITY_PROBE, ATEN_CPU_CAPABILITY="avx512", **{cap_env_name(): "default"})
    assert r.stdout.split()[0] == "DEFAULT"


def test_capability_is_computed_once():
    first = _C.get_cpu_capability()
    os.environ["ATEN_CPU_CAPABILITY"] = "default"
    try:
        assert _C.get_cpu_capability() == first
    finally:
        del os.environ["ATEN_CPU_CAPABILITY"]


# ---------------------------------------------------------------- oneDNN verbose

ONEDNN_PRIMITIVE = r'''
import ctypes, sys
from backplane import _C
if {level} >= 0:
    _C.flag_set("mkldnn.verbose_level", {level})
lib = ctypes.CDLL("libdnnl.so.2")  # already loaded by backplane: the same library
engine = ctypes.c_void_p()
assert lib.dnnl_engine_create(ctypes.byref(engine), 1, 0) == 0        # dnnl_cpu
md = ctypes.create_string_buffer(4096)                                 # dnnl_memory_desc_t
assert lib.dnnl_memory_desc_init_by_tag(md, 1, (ctypes.c_int64 * 1)(16), 3, 2) == 0  # f32, a
pd, prim = ctypes.c_void_p(), ctypes.c_void_p()
assert lib.dnnl_reorder_primitive_desc_create(ctypes.byref(pd), md, engine, md, engine, None) == 0
assert lib.dnnl_primitive_create(ctypes.byref(prim), pd) == 0
'''


@pytest.mark.parametrize("level,prints", [(2, True), (0, False), (-1, False)])
def test_mkldnn_verbose_level_drives_onednn(level, prints):
    """Setting flag mkldnn.verbose_level to 2 (on creation) makes oneDNN log primitive creation."""
    if not _C.mkldnn_is_available():
        pytest.skip("built without oneDNN")
    r = run_python(ONEDNN_PRIMITIVE.format(level=level))
    assert r.returncode == 0, r.stderr
    assert ("onednn_verbose,create" in r.stdout) == prints, r.stdout
