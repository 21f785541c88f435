#!/usr/bin/env bash
# Runs the hero scene for real, under TORCH_TRACE, in the torch sandbox (PyTorch 2.6, CPU), in
# both modes, and stores what it wrote next to this script:
#
#   traces/base.log  traces/head.log                  the TORCH_TRACE log of each run
#   traces/base.result.json  traces/head.result.json  what the scene measured (max_abs_diff per call,
#                                                     and the divergence check's verdict)
#
# The captures name the scene `examples/hero_scene.py` under the project root /mnt/project, as
# the golden report does, so the scene is staged as $tmp/examples/hero_scene.py and run with
# $tmp as the sandbox's project folder:
#
#   TORCH_TRACE=/mnt/project/out/trace_base scripts/torch-sandbox run -C $tmp -- \
#     env TORCHINDUCTOR_CACHE_DIR=/mnt/project/out/inductor_cache_base \
#     python3 examples/hero_scene.py base out/base.json
#
# (a cold Inductor cache each time, so that the traces do not depend on earlier runs).
#
# Needs root (the sandbox is a chroot) and a sandbox that is set up (`scripts/torch-sandbox setup`).
# Environment: TORCH_SANDBOX (default: the repository's scripts/torch-sandbox); TORCH_SANDBOX_ROOT
# is passed through.
# Usage: run_traces.sh [base|head]...   (default: base head)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sandbox_script=run_traces.sh
source "$here/../../scripts/lib/sandbox_trace.sh"
sandbox_init "$here/../.."

modes=("$@")
[[ ${#modes[@]} -gt 0 ]] || modes=(base head)
for mode in "${modes[@]}"; do
  [[ $mode == base || $mode == head ]] || { echo "run_traces.sh: unknown mode '$mode' (base or head)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hero-traces.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/examples" "$here/traces"
cp "$here/hero_scene.py" "$tmp/examples/hero_scene.py"
# The scene imports the capture package (client/python/compile_lens), staged beside it.
mkdir -p "$tmp/lib"
cp -r "$here/../../client/python/compile_lens" "$tmp/lib/compile_lens"

for mode in "${modes[@]}"; do
  echo "run_traces.sh: running $mode" >&2
  rm -f "$tmp/out/$mode.json"
  sandbox_trace "$tmp" "$mode" env PYTHONPATH=/mnt/project/lib python3 examples/hero_scene.py "$mode" "out/$mode.json"
  # What every hero trace must show (README.md): compiles 0/0-0/3 of one frame, and three
  # recompiles, each because L['x'] changed size at index 0.
  compiles=$(grep -c '"compilation_metrics"' "$trace_log" || true)
  reasons=$(grep -c '"name": "recompile_reasons"' "$trace_log" || true)
  sizes=$(grep -c "tensor 'L\['x'\]' size mismatch at index 0" "$trace_log" || true)
  [[ $compiles -eq 4 && $reasons -eq 3 && $sizes -eq 6 ]] || {
    echo "run_traces.sh: $mode: expected 4 compiles, 3 recompile_reasons, 6 size-mismatch lines;" \
         "found $compiles, $reasons, $sizes" >&2; exit 1; }
  # And compile_lens's own records: one iteration per call, one divergence check, the scene's source.
  iterations=$(grep -c '"name": "compile_lens_iteration"' "$trace_log" || true)
  checks=$(grep -c '"name": "compile_lens_divergence"' "$trace_log" || true)
  sources=$(grep -c '"name": "compile_lens_source"' "$trace_log" || true)
  [[ $iterations -eq 4 && $checks -eq 1 && $sources -eq 1 ]] || {
    echo "run_traces.sh: $mode: expected 4 compile_lens_iteration, 1 compile_lens_divergence, 1 compile_lens_source;" \
         "found $iterations, $checks, $sources" >&2; exit 1; }
  install -m 0644 "$trace_log" "$here/traces/$mode.log"
  install -m 0644 "$tmp/out/$mode.json" "$here/traces/$mode.result.json"
  echo "run_traces.sh: wrote traces/$mode.log ($(wc -l <"$here/traces/$mode.log") lines) and traces/$mode.result.json" >&2
done
