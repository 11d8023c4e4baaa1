#!/bin/sh
# One device call: build, gpu tests, benchmark, sanitizers. Run from the repo
# root on the GPU machine after `. .device-deps/use-deps.sh`; logs go to $OUT.
#   tests/gpu/device_run.sh [test|bench|sanitize|all] [bench args...]
set -u
what=${1:-all}; [ $# -gt 0 ] && shift
B=/tmp/b-dev
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
  cmake --build $B -j16 --target test_gpu_eig eigstream-bench >>"$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
case $what in test|all)
  timeout ${TEST_TIMEOUT:-240} $B/tests/gpu/test_gpu_eig >"$OUT/test.log" 2>&1; echo "test rc=$?" >>"$OUT/test.log"
  grep -v "^ok" "$OUT/test.log" | head -40; grep -c "^ok" "$OUT/test.log";;
esac
case $what in bench|all)
  timeout ${BENCH_TIMEOUT:-240} $B/tools/bench/eigstream-bench --backend cuda --json "$OUT/bench.json" "$@" >"$OUT/bench.txt" 2>&1
  echo "bench rc=$?" >>"$OUT/bench.txt"; cat "$OUT/bench.txt";;
esac
case $what in sanitize|all)
  for tool in memcheck racecheck synccheck; do
    EIGSTREAM_GPU_TEST_SIZES=${SAN_SIZES:-3,20} timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool \
      --error-exitcode 9 $B/tests/gpu/test_gpu_eig >"$OUT/san-$tool.log" 2>&1
    echo "$tool rc=$?" | tee -a "$OUT/san-$tool.log"; grep -m5 -E "ERROR SUMMARY|Error|Hazard" "$OUT/san-$tool.log"
  done;;
esac
