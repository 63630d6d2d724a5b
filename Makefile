# The two quick-start commands: `make demo` and `make test`. Both install what they need first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: bootstrap configure build test demo bench clean

bootstrap:
	bash scripts/bootstrap.sh

configure: bootstrap
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

demo: build
	bash scripts/demo.sh $(BUILD_DIR)

# The bench group of bootstrap.sh adds PyTorch, the reference for the ONNX ResNet-18 bench; plain
# `make test` never installs it.
bench: CMAKE_FLAGS += -DNPUSCOPE_BUILD_BENCH=ON
bench: build
	bash scripts/bootstrap.sh --bench
	bash bench/run_bench.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
