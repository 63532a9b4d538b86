#!/usr/bin/env bash
# make bench: every benchmark in one run (figures printed and written to build/bench.json).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f build/bench.json
node bench/kernels.mjs
for b in bench/spectrum.mjs bench/model.mjs bench/swap.mjs bench/hf.mjs bench/page.mjs bench/weight.mjs bench/embed-weight.mjs; do
  [ -f "$b" ] && node "$b"
done
echo "bench: $(node -p 'JSON.parse(require("fs").readFileSync("build/bench.json","utf8")).length') records in build/bench.json"
