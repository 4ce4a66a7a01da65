#!/usr/bin/env bash
# Entry point of the drfidelity image; runs in the root of a checkout mounted at /work.
#
#   verify (default)     `make verify` (tools/verify.py ARGS): a fresh clone of HEAD in a scratch
#                        folder -> the previous release's imports (toorPIA's maps, published
#                        tables) -> dvc repro -> one row per committed output, identical or not
#                        and why; exits 0 only when every output came back byte for byte
#                        (`reproduce` is the same command)
#   kick-the-tires ARGS  tools/kick-the-tires.sh ARGS (small parameters, a few minutes)
#   bash ARGS            a shell in the image
#   help                 this text
#   [dvc] ARGS           anything else goes to dvc, e.g. `exp run -S data.snr=4`
set -euo pipefail

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
    check_code_source
}

verify() {
    require_checkout
    local changed
    # The verdict is about the commit: say so when the working tree differs from it.
    changed="$(git status --porcelain --untracked-files=no)"
    if [[ -n "$changed" ]]; then
        say "warning: verifying commit $(git rev-parse --short HEAD); these uncommitted changes are not part of it: ${changed//$'\n'/ }"
    fi
    exec python tools/verify.py "$@"
}

command="${1:-verify}"
if (( $# )); then shift; fi
case "$command" in
    verify | reproduce)
        verify "$@"
        ;;
    kick-the-tires)
        require_checkout
        exec bash tools/kick-the-tires.sh "$@"
        ;;
    bash)
        exec bash "$@"
        ;;
    help | -h | --help)
        usage
        ;;
    *)
        # `dvc ARGS` and plain `ARGS` both mean dvc ARGS.
        [[ "$command" == dvc ]] || set -- "$command" "$@"
        if [[ -f dvc.yaml ]]; then check_code_source; fi
        exec dvc "$@"
        ;;
esac
