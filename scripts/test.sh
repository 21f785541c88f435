#!/usr/bin/env bash
# The whole test suite: set up, build everything, run every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600
