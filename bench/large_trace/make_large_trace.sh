#!/usr/bin/env bash
# Makes the large real TORCH_TRACE log for the importer's throughput benchmark: runs the deep
# scene (deep_scene.py, next to this script) under TORCH_TRACE in the torch sandbox (PyTorch 2.6,
# CPU) and leaves, in OUT_DIR (default /var/tmp/compile-lens-bench; never inside the repository,
# the log is about 74 MB):
#
#   large.log          the TORCH_TRACE log torch wrote (dedicated_log_torch_trace_*.log)
#   large.log.gz       the same, gzip -6
#   large.result.json  what the scene measured: torch version, seconds, max_abs_diff per call
#
# The scene is staged as $tmp/bench/large_trace/deep_scene.py and run with $tmp as the sandbox's
# project folder, so the trace names it /mnt/project/bench/large_trace/deep_scene.py, its path in
# the repository. As for the hero traces (examples/hero/run_traces.sh), the run gets a cold
# Inductor cache of its own: a warm FX graph cache would drop the post-grad graphs and the output
# code from the log.
#
# Needs root (the sandbox is a chroot) and a sandbox that is set up (`scripts/torch-sandbox setup`).
# About 8 minutes on 2 cores, most of it g++ building the Inductor kernels. The log is checked
# (24 compiles, 21 recompiles, at least 50 MB) before it replaces the previous one.
# Environment: TORCH_SANDBOX (default: the repository's scripts/torch-sandbox); TORCH_SANDBOX_ROOT
# is passed through; TMPDIR (where the run is staged; it needs about 200 MB).
# Usage: make_large_trace.sh [OUT_DIR]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sandbox_script=make_large_trace.sh
source "$here/../../scripts/lib/sandbox_trace.sh"
sandbox_init "$here/../.."
[[ $# -le 1 ]] || { echo "usage: make_large_trace.sh [OUT_DIR]" >&2; exit 2; }

out_dir=${1:-/var/tmp/compile-lens-bench}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/large-trace.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bench/large_trace"
cp "$here/deep_scene.py" "$tmp/bench/large_trace/deep_scene.py"

echo "make_large_trace.sh: running the deep scene (about 8 minutes)" >&2
start=$SECONDS
sandbox_trace "$tmp" large python3 bench/large_trace/deep_scene.py out/large.result.json
seconds=$((SECONDS - start))
log=$trace_log

# What the log must show whatever the depth (README.md): 8 calls of 3 frames each (forward and
# the two frames that resume after its graph breaks), each call a new compile of all three,
# so 24 compiles and 21 recompiles; and at least 50 MB.
compiles=$(grep -c '"compilation_metrics"' "$log" || true)
reasons=$(grep -c '"name": "recompile_reasons"' "$log" || true)
bytes=$(stat -c %s "$log")
[[ $compiles -eq 24 && $reasons -eq 21 ]] || {
  echo "make_large_trace.sh: expected 24 compiles and 21 recompile_reasons; found $compiles, $reasons" >&2; exit 1; }
((bytes >= 50 * 1000 * 1000)) || {
  echo "make_large_trace.sh: the log is $bytes bytes; the benchmark needs at least 50 MB" >&2; exit 1; }

install -m 0644 "$log" "$out_dir/large.log.tmp"
install -m 0644 "$tmp/out/large.result.json" "$out_dir/large.result.json"
gzip -6 -c "$out_dir/large.log.tmp" >"$out_dir/large.log.gz.tmp"
mv -f "$out_dir/large.log.tmp" "$out_dir/large.log"
mv -f "$out_dir/large.log.gz.tmp" "$out_dir/large.log.gz"

gz_bytes=$(stat -c %s "$out_dir/large.log.gz")
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
echo "make_large_trace.sh: the run took ${seconds} s" >&2
echo "make_large_trace.sh: $out_dir/large.log: $bytes bytes ($(mb "$bytes")), $(wc -l <"$out_dir/large.log") lines" >&2
echo "make_large_trace.sh: $out_dir/large.log.gz: $gz_bytes bytes ($(mb "$gz_bytes"))" >&2
