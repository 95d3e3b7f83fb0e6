#!/usr/bin/env bash
# The peer environment (.venv-peers): PyTorch from PyPI beside what the
# conformance suite and the benchmarks' PyTorch column need. Kept apart from
# .venv so `make test` and CI never install or import PyTorch. PyPI's default
# Linux wheel is the CUDA one (about 5 GB with its nvidia-* dependencies);
# that is fine on a CPU machine. Safe to run again: it installs only once per
# requested version. opt_einsum is there so that PyTorch answers as it does
# for most users (its einsum optimisation on); Backplane needs no package.
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH_SPEC="${TORCH_SPEC:-torch==2.15.*}"
PEERS="${PEERS:-.venv-peers}"
PY_PACKAGES=(numpy pytest ml_dtypes opt_einsum "$TORCH_SPEC")

PYTHON="${PYTHON:-python3}"
if [ ! -x "$PEERS/bin/python" ]; then
  echo "setup-peers: creating $PEERS"
  "$PYTHON" -m venv "$PEERS"
fi
stamp="$PEERS/.backplane-peers"
want="${PY_PACKAGES[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup-peers: installing $want (PyTorch is large: a few minutes)"
  "$PEERS/bin/pip" install -q --disable-pip-version-check "${PY_PACKAGES[@]}"
  echo "$want" > "$stamp"
fi
