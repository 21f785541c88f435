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
#   TORCH_TRACE=/mnt/project/out/trace_base torch-sandbox run -C $tmp -- \
#     env TORCHINDUCTOR_CACHE_DIR=/mnt/project/out/inductor_cache_base \
#     python3 examples/hero_scene.py base out/base.json
#
# (a cold Inductor cache each time, so that the traces do not depend on earlier runs).
#
# Needs root (the sandbox is a chroot) and a sandbox that is set up (`torch-sandbox setup`).
# Environment: TORCH_SANDBOX (default: ../../../shared/tools/torch-sandbox from this script, i.e.
# ../shared/tools/torch-sandbox from the repository root); TORCH_SANDBOX_ROOT is passed through.
# Usage: run_traces.sh [base|head]...   (default: base head)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sandbox=${TORCH_SANDBOX:-$here/../../../shared/tools/torch-sandbox}
[[ -x $sandbox ]] || { echo "run_traces.sh: torch-sandbox not found at $sandbox (set TORCH_SANDBOX)" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "run_traces.sh: the torch sandbox needs root" >&2; exit 2; }

modes=("$@")
[[ ${#modes[@]} -gt 0 ]] || modes=(base head)
for mode in "${modes[@]}"; do
  [[ $mode == base || $mode == head ]] || { echo "run_traces.sh: unknown mode '$mode' (base or head)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hero-traces.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/examples" "$tmp/out" "$here/traces"
cp "$here/hero_scene.py" "$tmp/examples/hero_scene.py"
# The scene imports the capture package (client/python/compile_lens), staged beside it.
mkdir -p "$tmp/lib"
cp -r "$here/../../client/python/compile_lens" "$tmp/lib/compile_lens"

for mode in "${modes[@]}"; do
  echo "run_traces.sh: running $mode" >&2
  rm -rf "$tmp/out/trace_$mode" "$tmp/out/$mode.json"
  # A fresh Inductor cache per run: the sandbox's default one (/tmp/torchinductor_root inside the
  # chroot) outlives runs, and a warm FX graph cache turns base's misses into hits and drops the
  # post-grad graphs and output code from the trace.
  TORCH_TRACE=/mnt/project/out/trace_$mode \
    "$sandbox" run -C "$tmp" -- env TORCHINDUCTOR_CACHE_DIR=/mnt/project/out/inductor_cache_$mode \
    PYTHONPATH=/mnt/project/lib python3 examples/hero_scene.py "$mode" "out/$mode.json"
  # torch writes one dedicated_log_torch_trace_*.log per process; the scene is one process.
  logs=("$tmp/out/trace_$mode"/dedicated_log_torch_trace_*.log)
  [[ ${#logs[@]} -eq 1 && -f ${logs[0]} ]] || {
    echo "run_traces.sh: expected exactly one trace log for $mode, found: ${logs[*]}" >&2; exit 1; }
  # What every hero trace must show (README.md): compiles 0/0-0/3 of one frame, and three
  # recompiles, each because L['x'] changed size at index 0.
  compiles=$(grep -c '"compilation_metrics"' "${logs[0]}" || true)
  reasons=$(grep -c '"name": "recompile_reasons"' "${logs[0]}" || true)
  sizes=$(grep -c "tensor 'L\['x'\]' size mismatch at index 0" "${logs[0]}" || true)
  [[ $compiles -eq 4 && $reasons -eq 3 && $sizes -eq 6 ]] || {
    echo "run_traces.sh: $mode: expected 4 compiles, 3 recompile_reasons, 6 size-mismatch lines;" \
         "found $compiles, $reasons, $sizes" >&2; exit 1; }
  # And compile_lens's own records: one iteration per call, one divergence check, the scene's source.
  iterations=$(grep -c '"name": "compile_lens_iteration"' "${logs[0]}" || true)
  checks=$(grep -c '"name": "compile_lens_divergence"' "${logs[0]}" || true)
  sources=$(grep -c '"name": "compile_lens_source"' "${logs[0]}" || true)
  [[ $iterations -eq 4 && $checks -eq 1 && $sources -eq 1 ]] || {
    echo "run_traces.sh: $mode: expected 4 compile_lens_iteration, 1 compile_lens_divergence, 1 compile_lens_source;" \
         "found $iterations, $checks, $sources" >&2; exit 1; }
  install -m 0644 "${logs[0]}" "$here/traces/$mode.log"
  install -m 0644 "$tmp/out/$mode.json" "$here/traces/$mode.result.json"
  echo "run_traces.sh: wrote traces/$mode.log ($(wc -l <"$here/traces/$mode.log") lines) and traces/$mode.result.json" >&2
done
