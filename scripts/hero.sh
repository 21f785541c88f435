#!/usr/bin/env bash
# The main job: set up, build, and analyze the hero session (head vs base) in-process. Prints the
# terminal summary and writes hero.html and hero.report.json in the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh cl-client cl-server
build/client/cl-client analyze examples/hero/head.cls.json --base examples/hero/base.cls.json \
  --html hero.html --json hero.report.json
