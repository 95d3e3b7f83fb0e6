"""The behaviours compared: each is a function of a side (conftest.TORCH or
conftest.BACKPLANE) returning what it observed; harness.py runs it on both
in a fresh fork and compares. Families are generated from tables (every
flag: default, valid sets, invalid sets and whether the value changed);
the rest are scenarios written out.
"""

import numpy as np

from harness import attempt, warned

CASES = {}


def case(case_id):
    def register(fn):
        assert case_id not in CASES, case_id
        CASES[case_id] = fn
        return fn
    return register


def resolve(S, path):
    """The object at a dotted path under S.backends ("cudnn.conv")."""
    obj = S.backends
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part)
    return obj


# ---------------------------------------------------------------- assignable flags
# (holder path, attribute, valid values, invalid values)
_BOOL_BAD = (1, 0, None, "x")
_PREC = ("none", "ieee", "tf32", "bf16")
FLAGS = [
    ("", "fp32_precision", _PREC, ("bogus", "IEEE", 1, None)),
    ("cudnn", "enabled", (False, True), _BOOL_BAD),
    ("cudnn", "benchmark", (True, False), _BOOL_BAD),
    ("cudnn", "deterministic", (True, False), _BOOL_BAD),
    ("cudnn", "benchmark_limit", (0, 5, 10), (None, "a", 1.5)),
    ("cudnn", "allow_tf32", (False, True), _BOOL_BAD),
    ("cudnn", "fp32_precision", _PREC, ("bogus", 1, None)),
    ("cudnn", "depthwise_kernel", ("auto", "cudnn", "native"), ("bogus", "NATIVE", 1, None)),
    ("cudnn.conv", "fp32_precision", _PREC, ("bogus", 1, None)),
    ("cudnn.rnn", "fp32_precision", _PREC, ("bogus", 1, None)),
    ("cuda.matmul", "allow_tf32", (True, False), _BOOL_BAD),
    ("cuda.matmul", "fp32_precision", _PREC, ("bogus", 1, None)),
    ("cuda.matmul", "allow_fp16_accumulation", (True, False), _BOOL_BAD),
    ("cuda.matmul", "prefer_cublaslt_grouped_gemm", (True, False), _BOOL_BAD),
    ("cuda.matmul", "allow_fp16_reduced_precision_reduction",
     (False, True, (False,), (False, False), [False, True], (True, True)),
     (1, None, [], (True, False), (False, False, False), (1, True))),
    ("cuda.matmul", "allow_bf16_reduced_precision_reduction",
     (False, True, (False, False), (True,)), (1, None, [], (True, False))),
    ("mkldnn", "enabled", (False, True), _BOOL_BAD),
    ("mkldnn", "deterministic", (True, False), _BOOL_BAD),
    ("mkldnn", "fp32_precision", _PREC, ("bogus", 1, None)),
    ("mkldnn.matmul", "fp32_precision", _PREC, ("bogus", 1, None)),
    ("mkldnn.conv", "fp32_precision", _PREC, ("bogus", 1, None)),
    ("mkldnn.rnn", "fp32_precision", _PREC, ("bogus", 1, None)),
    ("miopen", "immediate", (True, False), _BOOL_BAD),
]

# Values read after every set: the flag itself and the tree around it.
_READS = [("", "fp32_precision"), ("cudnn", "fp32_precision"), ("cudnn.conv", "fp32_precision"),
          ("cudnn.rnn", "fp32_precision"), ("cuda.matmul", "fp32_precision"), ("mkldnn.matmul", "fp32_precision")]


def _read(S, holder, name):
    return attempt(lambda: getattr(resolve(S, holder), name))


def _flag_default(holder, name):
    return lambda S: _read(S, holder, name)


def _flag_set(holder, name, value):
    def run(S):
        outcome = attempt(setattr, resolve(S, holder), name, value)
        reads = {f"{h}.{n}": _read(S, h, n) for h, n in [(holder, name)] + _READS}
        return {"set": outcome, "after": reads}
    return run


