"""PyTorch 2.15 behaviours (issue 11), checked without PyTorch: error classes,
the fp32 precision tree, cudnn.depthwise_kernel, backends.set_flags, module
attribute refusal, workspaces, preferred_blas_library, cuFFT plan cache
indices, ATEN_CPU_CAPABILITY, SDPAParams / sdpa_kernel / verbose argument
rules, mps, cudnn.rnn, the flash-attention registry and python_native's
keyword names. tests/conformance compares the same with the real PyTorch."""

import logging
import pickle

import numpy as np
import pytest

import backplane
import backplane.backends as B
from backplane import _C
from backplane.nn import attention as A
from conftest import run_python


# ---------------------------------------------------------------- 1, 2, 15: error classes

@pytest.mark.parametrize("assign", [
    lambda: setattr(B.cudnn, "benchmark", 1),
    lambda: setattr(B.cudnn, "benchmark_limit", "a"),
    lambda: setattr(B.cuda.matmul, "allow_tf32", 1),
    lambda: B.cuda.enable_flash_sdp(1),
    lambda: backplane.set_float32_matmul_precision(1),
    lambda: B.cudnn.set_flags(1),
    lambda: B.cuda.cublas_workspace_size("a"),
])
def test_type_errors_are_also_runtime_errors_with_data(assign):
    with pytest.raises(TypeError) as info:
        assign()
    assert isinstance(info.value, RuntimeError)  # what PyTorch raises
    assert info.value.subject and info.value.value and info.value.allowed


@pytest.mark.parametrize("assign", [
    lambda: setattr(B.cudnn, "fp32_precision", "bogus"),
    lambda: setattr(B.cudnn, "benchmark_limit", -1),
    lambda: B.cuda.cublaslt_workspace_size(-1),
    lambda: B.cuda.preferred_blas_library("bogus"),
])
def test_value_errors_are_also_runtime_errors(assign):
    with pytest.raises(ValueError) as info:
        assign()
    assert isinstance(info.value, RuntimeError)


def test_op_errors_are_runtime_errors_too():
    a, b = backplane.asarray(np.ones((2, 3), np.float32)), backplane.asarray(np.ones((4, 5), np.float32))
    with pytest.raises(RuntimeError):
        backplane.matmul(a, b)
    q = backplane.asarray(np.ones((1, 2, 4, 8), np.float32))
    mask = backplane.asarray(np.zeros((4, 4), np.float32))
    with pytest.raises(RuntimeError):
        backplane.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask, is_causal=True)
    with pytest.raises(ValueError):
        backplane.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=2.0)


@pytest.mark.parametrize("holder,name", [
    ("cudnn", "benchmark"), ("cudnn", "enabled"), ("cudnn", "deterministic"), ("cudnn", "allow_tf32"),
    ("cuda.matmul", "allow_tf32"), ("cuda.matmul", "allow_fp16_accumulation"), ("mkldnn", "enabled"),
    ("mkldnn", "deterministic"), ("miopen", "immediate"), ("cuda.matmul", "prefer_cublaslt_grouped_gemm"),
])
def test_none_to_a_bool_setter_names_nonetype_and_changes_nothing(holder, name):
    obj = B
    for part in holder.split("."):
        obj = getattr(obj, part)
    before = getattr(obj, name)
    with pytest.raises(TypeError, match="expects a bool, but got NoneType"):
        setattr(obj, name, None)
    assert getattr(obj, name) == before


def test_none_to_other_setters():
    with pytest.raises(TypeError, match="expects a str, but got NoneType"):
        backplane.set_float32_matmul_precision(None)
    with pytest.raises(TypeError, match="expects an int, but got NoneType"):
        B.cudnn.benchmark_limit = None
    with pytest.raises(TypeError, match="but got NoneType"):
        B.fp32_precision = None
    assert B.fp32_precision == "none"


# ---------------------------------------------------------------- 3: the fp32 precision tree

def _tree():
    return [B.cudnn.conv.fp32_precision, B.cudnn.rnn.fp32_precision, B.cuda.matmul.fp32_precision]


