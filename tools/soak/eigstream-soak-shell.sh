#!/bin/bash
# eigstream-soak-shell.sh - the soak without Python (for hosts without pyzmq,
# such as the GPU machine): eigstream-sim -> eigstream (default config: the
# GPU when present) -> eigstream-sink at RATE frames/s for DUR seconds, the
# daemon's RSS and open fds sampled every 10 s into OUT/rss.txt. Prints the
# sim's, the sink's (VERDICT) and the daemon's (accounting) last lines, RSS
# and fds at start and end, and the RSS slope after 60 s.
#   B=build DUR=600 RATE=10 OUT=soak-results tools/soak/eigstream-soak-shell.sh
set -u
B=${B:-build}; DUR=${DUR:-600}; RATE=${RATE:-10}; OUT=${OUT:-soak-results}
mkdir -p "$OUT"
N=$((DUR * RATE)); W=/tmp/soak; mkdir -p $W
$B/app/eigstream 2> $W/daemon.log & D=$!
sleep 2
$B/tools/sink/eigstream-sink --frames $N --duration $((DUR + 60)) --quiet --latency-csv $W/lat.csv > $W/sink.out 2> $W/sink.err & S=$!
sleep 1
( t0=$(date +%s); while kill -0 $D 2>/dev/null; do
    echo "$(( $(date +%s) - t0 )) $(awk '/VmRSS/{print $2}' /proc/$D/status) $(ls /proc/$D/fd | wc -l)"; sleep 10; done ) > $W/rss.txt &
M=$!
$B/tools/sim/eigstream-sim --frames $N --rate $RATE --quiet > $W/sim.out 2>&1
wait $S; echo "sink rc=$?"
kill -TERM $D; wait $D; echo "daemon rc=$?"; kill $M 2>/dev/null
tail -1 $W/sim.out; tail -1 $W/sink.out; grep -E "accounting" $W/daemon.log | cut -c1-250
awk 'NR==1{print "rss start kB", $2, "fds", $3} {last=$0} END{split(last,a," "); print "rss end kB", a[2], "fds", a[3]}' $W/rss.txt
awk '$1>=60 {n++; sx+=$1; sy+=$2; sxx+=$1*$1; sxy+=$1*$2} END{ if (n>2) { b=(n*sxy-sx*sy)/(n*sxx-sx*sx); printf "rss slope after 60 s: %.1f kB/hour over %d samples\n", b*3600, n } }' $W/rss.txt
cp $W/rss.txt $OUT/ 2>/dev/null; head -c 300000 $W/lat.csv > $OUT/lat-head.csv 2>/dev/null
