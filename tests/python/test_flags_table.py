"""Every row of the flag table, from Python: default, set/get round trip,
native and vendor env vars, malformed env vars, and each kind of bad input."""

import json

import pytest

import backplane
from backplane import _C
from conftest import run_python

ROWS = _C.flag_rows()
SETTABLE = [r for r in ROWS if not r["env_only"]]


def ids(rows):
    return [r["path"] for r in rows]


def default_value(row):
    """The row's default as Python sees it."""
    text = row["default"]
    if row["type"] == "bool":
        return text == "True"
    if row["type"] == "int":
        return int(text)
    if row["type"] == "order":
        names = row["allowed"].split(": ", 1)[1].split(", ")
        return [names.index(n) for n in text.split(",")]
    return text


def enum_names(row):
    return row["allowed"].split(": ", 1)[1].split(", ")


def other_value(row):
    """A valid value different from the default."""
    d = default_value(row)
    if row["type"] == "bool":
        return not d
    if row["type"] == "int":
        return d + 1
    if row["type"] == "order":
        return list(reversed(d))
    names = enum_names(row)
    if row["path"].startswith(("cuda.", "cudnn.")) and row["path"].endswith("fp32_precision"):
        names = [n for n in names if n != "bf16"]  # CUDA has no bf16 mode
    return names[(names.index(d) + 1) % len(names)]


def as_env_text(row, value):
    if row["type"] == "bool":
        return "1" if value else "0"
    if row["type"] == "order":
        names = row["allowed"].split(": ", 1)[1].split(", ")
        return ",".join(names[i] for i in value)
    return str(value)


def bad_type_value(row):
    return {"bool": 1, "int": "3", "enum": 3, "order": "math"}[row["type"]]


def bad_domain_value(row):
    return {"bool": None, "int": -1, "enum": "no-such-value", "order": [0, 0, 1, 2, 3]}[row["type"]]


def test_the_table_is_not_empty_and_paths_are_unique():
    assert len(ROWS) >= 40
    assert len(set(ids(ROWS))) == len(ROWS)


def test_defaults_in_a_clean_process():
    proc = run_python("import json; from backplane import _C; "
                      "print(json.dumps({r['path']: [_C.flag_get(r['path']), _C.flag_source(r['path'])] "
                      "for r in _C.flag_rows()}))")
    values = json.loads(proc.stdout)
    for row in ROWS:
        value, source = values[row["path"]]
        assert value == default_value(row), row["path"]
        assert source == "default", row["path"]
    assert proc.stderr == ""


@pytest.mark.parametrize("row", SETTABLE, ids=ids(SETTABLE))
def test_set_get_round_trip(row):
    value = other_value(row)
    _C.flag_set(row["path"], value)
    assert _C.flag_get(row["path"]) == value
    assert _C.flag_source(row["path"]) == "api"


@pytest.mark.parametrize("row", [r for r in ROWS if r["prop"]], ids=ids([r for r in ROWS if r["prop"]]))
def test_properties_read_and_write_the_table(row):
    obj = backplane.backends
    for part in row["module"].split(".") if row["module"] else []:
        obj = getattr(obj, part)
    value = other_value(row)
    setattr(obj, row["name"], value)
    # cudnn.benchmark_limit reads None without cuDNN, as PyTorch's does.
    unread = row["path"] == "cudnn.benchmark_limit" and not backplane.backends.cudnn.is_available()
    assert getattr(obj, row["name"]) == (None if unread else value)
    assert _C.flag_get(row["path"]) == value


@pytest.mark.parametrize("row", SETTABLE, ids=ids(SETTABLE))
def test_bad_type_is_a_type_error_naming_the_flag(row):
    before = _C.flag_get(row["path"])
    with pytest.raises(TypeError) as info:
        _C.flag_set(row["path"], bad_type_value(row))
    assert row["path"] in str(info.value)
    assert info.value.subject.endswith(row["path"])
    assert _C.flag_get(row["path"]) == before


@pytest.mark.parametrize("row", [r for r in SETTABLE if r["type"] != "bool"],
                         ids=ids([r for r in SETTABLE if r["type"] != "bool"]))
