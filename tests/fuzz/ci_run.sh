#!/usr/bin/env bash
# The short CI run of one fuzz target (ctest -L fuzz runs it for each):
#   ci_run.sh BINARY CORPUS_DIR [ARTIFACT_DIR]
# First replays every input in tests/fuzz/regressions/<target>/ (each once), then fuzzes for 15 s
# from a copy of CORPUS_DIR, so that the run never grows the seeds. The mutations start from a
# fixed seed (CL_FUZZ_SEED, default 1; 0 draws one) so that a CI failure can be replayed and a
# change does not fail on a finding that has nothing to do with it: the long runs
# (run_long.sh) are where new bugs are hunted, at random seeds. Fails on any crash, leak,
# timeout (-timeout=10) or memory blow-up (-rss_limit_mb=2048); a crashing input is kept in
# ARTIFACT_DIR (default: a temporary directory, printed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/fuzz_env.sh"

binary=$1
corpus=$2
target=$(basename "$binary")
work=$(mktemp -d "${TMPDIR:-/tmp}/$target.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=${3:-$work/artifacts}
mkdir -p "$artifacts" "$work/corpus"

regressions="$FUZZ_DIR/regressions/$target"
if compgen -G "$regressions/*" >/dev/null; then
  echo "== $target: replaying $(ls "$regressions" | wc -l) regression inputs"
  "$binary" "${FUZZ_FLAGS[@]}" "$regressions"/*
fi

if [[ -d $corpus ]]; then cp -r "$corpus"/. "$work/corpus/"; fi
echo "== $target: fuzzing 15 s from $(ls "$work/corpus" | wc -l) seeds"
# shellcheck disable=SC2046
"$binary" "${FUZZ_FLAGS[@]}" $(fuzz_dict_flag "$target") -max_total_time=15 -seed="${CL_FUZZ_SEED:-1}" \
  -artifact_prefix="$artifacts/$target-" "$work/corpus"
