# scaleout-lib.sh - starting and stopping the scale-out topology on one machine,
# shared by run-scaleout.sh and bench-scaleout.sh (sourced, not run):
#
#   eigstream-sim -PUSH-> eigstream-dispatch -ROUTER/DEALER-> D x eigstream -PUSH-> eigstream-merge -PUSH-> consumer
#
# Ports: the dispatcher's front end PORT_BASE, its back end PORT_BASE+10, daemon i's
# output PORT_BASE+20+i, the merge's output PORT_BASE+40. Daemon configs are
# config/examples/scaleout-daemon-*.cfg with these ports and the sizes substituted.
# Expects: ROOT, BUILD, WORK, PORT_BASE, DAEMONS, FRAMES, N, CELLS, THREADS, PRECISION.

DAEMON_PIDS="" DISPATCH_PID="" MERGE_PID=""

so_bin() { # so_bin NAME -> path of a built program, or exit 1 naming it
    local p
    case "$1" in
        eigstream) p="$BUILD/app/eigstream" ;;
        *) p="$BUILD/tools/${1#eigstream-}/$1" ;;
    esac
    if [ ! -x "$p" ]; then
        echo "scaleout: $p not found: build first (cmake -B $BUILD && cmake --build $BUILD -j)" >&2
        exit 1
    fi
    echo "$p"
}

so_config() { # so_config I [GPUS] -> writes $WORK/daemon-I.cfg (GPUS > 0: the cuda backend on
    # GPUs (I-1)*GPUS .. I*GPUS-1; default GPUS_PER_DAEMON, 0 = the example's cpu backend)
    local i=$1 gpus=${2:-${GPUS_PER_DAEMON:-0}} example devices="" g
    example="$ROOT/config/examples/scaleout-daemon-$(( (i - 1) % 3 + 1 )).cfg"
    for g in $(seq $(( (i - 1) * gpus )) $(( i * gpus - 1 ))); do devices="$devices${devices:+, }$g"; done
    sed -e "s#tcp://127.0.0.1:5560#tcp://127.0.0.1:$((PORT_BASE + 10))#" \
        -e "s#tcp://127.0.0.1:557[0-9]#tcp://127.0.0.1:$((PORT_BASE + 20 + i))#" \
        -e "s#^  n = [0-9]*;#  n = $N;#" -e "s#^  matrices = [0-9]*;#  matrices = $CELLS;#" \
        -e "s#^  cpu_threads = [0-9]*;#  cpu_threads = $THREADS;#" \
        -e "s#^  precision = \"[a-z]*\";#  precision = \"$PRECISION\";#" \
        -e "s#^  http = \"[^\"]*\";#  http = \"\";#" "$example" >"$WORK/daemon-$i.cfg"
    if [ "$gpus" -gt 0 ]; then
        sed -i -e "s#^  backend = \"cpu\";#  backend = \"cuda\";\n  gpu_devices = [$devices];#" "$WORK/daemon-$i.cfg"
    fi
}

# Starts the merge, the dispatcher and the daemons; waits until every daemon said READY.
# MERGE_ARGS and DISPATCH_ARGS add options. Sets MERGE_PID, DISPATCH_PID, DAEMON_PIDS.
so_start() {
    local inputs="" i
    for i in $(seq 1 "$DAEMONS"); do inputs="$inputs${inputs:+,}tcp://127.0.0.1:$((PORT_BASE + 20 + i))"; done
    "$(so_bin eigstream-merge)" --in "$inputs" --out "tcp://127.0.0.1:$((PORT_BASE + 40))" --out-pattern push \
        --first-seq 0 --last-seq $((FRAMES - 1)) --stats-s 0 --json "$WORK/merge.json" ${MERGE_ARGS:-} \
        2>"$WORK/merge.log" &
    MERGE_PID=$!
    "$(so_bin eigstream-dispatch)" --front "tcp://127.0.0.1:$PORT_BASE" --back "tcp://127.0.0.1:$((PORT_BASE + 10))" \
        --stats-s 0 --json "$WORK/dispatch.json" --seq-log "$WORK/seq.log" ${DISPATCH_ARGS:-} \
        2>"$WORK/dispatch.log" &
    DISPATCH_PID=$!
    DAEMON_PIDS=""
    for i in $(seq 1 "$DAEMONS"); do
        so_config "$i"
        "$(so_bin eigstream)" -c "$WORK/daemon-$i.cfg" 2>"$WORK/daemon-$i.log" &
        DAEMON_PIDS="$DAEMON_PIDS $!"
    done
    local tries
    for tries in $(seq 1 600); do
        [ "$(grep -c ' ready (credit' "$WORK/dispatch.log" 2>/dev/null)" -ge "$DAEMONS" ] && return 0
        kill -0 "$DISPATCH_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "scaleout: the daemons did not all say READY; logs in $WORK" >&2
    cat "$WORK"/dispatch.log "$WORK"/daemon-*.log >&2
    return 1
}

so_wait_merge() { # the merge exits once every seq is out or named; bounded for a stuck run
    local tries
    for tries in $(seq 1 "${1:-3000}"); do
        kill -0 "$MERGE_PID" 2>/dev/null || { wait "$MERGE_PID"; return $?; }
        sleep 0.1
    done
    echo "scaleout: the merge did not finish" >&2
    kill -TERM "$MERGE_PID" 2>/dev/null
    wait "$MERGE_PID"
    return 1
}

so_stop() { # SIGTERM to what is left, then wait for each
    local p
    for p in $DAEMON_PIDS $DISPATCH_PID $MERGE_PID; do kill -TERM "$p" 2>/dev/null; done
    for p in $DAEMON_PIDS $DISPATCH_PID $MERGE_PID; do wait "$p" 2>/dev/null; done
    DAEMON_PIDS="" DISPATCH_PID="" MERGE_PID=""
}
