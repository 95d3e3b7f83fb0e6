#!/usr/bin/env bash
# Builds bench/einsum_auto_bench.cpp against libbackplane from a build dir
# and runs it: einsum's "auto" path against dp's, cost and search time, on
# seeded random networks.
#   bench/run_einsum_auto_bench.sh [BUILD_DIR] [bench args...]
# BUILD_DIR defaults to build; bench args are passed through
# (--from 16 --to 30 --step 2 --networks 40 --repeat 3 --kind both --show-misses).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
[[ $# -gt 0 ]] && shift
[[ "$build" = /* ]] || build="$root/$build"
exe="$build/bin/einsum_auto_bench"
mkdir -p "$build/bin"
g++ -std=c++20 -O2 -I"$root/include" -I"$root/src" -I"$build/generated" \
  "$root/bench/einsum_auto_bench.cpp" -o "$exe" -L"$build/lib" -Wl,-rpath,"$build/lib" -lbackplane
exec "$exe" "$@"
