# The two commands of the README. Both install what the project needs first.
#   make demo   configure, build, run the main example
#   make test   configure, build, run the whole suite: in a Release build (-O3,
#               NDEBUG, as users build it), then under AddressSanitizer +
#               UndefinedBehaviorSanitizer (Debug: assertions on), the threaded
#               suites under ThreadSanitizer, and the whole suite again, but
#               for the process transport's, in a build without the optional
#               libraries (TGC_JIT=OFF: fusion groups through the interpreter;
#               TGC_DNNL=OFF: every GEMM through OpenBLAS). Every make test
#               build has -DTGC_WERROR=ON: a warning fails it. A plain cmake
#               build warns and goes on.
JOBS ?= $(shell nproc)
BUILD ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
BUILD_NOJIT ?= build-nojit
# The suites with threads of their own, run again under ThreadSanitizer.
TSAN_TESTS = support_test_thread_pool support_test_parallel_for partition_test_rendezvous executor_test_parallel \
	devices_test_cpu_fast_paths devices_test_cpu_split_kernels executor_test_fusion devices_test_cpu_jit \
	devices_test_cpu_gemm_packed devices_test_cpu_conv_direct executor_test_control_flow executor_test_eager_threads \
	executor_test_concurrent_steps executor_test_step_peak executor_test_concat_in_place executor_test_replicas \
	passes_test_fuse_qdq executor_test_function
# With MPI (the build's TGC_MPI finds it the same way): the transport and tgc
# itself under mpirun. Asked in the recipe, after deps: on a bare machine
# OpenMPI is only there once install-deps has run.
TSAN_MPI_TESTS = $$(pkg-config --exists ompi-c 2>/dev/null && echo distributed_mpi_transport_check tgc)

.PHONY: all deps build build-asan build-tsan build-nojit demo test test-plain test-asan test-tsan \
	test-nojit fuzz \
	models-check pretrained-check clean

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DTGC_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DTGC_SANITIZE=ON -DTGC_WERROR=ON >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)

build-nojit: deps
	@cmake -S . -B $(BUILD_NOJIT) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTGC_JIT=OFF -DTGC_DNNL=OFF -DTGC_BUILD_BENCH=OFF \
	  -DTGC_WERROR=ON >/dev/null
	@cmake --build $(BUILD_NOJIT) -j $(JOBS)


DIGITS = examples/digits
build-tsan: deps
	@cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=Debug -DTGC_TSAN=ON -DTGC_BUILD_BENCH=OFF -DTGC_WERROR=ON >/dev/null
	@cmake --build $(BUILD_TSAN) -j $(JOBS) --target $(TSAN_TESTS) $(TSAN_MPI_TESTS)

demo: build
	$(BUILD)/tgc compile $(DIGITS)/cnn.yaml --dump shapes -o $(BUILD)/cnn.shapes.yaml
	@echo "inferred shapes written to $(BUILD)/cnn.shapes.yaml"
	$(BUILD)/tgc devices
	$(BUILD)/tgc compile $(DIGITS)/cnn.yaml --devices cpu,gpu0 --dump placed -o $(BUILD)/cnn.placed.yaml
	$(BUILD)/tgc run $(DIGITS)/cnn.yaml --devices cpu,gpu0 --input x=$(DIGITS)/test_x.npy \
	  --compare logits=$(DIGITS)/ref_logits_cnn.npy --labels $(DIGITS)/test_y.npy --repeat 20

test-plain: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# Under the sanitizers the MPI suites run over shared memory only: tgc's code
# is the same whichever transport OpenMPI picks (the plain run takes TCP too),
# and the MPI suites hold one lock, so they run one after another. Not
# distributed/mpi_failures under AddressSanitizer: those suites wait out peer
# timeouts; the plain and ThreadSanitizer runs take them. A test whose only
# fault was LeakSanitizer's tracer crashing at exit runs once more
# (tests/asan_ctest.sh says why).
test-asan: build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  tests/asan_ctest.sh $(BUILD_ASAN) -j $(JOBS) -E '^distributed/(mpi_failures|.*_tcp$$)'

test-tsan: build-tsan
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir $(BUILD_TSAN) --output-on-failure -j $(JOBS) \
	  -R 'test_thread_pool|test_rendezvous|test_parallel|test_cpu_(fast_paths|split_kernels|jit|conv_direct|gemm_packed)|test_fusion|executor/test_control_flow|test_eager_threads|test_concurrent_steps|test_step_peak|test_concat_in_place|test_replicas|executor/test_function|passes/test_fuse_qdq|distributed/' \
	  -E '^distributed/.*_tcp$$'

# (not distributed/: the process transport has no JIT or GEMM of its own,
# and its timeout tests are the slowest there)
test-nojit: build-nojit
	ctest --test-dir $(BUILD_NOJIT) --output-on-failure -j $(JOBS) -E '^distributed/'

test: test-plain test-asan test-tsan test-nojit

# Short libFuzzer runs (see README): FUZZ_TARGET=loader|yaml|onnx (default
# loader), FUZZ_SECONDS each. New inputs go to build-fuzz/corpus-TARGET; the
# kept corpus in tests/fuzz/corpus/ is the starting point (replayed by make test).
FUZZ_SECONDS ?= 60
FUZZ_TARGET ?= loader
# The model families users run (torchvision 0.14 classification, segmentation
# and video, a GPT-style decoder, a BERT-style encoder, LSTM/GRU), exported
# from PyTorch into a temporary folder and compared with it on cpu and
# cpu,gpu0. Needs Debian's python3-torch and python3-torchvision (not
# installed by deps: only this check uses them). Not part of make test.
# MODELS=name,... picks some.
models-check: build
	/usr/bin/python3 scripts/models_check.py $(BUILD)/tgc $(if $(MODELS),--only $(MODELS))

# Pretrained models other people exported and ship in npm packages (PaddleOCR
# v4 from paddle2onnx, openWakeWord from PyTorch and tf2onnx, Silero VAD from
# PyTorch and spox), run on rendered text and synthesized speech with tgc on cpu
# and cpu,gpu0 and with ONNX Runtime (onnxruntime-node), outputs and task
# results compared (scripts/pretrained_check.py). Needs the npm registry;
# installs imagemagick and espeak-ng when missing. Downloads go to
# $(BUILD)/pretrained, never committed. Not part of make test. MODELS=name,...
# picks some.
pretrained-check: build
	/usr/bin/python3 scripts/pretrained_check.py --build $(BUILD) $(if $(MODELS),--only $(MODELS))

fuzz: deps
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DTGC_BUILD_FUZZERS=ON -DTGC_BUILD_TESTS=OFF -DTGC_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_$(FUZZ_TARGET)
	mkdir -p build-fuzz/corpus-$(FUZZ_TARGET)
	build-fuzz/tests/fuzz/fuzz_$(FUZZ_TARGET) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=30 \
	  -rss_limit_mb=4096 build-fuzz/corpus-$(FUZZ_TARGET) \
	  $(if $(filter loader,$(FUZZ_TARGET)),tests/fuzz/seeds,tests/fuzz/corpus/$(FUZZ_TARGET))

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_NOJIT) build-fuzz