def test_bad_value_is_a_value_error_naming_the_flag_value_and_allowed(row):
    before = _C.flag_get(row["path"])
    with pytest.raises(ValueError) as info:
        _C.flag_set(row["path"], bad_domain_value(row))
    message = str(info.value)
    assert row["path"] in message and "expected" in message
    assert info.value.allowed
    assert _C.flag_get(row["path"]) == before


def test_env_only_rows_are_read_only():
    for row in (r for r in ROWS if r["env_only"]):
        with pytest.raises(RuntimeError, match=row["env"]):
            _C.flag_set(row["path"], default_value(row))


def test_native_env_vars_set_every_row_at_start_up():
    env = {}
    expected = {}
    for row in ROWS:
        value = other_value(row)
        env[row["env"]] = as_env_text(row, value)
        expected[row["path"]] = value
    proc = run_python("import json; from backplane import _C; "
                      "print(json.dumps({r['path']: [_C.flag_get(r['path']), _C.flag_source(r['path'])] "
                      "for r in _C.flag_rows()}))", env=env)
    values = json.loads(proc.stdout)
    for row in ROWS:
        assert values[row["path"]] == [expected[row["path"]], "env"], row["path"]


def test_malformed_env_vars_warn_once_each_and_keep_the_default():
    env = {row["env"]: "@@bad@@" for row in ROWS}
    proc = run_python("import json; from backplane import _C; "
                      "print(json.dumps({r['path']: _C.flag_get(r['path']) for r in _C.flag_rows()}))", env=env)
    values = json.loads(proc.stdout)
    for row in ROWS:
        assert values[row["path"]] == default_value(row), row["path"]
        assert proc.stderr.count(row["env"] + "=@@bad@@") == 1, row["env"]


@pytest.mark.parametrize("env,path,expected", [
    ({"TORCH_BLAS_PREFER_CUBLASLT": "1"}, "cuda.preferred_blas_library", "cublaslt"),
    ({"TORCH_BLAS_PREFER_CUBLASLT": "yes"}, "cuda.preferred_blas_library", "default"),
    ({"TORCH_LINALG_PREFER_CUSOLVER": "1"}, "cuda.preferred_linalg_library", "cusolver"),
    ({"TORCH_ROCM_FA_PREFER_CK": "1"}, "cuda.preferred_rocm_fa_library", "ck"),
    ({"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1"}, "cuda.matmul.fp32_precision", "tf32"),
    ({"CUBLAS_WORKSPACE_CONFIG": ":4096:2:16:8"}, "cuda.cublas_workspace_size", 4096 * 1024 * 2 + 16 * 1024 * 8),
    ({"CUBLAS_WORKSPACE_CONFIG": "nonsense"}, "cuda.cublas_workspace_size", 4096 * 1024 * 2 + 16 * 1024 * 8),
    ({"CUBLASLT_WORKSPACE_SIZE": "2048"}, "cuda.cublaslt_workspace_size", 2048 * 1024),
    ({"ATEN_CPU_CAPABILITY": "avx2"}, "cpu.capability", "avx2"),
    ({"ATEN_CPU_CAPABILITY": "bogus"}, "cpu.capability", "auto"),
    # The native name wins over the vendor name.
    ({"TORCH_BLAS_PREFER_CUBLASLT": "1", "BACKPLANE_CUDA_PREFERRED_BLAS_LIBRARY": "cublas"},
     "cuda.preferred_blas_library", "cublas"),
])
def test_vendor_env_vars(env, path, expected):
    proc = run_python(f"from backplane import _C; print(repr(_C.flag_get({path!r})))", env=env)
    assert proc.stdout.strip() == repr(expected)


