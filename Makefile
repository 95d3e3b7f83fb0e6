# The two commands of the quick start are `make run` and `make test`; each
# sets up what it needs (scripts/setup.sh) and builds incrementally.
BUILD ?= build
JOBS ?= 2
PY := .venv/bin/python
CMAKE_FLAGS ?=
# ccache (installed by scripts/setup.sh, used by CMake when present): paths
# relative to the checkout, so the other build folders (build-wheel, the
# sanitizer builds) reuse what `build` compiled.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: all setup configure build run test test-cpp test-python test-wheel check docs conformance clean

all: build

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja:
	@$(MAKE) --no-print-directory setup
	cmake -S . -B $(BUILD) -G Ninja -DPython_EXECUTABLE=$(abspath $(PY)) $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: setup configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/backplane info
	$(PY) scripts/tour.py

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(PY) -m pytest -q tests/python

# The package as a user installs it (tests/wheel): builds the wheel once in
# $(BUILD)-wheel (incremental; ccache reuses the objects of $(BUILD)), installs
# it into a temporary virtual environment and runs `backplane`, `python -m
# backplane` and backplane.show_config() there. Minutes, so not part of `test`;
# CI runs it after `test`.
test-wheel: setup
	BACKPLANE_DEV_BUILD_DIR=$(abspath $(BUILD)) BACKPLANE_WHEEL_BUILD_DIR=$(abspath $(BUILD))-wheel \
	  CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(PY) -m pytest -q -s -p no:cacheprovider tests/wheel

# Side by side with the real PyTorch (tests/conformance): a separate peer
# environment, .venv-peers, gets PyTorch from PyPI (about 5 GB, once), so
# that `make test` and CI stay free of it. The suite imports the Backplane
# built here (same Python, PYTHONPATH=python).
conformance: build
	@scripts/setup-peers.sh
	.venv-peers/bin/python -m pytest -q -p no:cacheprovider tests/conformance

# The suites under AddressSanitizer + UndefinedBehaviorSanitizer and
# ThreadSanitizer, the fuzz targets and the stress test, in build-check/
# (scripts/check.sh says what runs where).
check:
	JOBS=$(JOBS) scripts/check.sh

docs: build
	$(PY) scripts/gen_flags_doc.py > docs/flags.md

clean:
	rm -rf $(BUILD) $(BUILD)-wheel build-check
