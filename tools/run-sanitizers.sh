#!/usr/bin/env bash
# CI stage after tools/run-tests.sh: the test suite under the sanitizers,
# CUDA off, each build in its own directory.
#   1. ASan + UBSan (-DEIGSTREAM_SANITIZE=ON): every test but the gpu label and
#      the soak (a leak check by RSS means nothing under ASan's allocator).
#   2. TSan (-DEIGSTREAM_SANITIZE=thread): the pipeline tests (in-process
#      streams, the daemon process, file input, metrics HTTP) and the
#      recording/record tests, with tests/tsan.supp (uninstrumented libraries
#      only).
# Every sanitizer report goes to a log file (log_path) under the build
# directory; the stage fails when a test fails or any report was written,
# and prints the reports. Usage:
#   tools/run-sanitizers.sh [asan|tsan]...     # default: both
#   ASAN_BUILD_DIR=build-asan TSAN_BUILD_DIR=build-tsan (defaults)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(asan tsan)

# A test that fails fails the stage: no rerun, so an intermittent failure
# shows instead of hiding behind a second try. The tests synchronise by
# events and judge timing by tolerances that hold on a loaded machine (the
# sanitizers slow everything 2-15x), so nothing here needs a second chance.
ctest_args=(--output-on-failure -j"$jobs" --timeout 900)

# configure_and_build DIR SANITIZE: a RelWithDebInfo build (optimised, with
# line numbers in the reports).
configure_and_build() {
    cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEIGSTREAM_CUDA=OFF -DEIGSTREAM_SANITIZE="$2" >/dev/null
    cmake --build "$1" -j"$jobs"
}

# check_reports DIR NAME: fails (1) after printing them when DIR holds reports.
check_reports() {
    local reports
    reports=$(find "$1" -type f -size +0 2>/dev/null | sort)
    if [ -n "$reports" ]; then
        echo "run-sanitizers: $2 reports:" >&2
        for f in $reports; do echo "== $f" >&2; cat "$f" >&2; done
        return 1
    fi
    echo "run-sanitizers: $2: no reports"
}

# run_stage NAME DIR SANITIZE CTEST_FILTER... with the sanitizer's options in
# the environment (their log_path under DIR/sanitizer-logs): builds, runs the
# selected tests, then fails (1) on a failed test or any report.
run_stage() {
    local name=$1 build=$2 sanitize=$3
    shift 3
    configure_and_build "$build" "$sanitize"
    local status=0
    ctest --test-dir "$build" "${ctest_args[@]}" "$@" || status=1
    check_reports "$root/$build/sanitizer-logs" "$name" || status=1
    return $status
}

# Fresh report folder for DIR; prints its path.
fresh_logs() {
    rm -rf "$root/$1/sanitizer-logs" && mkdir -p "$root/$1/sanitizer-logs"
    echo "$root/$1/sanitizer-logs"
}

# service_realtime is left out: its mlockall cases lock all current memory,
# which under ASan includes the terabytes of shadow it reserves (the kernel
# kills the daemon instead of refusing); the normal suite runs it.
run_asan() {
    local build=${ASAN_BUILD_DIR:-build-asan} logs
    logs=$(fresh_logs "$build")
    # Left out: tests that bound the process's resident memory (the soak,
    # the oversized-message, subscription-flood and worst-case bounds): ASan's
    # allocator holds freed memory and pads every block, so their bounds
    # are the C library's, not the sanitizer's. (No comment may sit inside
    # the continued command below: it would end the command there, and the
    # options would never reach the tests.)
    ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1" \
    UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1" \
        run_stage ASan+UBSan "$build" ON -LE gpu -E '^(soak_|service_realtime|service_oversized|service_subscriptions|service_memory)'
}

# history_size=4: a longer per-thread history, so that a report's "previous
# access" stack is rarely lost on the long-running stage threads.
# pipeline_form_iq* are left out: their only threads are the OpenMP team of
# the IQ forming, whose hand-offs happen inside libgomp (not instrumented), so
# TSan reports every shared variable of each parallel region; the pipeline's
# own concurrency around IQ forming runs here in pipeline_iq_input.
run_tsan() {
    local build=${TSAN_BUILD_DIR:-build-tsan} logs
    logs=$(fresh_logs "$build")
    TSAN_OPTIONS="log_path=$logs/tsan:history_size=4:suppressions=$root/tests/tsan.supp" \
        run_stage TSan "$build" thread -R '^(pipeline|record)' -E '^pipeline_form_iq'
}

failed=0
for stage in "${stages[@]}"; do
    start=$SECONDS
    case $stage in
    asan) run_asan || failed=1 ;;
    tsan) run_tsan || failed=1 ;;
    *) echo "run-sanitizers: unknown stage $stage (asan, tsan)" >&2; exit 2 ;;
    esac
    echo "run-sanitizers: $stage stage: $((SECONDS - start)) s"
done
exit $failed
