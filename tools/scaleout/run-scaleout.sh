#!/usr/bin/env bash
# run-scaleout.sh - the scale-out topology on one machine, ready to run (docs/scaleout.md):
#
#   eigstream-sim -> eigstream-dispatch -> D daemons (CPU) -> eigstream-merge -> eigstream-sink
#
# The sim sends FRAMES radar frames; the dispatcher deals them by credit; the merge
# republishes them in seq order; eigstream-sink checks every eigenspace against the
# simulated scene. With --kill, daemon 2 is killed (SIGKILL) once half the frames were
# dispatched: the others carry on, and the merge must name exactly the frames lost with it.
# With --curve every hop runs under CURVE: fresh key pairs (eigstream-keygen) for the
# dispatcher, the merge, the source, the consumer and each daemon, and an allow-list per
# server (docs/scaleout.md, "Security"). Prints the books of the dispatcher and the merge,
# then a VERDICT line. Exit 0 on PASS, 1 on FAIL, 2 on a bad option. --dealers K puts each
# daemon on K DEALERs to the dispatcher (input.io_threads = K, frame.queue_depth 2K).
#
#   tools/scaleout/run-scaleout.sh [--build DIR] [--daemons D] [--frames F] [--rate FPS]
#                                  [--n N] [--cells C] [--threads T] [--port-base P] [--kill] [--curve]
#                                  [--dealers K]
set -u
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
BUILD="$ROOT/build" DAEMONS=3 FRAMES=100 RATE=20 N=16 CELLS=32 THREADS=1 PRECISION=double PORT_BASE=5650
DEALERS=1 kill_one=0
. "$here/../cli/cli_options.sh"
cli_parse_options run-scaleout 2,18 "--build=BUILD --daemons=DAEMONS --frames=FRAMES --rate=RATE --n=N --cells=CELLS
    --threads=THREADS --port-base=PORT_BASE --kill=kill_one=1 --curve=CURVE=1 --dealers=DEALERS" "$@"
[ "$DEALERS" -gt 1 ] && QUEUE_DEPTH=$((2 * DEALERS))
if [ "$kill_one" -eq 1 ] && [ "$DAEMONS" -lt 2 ]; then
    echo "run-scaleout: --kill needs --daemons 2 or more" >&2; exit 2
fi
. "$here/scaleout-lib.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/eigstream-scaleout.XXXXXX")
sink_pid=""
trap 'so_stop; [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM
if [ "$CURVE" = 1 ]; then so_curve_keys "$DAEMONS" || exit 1; fi

# The merge pushes to the sink, which connects first: no frame waits for a subscription.
"$(so_bin eigstream-sink)" --endpoint "tcp://127.0.0.1:$((PORT_BASE + 40))" --pattern pull --n "$N" \
    --frames "$FRAMES" --duration $((FRAMES / (RATE > 0 ? RATE : 1) + 60)) --quiet \
    --json "$WORK/sink.json" $SINK_CURVE >"$WORK/sink.out" 2>"$WORK/sink.err" &
sink_pid=$!
DISPATCH_ARGS="--overflow block" MERGE_ARGS="--window-ms 2000" so_start || exit 1
echo "run-scaleout: $DAEMONS daemons READY; sending $FRAMES frames (n=$N, $CELLS matrices) at $RATE frames/s" >&2

victim=""
if [ "$kill_one" -eq 1 ]; then
    victim=$(echo $DAEMON_PIDS | cut -d' ' -f2)
    ( while [ "$(wc -l <"$WORK/seq.log" 2>/dev/null || echo 0)" -lt $((FRAMES / 2)) ]; do sleep 0.05; done
      kill -KILL "$victim"; echo "run-scaleout: killed daemon 2 (pid $victim) after $((FRAMES / 2)) frames" >&2 ) &
fi
# shellcheck disable=SC2086 # SIM_CURVE splits into options
"$(so_bin eigstream-sim)" --endpoint "tcp://127.0.0.1:$PORT_BASE" --n "$N" --cells "$CELLS" --snapshots 64 \
    --frames "$FRAMES" --rate "$RATE" --quiet $SIM_CURVE >&2
sim_status=$?
so_wait_merge
# The sink stops by itself after FRAMES frames; with a daemon killed it ends at --duration: stop it now.
if [ "$kill_one" -eq 1 ]; then kill -INT "$sink_pid" 2>/dev/null; fi
wait "$sink_pid"; sink_pid=""
so_stop
grep -h "gone\|gap:\|late:\|duplicate:" "$WORK/dispatch.log" "$WORK/merge.log" >&2
sink_verdict=$(grep "^VERDICT:" "$WORK/sink.out" | tail -n 1)
echo "sink: ${sink_verdict:-no verdict}$([ "$kill_one" -eq 1 ] && echo " (with --kill its gaps are the frames lost with the daemon)")" >&2

python3 - "$WORK" "$FRAMES" "$sim_status" "$kill_one" "$victim" "$CURVE" <<'PY'
import json, os, socket, sys
work, frames, sim_status, kill_one, victim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
curve = sys.argv[6] == "1"
d = json.load(open(os.path.join(work, "dispatch.json")))
m = json.load(open(os.path.join(work, "merge.json")))
if curve:
    print(f"curve: dispatcher {d.get('curve')}, merge {m.get('curve')}")
log = [line.split() for line in open(os.path.join(work, "seq.log"))]
print(f"dispatcher: in {d['frames_in']}, dispatched {d['dispatched']}, rejected {d['rejected_total']}, "
      f"dropped {d['dropped_total']}")
for x in d["daemons"]:
    print(f"  daemon {x['id']:<24} {x['state']:<12} dispatched {x['dispatched']}")
print(f"merge: in {m['frames_in']}, out {m['frames_out']}, gaps {m['gap_frames']} {m['gaps']}, "
      f"duplicates {m['dropped']['duplicate']}, late {m['dropped']['late']}, "
      f"added latency p50 {m['added_latency_ms']['p50']:.2f} ms p99 {m['added_latency_ms']['p99']:.2f} ms")
named = {s for a, b in m["gaps"] for s in range(a, b + 1)}
why = []
if curve and (d.get("curve") is not True or m.get("curve") != {"inputs": True, "output": True}):
    why.append("--curve asked for, but a hop ran without it")
if sim_status != 0:
    why.append(f"the sim exited {sim_status}")
if d["frames_in"] != frames or d["dispatched"] != frames:
    why.append("the dispatcher did not take and dispatch every frame")
if m["frames_out"] + m["gap_frames"] != frames:
    why.append("merge: out + gaps != frames")
if kill_one:
    name = f"{socket.gethostname()}:{victim}"
    to_victim = {int(s) for s, who in log if who == name}
    if not named <= to_victim:
        why.append(f"gaps {sorted(named - to_victim)} were not sent to the killed daemon")
    print(f"killed {name}: dispatched {len(to_victim)} frames to it, {len(named)} lost with it and named")
elif named or m["frames_out"] != frames:
    why.append("frames lost without a daemon dying")
print(f"VERDICT: {'FAIL ' + '; '.join(why) if why else 'PASS'} frames={frames} out={m['frames_out']} "
      f"gaps={m['gap_frames']}")
sys.exit(1 if why else 0)
PY
