# The two commands of the project (make demo, make check) and their parts.
# Every target installs what it needs first (scripts/bootstrap.sh is idempotent).

BUILD_DIR ?= build
JOBS ?= $(shell nproc)

.PHONY: all bootstrap configure build check check-lit check-runtime check-docs \
        demo bench docs clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

$(BUILD_DIR)/build.ninja: | bootstrap
	cmake -G Ninja -S . -B $(BUILD_DIR)

configure: $(BUILD_DIR)/build.ninja

build: bootstrap configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

# Every test: lit (dialect, C API, translation, mutation), the runtime's unit,
# stress and sanitizer tests, and the generated docs being current.
check: build
	@status=0; \
	$(MAKE) --no-print-directory check-lit || status=1; \
	$(MAKE) --no-print-directory check-runtime || status=1; \
	$(MAKE) --no-print-directory check-docs || status=1; \
	if [ $$status -ne 0 ]; then echo "make check: FAILED"; exit 1; fi; \
	echo "make check: all tests passed"

check-lit: build
	ninja -C $(BUILD_DIR) check-hpvm

check-runtime: bootstrap
	@if [ -f scripts/check-runtime.sh ]; then bash scripts/check-runtime.sh; \
	else echo "check-runtime: no runtime yet"; fi

check-docs: build
	@bash scripts/update-docs.sh --check $(BUILD_DIR)

demo: build
	@bash scripts/demo.sh $(BUILD_DIR)

# Runtime benchmarks, then the CPU backend against OpenMP and sequential C.
bench: build
	bash scripts/bench-runtime.sh
	bash benchmarks/hpvm/run_cpu.sh
	bash benchmarks/hpvm/run_streaming.sh
	bash benchmarks/release/run.sh
	bash benchmarks/scaling/run.sh

# Regenerates docs/Dialect from the TableGen definitions.
docs: build
	@bash scripts/update-docs.sh --write $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
