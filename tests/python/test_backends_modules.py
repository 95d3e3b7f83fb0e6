"""The torch.backends faces, module by module: the behaviours and test ideas
of spec/torch_backends.md, including the deliberate differences."""

import threading
import warnings

import numpy as np
import pytest

import backplane
import backplane.backends as B
from backplane import _C
from backplane.nn.attention import SDPAParams, SDPBackend, sdpa_kernel
from conftest import run_python


# ---------------------------------------------------------------- flags() / set_flags()

def test_cudnn_flags_defaults_disable_cudnn_and_nest_as_a_stack():
    B.cudnn.enabled = True
    B.cudnn.benchmark = False
    with B.cudnn.flags(enabled=True, benchmark=True):
        assert B.cudnn.enabled and B.cudnn.benchmark
        with B.cudnn.flags(enabled=False):  # its default benchmark=False applies too
            assert not B.cudnn.enabled and not B.cudnn.benchmark
        assert B.cudnn.enabled and B.cudnn.benchmark
    assert B.cudnn.enabled and not B.cudnn.benchmark
    with B.cudnn.flags():
        assert not B.cudnn.enabled
    assert B.cudnn.enabled


def test_set_flags_validates_everything_before_applying_anything():
    B.cudnn.enabled = True
    with pytest.raises(TypeError, match="cudnn.benchmark expects a bool, but got int"):
        B.cudnn.set_flags(False, 1)
    assert B.cudnn.enabled  # not half-applied (PyTorch leaves it False)
    orig = B.cudnn.set_flags(False, True)
    assert orig[:2] == (True, False)
    assert not B.cudnn.enabled and B.cudnn.benchmark


def test_a_bad_argument_to_flags_applies_nothing():
    with pytest.raises(ValueError):
        with B.cudnn.flags(enabled=True, benchmark=True, benchmark_limit=-3):
            pass
    assert not B.cudnn.benchmark


def test_scopes_restore_on_exceptions():
    with pytest.raises(KeyError):
        with B.cudnn.flags(enabled=True, benchmark=True):
            raise KeyError("boom")
    assert not B.cudnn.benchmark


def test_assignment_inside_a_scope_is_undone_at_exit():
    with B.cudnn.flags(enabled=True):
        B.cudnn.deterministic = True
        assert B.cudnn.deterministic
    assert not B.cudnn.deterministic


