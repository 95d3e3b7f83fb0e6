#!/usr/bin/env bash
# `cmake --install` gives headers, the library and a find_package(Backplane)
# config that a separate project can build and run against, and the CLI with
# the named shape sets of `backplane bench`.
#   install_test.sh <build-dir> <source-dir>
set -euo pipefail
build="$1"; src="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/backplane/version.h"
test -f "$work/prefix/include/backplane/detail/flags.def"
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$work/consumer/consumer"
if [ -x "$work/prefix/bin/backplane" ]; then
  test -f "$work/prefix/share/backplane/bench/shapes/matmul/square.txt"
  # The installed CLI finds the set "square" on its own: the set it refuses is the second one.
  if out=$(cd "$work" && env -u BACKPLANE_SOURCE_DIR "$work/prefix/bin/backplane" bench matmul \
             --shapes square --shapes "$work/none" 2>&1); then
    echo "install_test: expected bench to refuse $work/none"; exit 1
  fi
  case "$out" in
    *"got '$work/none'"*) ;;
    *) echo "install_test: the installed backplane did not find its shape sets: $out"; exit 1 ;;
  esac
fi
