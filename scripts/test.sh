#!/usr/bin/env bash
# The whole test suite: set up (Debian packages, the torch sandbox), build everything, run every
# test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Real PyTorch for the capture package's tests: the shared torch sandbox (about 10 minutes the
# first time, then reused). TORCH_SANDBOX names another copy of the tool.
"${TORCH_SANDBOX:-../shared/tools/torch-sandbox}" setup
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600