def test_scopes_belong_to_their_thread():
    barrier = threading.Barrier(2)
    seen = {}

    def worker(value):
        with B.cudnn.flags(enabled=True, benchmark=value):
            barrier.wait()
            seen[value] = [B.cudnn.benchmark for _ in range(200)]
            barrier.wait()

    threads = [threading.Thread(target=worker, args=(v,)) for v in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(seen[True]) and not any(seen[False])
    assert not B.cudnn.benchmark


def test_scopes_must_exit_in_order():
    outer = _C.FlagScope([("cudnn.benchmark", True)])
    inner = _C.FlagScope([("cudnn.deterministic", True)])
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(RuntimeError, match="reverse order"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    assert not B.cudnn.benchmark


def test_disable_global_flags_freezes_module_properties_but_not_scopes():
    assert not B.flags_frozen()
    B.disable_global_flags()
    assert B.flags_frozen()
    with pytest.raises(RuntimeError, match="disable_global_flags"):
        B.cudnn.benchmark = True
    with B.cudnn.flags(enabled=True, benchmark=True):
        assert B.cudnn.benchmark
    B.cudnn.conv.fp32_precision = "ieee"  # precision objects are not frozen (as PyTorch)
    B.cuda.enable_flash_sdp(False)
    _C._set_flags_frozen(False)


def test_flags_epoch_moves_on_global_changes_only():
    e0 = _C.flags_epoch()
    with B.cudnn.flags(enabled=True, benchmark=True):
        pass
    assert _C.flags_epoch() == e0
    B.cudnn.benchmark = True
    assert _C.flags_epoch() > e0


# ---------------------------------------------------------------- precision

def test_precision_defaults_and_inheritance():
    assert B.fp32_precision == "none"
    assert B.cudnn.conv.fp32_precision == "tf32" and B.cudnn.rnn.fp32_precision == "tf32"
    assert B.cuda.matmul.fp32_precision == "none"
    B.fp32_precision = "tf32"
    assert _C.precision_get("cuda", "matmul") == "tf32"
    B.fp32_precision = "bf16"
    assert _C.precision_get("cuda", "matmul") == "none"  # CUDA cannot do bf16
    assert _C.precision_get("mkldnn", "matmul") == "bf16"
    with pytest.raises(ValueError, match="does not support precision 'bf16'"):
        B.cuda.matmul.fp32_precision = "bf16"


def test_mixing_old_and_new_tf32_apis_never_makes_a_read_raise():
    B.fp32_precision = "tf32"
    assert B.cuda.matmul.allow_tf32 is True  # PyTorch raises here
    assert backplane.get_float32_matmul_precision() == "high"
    B.cuda.matmul.fp32_precision = "tf32"
    B.cuda.matmul.allow_tf32 = False
    assert B.cuda.matmul.fp32_precision == "ieee"


def test_set_float32_matmul_precision():
    backplane.set_float32_matmul_precision("medium")
    assert B.mkldnn.matmul.fp32_precision == "bf16" and B.cuda.matmul.fp32_precision == "tf32"
    assert backplane.get_float32_matmul_precision() == "medium"
    backplane.set_float32_matmul_precision("highest")
    assert backplane.get_float32_matmul_precision() == "highest"
    with pytest.raises(ValueError, match="'highest', 'high', 'medium'"):
        backplane.set_float32_matmul_precision("HIGH")
    with pytest.raises(TypeError, match="expects a str"):
        backplane.set_float32_matmul_precision(1)
    assert backplane.get_float32_matmul_precision() == "highest"


def test_cudnn_allow_tf32_maps_to_conv_and_rnn():
    assert B.cudnn.allow_tf32
    B.cudnn.allow_tf32 = False
    assert B.cudnn.conv.fp32_precision == "none"  # "none", not "ieee", as PyTorch
    assert not B.cudnn.allow_tf32
    with pytest.raises(TypeError):
        B.cudnn.allow_tf32 = 0


def test_mkldnn_fp32_precision_is_symmetric_and_inherited():
    B.mkldnn.fp32_precision = "bf16"
    assert B.mkldnn.fp32_precision == "bf16"
    assert B.mkldnn.matmul.fp32_precision == "bf16"


def test_precision_objects_accept_only_their_attributes():
    with pytest.raises(AttributeError, match="Unknown attribute"):
        B.cudnn.conv.allow_tf32 = True
    with pytest.raises(AttributeError, match="Unknown attribute"):
        B.cuda.matmul.nonsense  # noqa: B018


def test_mkldnn_allow_tf32_reads_none_and_warns_on_set():
    assert B.mkldnn.allow_tf32 is None
    with pytest.warns(UserWarning, match="Intel GPUs"):
        B.mkldnn.allow_tf32 = True
    assert _C.flag_get("mkldnn.allow_tf32") is True


# ---------------------------------------------------------------- cuda.matmul reduced precision

def test_reduced_precision_tuple_states():
    m = B.cuda.matmul
    assert m.allow_fp16_reduced_precision_reduction and m.allow_fp16_reduced_precision_reduction_split_k
    m.allow_fp16_reduced_precision_reduction = (False, False)
    assert not m.allow_fp16_reduced_precision_reduction and not m.allow_fp16_reduced_precision_reduction_split_k
    m.allow_bf16_reduced_precision_reduction = False
    assert not m.allow_bf16_reduced_precision_reduction and m.allow_bf16_reduced_precision_reduction_split_k
    with pytest.raises(RuntimeError, match="allow_splitk=False is not supported"):
        m.allow_fp16_reduced_precision_reduction = (True, False)
    assert not m.allow_fp16_reduced_precision_reduction_split_k  # unchanged
    with pytest.raises(TypeError, match="at least one"):
        m.allow_fp16_reduced_precision_reduction = []
    with pytest.raises(TypeError, match="at most two"):
        m.allow_fp16_reduced_precision_reduction = (True, True, True)
    with pytest.raises(TypeError, match="allow_splitk"):
        m.allow_fp16_reduced_precision_reduction = (False, 0)
    with pytest.raises(TypeError, match="a bool or a tuple"):
        m.allow_fp16_reduced_precision_reduction = "yes"
    with pytest.raises(AttributeError):
        m.allow_fp16_reduced_precision_reduction_split_k = True


# ---------------------------------------------------------------- library preferences and workspaces

def test_preferred_blas_library():
    assert B.cuda.preferred_blas_library() == B.cuda._BlasBackend.Cublas  # default resolves to cuBLAS
    if not _C.built_with["cublaslt"]:  # a build configured without it (BACKPLANE_USE_CUDA=OFF)
        with pytest.raises(RuntimeError, match="not been compiled with cuBLASLt"):
            B.cuda.preferred_blas_library("hipblaslt")
    else:
        with pytest.warns(UserWarning, match="experimental"):
            assert B.cuda.preferred_blas_library("hipblaslt") == B.cuda._BlasBackend.Cublaslt
    assert B.cuda.preferred_blas_library("default") == B.cuda._BlasBackend.Cublas
    with pytest.raises(RuntimeError, match="Choose from: default, cublas, hipblas, cublaslt, hipblaslt, ck"):
        B.cuda.preferred_blas_library("foo")
    with pytest.raises(RuntimeError, match="expects a str"):
        B.cuda.preferred_blas_library(3)
    with pytest.warns(UserWarning, match="experimental"):  # stored and read back, as PyTorch 2.15 does
        assert B.cuda.preferred_blas_library("ck") == B.cuda._BlasBackend.Ck
    assert B.cuda.preferred_blas_library() == B.cuda._BlasBackend.Ck


def test_preferred_linalg_library_validates_before_storing():
    with pytest.raises(RuntimeError, match="MAGMA"):
        B.cuda.preferred_linalg_library("magma")
    assert B.cuda.preferred_linalg_library() == B.cuda._LinalgBackend.Default
    with pytest.raises(RuntimeError, match="default, cusolver, magma"):
        B.cuda.preferred_linalg_library("bogus")
    if not _C.built_with["cusolver"]:  # a build configured without it
        with pytest.raises(RuntimeError, match="not been compiled with cuSOLVER"):
            B.cuda.preferred_linalg_library("cusolver")
        return
    with pytest.warns(UserWarning, match="experimental"):
        assert B.cuda.preferred_linalg_library("cusolver") == B.cuda._LinalgBackend.Cusolver


def test_preferred_rocm_fa_library():
    with pytest.raises(RuntimeError, match="default, aotriton, ck"):
        B.cuda.preferred_rocm_fa_library("bogus")
    with pytest.raises(ValueError):
        B.cuda.preferred_rocm_fa_library(3)
    assert B.cuda.preferred_rocm_fa_library("ck") == B.cuda._ROCmFABackend.Ck
    assert not B.cuda.is_ck_sdpa_available()


def test_cpu_preferred_blas_library():
    assert B.cpu.preferred_blas_library() == "default"
    assert B.cpu.preferred_blas_library("openblas") == "openblas"
    with pytest.raises(ValueError, match="default, builtin, openblas, onednn"):
        B.cpu.preferred_blas_library("mkl")
    with pytest.raises(TypeError):
        B.cpu.preferred_blas_library(1)
    assert B.cpu.preferred_blas_library() == "openblas"


def test_workspace_sizes():
    default_cublas = 4096 * 1024 * 2 + 16 * 1024 * 8
    assert B.cuda.cublas_workspace_size() == default_cublas
    assert B.cuda.cublaslt_workspace_size() == 1024 * 1024
    assert B.cuda.blas_workspace_size() == default_cublas
    assert B.cuda.blas_workspace_size(backend="cublaslt") == 1024 * 1024
    assert B.cuda.cublas_workspace_size(1 << 20) == 1 << 20
    with pytest.raises(ValueError):
        B.cuda.cublas_workspace_size(-1)
    with pytest.raises(TypeError):
        B.cuda.cublas_workspace_size(1.5)
    with pytest.raises(RuntimeError, match="CK backend does not use a workspace"):
        B.cuda.blas_workspace_size(backend="ck")
    with pytest.raises(RuntimeError, match="Choose from"):
        B.cuda.blas_workspace_size(backend="nope")


def test_cublaslt_workspace_is_capped_only_when_unified_with_one_warning():
    code = ("import warnings; warnings.simplefilter('always'); import backplane.backends as B; "
            "print(B.cuda.cublaslt_workspace_size(), B.cuda.cublaslt_workspace_size())")
    env = {"CUBLASLT_WORKSPACE_SIZE": "1048576", "CUBLAS_WORKSPACE_CONFIG": ":16:8"}
    # PyTorch 2.15: separate workspaces unless TORCH_CUBLAS_WORKSPACE_CACHE=1.
    for extra in ({}, {"TORCH_CUBLAS_WORKSPACE_CACHE": "0"}, {"TORCH_CUBLASLT_UNIFIED_WORKSPACE": "1"}):
        proc = run_python(code, env={**env, **extra})
        assert proc.stdout.split() == [str(1048576 * 1024)] * 2, extra
        assert "exceeds the cuBLAS workspace size" not in proc.stderr
    proc = run_python(code, env={**env, "TORCH_CUBLAS_WORKSPACE_CACHE": "1"})
    assert proc.stdout.split() == [str(16 * 1024 * 8)] * 2
    assert proc.stderr.count("exceeds the cuBLAS workspace size") == 1
    # The API value wins over the env var, and is what is returned.
    proc = run_python("import backplane.backends as B; print(B.cuda.cublaslt_workspace_size(4096), "
                      "B.cuda.cublaslt_workspace_size())", env={"CUBLASLT_WORKSPACE_SIZE": "2048"})
    assert proc.stdout.split() == ["4096", "4096"]


# ---------------------------------------------------------------- cuFFT plan cache

def test_cufft_plan_cache_without_a_device_is_a_clear_error():
    n = backplane.cuda.device_count()
    with pytest.raises(RuntimeError, match=rf"expected 0 <= device index < {n}, but got device with index {n}"):
        B.cuda.cufft_plan_cache[n]
    with pytest.raises(ValueError):
        B.cuda.cufft_plan_cache["gpu"]
    if n == 0:
        with pytest.raises(RuntimeError, match="no CUDA device"):
            B.cuda.cufft_plan_cache.max_size  # noqa: B018


# ---------------------------------------------------------------- SDPA knobs

def test_sdp_enable_flags_need_real_bools():
    assert B.cuda.flash_sdp_enabled()
    B.cuda.enable_flash_sdp(False)
    assert not B.cuda.flash_sdp_enabled()
    with pytest.raises(TypeError, match="expects a bool, but got int"):
        B.cuda.enable_flash_sdp(1)
    for getter, setter in ((B.cuda.mem_efficient_sdp_enabled, B.cuda.enable_mem_efficient_sdp),
                           (B.cuda.math_sdp_enabled, B.cuda.enable_math_sdp),
                           (B.cuda.cudnn_sdp_enabled, B.cuda.enable_cudnn_sdp)):
        assert getter()
        setter(False)
        assert not getter()
    assert not B.cuda.fp16_bf16_reduction_math_sdp_allowed()
    B.cuda.allow_fp16_bf16_reduction_math_sdp(True)
    assert B.cuda.fp16_bf16_reduction_math_sdp_allowed()


def test_sdpa_kernel_scopes_the_enabled_set_and_order():
    with sdpa_kernel([SDPBackend.MATH]):
        assert B.cuda.math_sdp_enabled() and not B.cuda.flash_sdp_enabled()
        assert not B.cuda.cudnn_sdp_enabled() and not _C.flag_get("cuda.overrideable_sdp_enabled")
    assert B.cuda.flash_sdp_enabled() and _C.flag_get("cuda.overrideable_sdp_enabled")
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH, SDPBackend.MATH], set_priority=True):
        assert _C.flag_get("cuda.sdp_priority_order")[:2] == [3, 0]
        assert sorted(_C.flag_get("cuda.sdp_priority_order")) == [0, 1, 2, 3, 4]
    assert _C.flag_get("cuda.sdp_priority_order") == [1, 2, 0, 3, 4]
    with pytest.raises(TypeError):
        with sdpa_kernel({SDPBackend.MATH}):
            pass
    with pytest.raises(TypeError):
        with sdpa_kernel(["math"]):
            pass


