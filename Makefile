# posthorn — the two commands of the README:
#   make run    install what is missing, build, start the service (SQLite, ./data)
#   make test   install what is missing, build, run every unit and integration test
# Options: BUILD_TYPE=Debug, SANITIZE=address,undefined (builds into build-san/),
#          CTEST_ARGS='-R unit' (passed to ctest).
# Also: make bench (bench/RESULTS.md), make fuzz (libFuzzer, clang; scripts/fuzz.sh).

BUILD_TYPE ?= Release
SANITIZE ?=
BUILD_DIR := $(if $(SANITIZE),build-san,build)
CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(if $(SANITIZE),-DPH_SANITIZE=$(SANITIZE))
JOBS ?= 2
CTEST_ARGS ?=

.PHONY: all deps build run test bench fuzz clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS); fi
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@scripts/dev-run.sh

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

bench: build
	@scripts/install-deps.sh --bench
	@bench/run.sh

fuzz:
	@scripts/fuzz.sh

clean:
	rm -rf build build-san build-fuzz
