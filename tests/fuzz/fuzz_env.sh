# Sourced by ci_run.sh and run_long.sh: what every fuzz run shares.

FUZZ_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Every run fails on any crash, leak or slow input, under the same limits.
FUZZ_FLAGS=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)

# The dictionary a target's input format has (none for the binary formats).
fuzz_dict_for() {
  case "$1" in
    capture_json_fuzz | lens_records_fuzz) echo "$FUZZ_DIR/dict/cls_json.dict" ;;
    fx_graph_fuzz) echo "$FUZZ_DIR/dict/fx_graph.dict" ;;
    torch_trace_fuzz | torch_trace_tokenizer_fuzz) echo "$FUZZ_DIR/dict/torch_trace.dict" ;;
    guard_tree_fuzz) echo "$FUZZ_DIR/dict/guard_tree.dict" ;;
    recompile_reason_fuzz) echo "$FUZZ_DIR/dict/recompile_reason.dict" ;;
    correctness_db_fuzz) echo "$FUZZ_DIR/dict/toml.dict" ;;
    lint_fuzz) echo "$FUZZ_DIR/dict/python.dict" ;;
  esac
}

# -dict=FILE for the target, or nothing.
fuzz_dict_flag() {
  local dict
  dict=$(fuzz_dict_for "$1")
  if [[ -n $dict ]]; then echo "-dict=$dict"; fi
}