def test_sdp_kernel_is_deprecated_and_delegates():
    with pytest.warns(FutureWarning, match="deprecated"):
        with B.cuda.sdp_kernel(enable_flash=False):
            assert not B.cuda.flash_sdp_enabled() and B.cuda.math_sdp_enabled()
    assert B.cuda.flash_sdp_enabled()


def test_sdpa_params_has_seven_required_read_only_fields():
    p = SDPAParams("q", "k", "v", None, 0.0, False, True)
    assert (p.query, p.key, p.value, p.attn_mask, p.dropout, p.is_causal, p.enable_gqa) == \
        ("q", "k", "v", None, 0.0, False, True)
    with pytest.raises(TypeError):
        SDPAParams("q", "k", "v", None, 0.0, False)
    with pytest.raises(AttributeError):
        p.dropout = 0.5


def test_can_use_attention_answers_truthfully_without_implementations():
    p = SDPAParams("q", "k", "v", None, 0.0, False, False)
    assert not B.cuda.is_flash_attention_available()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert B.cuda.can_use_flash_attention(p) is False  # no warning without debug
    with pytest.warns(UserWarning, match="built without a CUDA flash"):
        assert not B.cuda.can_use_flash_attention(p, True)
    assert not B.cuda.can_use_efficient_attention(p)
    with pytest.raises(TypeError):
        B.cuda.can_use_flash_attention("not params")
    with pytest.raises(TypeError):
        B.cuda.can_use_cudnn_attention("not params")


