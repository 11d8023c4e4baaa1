#!/usr/bin/env bash
# Fuzz runner: builds the libFuzzer targets of tests/fuzz (clang,
# -DEIGSTREAM_FUZZ=ON, CUDA off) in their own build directory and runs each
# target in turn, on one core, until it has run RUNS inputs or SECONDS have
# passed. With no options it is CI's bounded fuzz stage (.ci/run, after the
# tests): every target for 30 s in build-fuzz. Long campaigns pass options.
#
#   tools/run-fuzz.sh [--seconds S] [--runs R] [--targets "T ..."]
#                     [--build-dir DIR] [--results FILE] [--jobs J] [--require-clang]
#     --seconds S      wall-clock cap per target (default 30, FUZZ_SECONDS; 0 = none)
#     --runs R         inputs per target (default 0 = no limit)
#     --targets "T.."  targets to run (TARGETS; default: covariance eigenspace iq config
#                      npy npz recording_meta dispatch_control message_budget
#                      merge_input)
#     --build-dir DIR  build directory (default build-fuzz, BUILD_DIR)
#     --results FILE   markdown results appended here (RESULTS; default DIR/fuzz-results.md)
#     --jobs J         parallel build jobs (default: nproc)
#     --require-clang  without clang, fail (exit 2) instead of skipping (exit 0)
#   tools/run-fuzz.sh                                  # CI: about 8 x 30 s plus the build
#   tools/run-fuzz.sh --seconds 600 --runs 10000000 --build-dir build-fuzz-campaign --jobs 2
#
# Each target starts from its seeds (tests/fuzz/corpus/<t>, regressions/<t>)
# and keeps what it learns in DIR/corpus/<t>; findings (crash-*, leak-*,
# timeout-*, oom-*) land in DIR/findings/<t>/. Prints, per target,
# executions, exec/s, coverage (edges, features) and findings, and appends
# the same as a markdown table to the results file. Exit status 1 when any
# target has a finding (0 expected), 2 on a usage or build error. A finding
# becomes a fix plus a file in tests/fuzz/regressions/<t>/ (ctest
# fuzz_replay_<t> replays it in every build). Without clang
# (tools/install-deps.sh installs it) the run is skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
seconds=${FUZZ_SECONDS:-30}
runs=0
build=${BUILD_DIR:-build-fuzz}
targets=${TARGETS:-"covariance eigenspace iq config npy npz recording_meta dispatch_control message_budget merge_input"}
results=${RESULTS:-}
jobs=$(nproc)
require_clang=0
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) seconds=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --targets) targets=${2:?}; shift 2 ;;
    --build-dir) build=${2:?}; shift 2 ;;
    --results) results=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --require-clang) require_clang=1; shift ;;
    -h | --help) usage ;;
    *) echo "run-fuzz: unknown option $1 (--help)" >&2; exit 2 ;;
    esac
done
results=${results:-$build/fuzz-results.md}

if ! command -v clang >/dev/null; then
    if [ "$require_clang" = 1 ]; then
        echo "run-fuzz: clang not found: apt-get install clang" >&2
        exit 2
    fi
    echo "run-fuzz: clang not found, fuzz stage skipped (apt-get install clang)"
    exit 0
fi
CC=clang CXX=clang++ cmake -S . -B "$build" -DEIGSTREAM_FUZZ=ON -DEIGSTREAM_CUDA=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 2; }
cmake --build "$build" -j"$jobs" --target eigstream_fuzz_targets

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
        echo "run-fuzz: $t: FINDING (exit $rc), see $log and $findings/" >&2
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
echo "run-fuzz: results appended to $results"
exit "$failed"