@pytest.mark.parametrize("steps,expected", [
    ([("", "ieee")], ["ieee", "ieee", "ieee"]),
    ([("cudnn", "ieee")], ["ieee", "ieee", "ieee"]),
    ([("", "bf16")], ["none", "none", "none"]),
    ([("", "tf32")], ["tf32", "tf32", "tf32"]),
    ([("", "ieee"), ("", "none")], ["tf32", "tf32", "none"]),
    ([("cudnn", "ieee"), ("cudnn.conv", "tf32")], ["tf32", "ieee", "ieee"]),
    ([("cudnn", "ieee"), ("cudnn.conv", "none"), ("cudnn", "none")], ["none", "tf32", "none"]),
])
def test_cudnn_tf32_default_is_a_fallback(steps, expected):
    """What PyTorch 2.15.0 reads after the same assignments."""
    for holder, value in steps:
        obj = B
        for part in filter(None, holder.split(".")):
            obj = getattr(obj, part)
        obj.fp32_precision = value
    assert _tree() == expected


def test_turning_tf32_off_globally_turns_it_off_for_cudnn():
    assert B.cudnn.allow_tf32
    B.fp32_precision = "ieee"
    assert not B.cudnn.allow_tf32
    B.cudnn.allow_tf32 = False  # explicit "none" on both leaves: no fallback any more
    B.fp32_precision = "none"
    assert _tree()[:2] == ["none", "none"] and not B.cudnn.allow_tf32


def test_flag_reset_makes_a_leaf_never_set_again():
    B.cudnn.conv.fp32_precision = "tf32"
    B.fp32_precision = "ieee"
    assert B.cudnn.conv.fp32_precision == "tf32"  # explicit
    _C.flag_reset("cudnn.conv.fp32_precision")
    assert _C.flag_source("cudnn.conv.fp32_precision") == "default"
    assert B.cudnn.conv.fp32_precision == "ieee"


# ---------------------------------------------------------------- 4, 5: depthwise_kernel, set_flags, attributes

def test_depthwise_kernel_values_and_bad_values():
    assert B.cudnn.depthwise_kernel == "auto"
    for value in ("cudnn", "native", "auto"):
        B.cudnn.depthwise_kernel = value
        assert B.cudnn.depthwise_kernel == value
    for bad, cls in (("bogus", ValueError), ("NATIVE", ValueError), (1, TypeError), (None, TypeError)):
        with pytest.raises(cls, match="depthwise_kernel"):
            B.cudnn.depthwise_kernel = bad
        assert B.cudnn.depthwise_kernel == "auto"


def test_cudnn_set_flags_is_a_7_tuple_and_flags_scopes_depthwise():
    orig = B.cudnn.set_flags(_depthwise_kernel="native")
    assert len(orig) == 7 and orig[-1] == "auto" and B.cudnn.depthwise_kernel == "native"
    assert B.cudnn.set_flags(_depthwise_kernel=None)[-1] == "native"  # None leaves it
    with B.cudnn.flags(enabled=True):  # PyTorch's default: depthwise_kernel="auto"
        assert B.cudnn.depthwise_kernel == "auto"
    with B.cudnn.flags(enabled=True, depthwise_kernel="cudnn"):
        assert B.cudnn.depthwise_kernel == "cudnn"
    assert B.cudnn.depthwise_kernel == "native"
    with pytest.raises(ValueError):  # nothing applied
        B.cudnn.set_flags(False, _depthwise_kernel="bogus")
    assert B.cudnn.enabled and B.cudnn.depthwise_kernel == "native"


def test_depthwise_kernel_honours_freezing():
    B.disable_global_flags()
    with pytest.raises(RuntimeError, match="disable_global_flags"):
        B.cudnn.depthwise_kernel = "native"
    with B.cudnn.flags(enabled=True, depthwise_kernel="native"):
        assert B.cudnn.depthwise_kernel == "native"


def test_backends_set_flags():
    assert B.set_flags() == ("none",)
    assert B.set_flags("ieee") == ("none",) and B.fp32_precision == "ieee"
    assert B.set_flags(None) == ("ieee",) and B.fp32_precision == "ieee"
    with pytest.raises(ValueError):
        B.set_flags("bogus")
    with pytest.raises(TypeError):
        B.set_flags(1)
    assert B.fp32_precision == "ieee"


