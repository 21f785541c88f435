#!/usr/bin/env bash
# A model's compile-health check for any CI system: run the smoke test under cl-client run, gate it
# against the committed base capture, leave SARIF and a Markdown summary beside the report.
#
#   examples/ci/compile-health.sh [SMOKE_TEST_COMMAND...]     (default: python smoke_test.py)
#
# Exit code: the smoke test's own, or 5 when a gate failed (cl-client run's contract).
# Environment: CL_CLIENT (default cl-client on PATH), CL_BASE (default ci/compile-base.cls.json),
# CL_GATES (default ci/gates.toml), CL_OUT (default compile-lens-out).
# To refresh the base after an intended change: cl-client import-trace "$CL_OUT/trace" -o "$CL_BASE"
set -euo pipefail
client=${CL_CLIENT:-cl-client}
base=${CL_BASE:-ci/compile-base.cls.json}
gates=${CL_GATES:-ci/gates.toml}
out=${CL_OUT:-compile-lens-out}
if [[ $# -eq 0 ]]; then set -- python smoke_test.py; fi

flags=(--out "$out" --sarif "$out/compile-lens.sarif" --markdown "$out/summary.md"
       --html-dir "$out/site")
if [[ -f $base ]]; then
  flags+=(--base "$base")
else
  echo "compile-health: no base capture at $base: gating on absolute limits only" >&2
fi
if [[ -f $gates ]]; then
  flags+=(--gates "$gates")
else
  flags+=(--fail-on failures)
fi
rm -rf "$out"
status=0
"$client" run "${flags[@]}" -- "$@" || status=$?
# GitHub Actions shows this on the run's page; elsewhere it is a file beside the report.
if [[ -n ${GITHUB_STEP_SUMMARY:-} && -f $out/summary.md ]]; then
  cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
exit "$status"
