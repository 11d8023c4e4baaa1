#!/usr/bin/env bash
# bench-scaleout.sh - frames/s of 1..D CPU daemons behind one eigstream-dispatch with
# eigstream-merge, against one daemon fed directly, all in the same run (docs/scaleout.md).
#
# Each configuration gets FRAMES frames from eigstream-sim as fast as it takes them (the
# dispatcher blocks the source rather than drop: a lossless run measures capacity).
# Prints one table: frames/s sustained (the consumer's, eigstream-sink, from its first
# frame to its last), the ratio to the direct daemon's, frames/s on the wall clock from
# the sim's start (its frame pool and the connections' set-up included), the merge's
# added latency (p50/p99, arrival to republish) and the sink's p99 end-to-end latency.
#
#   tools/scaleout/bench-scaleout.sh [--build DIR] [--max-daemons D] [--frames F] [--n N]
#                                    [--cells C] [--threads T] [--precision float|double]
#                                    [--storage full|packed_lower] [--port-base P]
#                                    [--gpus-per-daemon G] [--direct-gpus K]
#                                    [--connections C] [--curve] [--busiest K] [--queue-depth Q]
#                                    [--dealers K]
#
# --gpus-per-daemon G: the cuda backend, daemon i solving on GPUs (i-1)*G .. i*G-1
# (solver.gpu_devices); --direct-gpus K: the direct daemon on GPUs 0 .. K-1 (default G).
# --connections C: the sim sends over C PUSH sockets (seq f on the (f mod C)-th), into C
# front-end sockets of the dispatcher, or C input connections of the direct daemon
# (input.io_threads = C, input.endpoint listing the sim's C bound endpoints); one
# ZeroMQ connection carries ~3-8 GB/s. --curve: every hop under CURVE (fresh keys).
# --busiest K: under each configuration, its K busiest threads over the run (every
# process of the topology and the sim and sink, sampled by thread-cpu.py: % of a core),
# so that the thread that paces a topology is named by measurement. --queue-depth Q: every
# daemon's frame.queue_depth (behind the dispatcher, the credit a daemon can have out).
# --dealers K: each daemon behind the dispatcher on K DEALERs (input.io_threads = K), each a
# peer of the dispatcher with its share of the credit: one connection carries ~3 GB/s.
# On a 4-GPU host, one daemon of 4 GPUs against two daemons of 2 behind dispatch + merge:
#   tools/scaleout/bench-scaleout.sh --build build --max-daemons 2 --gpus-per-daemon 2 --direct-gpus 4 \
#       --frames 600 --n 128 --cells 180 --precision float --storage packed_lower
#
# On a 2-core machine every process shares the same two cores: the curve says more about
# the machine than the topology. On the 16-core GPU host (CPU backend):
#   tools/scaleout/bench-scaleout.sh --build build --max-daemons 3 --frames 60 --n 128 --cells 180 --threads 5
set -u
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
BUILD="$ROOT/build" MAX=3 FRAMES=200 N=32 CELLS=64 THREADS=1 PRECISION=double PORT_BASE=5750
STORAGE=full GPUS_PER_DAEMON=0 DIRECT_GPUS="" CONNECTIONS=1 CURVE=0 BUSIEST=0 QUEUE_DEPTH="" DEALERS=1
. "$here/../cli/cli_options.sh"
cli_parse_options bench-scaleout 2,30 "--build=BUILD --max-daemons=MAX --frames=FRAMES --n=N --cells=CELLS
    --threads=THREADS --precision=PRECISION --port-base=PORT_BASE --storage=STORAGE
    --gpus-per-daemon=GPUS_PER_DAEMON --direct-gpus=DIRECT_GPUS --connections=CONNECTIONS --curve=CURVE=1
    --busiest=BUSIEST --queue-depth=QUEUE_DEPTH --dealers=DEALERS" "$@"
. "$here/scaleout-lib.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/eigstream-bench-scaleout.XXXXXX")
sink_pid="" watch_pid=""
trap 'so_stop; [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null; [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
      rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM
now() { date +%s.%N; }
if [ "$CURVE" = 1 ]; then so_curve_keys "$MAX" || exit 1; fi

start_sink() { # start_sink PORT [CURVE OPTIONS]: a PULL consumer that exits after FRAMES frames
    local port=$1
    shift
    "$(so_bin eigstream-sink)" --endpoint "tcp://127.0.0.1:$port" --pattern pull --n "$N" --frames "$FRAMES" \
        --duration $((FRAMES + 120)) --quiet --json "$WORK/sink.json" "$@" >"$WORK/sink.out" 2>"$WORK/sink.err" &
    sink_pid=$!
}

send() { # send [OPTIONS]: the sim into the dispatcher's front end, as fast as it is let;
    # with --busiest, its threads and the topology's sampled until the sink has every frame
    "$(so_bin eigstream-sim)" --endpoint "$(so_front)" --n "$N" --cells "$CELLS" --snapshots 64 \
        --precision "$PRECISION" --storage "$STORAGE" --frames "$FRAMES" --rate 0 --quiet "$@" >/dev/null 2>&1 &
    local sim_pid=$!
    if [ "$BUSIEST" -gt 0 ]; then
        # shellcheck disable=SC2086 # the pid lists split into words
        python3 "$here/thread-cpu.py" --out "$WORK/threads.txt" $sim_pid $sink_pid $DAEMON_PIDS $DISPATCH_PID \
            $MERGE_PID &
        watch_pid=$!
    fi
    wait "$sim_pid"
}

watch_stop() { # when the sink has every frame: the sampling ends (shutdowns are not the run)
    [ -n "$watch_pid" ] || return 0
    kill -TERM "$watch_pid"; wait "$watch_pid"; watch_pid=""
}

