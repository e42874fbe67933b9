# The two commands of the project (make demo, make check) and their parts.
# Every target installs what it needs first (scripts/bootstrap.sh is idempotent).

BUILD_DIR ?= build
JOBS ?= $(shell nproc)

.PHONY: all bootstrap configure build check check-lit check-runtime check-docs check-fuzz \
        check-python python fuzz demo bench bench-gpu bench-gpu-static device-bundle release-check \
        hetero-check dnn-check zoo-check docs clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

$(BUILD_DIR)/build.ninja: | bootstrap
	cmake -G Ninja -S . -B $(BUILD_DIR)

configure: $(BUILD_DIR)/build.ninja

build: bootstrap configure
	ninja -C $(BUILD_DIR) -j $(JOBS)

# Every test: lit (dialect, C API, translation, mutation), the runtime's unit,
# stress and sanitizer tests, the Python package's tests (pytest, in a virtual
# environment under the build directory), the fuzzers' regression inputs and a short
# fixed-seed fuzzing run of each (under 60 s), and the generated docs being current.
check: build
	@status=0; \
	$(MAKE) --no-print-directory check-lit || status=1; \
	$(MAKE) --no-print-directory check-runtime || status=1; \
	$(MAKE) --no-print-directory check-python || status=1; \
	$(MAKE) --no-print-directory check-fuzz || status=1; \
	$(MAKE) --no-print-directory check-docs || status=1; \
	if [ $$status -ne 0 ]; then echo "make check: FAILED"; exit 1; fi; \
	echo "make check: all tests passed"

check-lit: build
	ninja -C $(BUILD_DIR) check-hpvm

check-runtime: bootstrap
	@if [ -f scripts/check-runtime.sh ]; then bash scripts/check-runtime.sh; \
	else echo "check-runtime: no runtime yet"; fi

# The Python package (python/): installed into $(BUILD_DIR)/python-venv with its test
# dependencies (PyPI), then its pytest suite against this build's tools.
python: build
	@bash scripts/bootstrap-python.sh $(BUILD_DIR) >/dev/null

check-python: build
	@bash scripts/check-python.sh $(BUILD_DIR)

check-docs: build
	@bash scripts/update-docs.sh --check $(BUILD_DIR)

# libFuzzer targets (runtime API sequences, IR, HPVM-C): regression inputs, kept corpus and
# seeds, then a fixed-seed run of each; see docs/Reliability.md.
check-fuzz: build
	@bash scripts/fuzz.sh check $(BUILD_DIR)

# Longer fuzzing (FUZZ_SECONDS per target) in an instrumented build (build/fuzz); new inputs
# that add coverage are kept, minimised, in test/Fuzz/corpus/.
FUZZ_SECONDS ?= 600
fuzz: build
	bash scripts/fuzz.sh run $(FUZZ_SECONDS)

demo: build
	@bash scripts/demo.sh $(BUILD_DIR)

# Runtime benchmarks, then the CPU backend against OpenMP and sequential C, the OpenCL
# backend against hand-written OpenCL (skipped without an OpenCL device), compile-time scaling,
# the auto-tuner's strategies against exhaustive search, and ONNX models
# against onnxruntime.
bench: build
	bash scripts/bench-runtime.sh
	bash benchmarks/hpvm/run_cpu.sh
	bash benchmarks/hpvm/run_streaming.sh
	bash benchmarks/release/run.sh
	bash benchmarks/lanes/run.sh
	bash benchmarks/kernels/run.sh
	bash benchmarks/kernels/run_conv.sh
	bash benchmarks/opencl/run.sh
	bash benchmarks/scaling/run.sh
	bash benchmarks/tune/run.sh $(BUILD_DIR)
	bash benchmarks/tensor/run.sh $(BUILD_DIR)
	bash benchmarks/tensor/run_approx.sh $(BUILD_DIR)
	bash benchmarks/tensor/run.sh $(BUILD_DIR) devices.py

# HPVM on an NVIDIA GPU against hand-written CUDA and cuBLAS, and the edge pipeline on the
# GPU against the CPU (benchmarks/gpu/run.sh; built anyway, run only where a GPU is).
bench-gpu: build
	bash benchmarks/gpu/run.sh

# The benchmark kernels' machine code against nvcc -O3's for sm_90, without a GPU: registers,
# spills, SASS per loop iteration, loads before the first FMA (benchmarks/gpu/static.py; the
# table of docs/Performance.md). Needs the CUDA toolkit's ptxas (says so and passes without).
bench-gpu-static: build
	@mkdir -p $(BUILD_DIR)/benchmarks
	NVDISASM="$$(bash scripts/bootstrap-gpu-tools.sh $(BUILD_DIR))" python3 benchmarks/gpu/static.py \
	  --hpvm-cc $(BUILD_DIR)/bin/hpvm-cc --work $(BUILD_DIR)/benchmarks/gpu-static \
	  > $(BUILD_DIR)/benchmarks/gpu-static.md
	@cat $(BUILD_DIR)/benchmarks/gpu-static.md