for _holder, _name, _good, _bad in FLAGS:
    _path = f"{_holder}.{_name}".lstrip(".")
    case(f"default:{_path}")(_flag_default(_holder, _name))
    for _v in _good:
        case(f"set:{_path}={_v!r}")(_flag_set(_holder, _name, _v))
    for _v in _bad:
        case(f"bad:{_path}={_v!r}")(_flag_set(_holder, _name, _v))


# ---------------------------------------------------------------- read-only answers
ANSWERS = {
    "cpu.get_cpu_capability": lambda S: S.backends.cpu.get_cpu_capability(),
    "cuda.is_built": lambda S: S.backends.cuda.is_built(),
    "cuda.matmul.fp16_split_k": lambda S: S.backends.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k,
    "cuda.matmul.bf16_split_k": lambda S: S.backends.cuda.matmul.allow_bf16_reduced_precision_reduction_split_k,
    "cuda.matmul.unknown_get": lambda S: S.backends.cuda.matmul.bogus,
    "cuda.matmul.unknown_set": lambda S: setattr(S.backends.cuda.matmul, "bogus", 1),
    "cuda.flash_sdp_enabled": lambda S: S.backends.cuda.flash_sdp_enabled(),
    "cuda.mem_efficient_sdp_enabled": lambda S: S.backends.cuda.mem_efficient_sdp_enabled(),
    "cuda.math_sdp_enabled": lambda S: S.backends.cuda.math_sdp_enabled(),
    "cuda.cudnn_sdp_enabled": lambda S: S.backends.cuda.cudnn_sdp_enabled(),
    "cuda.fp16_bf16_reduction_math_sdp_allowed": lambda S: S.backends.cuda.fp16_bf16_reduction_math_sdp_allowed(),
    "cuda.is_flash_attention_available": lambda S: S.backends.cuda.is_flash_attention_available(),
    "cuda.is_ck_sdpa_available": lambda S: S.backends.cuda.is_ck_sdpa_available(),
    "cuda.preferred_blas_library": lambda S: S.backends.cuda.preferred_blas_library(),
    "cuda.preferred_linalg_library": lambda S: S.backends.cuda.preferred_linalg_library(),
    "cuda.preferred_rocm_fa_library": lambda S: S.backends.cuda.preferred_rocm_fa_library(),
    "cuda.cublaslt_workspace_size": lambda S: S.backends.cuda.cublaslt_workspace_size(),
    "cuda.cublas_workspace_size": lambda S: S.backends.cuda.cublas_workspace_size(),
    "cudnn.is_available": lambda S: S.backends.cudnn.is_available(),
    "cudnn.CUDNN_TENSOR_DTYPES": lambda S: S.backends.cudnn.CUDNN_TENSOR_DTYPES,
    "mkldnn.is_available": lambda S: S.backends.mkldnn.is_available(),
    "mkldnn.is_acl_available": lambda S: S.backends.mkldnn.is_acl_available(),
    "mkldnn.allow_tf32": lambda S: S.backends.mkldnn.allow_tf32,
    "mkldnn.VERBOSE": lambda S: [S.backends.mkldnn.VERBOSE_OFF, S.backends.mkldnn.VERBOSE_ON,
                                 S.backends.mkldnn.VERBOSE_ON_CREATION],
    "mkl.is_available": lambda S: S.backends.mkl.is_available(),
    "mkl.VERBOSE": lambda S: [S.backends.mkl.VERBOSE_OFF, S.backends.mkl.VERBOSE_ON],
    "nnpack.is_available": lambda S: S.backends.nnpack.is_available(),
    "openmp.is_available": lambda S: S.backends.openmp.is_available(),
    "kleidiai.is_available": lambda S: S.backends.kleidiai.is_available(),
    "mps.is_built": lambda S: S.backends.mps.is_built(),
    "mps.is_available": lambda S: S.backends.mps.is_available(),
    "mps.is_macos_or_newer": lambda S: S.backends.mps.is_macos_or_newer(13, 0),
    "mps.is_macos13_or_newer": lambda S: S.backends.mps.is_macos13_or_newer(),
    "mps.get_name": lambda S: S.backends.mps.get_name(),
    "mps.get_core_count": lambda S: S.backends.mps.get_core_count(),
    "mha.get_fastpath_enabled": lambda S: S.backends.mha.get_fastpath_enabled(),
    "opt_einsum.is_available": lambda S: S.backends.opt_einsum.is_available(),
    "opt_einsum.enabled": lambda S: S.backends.opt_einsum.enabled,
    "opt_einsum.strategy": lambda S: S.backends.opt_einsum.strategy,
    "python_native.all_dsls": lambda S: S.backends.python_native.all_dsls,
    "python_native.available_dsls": lambda S: S.backends.python_native.available_dsls,
    "python_native.unknown_dsl": lambda S: S.backends.python_native.zzz,
    "flags_frozen": lambda S: S.backends.flags_frozen(),
    "top.get_float32_matmul_precision": lambda S: S.top.get_float32_matmul_precision(),
    "top.are_deterministic_algorithms_enabled": lambda S: S.top.are_deterministic_algorithms_enabled(),
    "top.is_deterministic_algorithms_warn_only_enabled":
        lambda S: S.top.is_deterministic_algorithms_warn_only_enabled(),
    "attention.list_flash_attention_impls": lambda S: S.attention.list_flash_attention_impls(),
    "attention.current_flash_attention_impl": lambda S: S.attention.current_flash_attention_impl(),
    "attention.WARN_FOR_UNFUSED_KERNELS": lambda S: S.attention.WARN_FOR_UNFUSED_KERNELS,
    "attention.can_use_is_cuda's": lambda S: [
        S.attention.can_use_flash_attention is S.backends.cuda.can_use_flash_attention,
        S.attention.can_use_efficient_attention is S.backends.cuda.can_use_efficient_attention],
    "attention.SDPBackend": lambda S: sorted((b.name, int(b)) for b in [
        S.attention.SDPBackend.ERROR, S.attention.SDPBackend.MATH, S.attention.SDPBackend.FLASH_ATTENTION,
        S.attention.SDPBackend.EFFICIENT_ATTENTION, S.attention.SDPBackend.CUDNN_ATTENTION,
        S.attention.SDPBackend.OVERRIDEABLE]),
}
for _id, _fn in ANSWERS.items():
    case(f"answer:{_id}")(_fn)


