#!/usr/bin/env bash
# Configures (once) and builds compile-lens into build/ (Release). Extra arguments are ninja targets.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
ninja -C build "$@"
