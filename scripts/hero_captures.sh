#!/usr/bin/env bash
# Regenerates examples/hero/{base,head}.cls.json from the real traces in examples/hero/traces/
# with the TORCH_TRACE importer, adding the session facts a log does not record.
# tests/capture/torch_trace/hero_capture_sync_test.cc checks the committed captures equal this output.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh cl-client
for variant in base head; do
  build/client/cl-client import-trace "examples/hero/traces/$variant.log" -o "examples/hero/$variant.cls.json" \
    --project-root /mnt/project --path-map "/mnt/project/examples=$(pwd)/examples/hero" \
    --gpu A100-SXM-80GB --torch-version 2.6.0+debian --host torch-sandbox \
    --label "cluster=dev,model=hero-scene,variant=$variant,device=cpu"
done
