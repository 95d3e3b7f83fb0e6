"""Every way Backplane knowingly differs from PyTorch in the conformance suite.

Each entry maps a case id (a name check "name:<module>.<name>", a behaviour
of cases.py / cases_ops.py, or "env:..." of env_cases.py) to a phrase found
on exactly one line of docs/differences.md: the line that explains the
difference. test_conf_known_differences.py checks every citation; a listed
case that conforms again fails until its entry is removed, and any
difference not listed fails.
"""

# The lines of docs/differences.md cited below (a phrase unique to each).
MKLDNN_NODE = "**`mkldnn.fp32_precision` reads and writes the same node**"
ONE_SOURCE = "**Old and new TF32 APIs share one source of truth.**"
TYPE_CHECKED = "**Setters are type-checked everywhere**"
F32MM_STRING = "(or another case, \"HIGH\") raises `ValueError`"
UNKNOWN_ATTR = "**Backends modules refuse unknown attributes**"
MAGMA = "no MAGMA, so `preferred_linalg_library(\"magma\")` raises"
NOT_BUILT = "**Libraries Backplane does not build answer False**"
NOT_MIRRORED = "**Modules Backplane does not mirror**"
HELPER_CLASSES = "PyTorch's classes that build its modules (`ContextProp`,"
MKL_VERBOSE = "**`mkl.verbose(VERBOSE_ON)` raises a clear `RuntimeError`**"
VERBOSE_LEVEL = "**A verbose level outside the allowed ones raises `ValueError`**"
PYTHON_NATIVE = "default; PyTorch registers its own Triton, CuTe DSL, FlyDSL and Helion"
PN_NAMES = "(PyTorch stores anything, `disable_operations(1)` included)."
SDPA_TUPLE = "**`sdpa_kernel` accepts a tuple as well as a list**"
EINSUM_SIGNATURE = "**`backplane.einsum(equation, *operands)` names its first argument**"
CAN_USE_CPU = "**`can_use_flash_attention` and `can_use_efficient_attention` answer for CPU"
KV_LENGTHS = "**SDPA refuses key and value of different sequence lengths**"
MATMUL_DTYPES = "**`matmul` of bool tensors raises `ValueError`**"
CAPABILITY_CAP = "**The CPU-capability cap never goes above the hardware**"

KNOWN = {
    "name:torch.einsum": EINSUM_SIGNATURE,
    # fp32 precision tree
    "set:mkldnn.fp32_precision='ieee'": MKLDNN_NODE,
    "set:mkldnn.fp32_precision='tf32'": MKLDNN_NODE,
    "set:mkldnn.fp32_precision='bf16'": MKLDNN_NODE,
    "tree:mkldnn.fp32_precision setter": MKLDNN_NODE,
    "tree:allow_tf32 reads after generic ieee": ONE_SOURCE,
    "tree:cuda.matmul tf32 then get_float32_matmul_precision": ONE_SOURCE,
    # setters and their checks
    "call:top.set_float32_matmul_precision('bogus')": F32MM_STRING,
    "call:top.set_float32_matmul_precision('HIGH')": F32MM_STRING,
    "call:mha.set_fastpath_enabled(1)": TYPE_CHECKED,
    "call:mha.set_fastpath_enabled(None)": TYPE_CHECKED,
    "call:cuda.preferred_linalg_library('magma')": MAGMA,
    "module:unknown attribute assignment": UNKNOWN_ATTR,
    "verbose:mkldnn.verbose(5)": VERBOSE_LEVEL,
    "verbose:mkldnn.verbose(-1)": VERBOSE_LEVEL,
    "verbose:mkl.verbose(5)": VERBOSE_LEVEL,
    "verbose:mkl.verbose(1)": MKL_VERBOSE,
    "verbose:mkl.verbose(True)": MKL_VERBOSE,
    "python_native:disable_operations(1)": PN_NAMES,
    # what is built
    "answer:cuda.is_flash_attention_available": NOT_BUILT,
    "answer:mkl.is_available": NOT_BUILT,
    "answer:nnpack.is_available": NOT_BUILT,
    "answer:python_native.all_dsls": PYTHON_NATIVE,
    "answer:python_native.available_dsls": PYTHON_NATIVE,
    # attention
    "attention:sdpa_kernel((MATH,))": SDPA_TUPLE,
    "attention:can_use_flash_attention(cpu params)": CAN_USE_CPU,
    "attention:can_use_efficient_attention(cpu params)": CAN_USE_CPU,
    "op:sdpa key and value lengths differ": KV_LENGTHS,
    "op:matmul error bool matmul": MATMUL_DTYPES,
    # names
    "name:torch.backends.quantized": NOT_MIRRORED,
    "name:torch.backends.xnnpack": NOT_MIRRORED,
    **{f"name:{module}.{cls}": HELPER_CLASSES for module, cls in [
        ("torch.backends", "ContextProp"), ("torch.backends", "PropModule"), ("torch.backends", "GenericModule"),
        ("torch.backends.cudnn", "CudnnModule"), ("torch.backends.cudnn.rnn", "CudnnRNNModule"),
        ("torch.backends.cudnn.rnn", "ContextProp"), ("torch.backends.miopen", "MiopenModule"),
        ("torch.backends.mkldnn", "MkldnnModule"), ("torch.backends.opt_einsum", "OptEinsumModule"),
        ("torch.backends.python_native", "PythonNativeModule")]},
}

# The cap differs only where the hardware lacks what is asked for: on an
# AVX2-only CPU, ATEN_CPU_CAPABILITY=avx512 is AVX512 in PyTorch (no hardware
# check) and AVX2, with a warning, here. On AVX-512 hardware both say AVX512.
if __import__("backplane")._C.detected_cpu_capability() != "AVX512":
    KNOWN["env:ATEN_CPU_CAPABILITY=avx512 :: B.cpu.get_cpu_capability()"] = CAPABILITY_CAP
