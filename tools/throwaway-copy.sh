#!/usr/bin/env bash
# A throwaway copy of this checkout for a pipeline run that must leave it untouched: the tracked
# files, the imports if present (toorPIA's maps and the previous release's tables, which the
# embed and compare stages read; a later release's below releases/, which release_diff reads),
# committed in a fresh git repository (`dvc exp run` needs
# a commit). With --share-cache the copy reads and writes this checkout's DVC cache (copies,
# never links, so a stage cannot write through into it): stages whose inputs did not change
# are then up to date, as in this checkout.
#
# Usage: tools/throwaway-copy.sh [--share-cache] WORKDIR
set -euo pipefail
share=false
if [[ "${1:-}" == "--share-cache" ]]; then share=true; shift; fi
if [[ $# -ne 1 ]]; then
    echo "usage: tools/throwaway-copy.sh [--share-cache] WORKDIR" >&2
    exit 2
fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$1"
mkdir -p "$work"
git -C "$repo" ls-files -z | (cd "$repo" && tar --null -T - -cf -) | (cd "$work" && tar -xf -)
for imported in external_embeddings reference/v1.3.0 releases; do
    if [[ -d "$repo/$imported" ]]; then cp -r "$repo/$imported/." "$work/$imported/"; fi
done
if $share; then
    cache="$(cd "$repo" && dvc cache dir)"
    (cd "$work" && dvc config --local cache.dir "$cache" && dvc config --local cache.type copy)
fi
cd "$work"
git init -q
git add -A
git -c user.name=throwaway -c user.email=throwaway@localhost commit -q \
    -m "throwaway copy of $repo"
