#!/usr/bin/env bash
# Soak test of the daemon (sim -> eigstream -> sink at a fixed rate): frames
# lost, RSS slope after warm-up, open fds, p99 per minute. Options: --help.
#   tools/soak/eigstream-soak.sh --build build --duration 3600 --rate 1 --out soak-results --plot
# Runs with /usr/bin/python3 (NumPy, pyzmq; matplotlib for --plot).
exec /usr/bin/python3 "$(dirname "$0")/eigstream_soak.py" "$@"
