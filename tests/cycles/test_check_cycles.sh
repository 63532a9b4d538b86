#!/usr/bin/env bash
# The cycle checker against toy objects whose answer is known: a -> b -> c -> a is a cycle (exit 1, printed),
# the same files without c's call back are not (exit 0), and a table of a's function pointers in c (data,
# not a call) is not. Run by make check-cycles before the check itself.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
check="$here/../../scripts/check_cycles.py"
fail() { echo "test_check_cycles: $1" >&2; exit 1; }
build() { for f in "$@"; do gcc -c -O2 "$tmp/$f.c" -o "$tmp/$f.o" || fail "cannot build $f.c"; done; }

echo 'int b(int); int a(int x) { return b(x) + 1; }' >"$tmp/a.c"
echo 'int c(int); int b(int x) { return c(x) * 2; }' >"$tmp/b.c"
echo 'int a(int); int c(int x) { return x > 0 ? a(x - 1) : 0; }' >"$tmp/c.c"
build a b c
out=$(/usr/bin/python3 "$check" "$tmp/a.o" "$tmp/b.o" "$tmp/c.o" 2>&1) && fail "a -> b -> c -> a passed: $out"
grep -q 'cycle: a.c -> b.c -> c.c -> a.c' <<<"$out" || fail "the cycle is not printed as a.c -> b.c -> c.c -> a.c: $out"

echo 'int c(int x) { return x; }' >"$tmp/c.c"
build c
/usr/bin/python3 "$check" "$tmp/a.o" "$tmp/b.o" "$tmp/c.o" >/dev/null || fail "a -> b -> c, no cycle, failed"

echo 'int a(int); int (*const TABLE[])(int) = {a}; int c(int x) { return x; }' >"$tmp/c.c"
build c
/usr/bin/python3 "$check" "$tmp/a.o" "$tmp/b.o" "$tmp/c.o" >/dev/null || fail "a function-pointer table in c counted as a call"
echo 'test_check_cycles: ok'
