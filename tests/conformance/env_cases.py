"""Environment variables, each read by a fresh interpreter on each side.

A case is (variables, expression): the expression is evaluated with ``B``
bound to ``torch.backends`` / ``backplane.backends`` and ``top`` to
``torch`` / ``backplane``, after the variables are set and before anything
else reads them. Compared: the value (enum members by name) and whether the
interpreter warned about one of the variables.
"""

ENV_CASES = {}


def env_case(env, expression):
    key = " ".join(f"{k}={v}" for k, v in env.items()) + f" :: {expression}"
    ENV_CASES[key] = (env, expression)


for _v in ("avx2", "AVX2", "default", "DEFAULT", "avx512", "bogus"):
    env_case({"ATEN_CPU_CAPABILITY": _v}, "B.cpu.get_cpu_capability()")
for _name in ("TORCH_BLAS_PREFER_CUBLASLT", "TORCH_BLAS_PREFER_HIPBLASLT"):
    for _v in ("1", "0", "yes"):
        env_case({_name: _v}, "B.cuda.preferred_blas_library().name")
for _name in ("TORCH_LINALG_PREFER_CUSOLVER", "TORCH_LINALG_PREFER_HIPSOLVER"):
    env_case({_name: "1"}, "B.cuda.preferred_linalg_library().name")
for _v in ("1", "0"):
    env_case({"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": _v},
             "[B.cuda.matmul.allow_tf32, B.cuda.matmul.fp32_precision, top.get_float32_matmul_precision()]")
env_case({"TORCH_ROCM_FA_PREFER_CK": "1"}, "B.cuda.preferred_rocm_fa_library().name")
for _v in ("2048", "0", "abc"):
    env_case({"CUBLASLT_WORKSPACE_SIZE": _v}, "B.cuda.cublaslt_workspace_size()")
env_case({"CUBLAS_WORKSPACE_CONFIG": ":16:8"}, "B.cuda.cublaslt_workspace_size()")
env_case({"CUBLAS_WORKSPACE_CONFIG": ":16:8", "TORCH_CUBLASLT_UNIFIED_WORKSPACE": "1"},
         "B.cuda.cublaslt_workspace_size()")
env_case({"CUBLAS_WORKSPACE_CONFIG": ":16:8", "CUBLASLT_WORKSPACE_SIZE": "2048"},
         "B.cuda.cublaslt_workspace_size(4096), B.cuda.cublaslt_workspace_size()")
env_case({"CUBLAS_WORKSPACE_CONFIG": ":16:8", "TORCH_CUBLAS_WORKSPACE_CACHE": "1"},
         "B.cuda.cublaslt_workspace_size()")
