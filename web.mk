# web.mk: the lab page (included by the Makefile). Vite bundles web/ (with uPlot, KaTeX and the worker)
# into build/web/; the two wasm builds are copied beside index.html, where the page loads one (the SIMD
# one, or the scalar one where a feature probe finds no WASM SIMD) and hands it, compiled, to its workers.
# build/web/embed.js is the <attn-viz> custom element (web/embed.mjs), the same build's second entry: the page
# and the element share their chunks (KaTeX, uPlot, the UI), so a post with both downloads each once.
# build/single/attnviz.html is the same page as one self-contained file (scripts/single.mjs).
WEB_SRC := $(wildcard web/*.mjs web/*.js web/*.html web/*.css web/*.svg web/*/*.mjs web/*/*/*.mjs) vite.config.mjs

web: build/web/index.html build/single/attnviz.html build/sizes.json
single: build/single/attnviz.html

build/web/index.html: $(WEB_SRC) build/wasm/attnviz.wasm build/wasm/attnviz-scalar.wasm
	npx vite build --config vite.config.mjs
	cp build/wasm/attnviz.wasm build/wasm/attnviz-scalar.wasm web/boot.js build/web/
	@touch $@

# the built sizes, measured: the docs quote them, tests/e2e/weight.test.mjs holds the docs to them
build/sizes.json: build/web/index.html build/single/attnviz.html scripts/sizes.mjs
	node scripts/sizes.mjs

build/single/attnviz.html: $(WEB_SRC) vite.single.mjs scripts/single.mjs build/wasm/attnviz.wasm build/wasm/attnviz-scalar.wasm
	node scripts/single.mjs

# make dist: the npm tarball, a versioned static site and the single file under dist/ (scripts/dist.mjs,
# docs/package.md); make test-pkg installs that tarball offline in a scratch folder and uses it
.PHONY: dist test-pkg
dist: build/web/index.html build/single/attnviz.html
	node scripts/dist.mjs
test-pkg: dist
	npx vitest run --config vitest.pkg.config.mjs
