#!/usr/bin/env bash
# Installs what building and testing Backplane needs, and nothing twice
# (with --check, also what `make check` needs):
# Debian packages that are missing (apt-get), then a project-local virtual
# environment (.venv) with the Python packages. Safe to run on every `make`.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(
  cmake ninja-build g++ pkg-config python3-venv
  libgtest-dev libbenchmark-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libcpuinfo-dev libopenblas-openmp-dev libdnnl-dev libfftw3-dev
  numactl libjemalloc2 libgoogle-perftools4 ccache
)
# `make check` (scripts/check.sh) also needs clang, for libFuzzer and the
# sanitizer runtimes: `scripts/setup.sh --check`.
if [ "${1:-}" = "--check" ]; then
  DEB_PACKAGES+=(clang-14 libclang-rt-14-dev llvm-14)
fi
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
# The cuDNN C++ frontend's headers (cudnn:sdpa): only the include/ folder of
# the PyPI wheel, unpacked into .venv/cudnn_frontend (the wheel's Python
# bindings and their dependencies are not needed). Skipped when present or
# when the wheel cannot be fetched (cudnn:sdpa is then listed as not built).
CUDNN_FE_VERSION=1.32.0
fe_dir=.venv/cudnn_frontend
if [ ! -f "$fe_dir/include/cudnn_frontend.h" ] || [ "$(cat "$fe_dir/version" 2>/dev/null)" != "$CUDNN_FE_VERSION" ]; then
  echo "setup: fetching the cuDNN frontend headers $CUDNN_FE_VERSION"
  tmp=$(mktemp -d)
  if .venv/bin/pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
       "nvidia-cudnn-frontend==$CUDNN_FE_VERSION" -d "$tmp" >/dev/null 2>&1; then
    rm -rf "$fe_dir" && mkdir -p "$fe_dir"
    .venv/bin/python - "$tmp" "$fe_dir" <<'PYEOF'
import glob, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(glob.glob(src + "/*.whl")[0]) as z:
    z.extractall(dst, [n for n in z.namelist() if n.startswith("include/")])
PYEOF
    echo "$CUDNN_FE_VERSION" > "$fe_dir/version"
  else
    echo "setup: could not fetch nvidia-cudnn-frontend (cudnn:sdpa will be listed as not built)"
  fi
  rm -rf "$tmp"
fi

# cuSPARSELt (cusparselt:spmma, backends.cusparselt), only when the CUDA
# toolkit is here: the headers and the library of the PyPI wheel
# nvidia-cusparselt-cu13 (it is no Debian package), unpacked into
# .venv/cusparselt/{include,lib}, where CMake looks (BACKPLANE_CUSPARSELT_DIR
# points elsewhere). Skipped when present or when the wheel cannot be fetched
# (cusparselt:spmma is then listed as not built).
CUSPARSELT_VERSION=0.10.0
csl_dir=.venv/cusparselt
if { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; } &&
   { [ ! -f "$csl_dir/include/cusparseLt.h" ] || [ "$(cat "$csl_dir/version" 2>/dev/null)" != "$CUSPARSELT_VERSION" ]; }; then
  echo "setup: fetching cuSPARSELt $CUSPARSELT_VERSION (headers and library, about 170 MB)"
  tmp=$(mktemp -d)
  if .venv/bin/pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
       "nvidia-cusparselt-cu13==$CUSPARSELT_VERSION" -d "$tmp" >/dev/null 2>&1; then
    rm -rf "$csl_dir" && mkdir -p "$csl_dir/include" "$csl_dir/lib"
    .venv/bin/python - "$tmp" "$csl_dir" <<'PYEOF'
import glob, os, shutil, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(glob.glob(src + "/*.whl")[0]) as z:
    for name in z.namelist():
        parts = name.split("/")
        # nvidia/cu13/include/cusparseLt.h, nvidia/cu13/lib/libcusparseLt.so.0
        if len(parts) == 4 and parts[0] == "nvidia" and parts[2] in ("include", "lib") and parts[3]:
            with z.open(name) as f, open(os.path.join(dst, parts[2], parts[3]), "wb") as out:
                shutil.copyfileobj(f, out)
PYEOF
    # the link-time name find_library looks for
    [ -f "$csl_dir/lib/libcusparseLt.so.0" ] && ln -sf libcusparseLt.so.0 "$csl_dir/lib/libcusparseLt.so"
    echo "$CUSPARSELT_VERSION" > "$csl_dir/version"
  else
    echo "setup: could not fetch nvidia-cusparselt-cu13 (cusparselt:spmma will be listed as not built)"
  fi
  rm -rf "$tmp"
fi

# The development package lives in python/; make the venv see it.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/python" > "$site/backplane-dev.pth"
