#!/usr/bin/env bash
# Entry point of the drfidelity image; runs in the root of a checkout mounted at /work.
#
#   verify [ARGS]        (default) `make verify` (tools/verify.py ARGS): a fresh clone of HEAD in
#                        a scratch folder -> the previous release's imports -> dvc repro -> one
#                        row per committed output, identical or not and why; exits 0 only when
#                        every output came back byte for byte (`reproduce` is the same word)
#   verify-main [ARGS]   `make verify-main`: the same for the main benchmark's stages only
#                        (tools/verify.py --targets aggregate figures ARGS), minutes, not an hour
#   kick-the-tires [DIR] tools/kick-the-tires.sh: the whole pipeline on small parameters in a
#                        throwaway copy (DIR: keep it there; mount a folder you own)
#   imports              restore the previous release's imports (toorPIA's maps, published
#                        tables) into the checkout: tools/imports.py, one line on what is missing
#   dvc ARGS             dvc, e.g. `dvc exp run -S data.snr=4`, `dvc exp show`
#   python ARGS          the image's Python, e.g. `python -m pytest tests -q`
#   shell | bash [ARGS]  a shell in the image
#   help                 this text
#
# verify, verify-main, kick-the-tires and imports first copy the DVC objects of a folder mounted
# at /imports (or $DRFIDELITY_IMPORTS), e.g. another checkout's .dvc/cache, into the checkout's
# DVC cache: the imports are then restored without network. Without it, DVC clones the previous
# release's public repository (network needed). Any other first word is an error.
set -euo pipefail

WORDS="verify, reproduce, verify-main, kick-the-tires, imports, dvc, python, shell, bash, help"

say() { printf '[drfidelity] %s\n' "$*"; }
die() { printf '[drfidelity] error: %s\n' "$*" >&2; exit 2; }

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

# The image's editable install points at /work/src; make sure that is this checkout's code,
# not a leftover copy, so that what runs is exactly what git shows.
check_code_source() {
    local imported
    imported="$(python -c 'import drfidelity, pathlib; print(pathlib.Path(drfidelity.__file__).resolve().parents[1])')" \
        || die "cannot import drfidelity from $PWD/src"
    [[ "$imported" == "$(pwd -P)/src" ]] \
        || die "drfidelity is imported from $imported, not from this checkout's $(pwd -P)/src; mount the checkout at /work: -v \"\$PWD\":/work -w /work"
}

require_checkout() {
    [[ -f dvc.yaml && -e .git ]] \
        || die "$PWD is not a drfidelity checkout (no dvc.yaml or .git); mount one: -v \"\$PWD\":/work -w /work"
    # A git worktree's or submodule's .git is a file naming a folder outside the mount.
    [[ -d .git || -d "$(sed -n 's/^gitdir: //p' .git)" ]] \
        || die "git cannot read the repository of $PWD (a git worktree's or submodule's .git points outside the mount); mount a plain clone"
    [[ -w . ]] \
        || die "uid $(id -u) cannot write to the checkout $PWD; run as its owner: --user \"\$(id -u):\$(id -g)\""
    check_code_source
}

# Copy the DVC objects of the mounted folder into the checkout's cache (never overwriting).
seed_cache() {
    local from="${DRFIDELITY_IMPORTS:-/imports}" cache
    [[ -e "$from" ]] || return 0
    [[ -d "$from/files/md5" ]] \
        || die "$from holds no DVC objects (files/md5/...): mount a DVC cache or remote folder there"
    cache="$(dvc cache dir)"
    mkdir -p "$cache"
    cp -R -n "$from/files" "$cache/"
    say "imports: DVC objects of $from copied into $cache"
}

verify() {
    require_checkout
    seed_cache
    local changed
    # The verdict is about the commit: say so when the working tree differs from it (but for the
    # run times that every rebuild records, src/drfidelity/jobs/times.py).
    changed="$(git status --porcelain --untracked-files=no -- . ':(exclude)benchmarks/times')"
    if [[ -n "$changed" ]]; then
        say "warning: verifying commit $(git rev-parse --short HEAD); these uncommitted changes are not part of it: ${changed//$'\n'/ }"
    fi
    exec python tools/verify.py "$@"
}

# tools/imports.py prints a line on the imports (and, when they are all there, one on the maps
# restored from the map store); on a miss, say how to restore them without network.
restore_imports() {
    seed_cache
    python tools/imports.py && return 0
    say "to restore the imports without network, mount a folder of their DVC objects: -v DIR:/imports:ro"
    return 1
}

command="${1:-verify}"
if (( $# )); then shift; fi
case "$command" in
    verify | reproduce)
        verify "$@"
        ;;
    verify-main)
        verify --targets aggregate figures "$@"
        ;;
    kick-the-tires)
        require_checkout
        restore_imports || true
        exec bash tools/kick-the-tires.sh "$@"
        ;;
    imports)
        require_checkout
        restore_imports
        ;;
    dvc)
        if [[ -f dvc.yaml ]]; then check_code_source; fi
        exec dvc "$@"
        ;;
    python)
        exec python "$@"
        ;;
    shell | bash)
        exec bash "$@"
        ;;
    help | -h | --help)
        usage
        ;;
    *)
        die "unknown command '$command'; the commands are: $WORDS (docker run IMAGE help)"
        ;;
esac
