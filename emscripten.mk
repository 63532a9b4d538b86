# emscripten.mk: the WebAssembly build (included by the Makefile).
# A raw reactor module (--no-entry -sSTANDALONE_WASM) that web/wasm/attnviz.mjs instantiates in node, the
# page, workers and file:// pages. Two builds of the same C: SIMD128 (the default) and scalar (the
# fallback where WASM SIMD is missing, chosen by a feature probe in the loader).
EMCC        := emcc
W           := build/wasm
WASM_CFLAGS := -O3 $(CSTD) $(WARN) -Iinclude -Isrc
# every function the public header declares, plus the allocator the loader uses
WASM_EXPORTS = $(shell bash scripts/wasm-exports.sh)
# Binaryen (wasm-opt -O3, run at link time) inlines every function with a single caller, whatever its
# size and despite the C's noinline. It folded the accurate spectrum route's out-of-line kernels (brd_pass,
# brd_update, ...) and dqds into one 40 kB av_singular_values, which V8 then ran at 60% of the speed of
# the same code kept apart: 4.8 against 3.0 ms at n = 256 (docs/performance.md, "Build"). LLVM has already
# inlined what it judged worth it; Binaryen keeps only its small-function inlining.
WASM_OPT    := -sBINARYEN_EXTRA_PASSES=--one-caller-inline-max-function-size=0
WASM_LINK   := --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=16MB \
               -sMAXIMUM_MEMORY=4GB $(WASM_OPT)

wasm: $(W)/attnviz.wasm $(W)/attnviz-scalar.wasm

$(W)/attnviz.wasm: $(LIB_SRC) $(LIB_HDR) emscripten.mk | $(W)
	$(EMCC) $(WASM_CFLAGS) -msimd128 $(WASM_LINK) -sEXPORTED_FUNCTIONS=$(WASM_EXPORTS) $(LIB_SRC) -o $@
	@n=$$(wasm-objdump -d $@ | grep -cE '\b(f32x4|f64x2|i32x4|v128)\.'); \
	  echo "SIMD instructions in $@: $$n"; \
	  if [ "$$n" -eq 0 ]; then echo "error: $@ holds no SIMD instructions" >&2; rm -f $@; exit 1; fi
$(W)/attnviz-scalar.wasm: $(LIB_SRC) $(LIB_HDR) emscripten.mk | $(W)
	$(EMCC) $(WASM_CFLAGS) $(WASM_LINK) -sEXPORTED_FUNCTIONS=$(WASM_EXPORTS) $(LIB_SRC) -o $@
$(W):
	mkdir -p $@
