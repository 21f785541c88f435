#!/usr/bin/env bash
# The suite again, built by clang-14 under AddressSanitizer + UndefinedBehaviorSanitizer (and
# -Wthread-safety, which checks every absl::Mutex use against its annotations), into build-san/;
# the same tree holds the libFuzzer targets, whose short runs are tests there (label `fuzz`).
# scripts/test.sh runs it after the release suite; run it alone after scripts/setup.sh.
# `scripts/sanitize.sh build` configures and builds the tree, and runs nothing.
#
# Left out here, and run by the release suite only: the tests whose subject is not our C++
# (`python`: PyTorch in the sandbox and Debian's grpcio; `deploy`: Helm and the image's chroot;
# `chromium`: the browser that renders the report). Any sanitizer report fails the test that
# triggered it: errors abort, and LeakSanitizer fails a process that leaks at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build-san/build.ninja ]]; then
  # Shared gRPC and abseil here: the archives (CL_STATIC_DEPS) only save the release binaries'
  # start-up, which nothing measures under the sanitizers.
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" -DCL_SANITIZE=ON -DCL_FUZZ=ON \
    -DCL_STATIC_DEPS=OFF
fi
ninja -C build-san
if [[ "${1:-}" == build ]]; then
  exit 0
fi
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0
cd build-san
ctest --output-on-failure -j "$(nproc)" --timeout 900 -LE 'python|deploy|chromium'