# What a machine with a GPU runs, built here into build/device-bundle (docs/GPUBackend.md).
device-bundle: build
	bash scripts/gpu-device-bundle.sh $(BUILD_DIR)/device-bundle

# The HPVM 1.0 release's CPU programs (parboil sgemm, stencil, spmv, lbm; hpvm-cava; the edge
# pipeline when OpenCV is there or installable), unchanged, compiled by hpvm-cc and compared bit
# for bit with the same sources built natively: make release-check RELEASE=DIR [QUICK=1], DIR
# holding hpvm/test/benchmarks (benchmarks/release-check/README.md). Not part of make check.
ifneq ($(filter release-check,$(MAKECMDGOALS)),)
ifeq ($(strip $(RELEASE)),)
$(error make release-check: set RELEASE to the HPVM release's root, the directory that holds \
hpvm/test/benchmarks (e.g. make release-check RELEASE=/tmp/hpvm-release))
endif
endif
release-check: build
	bash benchmarks/release-check/run.sh "$(RELEASE)" $(if $(QUICK),--quick)

# Public Hetero-C++ programs (HPVM's matmul test, IBM/era's tmpRun.c, hpvm-ONNX's pipeline with a
# stand-in for its onnxruntime model, the HDC programs and mini-era when DIR holds them),
# unchanged, built by hpvm-cc as dataflow graphs and with -fhetero-sequential, and their outputs
# compared: make hetero-check PROGRAMS=DIR [ERA_FULL=1] (HDC_OPENCL=1: HD-Classification,
# HD-Clustering and mini-era on OpenCL too),
# DIR holding the programs (benchmarks/hetero-check/README.md); ERA_FULL=1 also compiles IBM/era's
# sources. Not part of make check.
ifneq ($(filter hetero-check,$(MAKECMDGOALS)),)
ifeq ($(strip $(PROGRAMS)),)
$(error make hetero-check: set PROGRAMS to the directory that holds the public Hetero-C++ \
programs (e.g. make hetero-check PROGRAMS=/tmp/hetero-programs))
endif
endif
hetero-check: build
	bash benchmarks/hetero-check/run.sh "$(PROGRAMS)" $(if $(ERA_FULL),--era-full)

ifneq ($(filter dnn-check,$(MAKECMDGOALS)),)
ifeq ($(RELEASE),)
$(error make dnn-check: set RELEASE to the HPVM release's root, the directory that holds \
hpvm/test/dnn_benchmarks (e.g. make dnn-check RELEASE=/tmp/hpvm-release))
endif
endif
# The release's ApproxHPVM DNN programs compiled unchanged, run on seeded data in the release's
# file format and compared with onnxruntime (benchmarks/dnn-check/README.md); BENCH=R adds R
# alternated timing rounds.
dnn-check: build
	bash benchmarks/dnn-check/run.sh "$(RELEASE)" $(if $(BENCH),--bench $(BENCH))

# Models from the field (benchmarks/model-zoo/README.md): torchvision's definitions exported at
# run time by hpvm.from_torch, compiled, checked against onnxruntime and timed; then the
# Hugging Face transformers from small configs, exported by both torch exporters, compiled and
# checked against onnxruntime (no timing). torch is several GB (installed into BUILD/zoo-venv
# on first use), so this is not part of `make check`. ONLY=a,b picks torchvision families,
# BATCH=1,8 the batch sizes, ROUNDS=R the timing rounds (0: none); TRANSFORMERS=a,b picks
# transformers (TRANSFORMERS=none skips them). Both parts run; either failing fails the target.
zoo-check: build
	@status=0; \
	bash benchmarks/model-zoo/run.sh $(if $(ONLY),--only $(ONLY)) $(if $(BATCH),--batch $(BATCH)) \
	  $(if $(ROUNDS),--rounds $(ROUNDS)) || status=1; \
	if [ "$(TRANSFORMERS)" != none ]; then \
	  bash benchmarks/model-zoo/run.sh --transformers --dynamo --rounds 0 \
	    $(if $(filter-out none,$(TRANSFORMERS)),--only $(TRANSFORMERS)) || status=1; \
	fi; \
	exit $$status

# Regenerates docs/Dialect from the TableGen definitions.
docs: build
	@bash scripts/update-docs.sh --write $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