@pytest.mark.parametrize("module", [B, B.cpu, B.cuda, B.cudnn, B.cudnn.rnn, B.mkldnn, B.mkl, B.mps, B.nnpack,
                                    B.openmp, B.mha, B.miopen, B.kleidiai, B.cusparselt, B.opt_einsum,
                                    B.python_native])
def test_backends_modules_refuse_unknown_attributes(module):
    with pytest.raises(AttributeError, match="refuse new attributes"):
        module.benchmrk = True
    assert not hasattr(module, "benchmrk")
    module._private_note = 1  # private names and existing ones still go through
    del module._private_note


def test_existing_module_attributes_can_still_be_replaced(monkeypatch):
    monkeypatch.setattr(B.cuda, "is_flash_attention_available", lambda: "patched")
    assert B.cuda.is_flash_attention_available() == "patched"


# ---------------------------------------------------------------- 6, 7, 9: workspaces, BLAS library, env

@pytest.mark.filterwarnings("ignore:.*experimental feature")
def test_preferred_blas_library_takes_every_pytorch_name():
    for name, expected in (("hipblas", "Cublas"), ("hipblaslt", "Cublaslt"), ("ck", "Ck"), ("cublas", "Cublas")):
        if expected == "Cublaslt" and not B.cuda.is_built():  # as PyTorch without CUDA
            with pytest.raises(RuntimeError, match="not been compiled with cuBLASLt"):
                B.cuda.preferred_blas_library(name)
            continue
        assert B.cuda.preferred_blas_library(name).name == expected
        assert B.cuda.preferred_blas_library().name == expected
    with pytest.raises(ValueError, match="Choose from: default, cublas, hipblas, cublaslt, hipblaslt, ck"):
        B.cuda.preferred_blas_library("CUBLAS")
    assert B.cuda.preferred_blas_library().name == "Cublas"


@pytest.mark.parametrize("env,expected", [
    ({"BACKPLANE_CUDA_PREFERRED_BLAS_LIBRARY": "hipblaslt"}, "Cublaslt"),
    ({"BACKPLANE_CUDA_PREFERRED_BLAS_LIBRARY": "ck"}, "Ck"),
    ({"TORCH_BLAS_PREFER_HIPBLASLT": "1"}, "Cublaslt"),
    ({"TORCH_BLAS_PREFER_CUBLASLT": "0", "TORCH_BLAS_PREFER_HIPBLASLT": "1"}, "Cublaslt"),
    ({"TORCH_BLAS_PREFER_HIPBLASLT": "0"}, "Cublas"),
])
def test_env_takes_the_same_blas_names(env, expected):
    proc = run_python("import backplane.backends as B; print(B.cuda.preferred_blas_library().name)", env=env)
    assert proc.stdout.strip() == expected


def test_linalg_env_takes_the_rocm_spelling():
    proc = run_python("import backplane.backends as B; print(B.cuda.preferred_linalg_library().name)",
                      env={"TORCH_LINALG_PREFER_HIPSOLVER": "1"})
    assert proc.stdout.strip() == "Cusolver"


@pytest.mark.parametrize("value,expect_warning", [("AVX2", True), ("DEFAULT", True), ("avx2", False),
                                                  ("bogus", True)])
def test_aten_cpu_capability_is_case_sensitive(value, expect_warning):
    code = "import backplane.backends as B; print(B.cpu.get_cpu_capability())"
    auto = run_python(code).stdout.strip()
    proc = run_python(code, env={"ATEN_CPU_CAPABILITY": value})
    assert ("ignoring invalid value for ATEN_CPU_CAPABILITY" in proc.stderr) == expect_warning
    if expect_warning:
        assert proc.stdout.strip() == auto  # auto-detected
    elif auto in ("AVX2", "AVX512"):
        assert proc.stdout.strip() == "AVX2"


# ---------------------------------------------------------------- 8, 13: cuFFT plan cache, public names

