# The quick-start commands: `make demo`, `make test`, `make package`. Each installs what it needs first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# The benches are built by `make bench` only; every other target configures them off again, so a
# `make test` after `make bench` does not build them.
BUILD_BENCH := OFF

.PHONY: bootstrap configure build test demo bench package format clean test-asan test-tsan fuzz

bootstrap:
	bash scripts/bootstrap.sh

configure: bootstrap
	cmake -S . -B $(BUILD_DIR) -DNPUSCOPE_BUILD_BENCH=$(BUILD_BENCH) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

demo: build
	bash scripts/demo.sh $(BUILD_DIR)

# The Debian package (CPack, cmake/package.cmake): $(BUILD_DIR)/npuscope_<version>_<arch>.deb.
package: build
	cd $(BUILD_DIR) && cpack -G DEB

# The bench group of bootstrap.sh adds PyTorch, the reference for the ONNX ResNet-18 bench; plain
# `make test` never installs it.
bench: BUILD_BENCH := ON
bench: build
	bash scripts/bootstrap.sh --bench
	bash bench/run_bench.sh $(BUILD_DIR)

# Sanitizer builds, each in its own build directory (docs/testing.md): the whole suite under
# ASan + UBSan, the threaded parts under TSan. ASAN_TORCH=OFF leaves the PyTorch device and its
# tests out of the ASan build (.ci/run does, for its time budget: docs/testing.md).
ASAN_TORCH ?= ON
test-asan: bootstrap
	cmake -S . -B build-asan -DNPUSCOPE_SANITIZE=address -DNPUSCOPE_TORCH=$(ASAN_TORCH) $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	bash scripts/sanitizers/run_tests.sh build-asan address

test-tsan: bootstrap
	cmake -S . -B build-tsan -DNPUSCOPE_SANITIZE=thread $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	bash scripts/sanitizers/run_tests.sh build-tsan thread

# The libFuzzer harnesses in fuzz/, FUZZ_SECONDS each (clang, ASan + UBSan; scripts/fuzz.sh).
FUZZ_SECONDS ?= 600
fuzz:
	bash scripts/bootstrap.sh --fuzz
	bash scripts/fuzz.sh $(FUZZ_SECONDS) build-fuzz

# Formats every C++ source with the tree's .clang-format (the format_check test fails until it is run).
format: bootstrap
	find analyzer bench cli collector comm comparator emulator fuzz opkit runtime_hooks samples tests tool_scaleout viewer \
	  -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
