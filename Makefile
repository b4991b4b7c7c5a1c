# The two commands of the README. Both install what the project needs first.
#   make demo   configure, build, run the main example
#   make test   configure, build, run the whole suite: plain, then under
#               AddressSanitizer + UndefinedBehaviorSanitizer
JOBS ?= $(shell nproc)
BUILD ?= build
BUILD_ASAN ?= build-asan

.PHONY: all deps build build-asan demo test test-plain test-asan fuzz clean

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DTGC_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)

DIGITS = examples/digits
demo: build
	$(BUILD)/tgc compile $(DIGITS)/cnn.yaml --dump shapes -o $(BUILD)/cnn.shapes.yaml
	@echo "inferred shapes written to $(BUILD)/cnn.shapes.yaml"
	$(BUILD)/tgc run $(DIGITS)/cnn.yaml --devices cpu --input x=$(DIGITS)/test_x.npy \
	  --compare logits=$(DIGITS)/ref_logits_cnn.npy --labels $(DIGITS)/test_y.npy --repeat 20

test-plain: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  ctest --test-dir $(BUILD_ASAN) --output-on-failure -j $(JOBS)

test: test-plain test-asan

# A short libFuzzer run over the graph loader (see README).
FUZZ_SECONDS ?= 60
fuzz: deps
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DTGC_BUILD_FUZZERS=ON -DTGC_BUILD_TESTS=OFF -DTGC_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_loader
	mkdir -p build-fuzz/corpus
	build-fuzz/tests/fuzz/fuzz_loader -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	  build-fuzz/corpus tests/fuzz/seeds

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-fuzz
