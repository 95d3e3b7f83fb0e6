#!/usr/bin/env bash
# `cmake --install` gives headers, the library and a find_package(Backplane)
# config that a separate project can build and run against.
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