# ---------------------------------------------------------------- setter functions
def _call_then(fn, read):
    def run(S):
        return {"call": attempt(fn, S), "after": attempt(read, S)}
    return run


_SDP = ["flash", "mem_efficient", "math", "cudnn"]
for _k in _SDP:
    for _v in (False, True, 1, None, "x"):
        case(f"call:cuda.enable_{_k}_sdp({_v!r})")(_call_then(
            lambda S, k=_k, v=_v: getattr(S.backends.cuda, f"enable_{k}_sdp")(v),
            lambda S, k=_k: getattr(S.backends.cuda, f"{k}_sdp_enabled")()))
for _v in (True, 1, None):
    case(f"call:cuda.allow_fp16_bf16_reduction_math_sdp({_v!r})")(_call_then(
        lambda S, v=_v: S.backends.cuda.allow_fp16_bf16_reduction_math_sdp(v),
        lambda S: S.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()))

for _v in ("highest", "high", "medium", 1, None, "bogus", "HIGH"):
    case(f"call:top.set_float32_matmul_precision({_v!r})")(_call_then(
        lambda S, v=_v: S.top.set_float32_matmul_precision(v),
        lambda S: [S.top.get_float32_matmul_precision(), S.backends.cuda.matmul.fp32_precision,
                   S.backends.mkldnn.matmul.fp32_precision, S.backends.cuda.matmul.allow_tf32]))

for _v in (True, False, 1, None):
    case(f"call:top.use_deterministic_algorithms({_v!r})")(_call_then(
        lambda S, v=_v: S.top.use_deterministic_algorithms(v),
        lambda S: [S.top.are_deterministic_algorithms_enabled(),
                   S.top.is_deterministic_algorithms_warn_only_enabled()]))
