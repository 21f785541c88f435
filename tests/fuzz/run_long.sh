#!/usr/bin/env bash
# Long fuzz runs, one target at a time (nice'd), each until 1,000,000 executions or SECONDS:
#   tests/fuzz/run_long.sh [TARGET...] [-t SECONDS] [-b BUILD_DIR]
# Defaults: every target, -t 3600, -b build-fuzz. Seeds come from BUILD_DIR/corpora (made by
# make_corpora.sh when missing) and are copied to BUILD_DIR/fuzz-long/corpus/<target>, which the
# runs grow and later runs reuse. Each run's log and any crashing input go to BUILD_DIR/fuzz-long/;
# one summary line per target is appended to BUILD_DIR/fuzz-long/results.txt:
#   date target execs exec/s cov ft corpus peak_rss_mb seconds crashes [artifact]
# FUZZ_EXTRA_FLAGS adds libFuzzer flags to every run (e.g. FUZZ_EXTRA_FLAGS=-max_len=4096: smaller
# inputs, more executions, for the slow targets); they go into the log and the summary line.
# Exit status: 1 when any target crashed, leaked or timed out.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/fuzz_env.sh"
repo=$(cd "$FUZZ_DIR/../.." && pwd)

seconds=3600
build=$repo/build-fuzz
targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    -t) seconds=$2; shift 2 ;;
    -b) build=$(cd "$2" && pwd); shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(capture_json_fuzz capture_pb_fuzz capture_stream_fuzz fx_graph_fuzz torch_trace_fuzz
           torch_trace_tokenizer_fuzz guard_tree_fuzz lens_records_fuzz recompile_reason_fuzz
           correctness_db_fuzz lint_fuzz)
fi

long=$build/fuzz-long
mkdir -p "$long/corpus" "$long/artifacts"
[[ -d $build/corpora ]] || FUZZ_SEEDS=$build/tests/fuzz/fuzz_seeds "$FUZZ_DIR/make_corpora.sh" "$build/corpora"
results=$long/results.txt
[[ -f $results ]] || echo "# date target execs exec/s cov ft corpus peak_rss_mb seconds crashes [artifact]" > "$results"

failed=0
for t in "${targets[@]}"; do
  binary=$build/tests/fuzz/$t
  if [[ ! -x $binary ]]; then echo "run_long.sh: no $binary" >&2; failed=1; continue; fi
  corpus=$long/corpus/$t
  mkdir -p "$corpus"
  [[ -d $build/corpora/$t ]] && cp -rn "$build/corpora/$t"/. "$corpus/"
  log=$long/$t.log
  # Crashes are only those of this run.
  rm -f "$long/artifacts/$t-"*
  echo "== $t: up to 1000000 runs or ${seconds} s ${FUZZ_EXTRA_FLAGS:-}, from $(ls "$corpus" | wc -l) inputs (log: $log)"
  start=$(date +%s)
  # shellcheck disable=SC2046
  nice "$binary" "${FUZZ_FLAGS[@]}" $(fuzz_dict_flag "$t") -runs=1000000 -max_total_time="$seconds" \
    ${FUZZ_EXTRA_FLAGS:-} \
    -artifact_prefix="$long/artifacts/$t-" "$corpus" >"$log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  stat() { grep -o "stat::$1: *[0-9]*" "$log" | tail -1 | grep -o '[0-9]*$'; }
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*')
  ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*')
  corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' <<<"$last" | cut -d' ' -f2)
  crashes=$(ls "$long/artifacts/$t-"* 2>/dev/null | wc -l)
  artifact=$(ls "$long/artifacts/$t-"* 2>/dev/null | head -1)
  line="$(date -u +%Y-%m-%dT%H:%MZ) $t $(stat number_of_executed_units) $(stat average_exec_per_sec) ${cov:-?} ${ft:-?} ${corp:-?} $(stat peak_rss_mb) $elapsed $crashes ${artifact}${FUZZ_EXTRA_FLAGS:+ [$FUZZ_EXTRA_FLAGS]}"
  echo "$line" | tee -a "$results"
  if [[ $rc -ne 0 || $crashes -ne 0 ]]; then failed=1; fi
done
exit $failed