def test_can_use_cudnn_attention_runs_the_cudnn_sdpa_row_for_cpu_tensors():
    q = np.zeros((1, 2, 8, 16), np.float16)
    p = SDPAParams(q, q, q, None, 0.0, False, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert B.cuda.can_use_cudnn_attention(p) is False  # no warning without debug
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert B.cuda.can_use_cudnn_attention(p, True) is False
    texts = [str(w.message) for w in caught]
    assert texts and all(t.startswith("cuDNN attention (cudnn:sdpa) not used because") for t in texts)
    # Why depends on the build and machine: not built or not available (no GPU here), else the device check.
    if backplane.cuda.is_available():
        assert any("device: expected cuda tensors, got cpu" in t for t in texts), texts
    else:
        assert any(w in t for t in texts for w in ("not available", "not built", "not in this build")), texts


# ---------------------------------------------------------------- the other modules

def test_cudnn_truthful_answers():
    assert B.cudnn.is_available() == bool(_C.built_with["cudnn"])
    if B.cudnn.is_available():
        assert B.cudnn.benchmark_limit == 10
        assert isinstance(B.cudnn.version(), int) and B.cudnn.version() >= 90000
    with pytest.raises(ValueError):
        B.cudnn.benchmark_limit = -1
    with pytest.raises(TypeError, match="expects an int"):
        B.cudnn.benchmark_limit = True


def test_mkldnn_verbose_restores_the_outer_level():
    assert B.mkldnn.is_available()
    with B.mkldnn.verbose(B.mkldnn.VERBOSE_ON):
        with B.mkldnn.verbose(B.mkldnn.VERBOSE_ON_CREATION):
            assert _C.flag_get("mkldnn.verbose_level") == 2
        assert _C.flag_get("mkldnn.verbose_level") == 1  # PyTorch: OFF here
    assert _C.flag_get("mkldnn.verbose_level") == 0
    scope = B.mkldnn.verbose(5)  # checked on entry, as PyTorch checks it
    with pytest.raises(ValueError, match="VERBOSE_ON_CREATION"):
        scope.__enter__()
    assert _C.flag_get("mkldnn.verbose_level") == 0


def test_mkldnn_flags_default_disable_onednn():
    with B.mkldnn.flags():
        assert not B.mkldnn.enabled
    assert B.mkldnn.enabled
    orig = B.mkldnn.set_flags(None, True)
    assert orig[1] is False and B.mkldnn.deterministic


def test_mkl_is_not_built():
    assert not B.mkl.is_available()
    with B.mkl.verbose(B.mkl.VERBOSE_OFF):
        pass
    with pytest.raises(RuntimeError, match="MKL is not built"):
        with B.mkl.verbose(B.mkl.VERBOSE_ON):
            pass


def test_nnpack():
    assert not B.nnpack.is_available()
    assert _C.flag_get("nnpack.enabled")
    with B.nnpack.flags():
        assert not _C.flag_get("nnpack.enabled")
    assert _C.flag_get("nnpack.enabled")
    with pytest.raises(TypeError, match="NoneType"):
        B.nnpack.set_flags(None)
    assert B.nnpack.set_flags(False) == (True,)


def test_miopen_immediate_is_restored_by_flags():
    B.miopen.immediate = True
    with B.miopen.flags(immediate=False):
        assert not B.miopen.immediate
    assert B.miopen.immediate
    with pytest.raises(TypeError):
        B.miopen.immediate = "yes"


def test_mha_fastpath_needs_a_bool():
    assert B.mha.get_fastpath_enabled()
    B.mha.set_fastpath_enabled(False)
    assert not B.mha.get_fastpath_enabled()
    with pytest.raises(TypeError):
        B.mha.set_fastpath_enabled(0)  # PyTorch takes anything truthy


def test_opt_einsum_is_native_and_validated_on_every_path():
    assert B.opt_einsum.is_available()
    assert B.opt_einsum.enabled and B.opt_einsum.strategy == "auto"
    B.opt_einsum.strategy = "greedy"
    with pytest.raises(ValueError, match="must be one of the following"):
        B.opt_einsum.strategy = "auto-hq"
    with B.opt_einsum.flags(enabled=True, strategy="optimal"):
        assert B.opt_einsum.strategy == "optimal"
    assert B.opt_einsum.strategy == "greedy"
    B.opt_einsum.enabled = False
    with pytest.raises(ValueError, match="not enabled"):
        B.opt_einsum.strategy = "auto"
    with pytest.raises(ValueError, match="not enabled"):
        with B.opt_einsum.flags(strategy="auto"):
            pass
    with B.opt_einsum.flags(enabled=True, strategy="auto"):
        assert B.opt_einsum.enabled
    assert not B.opt_einsum.enabled


def test_truthful_not_built_modules():
    assert not B.mps.is_built() and not B.mps.is_available()
    with pytest.raises(RuntimeError, match="without the MPS backend"):  # as PyTorch without MPS
        B.mps.is_macos13_or_newer()
    for fn in (B.mps.get_name, B.mps.get_core_count):
        with pytest.raises(NotImplementedError, match="has no MPS"):
            fn()
        with pytest.raises(AttributeError):  # what PyTorch raises
            fn()
    assert not B.kleidiai.is_available()
    assert B.openmp.is_available() == bool(_C.built_with["openmp"])


def test_deterministic_algorithms():
    assert not backplane.are_deterministic_algorithms_enabled()
    backplane.use_deterministic_algorithms(True, warn_only=True)
    assert backplane.are_deterministic_algorithms_enabled()
    assert backplane.is_deterministic_algorithms_warn_only_enabled()
    with pytest.raises(TypeError):
        backplane.use_deterministic_algorithms(1)
    with pytest.raises(TypeError):
        backplane.use_deterministic_algorithms(False, warn_only="no")
    assert backplane.are_deterministic_algorithms_enabled()


def test_trace_is_a_package_property_with_an_env_var():
    assert B.trace is False
    B.trace = True
    assert _C.flag_get("trace")
    proc = run_python("import backplane.backends as B; print(B.trace)", env={"BACKPLANE_TRACE": "1"})
    assert proc.stdout.strip() == "True"


# ---------------------------------------------------------------- python_native

def test_python_native_starts_empty_and_registers_by_dsl():
    pn = B.python_native
    assert pn.get_dsl_operations("triton") == []
    with pytest.raises(AttributeError, match="has no attribute 'nothere'"):
        pn.nothere  # noqa: B018
    impl = lambda a, b: "numpy-matmul"  # noqa: E731
    controller = pn.register("numpy_dsl", "matmul", impl, predicate=lambda a, b: a == "ok")
    assert "numpy_dsl" in pn.all_dsls and "numpy_dsl" in pn.available_dsls
    assert pn.numpy_dsl is controller and controller.enabled
    assert pn.get_dsl_operations("numpy_dsl") == ["matmul"]
    assert pn.lookup("matmul", "ok", None) is impl
    assert pn.lookup("matmul", "no", None) is None
    with pn.operations_disabled("matmul"):
        assert pn.is_operation_disabled("matmul") and pn.lookup("matmul", "ok", None) is None
    assert not pn.is_operation_disabled("matmul")
    with controller.disabled():
        assert pn.is_dsl_disabled("numpy_dsl")
    controller.enabled = False
    assert pn.lookup("matmul", "ok", None) is None
    controller.enabled = True
    pn.disable_dispatch_keys("CPU")
    assert pn.lookup("matmul", "ok", None) is None
    pn.enable_dispatch_keys("CPU")
    pn.disable_operations("matmul")
    with pn.operations_disabled("matmul"):
        pass
    assert pn.is_operation_disabled("matmul")  # pre-disabled ops stay disabled
    pn.enable_operations("matmul")
    with pytest.raises(TypeError):
        pn.register("numpy_dsl", "matmul", "not callable")
    with pytest.raises(ValueError):
        pn.register("__bad", "matmul", impl)
    with pytest.raises(TypeError):
        controller.enabled = 1
    controller.disable()  # registrations are process-wide: leave no live override of matmul behind


# Note [Module attributes] (issue 10 item 10): assigning to a function of a
# backends module used to replace it.
@pytest.mark.parametrize("module,name,kind", [
    ("cuda", "cublas_workspace_size", "function"), ("mha", "set_fastpath_enabled", "function"),
    ("cudnn", "is_available", "function"), ("cuda", "SDPBackend", "class"), ("cuda", "matmul", None),
])
def test_functions_of_backends_modules_cannot_be_replaced(module, name, kind):
    mod = getattr(B, module)
    before = getattr(mod, name)
    if kind is None:  # a property object, not a function: its attributes are the API
        assert not callable(before)
        return
    with pytest.raises(AttributeError, match=rf"backplane.backends.{module}.{name} is a {kind}"):
        setattr(mod, name, -5)
    assert getattr(mod, name) is before
    with pytest.raises(AttributeError, match="submodule"):
        B.cuda = 3


def test_flag_properties_and_new_names_are_still_assignable():
    B.cudnn.benchmark = True
    try:
        assert B.cudnn.benchmark is True
    finally:
        B.cudnn.benchmark = False
    B.mha._scratch = 1
    del B.mha._scratch
