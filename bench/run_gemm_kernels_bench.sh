#!/usr/bin/env bash
# Builds bench/gemm_kernels_bench.cpp against libbackplane from a build dir and
# runs it: builtin GEMM (each ISA) vs oneDNN and OpenBLAS (OpenMP variant).
#   bench/run_gemm_kernels_bench.sh [BUILD_DIR] [bench args...]
# BUILD_DIR defaults to build-kernels; bench args are passed through
# (--threads 1,2 --shapes 256,1024,16x4096x4096 --reps 5 --min-time 0.3).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-kernels}"
[[ $# -gt 0 ]] && shift
[[ "$build" = /* ]] || build="$root/$build"
oblas=/usr/lib/x86_64-linux-gnu/openblas-openmp
exe="$build/bin/gemm_kernels_bench"
mkdir -p "$build/bin"
# --allow-shlib-undefined: tolerate a libbackplane mid-development that
# references a symbol this bench never calls.
g++ -std=c++20 -O3 -march=native -fopenmp \
  -I"$root/include" -I"$root/src" -I"$build/generated" -I/usr/include/x86_64-linux-gnu/openblas-openmp \
  "$root/bench/gemm_kernels_bench.cpp" -o "$exe" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -lbackplane -ldnnl "$oblas/libopenblas.so" -Wl,-rpath,"$oblas" \
  -Wl,--allow-shlib-undefined
# Settings that would skew OpenBLAS's kernel choice or blocking.
[[ -n "${OPENBLAS_CORETYPE:-}" ]] && unset OPENBLAS_CORETYPE
[[ -n "${OPENBLAS_L2_SIZE:-}" ]] && unset OPENBLAS_L2_SIZE
exec "$exe" "$@"