busiest() { # the configuration's BUSIEST busiest threads, indented under its row
    [ "$BUSIEST" -gt 0 ] || return 0
    head -n "$BUSIEST" "$WORK/threads.txt" | awk '{ printf "    %-26s %-18s %6.1f%% of a core\n", $1, $2, $3 }'
}

sink_p99() { python3 -c "import json,sys; print('%.1f' % json.load(open(sys.argv[1]))['latency_sink_ms']['p99'])" \
    "$WORK/sink.json" 2>/dev/null || echo "?"; }
sink_rate() { python3 -c "import json,sys; print('%.2f' % json.load(open(sys.argv[1]))['frames_per_s'])" \
    "$WORK/sink.json" 2>/dev/null || echo 0; }

# The peer: one daemon fed directly (PULL bind; with several connections the sim binds and
# the daemon's input sockets connect, one to each), pushing to the sink.
DAEMONS=1
so_config 1 "${DIRECT_GPUS:-$GPUS_PER_DAEMON}"
if [ "$CONNECTIONS" -gt 1 ]; then direct_in=$(so_front) direct_bind=false sim_bind=--bind
else direct_in="tcp://127.0.0.1:$PORT_BASE" direct_bind=true sim_bind=""; fi
sed -e "s#^  endpoint = \"tcp://127.0.0.1:$((PORT_BASE + 10))\";.*#  endpoint = \"$direct_in\";\n  io_threads = $CONNECTIONS;#" \
    -e 's#^  pattern = "dispatch";#  pattern = "pull";#' -e "s#^  bind = false;.*#  bind = $direct_bind;#" \
    -e 's#^  curve_allow = .*#  curve_allow = "'"$WORK/keys/direct"'";#' -e '/^  curve_dispatcher_key/d' \
    -e '/^frame = {/,/^};/d' -e '/^  io_threads = /d' "$WORK/daemon-1.cfg" >"$WORK/direct.cfg"
# Lossless like the dispatcher's --overflow block: the sim waits instead of frames being dropped.
printf 'frame = {\n  overflow_policy = "block";\n%s};\n' "${QUEUE_DEPTH:+  queue_depth = $QUEUE_DEPTH;
}" >>"$WORK/direct.cfg"
direct_curve=""
[ "$CURVE" = 1 ] && direct_curve="$DIRECT_CURVE"
# shellcheck disable=SC2086 # the CURVE options split into words
start_sink $((PORT_BASE + 21)) $direct_curve ${direct_curve:+--curve-key $WORK/keys/consumer.key_secret}
"$(so_bin eigstream)" -c "$WORK/direct.cfg" 2>"$WORK/direct.log" &
DAEMON_PIDS=$!
for _ in $(seq 1 100); do grep -q "INFO  main: eigstream" "$WORK/direct.log" && break; sleep 0.1; done
# shellcheck disable=SC2086
t0=$(now); send $sim_bind $direct_curve ${direct_curve:+--curve-key $WORK/keys/source.key_secret}
wait "$sink_pid"; t1=$(now); sink_pid=""
watch_stop
so_stop
direct=$(sink_rate)
printf '%-28s %10s %8s %10s %14s %14s %12s\n' configuration frames/s ratio "wall f/s" "merge p50 ms" "merge p99 ms" \
    "sink p99 ms"
printf '%-28s %10s %8s %10s %14s %14s %12s\n' "1 daemon, direct" "$direct" "1.00" \
    "$(python3 -c "print('%.2f' % ($FRAMES / ($t1 - $t0)))")" "-" "-" "$(sink_p99)"
busiest

for DAEMONS in $(seq 1 "$MAX"); do
    # shellcheck disable=SC2086 # the CURVE options split into words
    start_sink $((PORT_BASE + 40)) $SINK_CURVE
    DISPATCH_ARGS="--overflow block" MERGE_ARGS="--window-ms 10000" so_start || exit 1
    # shellcheck disable=SC2086
    t0=$(now); send $SIM_CURVE; wait "$sink_pid"; t1=$(now); sink_pid=""
    watch_stop
    so_wait_merge 600
    so_stop
    python3 - "$WORK/merge.json" "$FRAMES" "$t0" "$t1" "$direct" "$DAEMONS" "$(sink_p99)" "$(sink_rate)" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
frames, t0, t1, direct, d, sink = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], sys.argv[7]
rate = float(sys.argv[8])
note = "" if m["frames_out"] == frames and m["gap_frames"] == 0 else f"  (out {m['frames_out']}, gaps {m['gap_frames']})"
print("%-28s %10.2f %8.2f %10.2f %14.3f %14.3f %12s%s" % (f"{d} daemon(s), dispatch+merge", rate,
      rate / direct if direct > 0 else 0.0, frames / (t1 - t0), m["added_latency_ms"]["p50"],
      m["added_latency_ms"]["p99"], sink, note))
PY
    busiest
    # with --busiest, also what the dispatcher dealt each of its peers (a daemon's DEALERs apart)
    [ "$BUSIEST" -gt 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['daemons']
print('    dealt: ' + ', '.join('%s %d' % (x['id'].split(':')[-1], x['dispatched']) for x in d))" "$WORK/dispatch.json"
done
echo "($FRAMES frames of $CELLS x $N x $N complex $PRECISION per configuration, solver.cpu_threads $THREADS per daemon," \
     "$CONNECTIONS connection(s) from the sim, frame.queue_depth ${QUEUE_DEPTH:-default}, $DEALERS DEALER(s) a daemon, CURVE $([ "$CURVE" = 1 ] && echo on || echo off), $(nproc) cores)"
