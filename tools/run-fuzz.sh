#!/usr/bin/env bash
# CI's bounded fuzz stage (.ci/run, after the tests): builds the libFuzzer
# targets into build-fuzz (clang, -DEIGSTREAM_FUZZ=ON) and runs each one for
# FUZZ_SECONDS (default 30) on one core; fails on any crash, leak, timeout or
# OOM, whose reproducer lands in build-fuzz/findings/<target>/. Without clang
# (tools/install-deps.sh installs it) the stage is skipped, saying so.
#   tools/run-fuzz.sh                 # about 5 x 30 s plus the build
#   FUZZ_SECONDS=300 tools/run-fuzz.sh
# A finding becomes a fix plus a file in tests/fuzz/regressions/<target>/
# (ctest fuzz_replay_<target> replays it in every build).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang >/dev/null; then
    echo "run-fuzz: clang not found, fuzz stage skipped (apt-get install clang)"
    exit 0
fi
BUILD_DIR=${BUILD_DIR:-build-fuzz} FUZZ_BUILD_JOBS=$(nproc) exec tools/fuzz-campaign.sh "${FUZZ_SECONDS:-30}" 0
