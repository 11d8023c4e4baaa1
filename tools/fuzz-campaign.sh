#!/usr/bin/env bash
# Fuzz campaign: builds the libFuzzer targets of tests/fuzz (clang,
# -DEIGSTREAM_FUZZ=ON) in their own build directory and runs each target in
# turn, on one core, until it has run RUNS inputs or SECONDS have passed.
#
#   tools/fuzz-campaign.sh [SECONDS-PER-TARGET] [RUNS-PER-TARGET]
#     SECONDS  wall-clock cap per target (default 600; 0 = none)
#     RUNS     inputs per target (default 10000000; 0 = no limit)
#   BUILD_DIR=build-fuzz-campaign  TARGETS="covariance npy"  RESULTS=FILE
#
# Each target starts from its seeds (tests/fuzz/corpus/<t>, regressions/<t>)
# and keeps what it learns in BUILD_DIR/corpus/<t>; findings (crash-*,
# leak-*, timeout-*, oom-*) land in BUILD_DIR/findings/<t>/. Prints, per
# target, executions, exec/s, coverage (edges, features) and findings, and
# appends the same as a markdown table to RESULTS (BUILD_DIR/fuzz-results.md).
# Exit status 1 when any target has a finding (0 expected).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
runs=${2:-10000000}
build=${BUILD_DIR:-build-fuzz-campaign}
targets=${TARGETS:-"covariance eigenspace iq config npy recording_meta dispatch_control message_budget"}
results=${RESULTS:-$build/fuzz-results.md}

if ! command -v clang >/dev/null; then
    echo "fuzz-campaign: clang not found: apt-get install clang" >&2
    exit 2
fi
CC=clang CXX=clang++ cmake -S . -B "$build" -DEIGSTREAM_FUZZ=ON -DEIGSTREAM_CUDA=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 2; }
cmake --build "$build" -j"${FUZZ_BUILD_JOBS:-2}" --target eigstream_fuzz_targets

# The libconfig leak config/config_load.c documents is not ours to fix.
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0"
[ "$runs" -gt 0 ] || runs=-1
rows=()
failed=0
for t in $targets; do
    corpus=$build/corpus/$t findings=$build/findings/$t log=$build/fuzz-$t.log
    mkdir -p "$corpus" "$findings"
    seeds=(tests/fuzz/corpus/"$t")
    [ -d tests/fuzz/regressions/"$t" ] && seeds+=(tests/fuzz/regressions/"$t")
    rc=0 start=$(date +%s%N)
    "$build"/tests/fuzz/fuzz_"$t" -runs="$runs" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$findings"/ "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    # libFuzzer says 0 exec/s for a run under a second: the wall-clock rate then.
    [ "${rate:-0}" -gt 0 ] || rate=$(( ${execs:-0} * 1000000000 / ($(date +%s%N) - start + 1) ))
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 | awk '{print $2 " / " $4}')
    count() { find "$findings" -name "$1-*" | wc -l; }
    crashes=$(count crash) leaks=$(count leak) timeouts=$(count timeout) ooms=$(count oom)
    if [ "$rc" -ne 0 ] || [ $((crashes + leaks + timeouts + ooms)) -gt 0 ]; then
        failed=1
        echo "fuzz-campaign: $t: FINDING (exit $rc), see $log and $findings/" >&2
        grep -m3 -E 'ERROR|invariant broken|SUMMARY' "$log" >&2 || true
    fi
    printf '%-15s %12s execs %9s exec/s  cov/ft %-13s crashes %s leaks %s timeouts %s ooms %s\n' \
        "$t" "${execs:-0}" "${rate:-0}" "${cov:-?}" "$crashes" "$leaks" "$timeouts" "$ooms"
    rows+=("| $t | ${execs:-0} | ${rate:-0} | ${cov:-?} | $crashes | $leaks | $timeouts | $ooms |")
done

{
    echo
    echo "### Fuzz campaign $(date -u +%Y-%m-%dT%H:%MZ) ($(git rev-parse --short HEAD 2>/dev/null || echo '?'), cap ${seconds} s and ${runs} runs per target, one core)"
    echo
    echo "| target | executions | exec/s | coverage (edges / features) | crashes | leaks | timeouts | OOMs |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
} >>"$results"
echo "fuzz-campaign: results appended to $results"
exit "$failed"