case("call:top.use_deterministic_algorithms(True, warn_only=True)")(_call_then(
    lambda S: S.top.use_deterministic_algorithms(True, warn_only=True),
    lambda S: [S.top.are_deterministic_algorithms_enabled(), S.top.is_deterministic_algorithms_warn_only_enabled()]))

for _v in (False, True, 1, None):
    case(f"call:mha.set_fastpath_enabled({_v!r})")(_call_then(
        lambda S, v=_v: S.backends.mha.set_fastpath_enabled(v), lambda S: S.backends.mha.get_fastpath_enabled()))

for _fn in ("cublas_workspace_size", "cublaslt_workspace_size"):
    for _v in (4096, 0, -1, "a", 1.5, True):
        case(f"call:cuda.{_fn}({_v!r})")(_call_then(
            lambda S, f=_fn, v=_v: getattr(S.backends.cuda, f)(v),
            lambda S: S.backends.cuda.cublaslt_workspace_size()))
for _args in ({"backend": "bogus"}, {"backend": 3}, {"backend": "ck"}, {"size": 12, "backend": "cublaslt"},
              {"backend": "hipblaslt"}):
    case(f"call:cuda.blas_workspace_size({_args})")(
        lambda S, a=_args: S.backends.cuda.blas_workspace_size(**a))

for _v in ("default", "cublas", "hipblas", "cublaslt", "hipblaslt", "ck", "CUBLAS", "bogus", 3, "blas_enum"):
    def _pbl(S, v=_v):
        enum_cls = S.top._C._BlasBackend if S.name == "torch" else S.backends.cuda._BlasBackend
        value = enum_cls.Cublaslt if v == "blas_enum" else v
        return S.backends.cuda.preferred_blas_library(value)
    case(f"call:cuda.preferred_blas_library({_v!r})")(_call_then(
        _pbl, lambda S: S.backends.cuda.preferred_blas_library()))
for _v in ("default", "cusolver", "magma", "bogus", 3):
    case(f"call:cuda.preferred_linalg_library({_v!r})")(_call_then(
        lambda S, v=_v: S.backends.cuda.preferred_linalg_library(v),
        lambda S: S.backends.cuda.preferred_linalg_library()))
for _v in ("default", "aotriton", "ck", "bogus", 3):
    case(f"call:cuda.preferred_rocm_fa_library({_v!r})")(_call_then(
        lambda S, v=_v: S.backends.cuda.preferred_rocm_fa_library(v),
        lambda S: S.backends.cuda.preferred_rocm_fa_library()))


# ---------------------------------------------------------------- set_flags / flags()
def _snapshot(S):
    b = S.backends
    return {"cudnn": [b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.benchmark_limit,
                      b.cudnn.fp32_precision, b.cudnn.depthwise_kernel, b.cudnn.conv.fp32_precision],
            "mkldnn": [b.mkldnn.enabled, b.mkldnn.deterministic, b.mkldnn.matmul.fp32_precision],
            "generic": b.fp32_precision, "miopen": b.miopen.immediate,
            "opt_einsum": [b.opt_einsum.enabled, b.opt_einsum.strategy], "nnpack": _nnpack_enabled(S)}


def _nnpack_enabled(S):
    # PyTorch has no public getter for NNPACK's switch: set_flags returns it (then put it back).
    previous = S.backends.nnpack.set_flags(True)[0]
    S.backends.nnpack.set_flags(previous)
    return previous


