"""The CPU launcher through its faces: `backplane run-cpu` (real launches,
errors, signals) and backplane.backends.xeon.run_cpu (create_args, main).

Real launches run a small Python child that reports where it ran; tests
that need 2 CPUs, numactl or an allocator skip cleanly without them.
"""

import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from backplane import _cli
from backplane.backends.xeon import run_cpu
from conftest import PACKAGE_DIR

# The CLI is part of every build `make test` runs: not finding it is a failure, not a skip.
CLI = _cli.cli_path()

ALLOWED = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 allowed CPUs")
PYTHON = sys.executable

# The child: where it runs (CPUs, memory policy), what it was given.
CHILD = r'''
import json, os, sys
with open("/proc/self/maps") as f:
    maps = f.read()
bound = None
if os.path.exists("/proc/self/numa_maps"):
    with open("/proc/self/numa_maps") as f:
        bound = "bind:" in f.read()
# One write per line: under `python -u` print() writes the text and the
# newline separately, and instances share the console.
os.write(1, ("REPORT " + json.dumps({
    "cpus": sorted(os.sched_getaffinity(0)),
    "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "KMP_AFFINITY", "KMP_BLOCKTIME",
                                           "LD_PRELOAD", "MALLOC_CONF")},
    "jemalloc": "libjemalloc" in maps, "tcmalloc": "libtcmalloc" in maps,
    "memory_bound": bound, "args": sys.argv[1:]}) + "\n").encode())
sys.exit(int(os.environ.get("CHILD_EXIT", "0")))
'''


@pytest.fixture
def child(tmp_path):
    path = tmp_path / "child.py"
    path.write_text(CHILD)
    return str(path)


# Under `make check` a Python process importing backplane needs the ASan
# runtime preloaded (scripts/check.sh). Launched instances do not import it
# and must not get it: the launcher puts its allocators first in LD_PRELOAD,
# and ASan refuses to start behind them.
SANITIZER_PRELOAD = os.environ.get("BACKPLANE_SANITIZER_PRELOAD", "")


def launcher_env(**extra):
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "KMP_AFFINITY", "KMP_BLOCKTIME", "LD_PRELOAD", "MALLOC_CONF",
                 "LOCAL_RANK", "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                 "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"):
        env.pop(name, None)
    env["PYTHON"] = PYTHON
    env.update(extra)
    return env


def launch(*args, env=None, timeout=60):
    return subprocess.run([CLI, "run-cpu", *args], env=env or launcher_env(), capture_output=True,
                          text=True, timeout=timeout)


