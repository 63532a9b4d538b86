# attnviz: native library, CLI, tests and benchmarks. The WebAssembly build is in emscripten.mk.
#   make run     install what is missing, build everything, serve the lab on http://127.0.0.1:8080/ (PORT=)
#   make test    install what is missing, build, run every test layer (Check, fuzz, oracles, Vitest, e2e)
#   make bench   benchmarks (printed, and written to build/bench.json; never asserted)
#   make help    every target
.DEFAULT_GOAL := all
SHELL := /bin/bash
export NODE_PATH := /usr/share/nodejs
export NO_COLOR := 1

CC       := gcc
CSTD     := -std=c11 -ffp-contract=off
# -Wall's -Wunused-function stays on: a static function nothing calls is dead code to delete
WARN     := -Wall -Wextra -Werror
CFLAGS   := -O2 -g $(CSTD) $(WARN) -Iinclude -Isrc
BENCHFLAGS := -O3 -march=native $(CSTD) $(WARN) -Iinclude -Isrc
SANFLAGS := -O1 -g $(CSTD) $(WARN) -Iinclude -Isrc -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=all
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)

LIB_SRC  := $(wildcard src/*.c)
LIB_HDR  := include/attnviz.h $(wildcard src/*.h)
CLI_SRC  := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/c/*.c)
N        := build/native

.PHONY: fuzz all help deps native cli test test-c check-cycles test-c-san test-oracle test-js test-e2e wasm web single run serve bench clean compare-builds

# plain `make` only builds: on a machine without the tools it says what to run instead of failing in gcc
all:
	@bash scripts/deps.sh --check
	$(MAKE) native wasm web

help:
	@echo 'attnviz: make TARGET'
	@echo '  run          install what is missing, build, serve the lab on http://127.0.0.1:$(PORT)/ (PORT=9000)'
	@echo '  test         install what is missing, build, run every layer: Check (also ASan + UBSan), fuzz,'
	@echo '               numpy oracles, Vitest, Chromium end to end'
	@echo '  bench        benchmarks, printed and written to build/bench.json (installs OpenBLAS: README)'
	@echo '  deps         install what is missing, nothing else (apt, node 20, npm ci)'
	@echo '  (default)    build the native library and CLI, the wasm modules and the page (needs deps)'
	@echo '  native cli   build/native/: libattnviz.a, the attnviz CLI, the Check runner (cli: the CLI alone)'
	@echo '  wasm web single   build/wasm/ (the modules), build/web/ (the static site), build/single/ (one file)'
	@echo '  serve        serve build/web as it is (PORT=)'
	@echo '  test-c test-c-san test-fuzz test-oracle test-js test-e2e test-pkg   one layer of make test'
	@echo '  dist         dist/: the npm tarball, the versioned static site and the single file (docs/package.md)'
	@echo '  check-cycles no file of src/ calls into a file that calls back into it (part of test-c)'
	@echo '  fuzz         the seven libFuzzer targets for FUZZ_SECONDS (default 20; 600 for a long run)'
	@echo '  compare-builds BASE=REV [HEAD=REV]   build the CLI at both revisions (HEAD: the working tree)'
	@echo '               and compare its outputs byte for byte over every variant (docs/README.md)'
	@echo '  clean        remove build/'

deps:
	@bash scripts/deps.sh

# --- native ---------------------------------------------------------------------------------------
native: $(N)/attnviz $(N)/check_attnviz
cli: $(N)/attnviz

$(N)/obj/%.o: src/%.c $(LIB_HDR) | $(N)/obj
	$(CC) $(CFLAGS) -c $< -o $@
$(N)/libattnviz.a: $(patsubst src/%.c,$(N)/obj/%.o,$(LIB_SRC))
	ar rcs $@ $^
$(N)/attnviz: $(CLI_SRC) src/cli/cli.h $(N)/libattnviz.a
	$(CC) $(CFLAGS) $(CLI_SRC) $(N)/libattnviz.a -lm -o $@
$(N)/check_attnviz: $(TEST_SRC) $(wildcard tests/c/*.h) $(N)/libattnviz.a
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(TEST_SRC) $(N)/libattnviz.a $(CHECK_LIBS) -lm -o $@
# the library under ASan and UBSan once, for the Check runner and the CLI both
$(N)/san/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(N)/san
	$(CC) $(SANFLAGS) -c $< -o $@
$(N)/libattnviz_san.a: $(patsubst src/%.c,$(N)/san/%.o,$(LIB_SRC))
	rm -f $@ && ar rcs $@ $^
$(N)/check_attnviz_san: $(TEST_SRC) $(wildcard tests/c/*.h) $(N)/libattnviz_san.a
	$(CC) $(SANFLAGS) $(CHECK_CFLAGS) $(TEST_SRC) $(N)/libattnviz_san.a $(CHECK_LIBS) -lm -o $@
# the CLI under ASan and UBSan: tests/js/cli-files.test.mjs runs it out of memory when it is built
$(N)/attnviz_san: $(CLI_SRC) src/cli/cli.h $(N)/libattnviz_san.a
	$(CC) $(SANFLAGS) $(CLI_SRC) $(N)/libattnviz_san.a -lm -o $@
$(N) $(N)/obj $(N)/obj/cli:
	mkdir -p $@
# the CLI's files as objects too, only for check-cycles (the CLI itself is built from its sources above)
$(N)/obj/cli/%.o: src/cli/%.c src/cli/cli.h $(LIB_HDR) | $(N)/obj/cli
	$(CC) $(CFLAGS) -c $< -o $@

# --- tests ------------------------------------------------------------------------------------------
# everything the layers run is built first, two jobs at a time (the compilers are independent; the tests
# themselves then run one layer at a time, so timing-sensitive browser tests never share the CPU with a build)
TEST_BUILD = $(N)/check_attnviz $(N)/attnviz $(N)/check_attnviz_san $(N)/attnviz_san \
             $(patsubst %,$(FZ)/fuzz_%,$(FUZZ_TARGETS)) wasm web
test: deps
	$(MAKE) -j2 $(TEST_BUILD)
	$(MAKE) test-c test-c-san test-fuzz test-oracle wasm web test-js test-e2e test-pkg

test-c: $(N)/check_attnviz $(N)/attnviz check-cycles
	$(N)/check_attnviz
test-c-san: $(N)/check_attnviz_san $(N)/attnviz_san
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(N)/check_attnviz_san
# no file of src/ calls into a file that calls back into it, directly or through others (docs/architecture.md)
check-cycles: $(patsubst src/%.c,$(N)/obj/%.o,$(LIB_SRC) $(CLI_SRC))
	bash tests/cycles/test_check_cycles.sh
	/usr/bin/python3 scripts/check_cycles.py $^
# independent numpy implementations of docs/variant-formulas.md against the CLI (Debian's python3-numpy)
test-oracle: $(N)/attnviz
	/usr/bin/python3 tests/oracle/run.py $(N)/attnviz
	/usr/bin/python3 tests/oracle/readouts_facts.py $(N)/attnviz
	/usr/bin/python3 tests/oracle/model_oracle.py $(N)/attnviz
	/usr/bin/python3 tests/oracle/recurrent_oracle.py $(N)/attnviz
	/usr/bin/python3 tests/oracle/mechanisms_oracle.py $(N)/attnviz
	/usr/bin/python3 tests/oracle/gated_oracle.py $(N)/attnviz
	/usr/bin/python3 tests/oracle/linearize_oracle.py $(N)/attnviz
	/usr/bin/python3 tests/oracle/hf_oracle.py $(N)/attnviz
	/usr/bin/python3 tests/oracle/hf_stories.py $(N)/attnviz
test-js: wasm $(N)/attnviz
	npx vitest run --config vitest.config.mjs
test-e2e: web
	npx vitest run --config vitest.e2e.config.mjs

# a refactor's bit-identity check: not part of make test, since it builds the CLI twice (~2 min)
compare-builds:
	@if [ -z "$(BASE)" ]; then echo 'usage: make compare-builds BASE=<rev> [HEAD=<rev>]' >&2; exit 2; fi
	bash scripts/compare-builds.sh $(BASE) $(HEAD)

# --- wasm and web -----------------------------------------------------------------------------------
include emscripten.mk
-include web.mk

# --- serve and bench --------------------------------------------------------------------------------
run: deps
	$(MAKE) all
	$(MAKE) serve
# make run PORT=9000 serves elsewhere; a busy port prints one line and fails
PORT ?= 8080
serve:
	@node scripts/serve.mjs build/web $(PORT)

BENCH_NATIVE := $(patsubst bench/%.c,$(N)/%,$(wildcard bench/*_native.c))
# make bench also installs libopenblas0-pthread: numpy's baseline is OpenBLAS (what pip's numpy ships), not
# Debian's reference BLAS. It switches the BLAS/LAPACK of every program on the machine (Debian alternatives).
bench:
	@bash scripts/deps.sh --bench
	$(MAKE) $(N)/attnviz $(BENCH_NATIVE) wasm web $(W)/spectrum_gemm.wasm
	bash bench/run.sh
# the WASM limit of the spectrum benchmark: the spectrum's own float64 product, alone in a module
$(W)/spectrum_gemm.wasm: bench/spectrum_gemm.c $(LIB_SRC) $(LIB_HDR) | $(W)
	$(EMCC) $(WASM_CFLAGS) -msimd128 --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=2GB $(WASM_OPT) \
	  bench/spectrum_gemm.c $(filter-out src/spectrum.c,$(LIB_SRC)) -o $@
# the native baselines: the same C, built with gcc -O3 -march=native
$(N)/%_native: bench/%_native.c bench/bench_time.h $(LIB_SRC) $(LIB_HDR) | $(N)
	$(CC) $(BENCHFLAGS) $< $(LIB_SRC) -lm -o $@

# --- fuzzing ---------------------------------------------------------------------------------------
# Seven libFuzzer targets under ASan + UBSan (clang): fuzz_npy (the .npy reader), fuzz_safetensors, fuzz_json
# (the strict JSON reader of the Hugging Face files), fuzz_hf (config.json, the shard index and the bind of
# a safetensors file), fuzz_hf_tokenizer (tokenizer.json and its encoder), fuzz_model (the llama2.c
# checkpoint and tokenizer readers, every successful parse going on to the encoder and a short forward
# pass) and fuzz_api (every function of include/attnviz.h against the promises at its top). make fuzz (and test-fuzz, part of
# make test) runs each for FUZZ_SECONDS from its seeds (tests/fuzz/corpus_*, copied into build/fuzz/ so
# the committed seeds stay as they are), prints executions, coverage and findings per target, and fails
# when a target finds a crash (the input is kept in build/fuzz/findings_*/). make fuzz FUZZ_SECONDS=600
# runs longer; the corpora in build/fuzz/ grow from run to run. An input slower than 10 s is reported as
# slow (kept as findings_*/slow-unit-*), not as a crash. test-fuzz first checks that fuzz_api calls every
# function of include/attnviz.h and how run.sh classifies what libFuzzer saves.
FUZZ_SECONDS ?= 20
FZ        := build/fuzz
FUZZFLAGS := -std=c11 -ffp-contract=off -g -O1 -Iinclude -Isrc -fno-omit-frame-pointer \
             -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
