#!/usr/bin/env bash
# cl-client run around a real torch.compile script: the health scene's base (a KV-cache decoder
# with one graph break) runs in the torch sandbox through a `python3` wrapper that maps run's
# TORCH_TRACE into the sandbox's mount, so the trace lands where run expects; under a gate the
# break fails, run exits 5 with the gate's line, and its report holds the break. (One torch run:
# exit codes passed through are the C++ tests' subject, tests/e2e/ci_e2e_test.cc.)
# Usage: run_under_client_test.sh CL_CLIENT
set -euo pipefail
client=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
sandbox=${TORCH_SANDBOX:-$repo/scripts/torch-sandbox}
[[ -x $sandbox ]] || { echo "run_under_client_test.sh: torch-sandbox not found at $sandbox" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cl-run-sandbox.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$repo"/tests/fixtures/torch_trace/torch-2.6/scenes/{health.py,common.py} "$work/"
# The sandbox's interpreter: the project folder is /mnt/project inside, so TORCH_TRACE is moved
# there.
mkdir -p "$work/bin"
cat >"$work/bin/python3" <<WRAP
#!/usr/bin/env bash
export TORCH_TRACE=/mnt/project/\${TORCH_TRACE#$work/}
exec "$sandbox" run -C "$work" -- sh -c 'rm -rf /tmp/torchinductor_root && exec python3 -B "\$@"' sh "\$@"
WRAP
chmod +x "$work/bin/python3"
cd "$work"

set +e
PATH=$work/bin:$PATH "$client" run --out "$work/gated" --max-graph-breaks 0 --quiet -- \
  python3 health.py base result.json 2>"$work/gated.err"
code=$?
set -e
if [[ $code -ne 5 ]]; then
  echo "run_under_client_test.sh: expected exit 5 from the gate, got $code" >&2
  cat "$work/gated.err" >&2
  exit 1
fi
grep -q 'gate failed: graph breaks 1 > 0 (--max-graph-breaks 0)' "$work/gated.err"
/usr/bin/python3 - "$work/gated/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
rows = {m["name"]: m for m in report["health"]["metrics"]}
assert rows["graph_breaks"]["head"] == 1, rows["graph_breaks"]
breaks = report["recompile"]["graph_breaks"]
assert breaks and breaks[0]["reason"] == "Tensor.item", breaks
assert breaks[0]["location"]["file"].endswith("health.py"), breaks
print("run: 1 graph break,", breaks[0]["location"])
PY
echo "run_under_client_test.sh: ok"
