#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages eigstream builds and tests with, when
# missing. Idempotent; uses sudo when not root. CUDA is optional and never
# installed here (the build uses nvcc when it finds one).
set -euo pipefail

packages=(build-essential cmake pkg-config git
          libzmq3-dev libfftw3-dev libconfig-dev liblapacke-dev libopenblas-dev libjansson-dev
          libmicrohttpd-dev libncurses-dev
          libsystemd-dev systemd  # sd_notify in the daemon; systemd-analyze verify on the units
          clang libomp-dev  # libFuzzer and OpenMP for clang: the fuzz stage (tools/run-fuzz.sh)
          python3 python3-numpy python3-zmq python3-matplotlib
          prometheus chromium)  # promtool and headless chromium: the monitoring tests
# cpack -G DEB (dpkg-shlibdeps reads the binaries with file) and the pip
# install test of the Python package (venv; wheel builds it offline).
packages+=(file dpkg-dev python3-venv python3-wheel)
# The package test (tests/install/test_lintian.py): lintian on the .deb, and
# the manual pages help2man makes of every program's --help at build time.
packages+=(lintian help2man)
# eigstream-solve's .mat files (libmatio, v5 and v7.3) and the deflated
# members of numpy.savez_compressed (zlib); the oracles of its format test:
# scipy.io.savemat/loadmat and h5py (tests/tools/test_solve_formats.py).
packages+=(libmatio-dev zlib1g-dev python3-scipy python3-h5py)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
