#!/usr/bin/env bash
# Build the drfidelity image from docker/Dockerfile with the engine at hand (`make image`).
#
# Usage: tools/image.sh [--no-cache] [TAG]     (default TAG: drfidelity:local)
#   --no-cache   rebuild every layer of docker/Dockerfile (the base stays cached)
#
# Engine: `docker` when its daemon answers, else podman through tools/podman/docker (installed
# with apt-get when missing and this runs as root on Debian, as CI does). Base: the Dockerfile's
# pinned official image when the engine has it or can pull it; otherwise a stand-in built from
# Debian's packages (docker/stand-in-base.Dockerfile on a debootstrap minbase bookworm tree),
# cached as an image so that the next build reuses it. The last line names engine, base and tag.
#
# SOURCE_DATE_EPOCH (default: the commit time of HEAD) is passed to the build, and podman
# also stores it as every layer file's time (--timestamp): two builds of one commit on one base
# give the same layers (docker/README.md, "Reproducible bytes").
#
# Machine-specific inputs of a podman build only (bind mounts and a pip.conf, not in any layer;
# tools/setup-env.sh hands pip's configuration to uv): the CA bundle that verifies PyPI's
# certificate (DRFIDELITY_BUILD_CA, default the host's bundle) and a directory holding the
# torch+cpu wheel when PyTorch's index is unreachable (DRFIDELITY_BUILD_WHEELS, default
# /opt/wheels when it exists), from which torch is then taken instead of that index; the
# lock's hashes check both.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
no_cache=()
if [[ "${1:-}" == --no-cache ]]; then no_cache=(--no-cache); shift; fi
tag="${1:-drfidelity:local}"
dockerfile="$repo/docker/Dockerfile"
stand_in_file="$repo/docker/stand-in-base.Dockerfile"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct)}"

say() { printf 'image: %s\n' "$*"; }
die() { printf 'image: error: %s\n' "$*" >&2; exit 1; }

# --- the engine -----------------------------------------------------------------------------
if command -v docker >/dev/null && docker info >/dev/null 2>&1 \
        && ! docker --version 2>/dev/null | grep -qi podman; then
    engine=(docker) kind=docker
else
    if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
        [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null \
            || die "no working docker and no podman+runc; install one (Debian: apt-get install podman runc)"
        say "no working docker engine: installing podman, runc (apt-get)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            podman runc >/dev/null
    fi
    engine=("$repo/tools/podman/docker") kind=podman
fi

has_image() { "${engine[@]}" image inspect "$1" >/dev/null 2>&1; }

# --- the base -------------------------------------------------------------------------------
official="$(sed -n 's/^ARG BASE=//p' "$dockerfile")"
[[ -n "$official" ]] || die "no 'ARG BASE=' default in $dockerfile"
build_args=(--build-arg "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH")

build_stand_in() {
    # The tag carries a hash of the recipe, so a changed recipe is rebuilt, not reused.
    local recipe rootfs mirror tree
    recipe="$(sha256sum "$stand_in_file" | cut -c1-12)"
    stand_in="localhost/drfidelity-stand-in-base:bookworm-python3.11-$recipe"
    rootfs="localhost/drfidelity-debootstrap:bookworm-minbase"
    if has_image "$stand_in"; then
        say "stand-in base $stand_in is cached"
        return
    fi
    if ! has_image "$rootfs"; then
        [[ "$(id -u)" == 0 ]] || die "debootstrap needs root to build the stand-in base"
        if ! command -v debootstrap >/dev/null; then
            say "installing debootstrap (apt-get)"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                debootstrap >/dev/null
        fi
        mirror="$(awk '$1 == "URIs:" && $2 !~ /security/ { print $2; exit }' \
            /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
        mirror="${mirror:-http://deb.debian.org/debian}"
        tree="$(mktemp -d -t drfidelity-rootfs.XXXXXX)"
        say "debootstrap --variant=minbase bookworm from $mirror"
        debootstrap --variant=minbase bookworm "$tree" "$mirror" >"$tree.log" 2>&1 \
            || { tail -5 "$tree.log" >&2; die "debootstrap failed (log: $tree.log)"; }
        # debootstrap keeps the packages it downloaded; a later layer could not remove their bytes.
        rm -f "$tree"/var/cache/apt/archives/*.deb
        tar -C "$tree" -c . | "${engine[@]}" import - "$rootfs" >/dev/null 2>&1
        rm -rf "$tree" "$tree.log"
    fi
    say "building the stand-in base $stand_in from $rootfs"
    "${engine[@]}" build --quiet --network host --build-arg "ROOTFS=$rootfs" \
        -f "$stand_in_file" -t "$stand_in" "$repo/docker" >/dev/null
}

if has_image "$official" || "${engine[@]}" pull --quiet "$official" >/dev/null 2>&1; then
    base="the pinned official base $official"
else
    build_stand_in
    base="the stand-in base $stand_in (the pinned $official cannot be pulled here)"
    build_args+=(--build-arg "BASE=$stand_in")
fi

# --- the build ------------------------------------------------------------------------------
extra=()
if [[ "$kind" == podman ]]; then
    extra+=(--timestamp "$SOURCE_DATE_EPOCH" --network host)
    ca="${DRFIDELITY_BUILD_CA:-${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}}"
    wheels="${DRFIDELITY_BUILD_WHEELS:-/opt/wheels}"
    conf_dir="$(mktemp -d -t drfidelity-pip.XXXXXX)"
    trap 'rm -rf "$conf_dir"' EXIT
    : > "$conf_dir/pip.conf"
    if [[ -f "$ca" ]]; then
        printf '[global]\ncert = /run/drfidelity-build/ca.crt\n' >> "$conf_dir/pip.conf"
        extra+=(-v "$ca:/run/drfidelity-build/ca.crt:ro")
    fi
    if compgen -G "$wheels/torch-*+cpu-*.whl" >/dev/null; then
        grep -q '^\[global\]' "$conf_dir/pip.conf" || printf '[global]\n' >> "$conf_dir/pip.conf"
        printf 'find-links = /run/drfidelity-build/wheels\n' >> "$conf_dir/pip.conf"
        extra+=(-v "$wheels:/run/drfidelity-build/wheels:ro")
    fi
    extra+=(-v "$conf_dir/pip.conf:/etc/pip.conf:ro")
fi

say "building $tag with $kind on $base (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
start=$SECONDS
"${engine[@]}" build "${no_cache[@]}" "${extra[@]}" "${build_args[@]}" -f "$dockerfile" -t "$tag" "$repo"
say "built $tag with $kind in $((SECONDS - start)) s on $base; $("${engine[@]}" image inspect --format '{{.Size}}' "$tag" | awk '{ printf "%.2f GB", $1 / 1e9 }')"