SET_FLAGS = {
    "cudnn()": lambda S: S.backends.cudnn.set_flags(),
    "cudnn(False)": lambda S: S.backends.cudnn.set_flags(False),
    "cudnn(True, True, 5, True, False, 'ieee', 'native')":
        lambda S: S.backends.cudnn.set_flags(True, True, 5, True, False, "ieee", "native"),
    "cudnn(_depthwise_kernel='cudnn')": lambda S: S.backends.cudnn.set_flags(_depthwise_kernel="cudnn"),
    "cudnn(_depthwise_kernel=None)": lambda S: S.backends.cudnn.set_flags(_depthwise_kernel=None),
    "cudnn(_fp32_precision=None)": lambda S: S.backends.cudnn.set_flags(_fp32_precision=None),
    "cudnn(1)": lambda S: S.backends.cudnn.set_flags(1),
    "cudnn(True, 1)": lambda S: S.backends.cudnn.set_flags(True, 1),
    "cudnn(_depthwise_kernel='bogus')": lambda S: S.backends.cudnn.set_flags(_depthwise_kernel="bogus"),
    "mkldnn()": lambda S: S.backends.mkldnn.set_flags(),
    "mkldnn(False)": lambda S: S.backends.mkldnn.set_flags(False),
    "mkldnn(True, True, None, 'bf16')": lambda S: S.backends.mkldnn.set_flags(True, True, None, "bf16"),
    "mkldnn(1)": lambda S: S.backends.mkldnn.set_flags(1),
    "generic()": lambda S: S.backends.set_flags(),
    "generic('ieee')": lambda S: S.backends.set_flags("ieee"),
    "generic(None)": lambda S: S.backends.set_flags(None),
    "generic('bogus')": lambda S: S.backends.set_flags("bogus"),
    "miopen(True)": lambda S: S.backends.miopen.set_flags(True),
    "miopen()": lambda S: S.backends.miopen.set_flags(),
    "nnpack(False)": lambda S: S.backends.nnpack.set_flags(False),
    "nnpack(None)": lambda S: S.backends.nnpack.set_flags(None),
    "opt_einsum()": lambda S: S.backends.opt_einsum.set_flags(),
}
for _id, _fn in SET_FLAGS.items():
    case(f"set_flags:{_id}")(_call_then(_fn, _snapshot))


def _scoped(make_scope, inside=_snapshot):
    def run(S):
        before = _snapshot(S)
        scope = attempt(make_scope, S)
        if not hasattr(scope, "__enter__"):
            return {"scope": scope, "after": _snapshot(S) == before}
        with scope:
            seen = inside(S)
        return {"inside": seen, "restored": _snapshot(S) == before}
    return run


FLAGS_SCOPES = {
    "cudnn()": lambda S: S.backends.cudnn.flags(),
    "cudnn(enabled=True, benchmark=True, depthwise_kernel='native')":
        lambda S: S.backends.cudnn.flags(enabled=True, benchmark=True, depthwise_kernel="native"),
    "cudnn(fp32_precision='ieee')": lambda S: S.backends.cudnn.flags(fp32_precision="ieee"),
    "mkldnn()": lambda S: S.backends.mkldnn.flags(),
    "mkldnn(enabled=True, fp32_precision='bf16')": lambda S: S.backends.mkldnn.flags(enabled=True,
                                                                                     fp32_precision="bf16"),
    "generic()": lambda S: S.backends.flags(),
    "generic('tf32')": lambda S: S.backends.flags("tf32"),
    "miopen(True)": lambda S: S.backends.miopen.flags(True),
    "nnpack()": lambda S: S.backends.nnpack.flags(),
    "opt_einsum()": lambda S: S.backends.opt_einsum.flags(),
}
for _id, _fn in FLAGS_SCOPES.items():
    case(f"flags:{_id}")(_scoped(_fn))


@case("flags:nested cudnn")
def _nested_cudnn(S):
    c = S.backends.cudnn
    with c.flags(enabled=True, benchmark=True):
        with c.flags(enabled=False):
            inner = [c.enabled, c.benchmark]
        middle = [c.enabled, c.benchmark]
    return [inner, middle, c.enabled, c.benchmark]


@case("flags:assignment inside is undone")
def _assign_inside(S):
    c = S.backends.cudnn
    with c.flags(enabled=True):
        c.benchmark = True
        inside = c.benchmark
    return [inside, c.benchmark]


@case("frozen:assignment refused, flags() allowed")
def _frozen(S):
    b = S.backends
    b.disable_global_flags()
    out = {"frozen": b.flags_frozen(), "set": attempt(setattr, b.cudnn, "benchmark", True),
           "benchmark": b.cudnn.benchmark, "generic": attempt(setattr, b, "fp32_precision", "ieee")}
    with b.cudnn.flags(enabled=True, benchmark=True):
        out["inside"] = b.cudnn.benchmark
    out["conv"] = attempt(setattr, b.cudnn.conv, "fp32_precision", "ieee")
    out["mkldnn.matmul"] = attempt(setattr, b.mkldnn.matmul, "fp32_precision", "bf16")
    out["depthwise"] = attempt(setattr, b.cudnn, "depthwise_kernel", "native")
    return out


