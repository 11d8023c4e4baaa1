#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, and run the main job:
# eigstream-sim -> eigstream -> eigstream-sink on loopback with the default
# configuration (GPU when present, else CPU), ending with the sink's VERDICT.
#   tools/run-demo.sh [demo options: --frames N --rate FPS --backend B, --iq: raw IQ cubes formed by the daemon]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
exec tools/demo/eigstream-demo.sh --build "$build" "$@"
