#!/usr/bin/env bash
# compare-builds.sh BASE [HEAD]: build the native CLI from two revisions and compare its outputs byte for
# byte (scripts/compare_builds.py: every registry variant, causal and not, the knob values the tests use).
# BASE and HEAD are git revisions; without HEAD, the working tree as it is (uncommitted edits included),
# so a refactor can be checked before it is committed. Each side is copied into a temporary folder
# (git archive, or the tracked and untracked files of the working tree) and built there with its own
# Makefile; the build folders are removed at the end. Exit 0: identical; 1: some output differs; 2: usage
# or a build failed. KEEP=DIR keeps the outputs of both sides in DIR for a closer look.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/compare-builds.sh BASE [HEAD]  (git revisions; HEAD defaults to the working tree)" >&2
  exit 2
fi
repo=$(git rev-parse --show-toplevel)
cd "$repo"
tmp=$(mktemp -d /tmp/attnviz-builds.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# unpack REV (or the working tree for "") into DIR
unpack() {
  local rev=$1 dir=$2
  mkdir -p "$dir"
  if [ -n "$rev" ]; then
    git rev-parse --verify --quiet "$rev^{commit}" >/dev/null || { echo "compare-builds: no revision '$rev'" >&2; exit 2; }
    git archive "$rev" | tar -x -C "$dir"
  else
    git ls-files -z --cached --others --exclude-standard | grep -zv '^node_modules/' \
      | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
      | tar --null -T - -c | tar -x -C "$dir"
  fi
}

# build the CLI and the registry printer of DIR into DIR/out; the printer's source is this checkout's,
# since older revisions do not have it
build() {
  local dir=$1 what=$2
  echo "compare-builds: building $what" >&2
  if ! make -C "$dir" -s -j2 build/native/attnviz build/native/libattnviz.a >"$dir.log" 2>&1; then
    echo "compare-builds: the build of $what failed:" >&2
    tail -20 "$dir.log" >&2
    exit 2
  fi
  mkdir -p "$dir/out"
  cp "$dir/build/native/attnviz" "$dir/out/"
  gcc -std=c11 -Wall -Wextra -Werror -I"$dir/include" scripts/registry_json.c "$dir/build/native/libattnviz.a" -lm \
    -o "$dir/out/registry_json"
}

base=$1
head=${2:-}
unpack "$base" "$tmp/base"
unpack "$head" "$tmp/head"
build "$tmp/base" "$base ($(git rev-parse --short "$base"))"
build "$tmp/head" "${head:-the working tree}${head:+ ($(git rev-parse --short "$head"))}"
keep=()
[ -n "${KEEP:-}" ] && keep=(--keep "$KEEP")
/usr/bin/python3 scripts/compare_builds.py "$tmp/base/out" "$tmp/head/out" "${keep[@]}"
