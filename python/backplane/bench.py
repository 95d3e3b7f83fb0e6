"""``python -m backplane.bench <op> [--peer torch] [--plot FILE]``: ``backplane bench`` with Python peers beside it.

The same shape sets and options as ``backplane bench <op>`` (which this runs, with ``--json``), plus, in the
same run, the matching function of a peer library timed on the same problems: ``torch`` (the op's Python
name under ``torch.``, since Backplane's names mirror PyTorch's: ``torch.matmul``,
``torch.nn.functional.scaled_dot_product_attention``, ``torch.einsum``) or ``numpy`` (``numpy.matmul``,
``numpy.einsum``; ops NumPy lacks are skipped, saying so). Peers are optional: never a dependency of
Backplane, and a peer that is not importable is an error naming it. Each row gains a ``vs <peer>`` ratio
(peer time / this time: > 1 is faster than the peer). ``--plot FILE`` draws GFLOP/s per implementation
against the problems, one panel per dtype and thread count (matplotlib).

    python -m backplane.bench matmul --shapes square --dtype f32 --threads 1 --peer torch --plot mm.png
"""

import argparse
import importlib
import inspect
import json
import statistics
import subprocess
import sys
import time

from . import _C, _cli


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m backplane.bench", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("op", help="an op with a shape form: " + ", ".join(_C.op_names()))
    p.add_argument("--peer", action="append", default=[], choices=("torch", "numpy"), help="time this library too")
    p.add_argument("--plot", metavar="FILE", help="draw GFLOP/s per implementation (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--shapes", action="append", default=[], help="shape sets (as backplane bench)")
    p.add_argument("--shape", action="append", default=[], help="one problem (as backplane bench)")
    p.add_argument("--dtype", default="f32", help="dtypes, comma-separated")
    p.add_argument("--threads", default="", help="thread counts, comma-separated")
    p.add_argument("--impl", default="", help="only these implementations (as backplane bench)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--min-time", type=float, default=200.0, help="milliseconds of timing per row at least")
    return p.parse_args(argv)


def _cli_report(a):
    cmd = [_cli.cli_path(), "bench", a.op, "--json", "--dtype", a.dtype, "--repeat", str(a.repeat),
           "--min-time", str(a.min_time)]
    for s in a.shapes:
        cmd += ["--shapes", s]
    for s in a.shape:
        cmd += ["--shape", s]
    if a.threads:
        cmd += ["--threads", a.threads]
    if a.impl:
        cmd += ["--impl", a.impl]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(r.stderr.strip() or f"backplane bench {a.op} failed with status {r.returncode}")
    return json.loads(r.stdout)


def _peer_function(peer, python_name):
    """The peer's function for a Backplane Python name (backplane.nn.functional.x -> torch.nn.functional.x)."""
    module_path, name = python_name.rsplit(".", 1)
    module_path = peer + module_path[len("backplane"):]
    try:
        return getattr(importlib.import_module(module_path), name)
    except (ImportError, AttributeError):
        return None


def _to_peer(peer, value):
    if isinstance(value, _C.Tensor):
        if peer == "torch":
            import torch
            return torch.from_dlpack(value)
        return value.numpy()
    if isinstance(value, tuple) and value and isinstance(value[0], _C.Tensor):
        return tuple(_to_peer(peer, v) for v in value)
    return value


def _time(fn, repeat, min_ms):
    fn()
    times, spent = [], 0.0
    while len(times) < max(1, repeat) or (spent < min_ms and len(times) < 10000):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        spent += times[-1]
    return statistics.median(times)


# Peers that are not a function of the entry's Python name: "module:function" making the callable
# from the form's keyword arguments (the mha entry's peer is torch.nn.TransformerEncoderLayer in eval mode,
# rnn's torch.nn.LSTM / GRU / RNN of the same configuration).
_PEER_MAKERS = {("torch", "mha"): "backplane.nn._mha_peer:torch_encoder_layer",
                ("torch", "rnn"): "backplane._bench_rnn:torch_rnn"}


def _peer_call(peer, op, line, dtype):
    """A callable running the peer on the problem of `line`, or None when the peer has no such function."""
    if (peer, op) in _PEER_MAKERS:
        module, name = _PEER_MAKERS[(peer, op)].split(":")
        return getattr(importlib.import_module(module), name)(_C.op_form_args(op, _C.op_form_parse(op, line), dtype, True))
    dims = _C.op_form_parse(op, line)
    entry_name = _C.op_form_entry(op, dims)
    entry = next(e for e in _C.op_entries() if e["name"] == entry_name)
    fn = _peer_function(peer, entry["python"])
    if fn is None:
        return None
    kwargs = _C.op_form_args(op, dims, dtype, True)
    args, keywords = [], {}
    skipped = False  # after an argument the form leaves out, the rest go by name
    for spec in entry["args"]:  # positional in the entry's order (peers may name them otherwise)
        if spec["name"] not in kwargs:
            skipped = True
            continue
        value = _to_peer(peer, kwargs[spec["name"]])
        if spec["variadic"]:
            args.extend(value if isinstance(value, tuple) else [value])
        elif spec["keyword_only"] or skipped:
            keywords[_peer_arg_name(fn, spec["name"])] = value
        else:
            args.append(value)
    return lambda: fn(*args, **keywords)


