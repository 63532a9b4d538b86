#!/bin/bash
# run.sh SECONDS DIR TARGET...: runs each libFuzzer target DIR/fuzz_TARGET for SECONDS on the corpus
# DIR/corpus_TARGET (the committed seeds tests/fuzz/corpus_TARGET/ are copied in first, so they stay as
# committed), with tests/fuzz/TARGET.dict when there is one. Findings (crash-, leak-, timeout-, oom- inputs)
# go to DIR/findings_TARGET/, the whole log to DIR/fuzz_TARGET.log. libFuzzer also saves inputs slower than
# FUZZ_SLOW_SECONDS (default 10) there as slow-unit-*: those are reported as slow, never as findings.
# At the end one line per target:
#   fuzz_api: 16234 executions in 20 s (811/s), cov: 1234 ft: 5678, corpus 321, findings 0, slow 0
# Exit status 1 when any target found something (every target still runs), 0 otherwise (slow inputs alone
# do not fail the run). FUZZ_JOBS targets run at once (default: the number of CPUs; each is one process), their
# reports printed in the order given.
set -u
secs=${1:-20}
dir=${2:-build/fuzz}
shift 2
slow_secs=${FUZZ_SLOW_SECONDS:-10}
here=$(cd "$(dirname "$0")" && pwd)
failed=0
summary=()
run_one() {
    local t=$1
    bin=$dir/fuzz_$t corpus=$dir/corpus_$t art=$dir/findings_$t log=$dir/fuzz_$t.log
    mkdir -p "$corpus" "$art"
    if [ -d "$here/corpus_$t" ]; then cp -f "$here/corpus_$t"/* "$corpus"/; fi
    # this run's artifacts are the files that were not there before it (earlier runs' stay in $art)
    ls -1 "$art" | sort >"$dir/.artifacts_before_$t"
    args=(-max_total_time="$secs" -print_final_stats=1 -timeout=30 -rss_limit_mb=2048
          -report_slow_units="$slow_secs" -artifact_prefix="$art/")
    if [ -f "$here/$t.dict" ]; then args+=(-dict="$here/$t.dict"); fi
    echo "fuzz_$t: ${secs} s on $corpus (log: $log)"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" "${args[@]}" "$corpus" >"$log" 2>&1
    rc=$?
    new=$(ls -1 "$art" | sort | comm -13 "$dir/.artifacts_before_$t" -)
    rm -f "$dir/.artifacts_before_$t"
    # a slow unit is a timing, not a broken promise: counted apart, and never a reason to fail
    slow=$(printf '%s\n' "$new" | grep -c '^slow-unit-')
    found=$(printf '%s\n' "$new" | grep -v '^slow-unit-' | grep -c .)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
    corp=$(find "$corpus" -type f | wc -l)
    if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then found=1; fi # a crash libFuzzer could not save
    if [ "$slow" -ne 0 ]; then
        echo "fuzz_$t: $slow slow input(s) (over $slow_secs s each; not a failure), kept as:"
        printf '%s\n' "$new" | grep '^slow-unit-' | sed "s|^|  $art/|"
    fi
    if [ "$found" -ne 0 ]; then
        echo 1 >"$dir/.failed_$t"
        echo "fuzz_$t: FOUND a crash (exit status $rc); the report:"
        # from the first report line on (the broken promise and its input, or the sanitizer's report),
        # without libFuzzer's own frames and progress lines, at most 60 lines
        awk '/PROMISE BROKEN|ERROR: |runtime error|^SUMMARY/ { on = 1 }
             on && !/fuzzer::|libc_start|_start \(|^#[0-9]+[ \t]+(NEW|REDUCE|pulse)|^stat::|^MS: |^0x|^Base64/' "$log" |
            head -n 60
        newest=$(printf '%s\n' "$new" | grep -v '^slow-unit-' | head -1)
        if [ -n "$newest" ]; then echo "fuzz_$t: reproduce with: $bin $art/$newest"; fi
    fi
    echo "fuzz_$t: ${execs:-?} executions in ${secs} s (${rate:-?}/s), ${cov:-cov: ?}, corpus $corp, findings $found, slow $slow" >"$dir/.summary_$t"
}

jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
running=0
for t in "$@"; do
    rm -f "$dir/.failed_$t" "$dir/.summary_$t" "$dir/.report_$t"
    run_one "$t" >"$dir/.report_$t" 2>&1 &
    running=$((running + 1))
    if [ "$running" -ge "$jobs_max" ]; then wait -n; running=$((running - 1)); fi
done
wait
for t in "$@"; do
    cat "$dir/.report_$t"
    if [ -f "$dir/.failed_$t" ]; then failed=1; fi
    summary+=("$(cat "$dir/.summary_$t" 2>/dev/null || echo "fuzz_$t: no summary (the runner failed)")")
    rm -f "$dir/.failed_$t" "$dir/.summary_$t" "$dir/.report_$t"
done
printf '%s\n' "${summary[@]}"
exit $failed
