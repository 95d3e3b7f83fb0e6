#!/usr/bin/env bash
# Installs what building and testing Backplane needs, and nothing twice:
# Debian packages that are missing (apt-get), then a project-local virtual
# environment (.venv) with the Python packages. Safe to run on every `make`.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(
  cmake ninja-build g++ pkg-config python3-venv
  libgtest-dev libbenchmark-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libcpuinfo-dev libopenblas-openmp-dev libdnnl-dev libfftw3-dev
  numactl libjemalloc2 libgoogle-perftools4
)
PY_PACKAGES=(nanobind scikit-build-core numpy pytest ml_dtypes hypothesis)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.backplane-packages
want="${PY_PACKAGES[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing Python packages: $want"
  .venv/bin/pip install -q --disable-pip-version-check "${PY_PACKAGES[@]}"
  echo "$want" > "$stamp"
fi
# The development package lives in python/; make the venv see it.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/python" > "$site/backplane-dev.pth"
