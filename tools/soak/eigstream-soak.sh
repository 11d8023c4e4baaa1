#!/usr/bin/env bash
# Soak test of the daemon (sim -> eigstream -> sink at a fixed rate): frames
# lost, RSS slope after warm-up, open fds, p99 per minute. Options: --help.
#   tools/soak/eigstream-soak.sh --build build --duration 3600 --rate 1 --out soak-results --plot
#   tools/soak/eigstream-soak.sh --duration 600 --rate 10 --backend auto   # the GPU when present
# Runs with /usr/bin/python3 and its standard library only (matplotlib for
# --plot), so it runs on hosts without NumPy or pyzmq, the GPU machine too.
exec /usr/bin/python3 "$(dirname "$0")/eigstream_soak.py" "$@"
