# Sourced by the scripts that make real TORCH_TRACE logs in the torch sandbox (the hero's, the
# fusion and IR-diff scenes', the large benchmark trace). The caller sets `sandbox_script` (its name,
# for messages) before sourcing.
#
#   sandbox_init REPO            finds the sandbox ($TORCH_SANDBOX, else REPO/scripts/torch-sandbox)
#                                into $sandbox; checks it is there and that we are root
#   sandbox_client REPO          finds cl-client ($CL_CLIENT, else REPO/build/client/cl-client)
#                                into $client, for the scripts that import what they traced
#   sandbox_trace DIR NAME CMD…  runs CMD in the sandbox with DIR as /mnt/project (its cwd), under
#                                TORCH_TRACE=DIR/out/trace_NAME with a cold Inductor cache (a warm FX
#                                graph cache would drop the post-grad graphs and output code from the
#                                trace), and sets $trace_log to the one log torch wrote

sandbox_init() {
  sandbox=${TORCH_SANDBOX:-$1/scripts/torch-sandbox}
  [[ -x $sandbox ]] || { echo "$sandbox_script: torch-sandbox not found at $sandbox (set TORCH_SANDBOX)" >&2; exit 2; }
  [[ $(id -u) -eq 0 ]] || { echo "$sandbox_script: the torch sandbox needs root" >&2; exit 2; }
}

sandbox_client() {
  client=${CL_CLIENT:-$1/build/client/cl-client}
  [[ -x $client ]] || { echo "$sandbox_script: cl-client not found at $client (set CL_CLIENT)" >&2; exit 2; }
}

sandbox_trace() {
  local dir=$1 name=$2
  shift 2
  rm -rf "$dir/out/trace_$name" "$dir/out/inductor_cache_$name"
  mkdir -p "$dir/out"
  TORCH_TRACE=/mnt/project/out/trace_$name \
    "$sandbox" run -C "$dir" -- env TORCHINDUCTOR_CACHE_DIR=/mnt/project/out/inductor_cache_$name "$@"
  # torch writes one dedicated_log_torch_trace_*.log per process; each scene is one process.
  local logs=("$dir/out/trace_$name"/dedicated_log_torch_trace_*.log)
  [[ ${#logs[@]} -eq 1 && -f ${logs[0]} ]] || {
    echo "$sandbox_script: expected exactly one trace log for $name, found: ${logs[*]}" >&2; exit 1; }
  trace_log=${logs[0]}
}
