#!/bin/bash
# run.sh SECONDS DIR TARGET...: runs each libFuzzer target DIR/fuzz_TARGET for SECONDS on the corpus
# DIR/corpus_TARGET (the committed seeds tests/fuzz/corpus_TARGET/ are copied in first, so they stay as
# committed), with tests/fuzz/TARGET.dict when there is one. Findings (crash-, leak-, timeout-, oom- inputs)
# go to DIR/findings_TARGET/, the whole log to DIR/fuzz_TARGET.log. At the end one line per target:
#   fuzz_api: 16234 executions in 20 s (811/s), cov: 1234 ft: 5678, corpus 321, findings 0
# Exit status 1 when any target found something (every target still runs), 0 otherwise.
set -u
secs=${1:-20}
dir=${2:-build/fuzz}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
failed=0
summary=()
for t in "$@"; do
    bin=$dir/fuzz_$t corpus=$dir/corpus_$t art=$dir/findings_$t log=$dir/fuzz_$t.log
    mkdir -p "$corpus" "$art"
    if [ -d "$here/corpus_$t" ]; then cp -f "$here/corpus_$t"/* "$corpus"/; fi
    before=$(find "$art" -type f | wc -l)
    args=(-max_total_time="$secs" -print_final_stats=1 -timeout=30 -rss_limit_mb=2048 -artifact_prefix="$art/")
    if [ -f "$here/$t.dict" ]; then args+=(-dict="$here/$t.dict"); fi
    echo "fuzz_$t: ${secs} s on $corpus (log: $log)"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" "${args[@]}" "$corpus" >"$log" 2>&1
    rc=$?
    found=$(( $(find "$art" -type f | wc -l) - before ))
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
    corp=$(find "$corpus" -type f | wc -l)
    if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then found=1; fi # a crash libFuzzer could not save
    if [ "$found" -ne 0 ]; then
        failed=1
        echo "fuzz_$t: FOUND a crash (exit status $rc); the report:"
        # from the first report line on (the broken promise and its input, or the sanitizer's report),
        # without libFuzzer's own frames and progress lines, at most 60 lines
        awk '/PROMISE BROKEN|ERROR: |runtime error|^SUMMARY/ { on = 1 }
             on && !/fuzzer::|libc_start|_start \(|^#[0-9]+[ \t]+(NEW|REDUCE|pulse)|^stat::|^MS: |^0x|^Base64/' "$log" |
            head -n 60
        newest=$(ls -t "$art" 2>/dev/null | head -1)
        if [ -n "$newest" ]; then echo "fuzz_$t: reproduce with: $bin $art/$newest"; fi
    fi
    summary+=("fuzz_$t: ${execs:-?} executions in ${secs} s (${rate:-?}/s), ${cov:-cov: ?}, corpus $corp, findings $found")
done
printf '%s\n' "${summary[@]}"
exit $failed
