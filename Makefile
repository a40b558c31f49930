# posthorn — the two commands of the README:
#   make run    install what is missing, build, start the service (SQLite, ./data)
#   make test   install what is missing, build, run every unit and integration test
# Options: BUILD_TYPE=Debug, SANITIZE=address,undefined (builds into build-san/),
#          CTEST_ARGS='-R unit' (passed to ctest).
# Also: make bench (bench/RESULTS.md), make fuzz (libFuzzer, clang; scripts/fuzz.sh),
#       make install [PREFIX=/usr/local] [DESTDIR=...] (binary, example config, systemd unit),
#       make deb [DEB_DIR=build] (a Debian package: docs/operations.md).

BUILD_TYPE ?= Release
SANITIZE ?=
BUILD_DIR := $(if $(SANITIZE),build-san,build)
CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(if $(SANITIZE),-DPH_SANITIZE=$(SANITIZE))
JOBS ?= 2
CTEST_ARGS ?=
PREFIX ?= /usr/local
DEB_DIR ?= $(BUILD_DIR)

.PHONY: all deps build run test bench fuzz clean install deb

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

# DESTDIR, when set, reaches cmake --install through the environment.
install: build
	@cmake --install $(BUILD_DIR) --prefix $(PREFIX)

deb: build
	@scripts/make-deb.sh $(BUILD_DIR) $(DEB_DIR)

bench: build
	@scripts/install-deps.sh --bench
	@bench/run.sh

fuzz:
	@scripts/fuzz.sh

clean:
	rm -rf build build-san build-fuzz
