#!/bin/sh
# eigstream-demo.sh - the whole chain on loopback with the default configuration:
#
#   eigstream-sim  --PUSH tcp://127.0.0.1:5550-->  eigstream  --PUB tcp://127.0.0.1:5551-->  eigstream-sink
#
# The daemon runs its defaults (n = 128, 180 matrices per frame, full
# eigenspaces, backend auto: the GPU when there is one, else the CPU). The sim
# streams radar frames until the sink has checked a fixed number of eigenspaces and
# prints its VERDICT line; then the daemon is stopped with SIGTERM and must
# drain and exit 0. Exit status: 0 when the sink says PASS and the daemon
# stopped cleanly, 1 otherwise.
#
#   tools/demo/eigstream-demo.sh [--build DIR] [--frames N] [--rate FPS] [--backend B]
#                                [--iq [--channels C] [--pulses P] [--gates G] [--segments S] [--port-base N]]
#
# --rate defaults to 2 frames/s with a GPU and 1 frame/s on the CPU (a 2-core
# machine solves one default frame in about half a second).
#
# --iq: the sim sends raw IQ cubes (C channels x P pulses x G gates, ci16_le,
# default 128 x 180 x 256 with two targets and a barrage jammer), the daemon
# forms them (form.input = iq: Hann window, P-point Doppler FFT, P bins x S
# range segments = solver.matrices) and the sink checks each Doppler bin's
# signal subspace (eigstream-sink --iq). The daemon runs a generated
# configuration on ports N, N+1 (default 5550, 5551), metrics off.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/build"
frames=10
rate=""
backend=""
iq=0
channels=128
pulses=180
gates=256
segments=1
port_base=5550
iq_scene="--jammers 40:30"

. "$here/../cli/cli_options.sh"
cli_parse_options eigstream-demo 2,24 "--build=build --frames=frames --rate=rate --backend=backend --iq=iq=1
    --channels=channels --pulses=pulses --gates=gates --segments=segments --port-base=port_base" "$@"

daemon="$build/app/eigstream"
sim="$build/tools/sim/eigstream-sim"
sink="$build/tools/sink/eigstream-sink"
for program in "$daemon" "$sim" "$sink"; do
    if [ ! -x "$program" ]; then
        echo "eigstream-demo: $program not found: build first (cmake -B $build && cmake --build $build -j)" >&2
        exit 1
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/eigstream-demo.XXXXXX")
daemon_pid=""
sink_pid=""
sim_pid=""
cleanup() {
    [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
    [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null
    [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

input="tcp://127.0.0.1:$port_base"
output="tcp://127.0.0.1:$((port_base + 1))"
set --
if [ "$iq" -eq 1 ]; then
    # bins x segments must equal solver.matrices: every bin of the P-point FFT.
    cat >"$work/iq.cfg" <<EOF
input = { endpoint = "$input"; };
output = { endpoint = "$output"; mode = "full"; };
metrics = { endpoint = ""; http = ""; };
solver = { n = $channels; matrices = $((pulses * segments)); };
form = { input = "iq"; iq_format = "ci16_le"; iq_layout = "cpg"; pulses = $pulses; range_gates = $gates;
         window = "hann"; range_segments = $segments; };
EOF
    set -- -c "$work/iq.cfg"
fi
if [ -n "$backend" ]; then
    set -- "$@" --backend "$backend"
fi
"$daemon" "$@" 2>"$work/daemon.log" &
daemon_pid=$!

# Wait for the startup line (or an early exit with its reason).
started=0
for _ in $(seq 1 100); do
    if grep -q "INFO  main: eigstream" "$work/daemon.log" 2>/dev/null; then started=1; break; fi
    if ! kill -0 "$daemon_pid" 2>/dev/null; then break; fi
    sleep 0.1
done
cat "$work/daemon.log" >&2
if [ "$started" -ne 1 ]; then
    echo "eigstream-demo: the daemon did not start" >&2
    daemon_pid=""
    exit 1
fi
if [ -z "$rate" ]; then
    if grep -q "backend cuda" "$work/daemon.log"; then rate=2; else rate=1; fi
fi

set --
if [ "$iq" -eq 1 ]; then
    set -- --iq --fft-size "$pulses" --range-segments "$segments" $iq_scene
fi
"$sink" --endpoint "$output" --frames "$frames" --duration $((frames * 4 / rate + 30)) --quiet "$@" \
    >"$work/sink.out" 2>"$work/sink.err" &
sink_pid=$!

set --
what="frames"
if [ "$iq" -eq 1 ]; then
    set -- --iq --n "$channels" --pulses "$pulses" --gates "$gates" --per-slice-parts $iq_scene
    what="IQ cubes ($channels channels x $pulses pulses x $gates gates)"
fi
# Readiness by handshake, not by a sleep: the sink's subscription reaches the
# daemon's PUB socket at a moment nobody here can see, so the sim streams
# until the sink has checked its $frames consecutive frames (frames published
# before the subscription arrived go to nobody, as PUB does), then stops.
echo "eigstream-demo: streaming $what at $rate frames/s until the sink has checked $frames" >&2
"$sim" --endpoint "$input" --frames 0 --rate "$rate" --quiet "$@" >&2 &
sim_pid=$!

wait "$sink_pid"
sink_status=$?
sink_pid=""
kill -INT "$sim_pid"
wait "$sim_pid"
sim_status=$?
sim_pid=""

kill -TERM "$daemon_pid"
wait "$daemon_pid"
daemon_status=$?
daemon_pid=""
grep -E "accounting|stopped cleanly|ERROR" "$work/daemon.log" | tail -n +1 >&2 || true
# The startup line was printed already; show what came after it.
sed -n '2,$p' "$work/daemon.log" | grep -v "accounting\|stopped cleanly" | grep -E "WARN|ERROR" >&2 || true

cat "$work/sink.err" >&2
verdict=$(grep "^VERDICT:" "$work/sink.out" | tail -n 1)
if [ -z "$verdict" ]; then
    echo "VERDICT: FAIL no verdict from the sink (status $sink_status)"
    exit 1
fi
echo "$verdict"
if [ "$sim_status" -ne 0 ] || [ "$daemon_status" -ne 0 ]; then
    echo "eigstream-demo: sim exit $sim_status, daemon exit $daemon_status" >&2
    exit 1
fi
[ "$sink_status" -eq 0 ] && case "$verdict" in "VERDICT: PASS"*) exit 0 ;; esac
exit 1
