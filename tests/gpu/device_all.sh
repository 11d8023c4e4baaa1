#!/bin/sh
# One device call for the whole project on the GPU machine: build everything,
# run every gpu-labelled test (solver kernels, plan API, daemon GPU path), the
# solver benchmark against cuSOLVER, the pipeline benchmark, the demo, and the
# compute-sanitizer tools at small sizes. Run from the repo root after
# `. .device-deps/use-deps.sh`; logs go to $OUT. Exits 1 when any step failed
# (a test, a benchmark's own check, the demo's verdict, a sanitizer report),
# after running them all; the failed steps are listed last.
set -u
failed=""
# note STEP RC: prints "STEP rc=RC" and remembers STEP when RC is not 0.
note() { echo "$1 rc=$2"; [ "$2" -eq 0 ] || failed="$failed $1"; }
B=/tmp/b-all
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
  cmake --build $B -j16 >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "== gpu tests"
timeout ${TEST_TIMEOUT:-240} ctest --test-dir $B -L gpu --output-on-failure --timeout 200 >"$OUT/ctest-gpu.log" 2>&1
note ctest $?; grep -E "tests passed|Passed|Failed|Skipped|FAIL" "$OUT/ctest-gpu.log" | head -30
echo "== solver bench"
timeout 120 $B/tools/bench/eigstream-bench --backend cuda --sizes 128 --precision both --runs 10 >"$OUT/bench.txt" 2>&1
note "solver bench 128" $?
timeout 150 $B/tools/bench/eigstream-bench --backend cuda --sizes 64,256,512 --precision both --runs 10 \
  --no-heevd >>"$OUT/bench.txt" 2>&1
note "solver bench 64,256,512" $?
timeout 60 $B/tools/bench/eigstream-bench --backend cuda --sizes 128 --batch 1800 --precision both \
  --runs 10 --no-heevd >>"$OUT/bench.txt" 2>&1
note "solver bench batch 1800" $?
cat "$OUT/bench.txt" | grep -vE "^\s*$" | tail -80
echo "== pipeline bench"
timeout 90 $B/tools/bench/eigstream-bench pipeline --backend cuda --frames 20 --parts per-matrix \
  >"$OUT/pipeline.txt" 2>&1; note "pipeline bench tcp" $? >>"$OUT/pipeline.txt"
timeout 60 $B/tools/bench/eigstream-bench pipeline --backend cuda --frames 20 --parts per-matrix \
  --transport ipc >>"$OUT/pipeline.txt" 2>&1; note "pipeline bench ipc" $? >>"$OUT/pipeline.txt"
tail -40 "$OUT/pipeline.txt"
echo "== iq forming bench"
timeout 120 $B/tools/bench/eigstream-bench iq --runs 20 >"$OUT/bench-iq.txt" 2>&1
note "iq bench double" $? >>"$OUT/bench-iq.txt"
timeout 120 $B/tools/bench/eigstream-bench iq --runs 20 --precision float >>"$OUT/bench-iq.txt" 2>&1
note "iq bench float" $? >>"$OUT/bench-iq.txt"
grep -E "GPU|ratio|rc=" "$OUT/bench-iq.txt"
echo "== demo"
timeout 60 tools/demo/eigstream-demo.sh --build $B --frames 10 >"$OUT/demo.txt" 2>&1; note demo $?
grep -E "VERDICT|accounting|backend" "$OUT/demo.txt" | tail -5
echo "== sanitizers"
# The panel path starts at n = 19 (panels of 16 and a tail of 3); racecheck
# took 51 s on it at n = 20, 35 (H100, run R2).
for path in default logged wavefront gemm panel; do
  sizes=${SAN_SIZES:-3,20,35}; limit=${SAN_TIMEOUT:-45}
  case $path in
    logged) paths="--qr-path logged";;
    wavefront) paths="--qr-path wavefront --qr-group-min 20"; sizes=${SAN_SIZES:-20,35};;
    gemm) paths="--back-path gemm";;
    panel) paths="--tridiag-path panel"; sizes=${SAN_SIZES:-20,35}; limit=${SAN_TIMEOUT:-120};;
    *) paths="--qr-path auto";;
  esac
  for tool in memcheck racecheck synccheck; do
    timeout $limit compute-sanitizer --tool $tool \
      --error-exitcode 9 $B/tests/gpu/test_gpu_eig --sizes $sizes \
      $paths >"$OUT/san.log" 2>&1
    note "$path $tool" $?; grep -m3 -E "ERROR SUMMARY|Race reported|Hazard|Invalid" "$OUT/san.log"
    mv "$OUT/san.log" "$OUT/san-$path-$tool.txt"
  done
done
# A note redirected into a log ran in the same shell, so failed is kept.
if [ -n "$failed" ]; then echo "FAILED:$failed"; exit 1; fi
echo "all steps passed"
