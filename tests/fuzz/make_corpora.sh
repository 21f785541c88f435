#!/usr/bin/env bash
# Fills one seed directory per fuzz target from the fixtures:
#   tests/fuzz/make_corpora.sh [OUT_DIR]     (default: build-fuzz/corpora)
# Sources: the real TORCH_TRACE logs in tests/fixtures/torch_trace (inflated first where they are
# stored gzipped) and tests/fixtures/**/*.log, cut into runs of a few records (< 64 KiB each),
# plus the FX graphs, guard trees, recompile reasons and compile_lens records they carry and their
# captures; examples/hero/*.cls.json and tests/**/*.cls.json (shrunk, and as .cls.pb and as
# Analyze stream parts; not tests/fuzz/regressions, whose inputs are broken on purpose and are
# replayed as they are by the fuzz tests); lint/correctness.toml; the Python sources of examples/hero and
# tests/python/scenes. The seeds are cut by the fuzz_seeds tool ($FUZZ_SEEDS, default
# <OUT_DIR>/../tests/fuzz/fuzz_seeds). Nothing here is committed; rerunning replaces OUT_DIR.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/build-fuzz/corpora}
fixtures=$repo/tests/fixtures
seeds=${FUZZ_SEEDS:-$(dirname "$out")/tests/fuzz/fuzz_seeds}
if [[ ! -x $seeds ]]; then
  echo "make_corpora.sh: no fuzz_seeds tool at $seeds (build it: ninja -C build-fuzz fuzz_seeds, or set FUZZ_SEEDS)" >&2
  exit 1
fi

targets=(capture_json_fuzz capture_pb_fuzz capture_stream_fuzz fx_graph_fuzz torch_trace_fuzz
         torch_trace_tokenizer_fuzz guard_tree_fuzz lens_records_fuzz recompile_reason_fuzz
         correctness_db_fuzz lint_fuzz)
rm -rf "$out"
for t in "${targets[@]}"; do mkdir -p "$out/$t"; done

# A file name for a seed, from its path: "tlparse-corpus/tlparse/simple.log" → "tlparse-corpus_tlparse_simple.log".
name_of() { local n=${1#"$2"/}; echo "${n//\//_}"; }

# The real logs, each seed named after the log as torch wrote it (no .gz). The seed tool reads plain
# files, so a gzipped one is inflated first, under its own file name (which the capture quotes).
plain=$(mktemp -d "${TMPDIR:-/tmp}/cl-seeds.XXXXXX")
trap 'rm -rf "$plain"' EXIT
while IFS= read -r -d '' log; do
  written=${log%.gz}
  if [[ $log == *.gz ]]; then
    written=$plain/${written#"$fixtures/torch_trace/"}
    mkdir -p "$(dirname "$written")"
    gzip -dc "$log" >"$written"
  fi
  "$seeds" trace "$written" "$out" "$(name_of "${log%.gz}" "$fixtures/torch_trace")"
done < <(find "$fixtures/torch_trace" -type f \
  \( -name '*.log' -o -name '*.txt' -o -name '*.log.gz' -o -name '*.txt.gz' \) -size +0 -print0 | sort -z)
# The capture package's logs (tests/fixtures/python and any other folder but torch_trace).
while IFS= read -r -d '' log; do
  "$seeds" trace "$log" "$out" "$(name_of "$log" "$repo")"
done < <(find "$fixtures" -path "$fixtures/torch_trace" -prune -o -type f -name '*.log' -size +0 \
  -print0 | sort -z)

while IFS= read -r -d '' f; do
  "$seeds" capture "$f" "$out" "$(name_of "$f" "$repo")"
done < <(find "$repo/examples" "$repo/tests" -path "$repo/tests/fuzz/regressions" -prune -o \
  -name '*.cls.json' -print0 | sort -z)

# The text formats whole.
cp "$repo/lint/correctness.toml" "$out/correctness_db_fuzz/correctness.toml"
for f in "$repo"/examples/hero/*.py "$repo"/tests/python/scenes/*.py \
  "$fixtures"/torch_trace/torch-2.6/scenes/*.py; do
  [[ -f $f && $(stat -c %s "$f") -lt 65536 ]] && cp "$f" "$out/lint_fuzz/$(basename "$f")"
done
# Recompile reasons as torch words them when the logs do not carry them whole.
printf '%s' "0/0: tensor 'L['x']' size mismatch at index 0. expected 16, actual 32" > "$out/recompile_reason_fuzz/hand-size.txt"
printf '%s\n' "torch._dynamo hit config.recompile_limit (8)" "   function: 'forward' (/p/model.py:12)" \
  "   last reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9" \
  > "$out/recompile_reason_fuzz/hand-limit.txt"

# The inputs that once broke a target (non-finite numbers, str-table indirection, deep nesting,
# ...) are seeds too, as they are: mutations near them are where the next such input lies.
for t in "${targets[@]}"; do
  if compgen -G "$repo/tests/fuzz/regressions/$t/*" >/dev/null; then
    for f in "$repo/tests/fuzz/regressions/$t"/*; do cp "$f" "$out/$t/regression-$(basename "$f")"; done
  fi
done

# The str-table indirection whole but small (the regression input is cut at 64 KiB below): a
# 2 KiB file name that 200 frames name by index.
{
  hdr='V1202 11:00:00.000000 7 torch/_logging/structured.py:22] '
  printf '%s{"str": ["/%s.py", 0]}\n' "$hdr" "$(head -c 2048 /dev/zero | tr '\0' a)"
  for i in $(seq 0 199); do
    printf '%s{"dynamo_start": {"stack": [{"line": 1, "name": "f", "filename": 0}]}, "frame_id": %d, "frame_compile_id": 0, "attempt": 0}\n' "$hdr" "$i"
  done
} > "$out/torch_trace_fuzz/str-table-indirection.log"

# Small caps for the tokenizer target come from its first two bytes; 0 0 keeps production caps.
for f in "$out"/torch_trace_tokenizer_fuzz/*; do
  { printf '\0\0'; cat "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"
done
for f in $(ls "$out"/torch_trace_tokenizer_fuzz | head -20); do
  { printf '\x20\x10'; tail -c +3 "$out/torch_trace_tokenizer_fuzz/$f"; } > "$out/torch_trace_tokenizer_fuzz/small-caps-$f"
done

# Anything over 64 KiB is cut; libFuzzer mutates small seeds far faster.
find "$out" -type f -size +64k -exec truncate -s 64K {} +
for t in "${targets[@]}"; do
  printf '%-28s %5d seeds %8d KiB\n' "$t" "$(ls "$out/$t" | wc -l)" "$(du -sk "$out/$t" | cut -f1)"
done
