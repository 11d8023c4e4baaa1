#!/bin/sh
# One device call: build, gpu tests, benchmark, profile, sanitizers. Run from
# the repo root on the GPU machine after `. .device-deps/use-deps.sh`; logs go
# to $OUT. Steps are picked by STEPS (default "test bench sanitize").
#   STEPS="test bench ncu" tests/gpu/device_run.sh [bench args...]
# Exits 1 when a step's command failed (after running every step); the failed
# steps are listed last.
set -u
failed=""
# note STEP RC: prints "STEP rc=RC" and remembers STEP when RC is not 0.
note() { echo "$1 rc=$2"; [ "$2" -eq 0 ] || failed="$failed $1"; }
B=/tmp/b-dev
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
STEPS=${STEPS:-test bench sanitize}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$OUT/gpu.txt"
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
  cmake --build $B -j16 --target test_gpu_eig eigstream-bench >>"$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
for step in $STEPS; do case $step in
test)
  timeout ${TEST_TIMEOUT:-240} $B/tests/gpu/test_gpu_eig >"$OUT/test.log" 2>&1; note test $? >>"$OUT/test.log"
  grep -v "^ok" "$OUT/test.log" | head -40; echo "$(grep -c '^ok' "$OUT/test.log") size/precision cases ok";;
bench)
  nvidia-smi --query-gpu=clocks.sm --format=csv,noheader -lms 200 >"$OUT/clocks.txt" 2>&1 & smi=$!
  timeout ${BENCH_TIMEOUT:-240} $B/tools/bench/eigstream-bench --backend cuda --json "$OUT/bench.json" "$@" >"$OUT/bench.txt" 2>&1
  note bench $? >>"$OUT/bench.txt"; kill $smi
  cat "$OUT/bench.txt"; echo "SM clock MHz during bench (min/max):"; sort -n "$OUT/clocks.txt" | sed -n '1p;$p' | tr '\n' ' '; echo;;
values)
  timeout ${BENCH_TIMEOUT:-120} $B/tools/bench/eigstream-bench --backend cuda --values --no-heevd --runs 10 --check 0 --sizes ${VALUES_SIZES:-64,128} >"$OUT/values.txt" 2>&1
  note values $? >>"$OUT/values.txt"
  grep -E "^n=|ours" "$OUT/values.txt";;
ncu)
  timeout ${NCU_TIMEOUT:-150} ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    --launch-count 3 -k regex:"tridiag|qr_kernel|back_kernel" $B/tools/bench/eigstream-bench --backend cuda --n ${NCU_N:-128} \
    --precision c128 --runs 1 --no-heevd --check 0 >"$OUT/ncu.txt" 2>&1
  note ncu $? >>"$OUT/ncu.txt"
  grep -E "tridiag_kernel|qr_kernel|back_kernel|SM Frequency|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Issued Warp|No Eligible|Warp Cycles Per Issued|Registers Per|Shared Memory Config" "$OUT/ncu.txt" | head -60;;
sanitize)
  for tool in memcheck racecheck synccheck; do
    EIGSTREAM_GPU_TEST_SIZES=${SAN_SIZES:-3,20} timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool \
      --error-exitcode 9 $B/tests/gpu/test_gpu_eig >"$OUT/san-$tool.log" 2>&1
    note "$tool" $?; grep -m3 -E "ERROR SUMMARY|Race reported|Hazard|Invalid" "$OUT/san-$tool.log"
  done;;
esac; done
if [ -n "$failed" ]; then echo "FAILED:$failed"; exit 1; fi
echo "all steps passed"
