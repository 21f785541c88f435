#!/usr/bin/env bash
# The whole test suite: set up (Debian packages, the torch sandbox), build everything, run every
# test (ctest), then the suite again under the sanitizers with the fuzzers' short runs
# (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The tree's C++ and proto are as clang-format-14 writes them (.clang-format); seconds, so first.
scripts/check_format.sh
# Real PyTorch for the capture package's tests: the torch sandbox, scripts/torch-sandbox (about 10
# minutes the first time, mostly downloading and unpacking; then reused). TORCH_SANDBOX names
# another copy of the tool. It is set up while both builds keep the CPUs busy (the release tree,
# then the sanitizer tree), and waited for before the tests.
mkdir -p build
sandbox_log=build/torch-sandbox-setup.log
"${TORCH_SANDBOX:-scripts/torch-sandbox}" setup >"$sandbox_log" 2>&1 &
sandbox_pid=$!
if ! scripts/build.sh || ! scripts/sanitize.sh build; then
  wait "$sandbox_pid" || true
  exit 1
fi
if ! wait "$sandbox_pid"; then
  echo "test.sh: torch sandbox setup failed:" >&2
  tail -n 40 "$sandbox_log" >&2
  exit 1
fi
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 600)
# The same suite under ASan + UBSan (clang-14, -Wthread-safety), and a short run of every fuzz
# target (build-san/).
scripts/sanitize.sh