# Issue 10 item 8: every env value, native or vendor, passes the row's
# validation (the workspace rows hold at most 4 GiB), with overflow checks.
@pytest.mark.parametrize("name,text", [
    ("CUBLAS_WORKSPACE_CONFIG", ":999999999999:999999999999"),
    ("CUBLAS_WORKSPACE_CONFIG", ":4096:8:4194304:2"),  # 8 GiB + 32 MiB
    ("CUBLASLT_WORKSPACE_SIZE", "1099511627776"),       # 1 PiB in KiB
    ("CUBLASLT_WORKSPACE_SIZE", "4194305"),             # 4 GiB + 1 KiB
    ("BACKPLANE_CUDA_CUBLASLT_WORKSPACE_SIZE", "4294967297"),
    ("BACKPLANE_CUDA_CUBLASLT_WORKSPACE_SIZE", "99999999999999999999"),
])
def test_env_values_out_of_the_row_domain_warn_and_keep_the_default(name, text):
    path = "cuda.cublas_workspace_size" if name.startswith("CUBLAS_") else "cuda.cublaslt_workspace_size"
    proc = run_python(f"from backplane import _C; print(_C.flag_get({path!r}), _C.flag_source({path!r}))",
                      env={name: text})
    default = {"cuda.cublas_workspace_size": 4096 * 1024 * 2 + 16 * 1024 * 8,
               "cuda.cublaslt_workspace_size": 1024 * 1024}[path]
    assert proc.stdout.split() == [str(default), "default"]
    assert proc.stderr.count(name + "=" + text) == 1 and "4294967296" in proc.stderr, proc.stderr


def test_the_largest_workspace_is_accepted_from_env_and_setter():
    proc = run_python("from backplane import _C; print(_C.flag_get('cuda.cublaslt_workspace_size'))",
                      env={"CUBLASLT_WORKSPACE_SIZE": "4194304"})
    assert proc.stdout.strip() == str(4 << 30) and proc.stderr == ""
    with pytest.raises(ValueError, match=r"expected an integer in \[0, 4294967296\], got 4294967297"):
        _C.flag_set("cuda.cublaslt_workspace_size", (4 << 30) + 1)


# Found by the env_values fuzzer: the native env var of a CUDA precision
# node took "bf16", which its setter refuses (CUDA has no bf16 math mode).
def test_env_values_pass_the_rows_own_rules_like_the_setter():
    proc = run_python("from backplane import _C; print(_C.flag_get('cudnn.conv.fp32_precision'), "
                      "_C.flag_source('cudnn.conv.fp32_precision'))",
                      env={"BACKPLANE_CUDNN_CONV_FP32_PRECISION": "bf16"})
    assert proc.stdout.split() == ["tf32", "default"]
    assert "BACKPLANE_CUDNN_CONV_FP32_PRECISION=bf16" in proc.stderr and "none, ieee, tf32" in proc.stderr
    with pytest.raises(ValueError, match="does not support precision 'bf16'"):
        _C.flag_set("cudnn.conv.fp32_precision", "bf16")


# Names are case-sensitive in env vars as in setters (Note [Env parsing]).
def test_names_are_case_sensitive_in_env_and_setter_alike():
    proc = run_python("from backplane import backends; print(backends.fp32_precision)",
                      env={"BACKPLANE_FP32_PRECISION": "BF16"})
    assert proc.stdout.strip() == "none"
    assert "BACKPLANE_FP32_PRECISION=BF16" in proc.stderr and "case-sensitive" in proc.stderr
    with pytest.raises(ValueError, match="case-sensitive"):
        _C.flag_set("fp32_precision", "BF16")
    proc = run_python("from backplane import backends; print(backends.fp32_precision)",
                      env={"BACKPLANE_FP32_PRECISION": "bf16"})
    assert proc.stdout.strip() == "bf16"
    # Booleans keep the shell's words in any case.
    proc = run_python("from backplane import backends; print(backends.trace)", env={"BACKPLANE_TRACE": "ON"})
    assert proc.stdout.strip() == "True"


def test_malformed_vendor_env_vars_warn():
    proc = run_python("from backplane import _C; _C.flag_get('cuda.cublas_workspace_size')",
                      env={"CUBLAS_WORKSPACE_CONFIG": "nonsense", "TORCH_BLAS_PREFER_CUBLASLT": "yes"})
    assert "CUBLAS_WORKSPACE_CONFIG" in proc.stderr
    assert "TORCH_BLAS_PREFER_CUBLASLT" in proc.stderr


def test_unknown_flag_paths_are_value_errors():
    with pytest.raises(ValueError, match="unknown flag 'cudnn.nope'"):
        _C.flag_get("cudnn.nope")
