"""The CPU launcher, as ``python -m backplane.backends.xeon.run_cpu [options] program [args...]``.

A thin face over ``backplane run-cpu`` (the C++ tool; behaviour and options
in docs/run-cpu.md): ``main`` runs the tool with the same arguments.
``create_args(parser)`` adds the launcher's options to an argparse parser
with PyTorch's names, spellings, defaults and dests (plus Backplane's
``--bind``, ``--dry-run`` and ``--json``), for programs that build their own
command line around the launcher; ``to_cli_args(namespace)`` turns the
parsed options back into the tool's arguments.
"""

import argparse
import os
import subprocess
import sys

from ..._cli import cli_path

__all__ = ["create_args", "to_cli_args", "main", "BIND_MODES"]

BIND_MODES = ("auto", "numactl", "taskset", "direct", "none")

# (option strings, keyword arguments) per option, in PyTorch's groups.
_GENERAL = [
    (("--multi-instance", "--multi_instance"),
     dict(action="store_true", default=False,
          help="Enable multi-instance, by default one instance per node")),
    (("-m", "--module"),
     dict(action="store_true", default=False,
          help='Interpret the program as a Python module, as "python -m" does')),
    (("--no-python", "--no_python"),
     dict(action="store_true", default=False,
          help='Do not prepend the program with "python": exec it directly')),
]
_ALLOCATOR = [
    (("--enable-tcmalloc", "--enable_tcmalloc"),
     dict(action="store_true", default=False, help="Enable tcmalloc allocator")),
    (("--enable-jemalloc", "--enable_jemalloc"),
     dict(action="store_true", default=False, help="Enable jemalloc allocator")),
    (("--use-default-allocator", "--use_default_allocator"),
     dict(action="store_true", default=False, help="Use default memory allocator")),
]
_IOMP = [
    (("--disable-iomp", "--disable_iomp"),
     dict(action="store_true", default=False,
          help="Do not add Intel OpenMP (libiomp5.so) to LD_PRELOAD")),
]
_MULTI_INSTANCE = [
    (("--ncores-per-instance", "--ncores_per_instance"),
     dict(default=-1, type=int, help="Cores per instance")),
    (("--ninstances",), dict(default=-1, type=int, help="Number of instances")),
    (("--skip-cross-node-cores", "--skip_cross_node_cores"),
     dict(action="store_true", default=False,
          help="With --ncores-per-instance, skip cores that would make an instance cross NUMA nodes")),
    (("--rank",),
     dict(default=-1, type=int,
          help="Launch only instance #rank (default: all; under torchrun, mpirun or srun, the local rank)")),
    (("--latency-mode", "--latency_mode"),
     dict(action="store_true", default=False, help="4 cores per instance over all physical cores")),
    (("--throughput-mode", "--throughput_mode"),
     dict(action="store_true", default=False, help="One instance per NUMA node over all physical cores")),
    (("--node-id", "--node_id"),
     dict(default=-1, type=int, help="Use only this NUMA node's cores (default: all nodes)")),
    (("--use-logical-core", "--use_logical_core"),
     dict(action="store_true", default=False, help="Use logical cores (hyper-threads) too")),
    (("--disable-numactl", "--disable_numactl"),
     dict(action="store_true", default=False, help="Disable numactl")),
    (("--disable-taskset", "--disable_taskset"),
     dict(action="store_true", default=False, help="Disable taskset")),
    (("--core-list", "--core_list"),
     dict(default=None, type=str, help='Explicit core ids, e.g. "0,1,2,3"')),
    (("--log-path", "--log_path"),
     dict(default="", type=str, help='Folder for per-instance log files ("": no log files)')),
    (("--log-file-prefix", "--log_file_prefix"),
     dict(default="run", type=str, help="Log file name prefix")),
]
# Backplane's additions.
_BACKPLANE = [
    (("--bind",),
     dict(default="auto", choices=BIND_MODES,
          help="How to pin instances: auto (numactl, else taskset, else direct), numactl, taskset, "
               "direct (the launcher sets affinity and memory policy itself) or none")),
    (("--dry-run", "--dry_run"),
     dict(action="store_true", default=False, help="Print the launch plan; launch nothing")),
    (("--json",), dict(action="store_true", default=False, help="With --dry-run: the plan as JSON")),
]


def _add(group, options):
    for names, kwargs in options:
        group.add_argument(*names, **kwargs)


def create_args(parser=None):
    """Adds the launcher's options and the ``program`` / ``program_args`` positionals to
    ``parser`` (a new ArgumentParser when None) and returns it."""
    if parser is None:
        parser = argparse.ArgumentParser(
            prog="python -m backplane.backends.xeon.run_cpu",
            description="Launch a program pinned to CPU cores and NUMA nodes, one or more instances, "
                        "with a tuned allocator and OpenMP environment (docs/run-cpu.md).")
    _add(parser, _GENERAL)
    _add(parser.add_argument_group("Memory Allocator Parameters"), _ALLOCATOR)
    _add(parser.add_argument_group("IOMP Parameters"), _IOMP)
    _add(parser.add_argument_group("Multi-instance Parameters"), _MULTI_INSTANCE)
    _add(parser.add_argument_group("Backplane Parameters"), _BACKPLANE)
    parser.add_argument("program", type=str,
                        help="The program or script to launch, followed by its arguments")
    parser.add_argument("program_args", nargs=argparse.REMAINDER)
    return parser


def to_cli_args(args):
    """The ``backplane run-cpu`` arguments equivalent to a namespace parsed by create_args."""
    out = []
    for names, kwargs in _GENERAL + _ALLOCATOR + _IOMP + _MULTI_INSTANCE + _BACKPLANE:
        dest = names[-1].lstrip("-").replace("-", "_")
        value = getattr(args, dest)
        if value == kwargs["default"]:
            continue
        out += [names[0]] if kwargs.get("action") == "store_true" else [names[0], str(value)]
    return out + ["--", args.program, *args.program_args]


def _command(args):
    if args is None:
        args = sys.argv[1:]
    elif isinstance(args, argparse.Namespace):
        args = to_cli_args(args)
    return [cli_path(), "run-cpu", *args]


def main(args=None):
    """Runs the launcher and returns its exit status. ``args``: a namespace from a
    create_args parser, a list of command-line arguments, or None for sys.argv."""
    return subprocess.call(_command(args))


if __name__ == "__main__":
    try:
        command = _command(None)
    except FileNotFoundError as error:
        sys.exit(f"run_cpu: error: {error}")
    # Replace this interpreter, so signals and the exit status are the tool's own.
    os.execv(command[0], command)
