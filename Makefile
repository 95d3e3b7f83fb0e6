# The two commands of the quick start are `make run` and `make test`; each
# sets up what it needs (scripts/setup.sh) and builds incrementally.
BUILD ?= build
JOBS ?= 2
PY := .venv/bin/python
CMAKE_FLAGS ?=

.PHONY: all setup configure build run test test-cpp test-python check docs clean

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

# The suites under AddressSanitizer + UndefinedBehaviorSanitizer and
# ThreadSanitizer, the fuzz targets and the stress test, in build-check/
# (scripts/check.sh says what runs where).
check:
	JOBS=$(JOBS) scripts/check.sh

docs: build
	$(PY) scripts/gen_flags_doc.py > docs/flags.md

clean:
	rm -rf $(BUILD) build-check