@case("module:unknown attribute assignment")
def _unknown_attribute(S):
    return [attempt(setattr, S.backends.cudnn, "benchmrk", True),
            attempt(setattr, S.backends.mkldnn, "enabeld", False)]


# ---------------------------------------------------------------- the fp32 precision tree (PyTorch 2.15)
def _tree(S):
    b = S.backends
    return [b.fp32_precision, b.cudnn.fp32_precision, b.cudnn.conv.fp32_precision, b.cudnn.rnn.fp32_precision,
            b.cuda.matmul.fp32_precision, b.mkldnn.matmul.fp32_precision, b.mkldnn.conv.fp32_precision]


def _tree_after(*steps):
    """steps: (holder path, value) assignments of fp32_precision, or ("allow_tf32", bool) on cudnn."""
    def run(S):
        seen = []
        for holder, value in steps:
            if holder == "cudnn.allow_tf32":
                S.backends.cudnn.allow_tf32 = value
            else:
                setattr(resolve(S, holder), "fp32_precision", value)
            seen.append(_tree(S))
        return seen
    return run


TREE = {
    "generic ieee": [("", "ieee")],
    "generic tf32": [("", "tf32")],
    "generic bf16": [("", "bf16")],
    "generic ieee then none": [("", "ieee"), ("", "none")],
    "cudnn ieee": [("cudnn", "ieee")],
    "cudnn ieee, conv tf32": [("cudnn", "ieee"), ("cudnn.conv", "tf32")],
    "cudnn ieee, conv none, cudnn none": [("cudnn", "ieee"), ("cudnn.conv", "none"), ("cudnn", "none")],
    "conv ieee then none": [("cudnn.conv", "ieee"), ("cudnn.conv", "none")],
    "allow_tf32 False": [("cudnn.allow_tf32", False)],
    "allow_tf32 True then generic ieee": [("cudnn.allow_tf32", True), ("", "ieee")],
    "rnn ieee": [("cudnn.rnn", "ieee")],
    "matmul tf32, generic ieee": [("cuda.matmul", "tf32"), ("", "ieee")],
    "mkldnn.matmul bf16": [("mkldnn.matmul", "bf16")],
}
for _id, _steps in TREE.items():
    case(f"tree:{_id}")(_tree_after(*_steps))


@case("tree:allow_tf32 reads after generic ieee")
def _tree_allow_tf32(S):
    S.backends.fp32_precision = "ieee"
    return [attempt(lambda: S.backends.cudnn.allow_tf32), attempt(lambda: S.backends.cuda.matmul.allow_tf32),
            attempt(S.top.get_float32_matmul_precision)]


@case("tree:cuda.matmul tf32 then get_float32_matmul_precision")
def _tree_matmul_tf32(S):
    S.backends.cuda.matmul.fp32_precision = "tf32"
    return attempt(S.top.get_float32_matmul_precision)


@case("tree:mkldnn.fp32_precision setter")
def _tree_mkldnn_setter(S):
    S.backends.mkldnn.fp32_precision = "bf16"
    return _tree(S) + [S.backends.mkldnn.fp32_precision]


# ---------------------------------------------------------------- verbose scopes
def _enter(make):
    def run(S):
        scope = attempt(make, S)
        if not hasattr(scope, "__enter__"):
            return {"construct": scope}
        entered = attempt(scope.__enter__)
        if not hasattr(entered, "builtins"):
            scope.__exit__(None, None, None)
        return {"construct": "ok", "enter": "ok" if not hasattr(entered, "builtins") else entered}
    return run


for _v in (0, 1, 2, True, False, 5, -1, "x", None, 2.0):
    case(f"verbose:mkldnn.verbose({_v!r})")(_enter(lambda S, v=_v: S.backends.mkldnn.verbose(v)))
