#!/usr/bin/env bash
# Runs each fusion scene (scenes/fusion_scenes.py) for real under TORCH_TRACE in the torch sandbox
# (PyTorch 2.6, CPU) and imports its log with cl-client into tests/golden/fusion/<scene>.cls.json:
# one compile each, with the post-grad graph the fusion pass reads. A cold Inductor cache per run,
# so that no FX-graph cache hit drops the post-grad graph from the trace.
#
# Needs root (the sandbox is a chroot). Environment: TORCH_SANDBOX (default
# scripts/torch-sandbox), CL_CLIENT (default build/client/cl-client).
# Usage: make_traces.sh [SCENE...]   (default: all)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
sandbox_script=make_traces.sh
source "$repo/scripts/lib/sandbox_trace.sh"
sandbox_init "$repo"
sandbox_client "$repo"
out=$repo/tests/golden/fusion

scenes=("$@")
[[ ${#scenes[@]} -gt 0 ]] || scenes=(resid_rms_norm swiglu_fused swiglu_separate resid_norm_swiglu bias_gelu
                                     layernorm_gemm rope rope_qknorm lm_head_ce manual_attention
                                     plain)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fusion-traces.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/fusion" "$out"
cp "$here/scenes/fusion_scenes.py" "$tmp/tests/fusion/fusion_scenes.py"

for scene in "${scenes[@]}"; do
  echo "make_traces.sh: $scene" >&2
  sandbox_trace "$tmp" "$scene" python3 tests/fusion/fusion_scenes.py "$scene"
  "$client" import-trace "$trace_log" -o "$out/$scene.cls.json" --project-root /mnt/project
done
