#!/usr/bin/env bash
# Resolve the base image tag of docker/Dockerfile to its current digest and record it in the
# default of `ARG BASE` (what FROM uses). Needs a Docker engine and registry access (the digest shipped in the Dockerfile was
# taken from public Dockerfiles on a machine without either, so it is unverified until this ran).
#
# Usage: docker/resolve-base-digest.sh           pull the tag, write its digest into the Dockerfile
#        docker/resolve-base-digest.sh --check   exit 1 if the Dockerfile's digest is not current
#
# A tag moves when Debian or Python ship fixes; a new digest is a new environment, so rebuild
# and rerun the full reproduction before committing the change. The script also prints what the
# new base contains (Python version, git candidate for GIT_VERSION) to help review that change.
set -euo pipefail

dockerfile="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/Dockerfile"
mode="${1:-write}"
[[ "$mode" == write || "$mode" == --check ]] || { echo "usage: $0 [--check]" >&2; exit 2; }

from="$(sed -n 's/^ARG BASE=//p' "$dockerfile")"
[[ -n "$from" ]] || { echo "no 'ARG BASE=' default in $dockerfile" >&2; exit 1; }
tag="${from%@*}"                 # python:3.11-slim-bookworm
recorded="${from#"$tag"}"; recorded="${recorded#@}"
repo="${tag%:*}"

docker pull --quiet "$tag" >/dev/null
# RepoDigests holds the digest of what the registry serves for the tag (the multi-platform
# index), the value that pins every platform at once.
resolved="$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$tag" \
    | awk -v r="$repo@" 'index($0, r) == 1 || index($0, "docker.io/library/" r) == 1 { sub(/.*@/, ""); print; exit }')"
[[ "$resolved" == sha256:* ]] || { echo "could not resolve a digest for $tag" >&2; exit 1; }

echo "tag:      $tag"
echo "recorded: ${recorded:-(none)}"
echo "resolved: $resolved"
echo "created:  $(docker image inspect --format '{{.Created}}' "$tag@$resolved")"
echo "python:   $(docker run --rm --entrypoint python "$tag@$resolved" -c 'import platform; print(platform.python_version())')"
echo "git:      $(docker run --rm --user 0 --entrypoint sh "$tag@$resolved" -c \
    'apt-get update -qq >/dev/null && apt-cache policy git | awk "/Candidate/ {print \$2}"') (candidate for GIT_VERSION)"

if [[ "$resolved" == "$recorded" ]]; then
    echo "docker/Dockerfile already pins the current digest"
    exit 0
fi
if [[ "$mode" == --check ]]; then
    echo "docker/Dockerfile pins ${recorded:-no digest}; the tag now resolves to $resolved" >&2
    exit 1
fi
sed -i.bak "s|^ARG BASE=${from}\$|ARG BASE=${tag}@${resolved}|" "$dockerfile" && rm -f "$dockerfile.bak"
grep -q "^ARG BASE=${tag}@${resolved}\$" "$dockerfile" || { echo "failed to update $dockerfile" >&2; exit 1; }
echo "docker/Dockerfile now pins $tag@$resolved; rebuild, rerun the reproduction, then commit"
