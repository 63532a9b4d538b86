#!/bin/bash
# test_run.sh: checks how tests/fuzz/run.sh classifies what libFuzzer saves, on a throwaway target built
# here that sleeps on the input "slow" and aborts on the input "crash": a slow input is reported as slow
# and the run passes; a crash fails it (also after a slow run left its slow-unit file behind, and a crash
# kept from an earlier run is not counted again). Run by `make test-fuzz`; needs clang with libFuzzer.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "test_run.sh: FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/toy.c" <<'C'
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 4 && !memcmp(data, "slow", 4)) { /* well over FUZZ_SLOW_SECONDS = 1 */
        struct timespec ts = {2, 0};
        nanosleep(&ts, NULL);
    }
    if (size == 5 && !memcmp(data, "crash", 5)) abort();
    return 0;
}
C
clang -g -O1 -fsanitize=fuzzer "$tmp/toy.c" -o "$tmp/fuzz_toy" || { echo "test_run.sh: cannot build the toy target"; exit 1; }

# run SECONDS: run.sh on the toy target in $tmp; sets $out and $rc
run() {
    out=$(FUZZ_SLOW_SECONDS=1 bash "$here/run.sh" "$1" "$tmp" toy 2>&1)
    rc=$?
}
summary() { printf '%s\n' "$out" | grep '^fuzz_toy: .* executions'; }

mkdir -p "$tmp/corpus_toy"
printf slow >"$tmp/corpus_toy/slow"
run 3
[ "$rc" -eq 0 ] || fail "a slow input failed the run (exit $rc): $(summary)"
summary | grep -q 'findings 0, slow [1-9]' || fail "a slow input not reported as slow: $(summary)"
printf '%s\n' "$out" | grep -q 'FOUND' && fail "a slow input reported as a crash"
ls "$tmp/findings_toy" | grep -q '^slow-unit-' || fail "libFuzzer saved no slow-unit file (the test tests nothing)"

printf crash >"$tmp/corpus_toy/crash"
run 3
[ "$rc" -eq 1 ] || fail "a crash did not fail the run (exit $rc): $(summary)"
summary | grep -q 'findings 1,' || fail "a crash not counted as a finding: $(summary)"
printf '%s\n' "$out" | grep -q "reproduce with: .*/findings_toy/crash-" || fail "no reproduction line for the crash"

rm "$tmp/corpus_toy/crash"
run 3
[ "$rc" -eq 0 ] || fail "the earlier run's crash counted again (exit $rc): $(summary)"

if [ "$fails" -ne 0 ]; then
    printf '%s\n' "--- the last run.sh output:" "$out"
    exit 1
fi
echo "test_run.sh: run.sh reports slow inputs as slow and crashes as findings (3 runs)"
