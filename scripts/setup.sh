#!/usr/bin/env bash
# Installs every Debian package compile-lens needs to build, test and run, on Debian bookworm.
# Idempotent and non-interactive: packages already installed are left alone, and apt is not
# touched at all when nothing is missing.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build pkg-config
  # libraries (Debian's, pinned by the distribution: gRPC 1.51, protobuf 3.21, abseil 20220623)
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev libre2-dev
  libsimdjson-dev libssl-dev zlib1g-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # the HTML report is checked in real headless Chromium
  chromium
  # the capture package's upload() and its test run on Debian's interpreter and gRPC;
  # debootstrap builds the torch sandbox the package's PyTorch tests run in
  python3 python3-grpcio python3-protobuf debootstrap
)

missing=()
for p in "${PACKAGES[@]}"; do
  if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) != installed ]]; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

SUDO=
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
