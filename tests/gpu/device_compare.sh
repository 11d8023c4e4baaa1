#!/bin/bash
# The GPU solver against an earlier version of itself, in one device call and
# one process per build (issue 29's rounds): builds this tree and the source
# tree BASE (default .devrun/base; make it with
#   mkdir -p .devrun/base && git archive <rev> | tar -x -C .devrun/base
# and carry .devrun), runs the eig gpu tests of this tree, then
# eigstream-bench --backend cuda for both at every size and precision
# (batch 180, vectors), at batch 18 and 1,800 (n = 128) and values-only
# (n = 128, 512). Run from the repo root after `. .device-deps/use-deps.sh`;
# JSON results go to $OUT/json.tgz (summarize them with
# tests/gpu/compare-summary.py). Exits 1 when a test or a benchmark failed.
set -u
BASE=${BASE:-.devrun/base}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
failed=""
note() { echo "$1 rc=$2"; [ "$2" -eq 0 ] || failed="$failed $1"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
cfg="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S . -B /tmp/bn $cfg >/tmp/bn.log 2>&1 &&
  cmake --build /tmp/bn -j11 --target eigstream-bench test_gpu_eig test_gpu_plan_api >>/tmp/bn.log 2>&1) &
(cmake -S "$BASE" -B /tmp/bb $cfg >/tmp/bb.log 2>&1 &&
  cmake --build /tmp/bb -j5 --target eigstream-bench >>/tmp/bb.log 2>&1) &
wait
N=/tmp/bn/tools/bench/eigstream-bench; B=/tmp/bb/tools/bench/eigstream-bench
[ -x $N ] && [ -x $B ] || { tail -20 /tmp/bn.log /tmp/bb.log; exit 1; }
J=/tmp/json; rm -rf $J; mkdir -p $J
timeout 150 ctest --test-dir /tmp/bn -R "gpu_eig|gpu_plan_api" -j3 --output-on-failure --timeout 140 \
  >"$OUT/tests.txt" 2>&1
note "gpu tests" $?
R="--runs ${RUNS:-7} --no-heevd"
S=${SIZES:-32,64,96,128,192,256,384,512}
bench() { # bench NAME SECONDS ARGS...: both builds, JSON into $J/NAME-{base,new}.json
  local name=$1 t=$2; shift 2
  timeout "$t" $B --backend cuda "$@" $R --json $J/$name-base.json >>"$OUT/bench.txt" 2>&1
  note "$name base" $?
  timeout "$t" $N --backend cuda "$@" $R --json $J/$name-new.json >>"$OUT/bench.txt" 2>&1
  note "$name new" $?
}
bench sizes 150 --sizes $S --precision both
bench b18 40 --n 128 --batch 18 --precision both
bench b1800 60 --n 128 --batch 1800 --precision both
bench values 60 --sizes 128,512 --values --precision both
tar czf "$OUT/json.tgz" -C /tmp json
if [ -n "$failed" ]; then echo "FAILED:$failed"; exit 1; fi
echo "all steps passed"
