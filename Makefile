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

bench: CMAKE_FLAGS += -DNPUSCOPE_BUILD_BENCH=ON
bench: build
	bash bench/run_bench.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
