#!/usr/bin/env bash
# Traces every variant of tests/analyzers/ir_diff/scenes/pairs.py for real, under TORCH_TRACE, in the torch
# sandbox (PyTorch 2.6, CPU), and imports each log into tests/golden/ir_diff/<variant>.cls.json:
# the real base/head pairs of tests/analyzers/ir_diff/pairs_test.cc.
#
# The pattern of examples/hero/run_traces.sh: the scene is staged at its repository path under $tmp
# and run with $tmp as the sandbox's project folder, so the captures name it
# `tests/ir_diff/scenes/pairs.py` under project root /mnt/project (where the file lived when the
# goldens were traced; it is now tests/analyzers/ir_diff/scenes/pairs.py); each run
# gets a cold Inductor cache (a warm FX graph cache would drop the post-grad graph from the trace).
#
# The captures are imported without sources (--no-sources) and then slimmed by
# slim_capture.py (what the diff does not read: extras, compile metrics, output code) so that
# they stay small enough to review.
#
# Needs root (the sandbox is a chroot), a sandbox that is set up, and a built cl-client.
# Environment: TORCH_SANDBOX (default scripts/torch-sandbox), CL_CLIENT (default
# build/client/cl-client).
# Usage: make_pairs.sh [VARIANT...]   (default: all of them)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
sandbox_script=make_pairs.sh
source "$repo/scripts/lib/sandbox_trace.sh"
sandbox_init "$repo"
sandbox_client "$repo"
out_dir=$repo/tests/golden/ir_diff

variants=("$@")
[[ ${#variants[@]} -gt 0 ]] ||
  variants=(base op_swap act_swap operand_swap node_added node_removed width_changed base_again)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ir-diff-pairs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/ir_diff/scenes" "$out_dir"
cp "$here/scenes/pairs.py" "$tmp/tests/ir_diff/scenes/pairs.py"

for variant in "${variants[@]}"; do
  echo "make_pairs.sh: tracing $variant" >&2
  sandbox_trace "$tmp" "$variant" python3 tests/ir_diff/scenes/pairs.py "$variant"
  # One compile, no recompiles: the pairs are about one graph each.
  compiles=$(grep -c '"compilation_metrics"' "$trace_log" || true)
  [[ $compiles -eq 1 ]] || { echo "make_pairs.sh: $variant: expected 1 compile, found $compiles" >&2; exit 1; }
  "$client" import-trace "$trace_log" -o "$tmp/out/$variant.full.cls.json" --no-sources \
    --project-root /mnt/project --session-id "ir-diff-pairs-$variant" --label "variant=$variant"
  python3 "$here/slim_capture.py" "$tmp/out/$variant.full.cls.json" "$out_dir/$variant.cls.json"
  echo "make_pairs.sh: wrote $out_dir/$variant.cls.json ($(wc -c <"$out_dir/$variant.cls.json") bytes)" >&2
done