def _peer_arg_name(fn, name):
    """The peer's name of argument `name`: NumPy says axis / axes where torch says dim."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return name
    if name in params or name != "dim":
        return name
    return next((alt for alt in ("axes", "axis") if alt in params), name)


def _set_peer_threads(peer, n):
    if peer == "torch":
        import torch
        torch.set_num_threads(n)


def add_peers(report, op, peers, repeat, min_ms):
    """Times each peer on every (shape, dtype, threads) group of the report and adds its rows and ratios."""
    for peer in peers:
        try:
            importlib.import_module(peer)
        except ImportError as e:
            raise SystemExit(f"--peer {peer}: {peer} is not importable here ({e}); install it beside backplane "
                             "(make conformance makes .venv-peers with PyTorch)") from None
    groups = {}
    for row in report["rows"]:
        groups.setdefault((row["shape"], row["dtype"], row["threads"]), []).append(row)
    report.setdefault("notes", [])
    for (shape, dtype, threads), rows in groups.items():
        flops = next((r["gflops"] * r["median_ms"] * 1e6 for r in rows if r["median_ms"] > 0), 0.0)
        for peer in peers:
            call = _peer_call(peer, op, shape, dtype)
            if call is None:
                note = f"{peer} has no counterpart of {op}: not timed"
                if note not in report["notes"]:
                    report["notes"].append(note)
                continue
            _set_peer_threads(peer, threads)
            ms = _time(call, repeat, min_ms)
            for r in rows:
                r[f"vs_{peer}"] = ms / r["median_ms"] if r["median_ms"] > 0 else 0.0
            report["rows"].append({"shape": shape, "dtype": dtype, "threads": threads, "implementation": f"{peer} (peer)",
                                   "library": peer, "median_ms": ms, "gflops": flops / (ms * 1e6) if ms > 0 else 0.0,
                                   "peak_extra_bytes": 0, "vs_fastest": 0.0, "vs_best_peer": 0.0, f"vs_{peer}": 1.0})
    return report


def render(report, peers):
    cols = "".join(f" {'vs ' + p:>9}" for p in peers)
    out = [f"{'shape':<18} {'dtype':<5} {'thr':>3}  {'implementation':<36} {'median ms':>10} {'GFLOP/s':>9}{cols}"]
    for r in sorted(report["rows"], key=lambda r: (r["shape"], r["dtype"], r["threads"])):
        ratios = "".join(f" {r.get('vs_' + p, 0.0):>8.2f}x" for p in peers)
        out.append(f"{r['shape']:<18} {r['dtype']:<5} {r['threads']:>3}  {r['implementation']:<36} "
                   f"{r['median_ms']:>10.4f} {r['gflops']:>9.1f}{ratios}")
    out += [f"note: {n}" for n in report.get("notes", [])]
    if peers:
        out.append("vs <peer>: peer time / this time (> 1 is faster than the peer)")
    return "\n".join(out) + "\n"


def plot(report, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib (pip install matplotlib)") from None
    panels = sorted({(r["dtype"], r["threads"]) for r in report["rows"]})
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, (dtype, threads) in zip(axes[0], panels):
        rows = [r for r in report["rows"] if r["dtype"] == dtype and r["threads"] == threads]
        shapes = list(dict.fromkeys(r["shape"] for r in rows))
        for impl in dict.fromkeys(r["implementation"] for r in rows):
            pts = {r["shape"]: r["gflops"] for r in rows if r["implementation"] == impl}
            ax.plot([shapes.index(s) for s in pts], list(pts.values()), marker="o", label=impl)
        ax.set_xticks(range(len(shapes)), shapes, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{report['op']} {dtype}, {threads} thread(s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    a = _parse(sys.argv[1:] if argv is None else argv)
    if _C.op_form(a.op) is None:
        raise SystemExit(f"{a.op}: this op has no shape form to benchmark")
    report = add_peers(_cli_report(a), a.op, a.peer, a.repeat, a.min_time)
    if a.plot:
        plot(report, a.plot)
    sys.stdout.write(json.dumps(report, indent=2) + "\n" if a.json else render(report, a.peer))


if __name__ == "__main__":
    main()