for _v in (0, 1, True, 5, "x"):
    case(f"verbose:mkl.verbose({_v!r})")(_enter(lambda S, v=_v: S.backends.mkl.verbose(v)))


# ---------------------------------------------------------------- cuFFT plan cache (no GPU here)
for _key in ("cuda", "cpu", None, 1.5, 0, "cuda:0", 5, -1):
    case(f"cufft:cufft_plan_cache[{_key!r}]")(lambda S, k=_key: S.backends.cuda.cufft_plan_cache[k])
case("cufft:cufft_plan_cache.max_size")(lambda S: S.backends.cuda.cufft_plan_cache.max_size)


# ---------------------------------------------------------------- python_native
PN = {
    "is_operation_disabled(op_symbol='mm')": lambda p: p.is_operation_disabled(op_symbol="mm"),
    "is_dsl_disabled(dsl_name='zzz')": lambda p: p.is_dsl_disabled(dsl_name="zzz"),
    "get_dsl_operations(dsl_name='zzz', lib_symbol='aten')":
        lambda p: p.get_dsl_operations(dsl_name="zzz", lib_symbol="aten"),
    "disable then is_operation_disabled": lambda p: [p.disable_operations("mm"), p.is_operation_disabled("mm"),
                                                     p.enable_operations("mm"), p.is_operation_disabled("mm")],
    "operations_disabled scope": lambda p: _pn_scope(p),
    "disable_dispatch_keys(dispatch_keys)": lambda p: [p.disable_dispatch_keys("CPU"),
                                                       p.enable_dispatch_keys("CPU")],
    "disable_operations(1)": lambda p: [p.disable_operations(1), p.is_operation_disabled(1)],
}


def _pn_scope(p):
    p.disable_operations("a")
    with p.operations_disabled("a", "b"):
        inside = [p.is_operation_disabled("a"), p.is_operation_disabled("b")]
    return [inside, p.is_operation_disabled("a"), p.is_operation_disabled("b")]


for _id, _fn in PN.items():
    case(f"python_native:{_id}")(lambda S, f=_fn: f(S.backends.python_native))


# ---------------------------------------------------------------- cudnn.rnn
case("rnn:import as a module")(lambda S: __import__(f"{S.name}.backends.cudnn.rnn", fromlist=["x"]).__name__
                               .split(".", 1)[1])
for _m in ("RNN_RELU", "RNN_TANH", "LSTM", "GRU", "bogus"):
    case(f"rnn:get_cudnn_mode({_m!r})")(lambda S, m=_m: S.backends.cudnn.rnn.get_cudnn_mode(m))


@case("rnn:Unserializable round trip")
def _unserializable(S):
    import pickle
    u = S.backends.cudnn.rnn.Unserializable(5)
    return [u.get(), u.__getstate__(), pickle.loads(pickle.dumps(u)).get()]


case("rnn:init_dropout_state without a GPU")(
    lambda S: S.backends.cudnn.rnn.init_dropout_state(0.0, False, 0, {}))


# ---------------------------------------------------------------- nn.attention: registry, SDPAParams, sdpa_kernel
@case("attention:registry flow")
def _registry(S):
    A, calls = S.attention, []

    class Handle:
        def remove(self):
            calls.append("removed")

    out = [A.list_flash_attention_impls(), A.current_flash_attention_impl()]
    A.register_flash_attention_impl("X", register_fn=lambda: calls.append("x") or Handle())
    A.register_flash_attention_impl("Y", register_fn=lambda: calls.append("y"))
    out.append(A.list_flash_attention_impls())
    A.activate_flash_attention_impl("X")
    out.append(A.current_flash_attention_impl())
    A.activate_flash_attention_impl("Y")
    out.append(A.current_flash_attention_impl())
    A.restore_flash_attention_impl(False)
    out += [A.current_flash_attention_impl(), list(calls)]
    out.append(attempt(A.activate_flash_attention_impl, "FA2"))
    out.append(attempt(A.activate_flash_attention_impl, "FA3"))
    out.append(attempt(A.activate_flash_attention_impl, "FA4"))
    out.append(attempt(A.register_flash_attention_impl, "Z", lambda: None))
    return out