def plan(*args, env=None):
    proc = launch("--dry-run", "--json", *args, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def reports(text):
    return [json.loads(line.split("REPORT ", 1)[1]) for line in text.splitlines() if "REPORT " in line]


def run_and_check(child, *args, env=None, log_dir=None):
    """Launches, then checks every instance ran on the CPUs its plan gave it.
    Returns the plan, each instance's report by index, and the finished process."""
    args = (["--log-path", str(log_dir)] if log_dir else []) + list(args) + [child]
    expected = plan(*args, env=env)
    proc = launch(*args, env=env)
    assert proc.returncode == 0, proc.stderr
    if log_dir:
        got = {}
        for inst in expected["instances"]:
            with open(inst["log_file"]) as f:
                got[inst["index"]] = reports(f.read())[0]
    else:
        by_cpus = {tuple(r["cpus"]): r for r in reports(proc.stdout)}
        assert len(by_cpus) == len(expected["instances"]), proc.stdout
        got = {inst["index"]: by_cpus[tuple(inst["cpus"])] for inst in expected["instances"]}
    for inst in expected["instances"]:
        assert got[inst["index"]]["cpus"] == inst["cpus"]
        assert got[inst["index"]]["env"]["OMP_NUM_THREADS"] == inst["env"]["OMP_NUM_THREADS"]
    return expected, got, proc


# ------------------------------------------------------------------ real launches

@needs_two_cpus
def test_two_instances_one_core_each(child, tmp_path):
    expected, got, proc = run_and_check(child, "--ninstances", "2", "--ncores-per-instance", "1",
                                        log_dir=tmp_path / "logs")
    assert [i["cpus"] for i in expected["instances"]] == [[ALLOWED[0]], [ALLOWED[1]]]
    assert {r["env"]["OMP_NUM_THREADS"] for r in got.values()} == {"1"}
    assert "[instance 1] REPORT" in proc.stdout  # the console copy is prefixed per instance


def test_core_list(child):
    core = ALLOWED[-1]
    expected, got, _ = run_and_check(child, "--core-list", str(core), "--ncores-per-instance", "1")
    assert got[0]["cpus"] == [core]


def test_program_arguments_pass_through_untouched(child):
    proc = launch(child, "-m", "--help", "--ninstances", "3", "--", "x")
    assert proc.returncode == 0, proc.stderr
    assert reports(proc.stdout)[0]["args"] == ["-m", "--help", "--ninstances", "3", "--", "x"]


@pytest.mark.skipif(shutil.which("numactl") is None, reason="numactl is not installed")
def test_with_numactl(child):
    expected, got, _ = run_and_check(child, "--bind", "numactl", "--ncores-per-instance", "1")
    assert expected["binding"]["mode"] == "numactl"
    assert expected["instances"][0]["command"][0].endswith("numactl")
    if got[0]["memory_bound"] is not None:
        assert got[0]["memory_bound"]


def test_without_numactl_or_taskset_binds_directly(child, tmp_path):
    # A PATH without numactl and taskset: the launcher pins the child itself.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = launcher_env(PATH=str(bin_dir))
    expected, got, proc = run_and_check(child, "--ncores-per-instance", "1", env=env)
    assert expected["binding"]["mode"] == "direct"
    assert "taskset" in proc.stderr or "numactl" in proc.stderr  # the fallback is explained
    assert got[0]["cpus"] == [ALLOWED[0]]
    if expected["binding"]["binds_memory"] and got[0]["memory_bound"] is not None:
        assert got[0]["memory_bound"]


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset is not installed")
def test_disable_numactl_uses_taskset(child):
    expected, got, _ = run_and_check(child, "--disable-numactl", "--ncores-per-instance", "1")
    assert expected["binding"]["mode"] == "taskset"
    command = expected["instances"][0]["command"]
    assert command[0].endswith("/taskset") and command[1] == "-c"


def _has_library(name):
    return bool(glob.glob(f"/usr/lib/*-linux-gnu/lib{name}.so*") + glob.glob(f"/usr/lib/lib{name}.so*"))


@pytest.mark.skipif(not _has_library("jemalloc"), reason="libjemalloc2 is not installed")
def test_jemalloc_preloaded(child):
    _, got, _ = run_and_check(child, "--enable-jemalloc", "--disable-iomp")
    assert got[0]["jemalloc"] and not got[0]["tcmalloc"]
    assert got[0]["env"]["MALLOC_CONF"] == "oversize_threshold:1,background_thread:true,metadata_thp:auto"


@pytest.mark.skipif(not _has_library("tcmalloc"), reason="libgoogle-perftools4 is not installed")
def test_tcmalloc_preloaded(child):
    _, got, _ = run_and_check(child, "--enable-tcmalloc", "--disable-iomp")
    assert got[0]["tcmalloc"] and not got[0]["jemalloc"]
    assert got[0]["env"]["MALLOC_CONF"] is None


def test_user_variables_are_kept_and_stale_preload_dropped(child):
    env = launcher_env(OMP_NUM_THREADS="3", LD_PRELOAD="/no/such/libgone.so")
    proc = launch("--use-default-allocator", "--disable-iomp", child, env=env)
    assert proc.returncode == 0, proc.stderr
    report = reports(proc.stdout)[0]
    assert report["env"]["OMP_NUM_THREADS"] == "3"
    assert not report["env"]["LD_PRELOAD"]
    assert "/no/such/libgone.so doesn't exist. Removing it from LD_PRELOAD." in proc.stderr
    assert "Value applied: 3" in proc.stderr


def test_failing_instance_gives_its_status_and_name(child):
    proc = launch(child, env=launcher_env(CHILD_EXIT="3"))
    assert proc.returncode == 3
    assert "instance 0 (cpus" in proc.stderr and "exited with status 3" in proc.stderr


@needs_two_cpus
def test_interrupt_is_forwarded_to_every_instance(tmp_path):
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text("import time, os\nos.write(1, b'ready %d\\n' % os.getpid())\ntime.sleep(60)\n")
    proc = subprocess.Popen([CLI, "run-cpu", "--ninstances", "2", str(sleeper)], env=launcher_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = []
    deadline = time.time() + 30
    while len(pids) < 2 and time.time() < deadline:
        line = proc.stdout.readline()
        if line.startswith("ready"):
            pids.append(int(line.split()[1]))
    assert len(pids) == 2
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "interrupted by signal 2" in err
    assert err.count("SIGINT") >= 2 or "KeyboardInterrupt" in err
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


# ------------------------------------------------------------------ plans and errors

def test_dry_run_text_and_json(child):
    proc = launch("--dry-run", child)
    assert proc.returncode == 0 and proc.stdout.startswith("plan: 1 instance")
    p = plan(child)
    assert p["ninstances"] == 1 and p["instances"][0]["cpus"] == ALLOWED
    assert p["instances"][0]["command"][-1] == child


@needs_two_cpus
def test_torchrun_local_rank_takes_its_slice(child):
    p = plan(child, env=launcher_env(LOCAL_RANK="1", LOCAL_WORLD_SIZE="2"))
    assert p["rank"] == 1 and "torchrun" in p["rank_source"]
    assert [i["index"] for i in p["instances"]] == [1]
    assert p["instances"][0]["cpus"] == ALLOWED[len(ALLOWED) // 2:]


@pytest.mark.parametrize("args, message", [
    (["--latency-mode", "--throughput-mode", "CHILD"], "Either args.latency_mode or args.throughput_mode"),
    (["--ninstances", str(len(ALLOWED) + 1), "CHILD"], "ninstances <= total_cores"),
    (["--ninstances", "2", "--ncores-per-instance", str(len(ALLOWED)), "CHILD"],
     "ninstances * ncores_per_instance <= total_cores"),
    (["--core-list", "60000", "--ncores-per-instance", "1", "CHILD"], "got core 60000"),
    (["--core-list", "100000", "--ncores-per-instance", "1", "CHILD"], "ids at most 65535, got '100000'"),
    (["--core-list", "0,,1", "--ncores-per-instance", "1", "CHILD"], "--core-list"),
    (["--enable-tcmalloc", "--enable-jemalloc", "CHILD"], "Unable to enable TCMalloc and JEMalloc"),
    (["/no/such/program.py"], "program not found"),
    (["--no-python", "no-such-program-anywhere"], "program not found"),
    (["not_python"], 'use "--no-python"'),
    ([], "missing program"),
    (["--ninstances", "two", "CHILD"], "--ninstances: expected an integer"),
    (["--bind", "fast", "CHILD"], "--bind: expected one of"),
    (["--bogus", "CHILD"], "unknown option '--bogus'"),
    (["--node-id", "99", "CHILD"], "Invalid node id: 99"),
])
def test_errors_are_clear_messages(child, args, message):
    proc = launch(*[child if a == "CHILD" else a for a in args])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("backplane run-cpu: error: ") or \
        "\nbackplane run-cpu: error: " in proc.stderr, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and "terminate" not in proc.stderr


def test_not_allowed_core_is_an_error(child):
    online = os.sysconf("SC_NPROCESSORS_CONF")
    forbidden = [c for c in range(online) if c not in ALLOWED]
    if not forbidden:
        pytest.skip("every CPU of this machine is allowed")
    proc = launch("--core-list", str(forbidden[0]), "--ncores-per-instance", "1", child)
    assert proc.returncode == 2 and "a CPU this process may use" in proc.stderr


# ------------------------------------------------------------------ the Python face

# PyTorch's options: option strings, dest, default (spec section 16.2).
PYTORCH_OPTIONS = [
    (["--multi-instance", "--multi_instance"], "multi_instance", False),
    (["-m", "--module"], "module", False),
    (["--no-python", "--no_python"], "no_python", False),
    (["--enable-tcmalloc", "--enable_tcmalloc"], "enable_tcmalloc", False),
    (["--enable-jemalloc", "--enable_jemalloc"], "enable_jemalloc", False),
    (["--use-default-allocator", "--use_default_allocator"], "use_default_allocator", False),
    (["--disable-iomp", "--disable_iomp"], "disable_iomp", False),
    (["--ncores-per-instance", "--ncores_per_instance"], "ncores_per_instance", -1),
    (["--ninstances"], "ninstances", -1),
    (["--skip-cross-node-cores", "--skip_cross_node_cores"], "skip_cross_node_cores", False),
    (["--rank"], "rank", -1),
    (["--latency-mode", "--latency_mode"], "latency_mode", False),
    (["--throughput-mode", "--throughput_mode"], "throughput_mode", False),
    (["--node-id", "--node_id"], "node_id", -1),
    (["--use-logical-core", "--use_logical_core"], "use_logical_core", False),
    (["--disable-numactl", "--disable_numactl"], "disable_numactl", False),
    (["--disable-taskset", "--disable_taskset"], "disable_taskset", False),
    (["--core-list", "--core_list"], "core_list", None),
    (["--log-path", "--log_path"], "log_path", ""),
    (["--log-file-prefix", "--log_file_prefix"], "log_file_prefix", "run"),
]


def test_create_args_adds_pytorchs_options():
    parser = argparse.ArgumentParser()
    assert run_cpu.create_args(parser) is parser
    actions = {tuple(a.option_strings): a for a in parser._actions if a.option_strings}
    for strings, dest, default in PYTORCH_OPTIONS:
        action = actions[tuple(strings)]
        assert action.dest == dest and action.default == default, strings
    additions = {s for a in actions for s in a} - {s for o in PYTORCH_OPTIONS for s in o[0]}
    assert additions == {"-h", "--help", "--bind", "--dry-run", "--dry_run", "--json"}
    positionals = [a for a in parser._actions if not a.option_strings]
    assert [a.dest for a in positionals] == ["program", "program_args"]
    assert positionals[1].nargs == argparse.REMAINDER


def test_create_args_parses_like_pytorch():
    args = run_cpu.create_args().parse_args(
        ["--ncores_per_instance", "2", "--rank", "1", "--enable-jemalloc", "train.py", "--lr", "0.1"])
    assert (args.ncores_per_instance, args.rank, args.enable_jemalloc) == (2, 1, True)
    assert (args.program, args.program_args) == ("train.py", ["--lr", "0.1"])
    assert args.bind == "auto" and not args.dry_run
    with pytest.raises(SystemExit):
        run_cpu.create_args().parse_args(["--bind", "fast", "x.py"])


@needs_two_cpus
def test_namespace_round_trips_to_the_cli(child):
    args = run_cpu.create_args().parse_args(
        ["--ninstances", "2", "--use-default-allocator", "--disable_iomp", child, "-x"])
    cli_args = run_cpu.to_cli_args(args)
    assert cli_args == ["--use-default-allocator", "--disable-iomp", "--ninstances", "2", "--", child, "-x"]
    p = plan(*cli_args)
    assert len(p["instances"]) == 2 and p["instances"][0]["command"][-2:] == [child, "-x"]
    assert "LD_PRELOAD" not in p["instances"][0]["env"]


def test_python_module_entry_point(child):
    env = launcher_env(BACKPLANE_CLI=CLI, PYTHONPATH=PACKAGE_DIR)
    if SANITIZER_PRELOAD:  # this Python imports backplane
        env["LD_PRELOAD"] = SANITIZER_PRELOAD
    proc = subprocess.run([PYTHON, "-m", "backplane.backends.xeon.run_cpu", "--dry-run", child],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("plan: 1 instance") and "RuntimeWarning" not in proc.stderr
    bad = subprocess.run([PYTHON, "-m", "backplane.backends.xeon.run_cpu", "--ninstances", "x", child],
                         env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "expected an integer" in bad.stderr


def test_main_returns_the_exit_status(child, monkeypatch):
    monkeypatch.delenv("LD_PRELOAD", raising=False)  # the instance's preload is the launcher's alone
    monkeypatch.setenv("CHILD_EXIT", "4")
    monkeypatch.setenv("PYTHON", PYTHON)
    assert run_cpu.main(["--use-default-allocator", child]) == 4


def test_cli_path_errors_clearly(monkeypatch):
    monkeypatch.setenv("BACKPLANE_CLI", "/no/such/backplane")
    with pytest.raises(FileNotFoundError, match="BACKPLANE_CLI"):
        _cli.cli_path()
