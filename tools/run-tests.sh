#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, run the test suite.
#   tools/run-tests.sh            # build in ./build, run ctest
#   BUILD_DIR=... tools/run-tests.sh
# GPU tests (label gpu) skip cleanly on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
build=${BUILD_DIR:-build}
jobs=$(nproc)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$jobs"
ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 600