def _qkv(S, shape=(1, 2, 4, 8)):
    rng = np.random.default_rng(0)
    return [S.tensor(rng.standard_normal(shape).astype(np.float32)) for _ in range(3)]


SDPA_PARAMS = {
    "bools": (0.0, False, False), "int is_causal": (0.0, 1, False), "int enable_gqa": (0.0, False, 1),
    "None is_causal": (0.0, None, False), "float is_causal": (0.0, 1.0, False), "int dropout": (0, False, False),
    "bool dropout": (True, False, False), "str is_causal": (0.0, "x", False),
}
for _id, (_d, _c, _g) in SDPA_PARAMS.items():
    def _params(S, d=_d, c=_c, g=_g):
        q, k, v = _qkv(S)
        p = S.backends.cuda.SDPAParams(q, k, v, None, d, c, g)
        return [p.dropout, p.is_causal, p.enable_gqa, p.attn_mask]
    case(f"attention:SDPAParams({_id})")(_params)
case("attention:SDPAParams(6 args)")(lambda S: S.backends.cuda.SDPAParams(*_qkv(S), None, 0.0, False))
case("attention:SDPAParams read-only")(
    lambda S: setattr(S.backends.cuda.SDPAParams(*_qkv(S), None, 0.0, False, False), "dropout", 0.5))


def _sdpa_kernel(backends, **kw):
    def run(S):
        B = S.attention.SDPBackend
        chosen = [getattr(B, b) for b in backends] if isinstance(backends, list) else backends
        scope = attempt(S.attention.sdpa_kernel, chosen, **kw)
        if not hasattr(scope, "__enter__"):
            return scope
        entered = attempt(scope.__enter__)
        if hasattr(entered, "builtins"):
            return {"enter": entered}
        cuda = S.backends.cuda
        inside = [cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(), cuda.math_sdp_enabled(),
                  cuda.cudnn_sdp_enabled()]
        scope.__exit__(None, None, None)
        return {"inside": inside, "after": [cuda.flash_sdp_enabled(), cuda.math_sdp_enabled()]}
    return run


case("attention:sdpa_kernel([MATH])")(_sdpa_kernel(["MATH"]))
case("attention:sdpa_kernel([MATH, FLASH_ATTENTION], set_priority=True)")(
    _sdpa_kernel(["MATH", "FLASH_ATTENTION"], set_priority=True))
case("attention:sdpa_kernel([MATH], set_priority=1)")(_sdpa_kernel(["MATH"], set_priority=1))
case("attention:sdpa_kernel([MATH], set_priority=None)")(_sdpa_kernel(["MATH"], set_priority=None))
case("attention:sdpa_kernel(MATH)")(lambda S: _sdpa_kernel(S.attention.SDPBackend.MATH)(S))
case("attention:sdpa_kernel((MATH,))")(lambda S: _sdpa_kernel((S.attention.SDPBackend.MATH,))(S))
case("attention:sdp_kernel deprecated")(lambda S: warned(
    lambda: _scope_value(S.backends.cuda.sdp_kernel(enable_flash=False))))


def _scope_value(scope):
    with scope:
        return "entered"


# ---------------------------------------------------------------- can_use_* on CPU tensors
for _fn in ("can_use_flash_attention", "can_use_efficient_attention", "can_use_cudnn_attention"):
    case(f"attention:{_fn}(cpu params)")(lambda S, f=_fn: getattr(S.backends.cuda, f)(
        S.backends.cuda.SDPAParams(*_qkv(S), None, 0.0, False, False)))
    case(f"attention:{_fn}(1)")(lambda S, f=_fn: getattr(S.backends.cuda, f)(1))


from cases_ops import *  # noqa: E402,F401,F403  (registers the op behaviours)
from cases_linalg import *  # noqa: E402,F401,F403  (backplane.linalg against torch.linalg)
from cases_nn import *  # noqa: E402,F401,F403  (the recurrent and attention modules against torch.nn)
