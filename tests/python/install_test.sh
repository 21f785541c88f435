#!/usr/bin/env bash
# Installs the capture package as its pyproject.toml says (a venv on Debian's python3, offline,
# Debian's setuptools and wheel, protoc run by setup.py) and runs package_test.py against it.
# Builds from a copy of client/python and proto/: setuptools builds in the folder it is given.
# Usage: install_test.sh REPO CL_CLIENT
set -euo pipefail
repo=$(cd "$1" && pwd)
client=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cl-pyinstall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/client"
cp -r "$repo/client/python" "$tmp/src/client/python"
cp -r "$repo/proto" "$tmp/src/proto"
rm -rf "$tmp/src/client/python/build" "$tmp/src/client/python"/*.egg-info
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-build-isolation --no-index "$tmp/src/client/python"
site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
cd "$tmp"  # away from any source folder: the import must find the installed package
env -u PYTHONPATH CL_PACKAGE_ROOT="$site" CL_CLIENT="$client" \
  "$tmp/venv/bin/python" "$here/package_test.py" -v
