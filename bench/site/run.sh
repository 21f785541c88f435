#!/usr/bin/env bash
# Times the HTML site (cl-client analyze LOG --html-dir) against tlparse's default output on the
# same log: wall time, peak RSS (GNU time) and the size of what each wrote. Figures: README.md here.
# Usage: run.sh LOG [TLPARSE]   (TLPARSE: a tlparse binary; default: none, compile-lens only)
# Output goes under ${TMPDIR:-/var/tmp}/compile-lens-site-bench, never inside the repository.
set -euo pipefail
[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: run.sh LOG [TLPARSE]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
client="$here/../../build/client/cl-client"
out="${TMPDIR:-/var/tmp}/compile-lens-site-bench"
rm -rf "$out" && mkdir -p "$out"
measure() {  # NAME CMD...
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$out/$name.time" "$@" >/dev/null 2>"$out/$name.err"
  read -r secs kb <"$out/$name.time"
  printf '%-22s %7.2f s  %6d MiB peak RSS  %s written\n' "$name" "$secs" $((kb / 1024)) \
    "$(du -sh "$out/$name" 2>/dev/null | cut -f1)"
}
measure site "$client" analyze "$1" --html-dir "$out/site" --quiet
mkdir -p "$out/report" && measure report "$client" analyze "$1" --html "$out/report/r.html" --quiet
if [[ $# -eq 2 ]]; then
  measure tlparse "$2" "$1" -o "$out/tlparse" --no-browser --overwrite
fi
