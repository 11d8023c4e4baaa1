# scaleout-lib.sh - starting and stopping the scale-out topology on one machine,
# shared by run-scaleout.sh and bench-scaleout.sh (sourced, not run):
#
#   eigstream-sim -PUSH-> eigstream-dispatch -ROUTER/DEALER-> D x eigstream -PUSH-> eigstream-merge -PUSH-> consumer
#
# Ports: the dispatcher's front end PORT_BASE (with CONNECTIONS = K > 1, K front sockets on
# PORT_BASE+50 .. PORT_BASE+50+K-1: so_front), its back end PORT_BASE+10, daemon i's output
# PORT_BASE+20+i, the merge's output PORT_BASE+40. Daemon configs are
# config/examples/scaleout-daemon-*.cfg with these ports and the sizes substituted.
# Expects: ROOT, BUILD, WORK, PORT_BASE, DAEMONS, FRAMES, N, CELLS, THREADS, PRECISION
# (QUEUE_DEPTH, if set: every daemon's frame.queue_depth; DEALERS, if above 1: each daemon's
# input.io_threads, its DEALERs to the dispatcher).
# CURVE=1: every hop under CURVE (so_curve_keys first), with the keys and allow-lists
# docs/scaleout.md's security model names; SIM_CURVE and SINK_CURVE then hold the
# source's and the consumer's client options.

DAEMON_PIDS="" DISPATCH_PID="" MERGE_PID="" SIM_CURVE="" SINK_CURVE="" DIRECT_CURVE=""
CURVE=${CURVE:-0}

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

so_front() { # the front end's endpoints: one, or CONNECTIONS of them separated by commas
    local k list=""
    if [ "${CONNECTIONS:-1}" -le 1 ]; then echo "tcp://127.0.0.1:$PORT_BASE"; return; fi
    for k in $(seq 0 $((CONNECTIONS - 1))); do list="$list${list:+,}tcp://127.0.0.1:$((PORT_BASE + 50 + k))"; done
    echo "$list"
}

so_curve_keys() { # so_curve_keys D: key pairs in $WORK/keys for the dispatcher, the merge,
    # the source, the consumer and daemons 1..D, the public ones copied into the allow-lists
    # sources/, daemons/, merges/, consumers/ and direct/ (a daemon fed by the sim directly
    # lets in the source and the consumer); sets SIM_CURVE, SINK_CURVE and DIRECT_CURVE
    local k="$WORK/keys" name i
    mkdir -p "$k/sources" "$k/daemons" "$k/merges" "$k/consumers" "$k/direct" || return 1
    chmod 755 "$k" "$k"/*/
    for name in dispatch merge source consumer $(seq -f "daemon%g" 1 "$1"); do
        "$(so_bin eigstream-keygen)" "$k/$name" >/dev/null || return 1
    done
    cp "$k/source.key" "$k/sources/"; cp "$k/merge.key" "$k/merges/"; cp "$k/consumer.key" "$k/consumers/"
    cp "$k/source.key" "$k/consumer.key" "$k/direct/"
    for i in $(seq 1 "$1"); do cp "$k/daemon$i.key" "$k/daemons/"; done
    SIM_CURVE="--curve-server-key $k/dispatch.key --curve-key $k/source.key_secret"
    SINK_CURVE="--curve-server-key $k/merge.key --curve-key $k/consumer.key_secret"
    DIRECT_CURVE="--curve-server-key $k/daemon1.key"
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
    if [ "${DEALERS:-1}" -gt 1 ]; then
        sed -i -e "s#^  pattern = \"dispatch\";#  pattern = \"dispatch\";\n  io_threads = $DEALERS;#" "$WORK/daemon-$i.cfg"
    fi
    if [ -n "${QUEUE_DEPTH:-}" ]; then # the frames a daemon can be dealt ahead (its credit)
        printf 'frame = {\n  queue_depth = %s;\n};\n' "$QUEUE_DEPTH" >>"$WORK/daemon-$i.cfg"
    fi
    if [ "$CURVE" = 1 ]; then # the dispatcher's client, the merge's server
        printf 'security = {\n  curve_secret_key = "%s";\n  curve_allow = "%s";\n  curve_dispatcher_key = "%s";\n};\n' \
            "$WORK/keys/daemon$i.key_secret" "$WORK/keys/merges" "$WORK/keys/dispatch.key" >>"$WORK/daemon-$i.cfg"
    fi
}

# Starts the merge, the dispatcher and the daemons; waits until every daemon (each of its
# DEALERS) said READY.
# MERGE_ARGS and DISPATCH_ARGS add options. Sets MERGE_PID, DISPATCH_PID, DAEMON_PIDS.
so_start() {
    local inputs="" i
    local merge_curve="" dispatch_curve="" servers="" k="$WORK/keys"
    for i in $(seq 1 "$DAEMONS"); do inputs="$inputs${inputs:+,}tcp://127.0.0.1:$((PORT_BASE + 20 + i))"; done
    if [ "$CURVE" = 1 ]; then
        for i in $(seq 1 "$DAEMONS"); do servers="$servers${servers:+,}$k/daemon$i.key"; done
        merge_curve="--curve-server-key $servers --curve-key $k/merge.key_secret --curve-secret-key $k/merge.key_secret
            --curve-allow $k/consumers"
        dispatch_curve="--curve-secret-key $k/dispatch.key_secret --front-curve-allow $k/sources
            --back-curve-allow $k/daemons"
    fi
    # shellcheck disable=SC2086 # the option lists split into words
    "$(so_bin eigstream-merge)" --in "$inputs" --out "tcp://127.0.0.1:$((PORT_BASE + 40))" --out-pattern push \
        --first-seq 0 --last-seq $((FRAMES - 1)) --stats-s 0 --json "$WORK/merge.json" ${MERGE_ARGS:-} $merge_curve \
        2>"$WORK/merge.log" &
    MERGE_PID=$!
    # shellcheck disable=SC2086
    "$(so_bin eigstream-dispatch)" --front "$(so_front)" --back "tcp://127.0.0.1:$((PORT_BASE + 10))" \
        --stats-s 0 --json "$WORK/dispatch.json" --seq-log "$WORK/seq.log" ${DISPATCH_ARGS:-} $dispatch_curve \
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
        # each of a daemon's DEALERS says READY
        [ "$(grep -c ' ready (credit' "$WORK/dispatch.log" 2>/dev/null)" -ge $((DAEMONS * ${DEALERS:-1})) ] && return 0
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
