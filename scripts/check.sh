#!/usr/bin/env bash
# `make check`: the test suites under sanitizers, the fuzz targets and the
# stress test (Note [Sanitizer builds] in CMakeLists.txt). Three build
# folders of their own under build-check/ (never build/, which `make test`
# uses):
#
#  asan/  g++, AddressSanitizer + UndefinedBehaviorSanitizer (UB aborts):
#         every C++ test and every Python test. g++ as in build/, so OpenMP
#         is libgomp, the runtime OpenBLAS and oneDNN use (clang's OpenMP
#         is libomp: two runtimes in one process).
#  fuzz/  clang (libFuzzer), ASan + UBSan: only the library and the fuzz
#         targets of tests/fuzz, each run for FUZZ_SECONDS; OpenMP and the
#         backend libraries off (the parsers use none of them).
#  tsan/  g++, ThreadSanitizer, OpenMP off (libgomp is not instrumented, so
#         its barriers would look like races) and the BLAS libraries off
#         (they bring libgomp back): the flag, scope, thread, autotune, file
#         and stress tests.
#
# Leaks: the C++ tests and the fuzz targets run with LeakSanitizer on; the
# process-lifetime registries are reachable from static pointers and so are
# not reported (scripts/lsan.supp lists what still needs silencing, with
# why). The Python tests run with detect_leaks=0: the interpreter itself does
# not free its heap at exit, and those reports would bury ours; ASan still
# checks every access of the extension. Python loads the extension into an
# uninstrumented interpreter, so the ASan runtime is preloaded (LD_PRELOAD).
#
# Variables: JOBS (2), CHECK_DIR (build-check), FUZZ_SECONDS (45 per target),
# BACKPLANE_STRESS_SECONDS (3), FUZZ_CXX (clang++-14).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${JOBS:-2}
CHECK_DIR=$ROOT/${CHECK_DIR:-build-check}
FUZZ_SECONDS=${FUZZ_SECONDS:-45}
FUZZ_CXX=${FUZZ_CXX:-clang++-14}
FUZZ_CC=${FUZZ_CC:-clang-14}
PY=$ROOT/.venv/bin/python
step() { printf '\n== check: %s (%s)\n' "$1" "$(date +%T)"; }
# Backends a build for the parsers or for TSan does without.
NO_BACKENDS=(-DBACKPLANE_USE_OPENMP=OFF -DBACKPLANE_USE_OPENBLAS=OFF -DBACKPLANE_USE_ONEDNN=OFF
             -DBACKPLANE_USE_FFTW=OFF -DBACKPLANE_USE_CUDA=OFF)

step "setup"
scripts/setup.sh --check

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14 || true)}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1

# ---------------------------------------------------------------- ASan + UBSan
ASAN=$CHECK_DIR/asan
PKG=$ASAN/python    # a package folder of its own: python/backplane's files, this build's extension
step "configure the ASan+UBSan build ($ASAN)"
mkdir -p "$PKG/backplane"
for f in python/backplane/* ; do
  case "$(basename "$f")" in _C*|lib*.so*|_build_info.py|__pycache__) continue ;; esac
  ln -sfn "$ROOT/$f" "$PKG/backplane/$(basename "$f")"
done
cmake -S . -B "$ASAN" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
  -DBACKPLANE_SANITIZE=address,undefined -DBACKPLANE_USE_CUDA=OFF \
  -DPython_EXECUTABLE="$PY" -DBACKPLANE_PYTHON_PACKAGE_DIR="$PKG/backplane" >/dev/null
step "build the ASan+UBSan build"
cmake --build "$ASAN" -j "$JOBS"

step "C++ tests under ASan+UBSan"
# install_find_package builds an uninstrumented consumer: make test runs it.
(cd "$ASAN" && ctest -j "$JOBS" --output-on-failure --timeout 600 -E "^install_find_package$")

step "Python tests under ASan+UBSan"
# libstdc++ too: GCC's ASan looks for the real __cxa_throw when it starts,
# and Python itself does not load libstdc++ (the extension does, later).
ASAN_RUNTIME=$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libstdc++.so)
LD_PRELOAD=$ASAN_RUNTIME BACKPLANE_SANITIZER_PRELOAD=$ASAN_RUNTIME ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
  BACKPLANE_PYTHON_DIR=$PKG \
  "$PY" -m pytest -q -p no:cacheprovider tests/python

# ---------------------------------------------------------------- fuzz targets
FUZZ=$CHECK_DIR/fuzz
step "configure the fuzz build ($FUZZ)"
cmake -S . -B "$FUZZ" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$FUZZ_CC" -DCMAKE_CXX_COMPILER="$FUZZ_CXX" \
  -DBACKPLANE_SANITIZE=address,undefined -DBACKPLANE_BUILD_FUZZERS=ON "${NO_BACKENDS[@]}" \
  -DBACKPLANE_BUILD_TESTS=OFF -DBACKPLANE_BUILD_PYTHON=OFF -DBACKPLANE_BUILD_CLI=OFF >/dev/null
step "build the fuzz targets"
cmake --build "$FUZZ" -j "$JOBS"

step "fuzz targets, ${FUZZ_SECONDS} s each"
mkdir -p "$CHECK_DIR/fuzz-artifacts" "$CHECK_DIR/fuzz-logs"
for target in $(tr ';' ' ' < "$FUZZ/fuzzers.txt"); do
  corpus=$CHECK_DIR/fuzz-corpus/$target   # what the run finds; the seeds in the repo stay as they are
  log=$CHECK_DIR/fuzz-logs/$target.log
  mkdir -p "$corpus"
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$FUZZ/bin/fuzz_$target" -max_total_time="$FUZZ_SECONDS" \
       -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$CHECK_DIR/fuzz-artifacts/$target-" \
       "$corpus" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
    tail -60 "$log"
    echo "check: fuzz target $target failed (input in $CHECK_DIR/fuzz-artifacts, log $log)"
    exit 1
  fi
  echo "-- $target: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs, no crash"
done

# ---------------------------------------------------------------- TSan
TSAN=$CHECK_DIR/tsan
step "configure the TSan build, OpenMP off ($TSAN)"
cmake -S . -B "$TSAN" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
  -DBACKPLANE_SANITIZE=thread "${NO_BACKENDS[@]}" -DBACKPLANE_BUILD_PYTHON=OFF -DBACKPLANE_BUILD_CLI=OFF >/dev/null
step "build the TSan build"
cmake --build "$TSAN" -j "$JOBS" --target test_core test_dispatch test_stress
step "concurrency tests under TSan"
(cd "$TSAN" && ctest -j "$JOBS" --output-on-failure --timeout 600 \
  -R '^(Flag|Scope|Threads|Autotune|UserFile|Stress|Select|PlanCache|Random|Precision)')

step "passed"