@pytest.mark.parametrize("key", ["cuda", None, 1.5, "cpu", "cuda:x"])
def test_cufft_plan_cache_wants_a_device_index(key):
    with pytest.raises(ValueError) as info:
        B.cuda.cufft_plan_cache[key]
    assert isinstance(info.value, RuntimeError)


def test_cufft_plan_cache_names_and_objects():
    assert isinstance(B.cuda.cufft_plan_cache, B.cuda.cuFFTPlanCacheManager)
    assert isinstance(B.cuda.matmul, B.cuda.cuBLASModule)
    assert isinstance(B.cuda.cuFFTPlanCache.size, B.cuda.cuFFTPlanCacheAttrContextProp)
    if backplane.cuda.device_count() == 0:
        with pytest.raises(RuntimeError, match="device index"):
            B.cuda.cufft_plan_cache[0]
        return
    cache = B.cuda.cufft_plan_cache[0]
    assert cache is B.cuda.cufft_plan_cache["cuda:0"] and cache.device_index == 0
    with pytest.raises(RuntimeError, match="read-only"):
        cache.size = 3
    before = cache.max_size
    cache.max_size = 7
    assert B.cuda.cufft_plan_cache.max_size == 7
    cache.max_size = before


def test_cudnn_tensor_dtypes_and_rnn_module():
    import importlib
    rnn = importlib.import_module("backplane.backends.cudnn.rnn")
    assert rnn is B.cudnn.rnn
    assert B.cudnn.CUDNN_TENSOR_DTYPES == {"float16", "float32", "float64"}
    assert [rnn.get_cudnn_mode(m) for m in ("RNN_RELU", "RNN_TANH", "LSTM", "GRU")] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="Unknown mode: gru"):
        rnn.get_cudnn_mode("gru")
    B.cudnn.rnn.fp32_precision = "ieee"
    assert B.cudnn.rnn.fp32_precision == "ieee" and B.cudnn.conv.fp32_precision == "tf32"


def test_unserializable_drops_its_value_when_pickled():
    u = B.cudnn.rnn.Unserializable(object())
    assert u.get() is not None and u.__getstate__() == "<unserializable>"
    assert pickle.loads(pickle.dumps(u)).get() is None


def test_init_dropout_state():
    state = {}
    if not backplane.cuda.is_available():
        with pytest.raises(RuntimeError, match="needs a CUDA device"):
            B.cudnn.rnn.init_dropout_state(0.0, True, 0, state)
        assert state == {}
        return
    assert B.cudnn.rnn.init_dropout_state(0.5, False, 0, state) is None  # not training: no dropout
    with pytest.raises(NotImplementedError):
        B.cudnn.rnn.init_dropout_state(0.5, True, 0, {})


# ---------------------------------------------------------------- 10, 11, 12: argument rules, mkldnn, mps

def test_sdpa_params_takes_what_pytorch_converts():
    q = backplane.asarray(np.ones((1, 2, 4, 8), np.float32))
    p = B.cuda.SDPAParams(q, q, q, None, 0, 1, None)
    assert (p.dropout, p.is_causal, p.enable_gqa) == (0.0, True, False)
    assert B.cuda.SDPAParams(q, q, q, None, True, 0.0, np.bool_(True)).enable_gqa is True
    for bad in ("x", [1]):
        with pytest.raises(TypeError, match="is_causal"):
            B.cuda.SDPAParams(q, q, q, None, 0.0, bad, False)
    with pytest.raises(TypeError, match="dropout"):
        B.cuda.SDPAParams(q, q, q, None, "0.1", False, False)
    with pytest.raises(TypeError):  # positional only, seven of them
        B.cuda.SDPAParams(q, q, q, None, 0.0, False)


def test_sdpa_kernel_set_priority_takes_ints():
    with A.sdpa_kernel([A.SDPBackend.MATH, A.SDPBackend.FLASH_ATTENTION], set_priority=1):
        assert _C.flag_get("cuda.sdp_priority_order")[:2] == [0, 1]
    with A.sdpa_kernel([A.SDPBackend.MATH], set_priority=None):
        assert _C.flag_get("cuda.sdp_priority_order")[0] == 1
    with pytest.raises(TypeError, match="set_priority"):
        A.sdpa_kernel([A.SDPBackend.MATH], set_priority="yes").__enter__()


