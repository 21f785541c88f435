#!/usr/bin/env bash
# Runs tests/python/test_capture.py inside the torch sandbox (real PyTorch 2.6, CPU Inductor):
# stages the capture package and the tests in a scratch folder the sandbox mounts.
# Usage: run_sandbox_tests.sh [FIXTURE_OUT]   (FIXTURE_OUT: also keep each scene's log there)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
sandbox=${TORCH_SANDBOX:-$repo/scripts/torch-sandbox}
[[ -x $sandbox ]] || { echo "run_sandbox_tests.sh: torch-sandbox not found at $sandbox" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cl-pytests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/client" "$tmp/tests"
cp -r "$repo/client/python" "$tmp/client/python"
cp -r "$here" "$tmp/tests/python"
fixtures=()
[[ $# -ge 1 ]] && fixtures=(CL_FIXTURE_OUT=/mnt/project/fixtures)
"$sandbox" run -C "$tmp" -- env "${fixtures[@]}" python3 -m unittest -v tests/python/test_capture.py
if [[ $# -ge 1 ]]; then
  mkdir -p "$1"
  cp "$tmp"/fixtures/*.log "$1"/
fi
