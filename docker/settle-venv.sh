#!/usr/bin/env bash
# Finish the image's venv inside the layer that installed it (a later layer that deletes or
# touches these files would add bytes, not remove them):
# - remove what the artifact never runs: the installed packages' own test suites (directories
#   named tests/ or test/ inside a package: about 260 MB, torch's C++ test binaries alone
#   83 MB) and torch's headers for building extensions (62 MB). Package metadata stays as installed, so the package set and versions still equal the
#   lock; tools/image-check.sh runs the project's tests, verify-main and kick-the-tires on it;
# - with SOURCE_DATE_EPOCH, set every file's modification time to it: the layer's bytes then do
#   not depend on when the build ran, and numba's cache (keyed on source modification times,
#   docker/warm-caches.sh) sees the times that a timestamp-clamping build stores.
#
# Usage: docker/settle-venv.sh VENV
set -euo pipefail
venv="${1:?usage: $0 VENV}"
site="$(echo "$venv"/lib/python3.*/site-packages)"
[[ -d "$site" ]] || { echo "settle-venv: no site-packages under $venv" >&2; exit 2; }
before="$(du -sm "$site" | cut -f1)"
# Only package directories (not .dist-info, whose licenses tree has folders named test/), and
# only the top of each test tree.
find "$site" -mindepth 2 -type d \( -name tests -o -name test \) -not -path '*.dist-info/*' \
    -prune -exec rm -rf {} +
# torch's C and C++ headers (62 MB) serve only compiling extensions, which nothing here does.
rm -rf "$site/torch/include"
echo "settle-venv: site-packages $before MB -> $(du -sm "$site" | cut -f1) MB without test suites and headers"
if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
    find "$venv" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
fi
