# web.mk: the lab page (included by the Makefile). Vite bundles web/ (with uPlot, KaTeX and its
# fonts) into build/web/; the two wasm builds are copied beside index.html, where the page and its
# worker load them (the SIMD one, or the scalar one where a feature probe finds no WASM SIMD).
WEB_SRC := $(wildcard web/*.mjs web/*.html web/*.css web/render/*.mjs web/ui/*.mjs) vite.config.mjs

web: build/web/index.html

build/web/index.html: $(WEB_SRC) build/wasm/attnviz.wasm build/wasm/attnviz-scalar.wasm
	npx vite build --config vite.config.mjs
	cp build/wasm/attnviz.wasm build/wasm/attnviz-scalar.wasm build/web/
	@touch $@