.PHONY: test-fuzz
# The library is compiled once for every target (coverage without libFuzzer's main: fuzzer-no-link) into
# one archive each target links what it needs from: a full compile under ASan is ~40 s of CPU, once instead
# of once per target.
FUZZLIBFLAGS := $(subst -fsanitize=fuzzer,-fsanitize=fuzzer-no-link,$(FUZZFLAGS))
FUZZ_TARGETS := npy api model safetensors json hf hf_tokenizer
$(FZ)/obj/%.o: src/%.c $(LIB_HDR) src/json.h | $(FZ)
	@mkdir -p $(FZ)/obj
	clang $(FUZZLIBFLAGS) -c $< -o $@
$(FZ)/libattnviz_fuzz.a: $(patsubst src/%.c,$(FZ)/obj/%.o,$(LIB_SRC))
	rm -f $@ && ar rcs $@ $^
$(FZ)/fuzz_%: tests/fuzz/fuzz_%.c $(FZ)/libattnviz_fuzz.a | $(FZ)
	clang $(FUZZFLAGS) $< $(FZ)/libattnviz_fuzz.a -lm -o $@
$(FZ):
	mkdir -p $@
fuzz: $(patsubst %,$(FZ)/fuzz_%,$(FUZZ_TARGETS))
	bash tests/fuzz/run.sh $(FUZZ_SECONDS) $(FZ) $(FUZZ_TARGETS)
test-fuzz:
	python3 tests/fuzz/check_api_coverage.py
	bash tests/fuzz/test_run.sh
	$(MAKE) fuzz

clean:
	rm -rf build