def test_verbose_levels_are_checked_on_entry():
    scope = B.mkldnn.verbose(True)  # level 1, as in PyTorch
    with scope:
        assert _C.flag_get("mkldnn.verbose_level") == 1
    assert _C.flag_get("mkldnn.verbose_level") == 0
    for bad, cls in ((5, ValueError), (-1, ValueError), ("x", TypeError), (None, TypeError), (2.0, TypeError)):
        scope = B.mkldnn.verbose(bad)  # constructing never raises
        with pytest.raises(cls) as info:
            scope.__enter__()
        assert isinstance(info.value, RuntimeError)
        assert _C.flag_get("mkldnn.verbose_level") == 0
    with pytest.raises(ValueError):
        B.mkl.verbose(5).__enter__()
    with B.mkl.verbose(False):
        pass


def test_mkldnn_set_flags_reads_allow_tf32_as_none():
    assert B.mkldnn.set_flags(False) == (True, False, None, "none")
    assert not B.mkldnn.enabled


def test_mps_answers_as_pytorch_without_mps():
    with pytest.raises(RuntimeError, match="without the MPS backend"):
        B.mps.is_macos_or_newer(13, 0)
    with pytest.raises(AttributeError):
        B.mps.get_core_count()


# ---------------------------------------------------------------- 13: the flash-attention registry

class _Handle:
    def __init__(self, log):
        self.log = log

    def remove(self):
        self.log.append("removed")


def test_flash_attention_registry(caplog):
    from backplane.nn.attention import _registry
    saved = dict(_registry._impls)
    log = []
    try:
        assert A.list_flash_attention_impls() == ["FA3", "FA4"] and A.current_flash_attention_impl() is None
        A.register_flash_attention_impl("Mine", register_fn=lambda: log.append("mine") or _Handle(log))
        A.register_flash_attention_impl("NoHandle", register_fn=lambda: log.append("nohandle"))
        assert A.list_flash_attention_impls() == ["FA3", "FA4", "Mine", "NoHandle"]
        A.activate_flash_attention_impl("Mine")
        assert A.current_flash_attention_impl() == "Mine"
        A.activate_flash_attention_impl("NoHandle")  # restores Mine first
        assert log == ["mine", "removed", "nohandle"] and A.current_flash_attention_impl() is None
        with pytest.raises(ValueError, match="Unknown flash attention impl 'FA2'"):
            A.activate_flash_attention_impl("FA2")
        with pytest.raises(ModuleNotFoundError, match="flash_attn_interface"):
            A.activate_flash_attention_impl("FA3")
        with pytest.raises(TypeError):
            A.register_flash_attention_impl("X", lambda: None)  # register_fn is keyword-only
        with caplog.at_level(logging.WARNING):
            A.restore_flash_attention_impl()
        assert "no custom impl was activated" in caplog.text
    finally:
        _registry._impls.clear()
        _registry._impls.update(saved)
        _registry._active = None


def test_can_use_reexports_are_cudas():
    assert A.can_use_flash_attention is B.cuda.can_use_flash_attention
    assert A.can_use_efficient_attention is B.cuda.can_use_efficient_attention


# ---------------------------------------------------------------- 14: python_native keyword names

def test_python_native_takes_pytorch_keyword_names():
    pn = B.python_native
    pn.disable_operations("mm")
    try:
        assert pn.is_operation_disabled(op_symbol="mm")
        with pn.operations_disabled("bmm"):
            assert pn.is_operation_disabled(op_symbol="bmm")
    finally:
        pn.enable_operations("mm")
    assert not pn.is_dsl_disabled(dsl_name="nothing")
    assert pn.get_dsl_operations(dsl_name="nothing", lib_symbol="aten") == []
    with pytest.raises(TypeError, match="op_symbol"):
        pn.disable_operations("ok", 1)
    assert not pn.is_operation_disabled("ok")  # nothing half-applied
    with pytest.raises(ValueError):
        pn.disable_dispatch_keys("")
