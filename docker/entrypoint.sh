#!/usr/bin/env bash
# Entry point of the drfidelity image; runs in the root of a checkout mounted at /work.
#
#   reproduce (default)  dvc pull of toorPIA's maps (when a remote is configured) -> dvc repro -> dvc status ->
#                        git diff of the committed outputs; prints a verdict and exits 0 only
#                        when the regenerated outputs are byte-identical to the commit
#   kick-the-tires ARGS  tools/kick-the-tires.sh ARGS (small parameters, a few minutes)
#   bash ARGS            a shell in the image
#   help                 this text
#   [dvc] ARGS           anything else goes to dvc, e.g. `exp run -S data.snr=4`
set -euo pipefail

# Outputs that are committed to git and must come out of `dvc repro` byte for byte.
readonly COMMITTED_OUTPUTS=(results REPORT.md paper/tables)

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

verdict() {
    printf '\n[drfidelity] VERDICT: %s\n' "$*"
}

reproduce() {
    require_checkout
    local notes="" output excludes=() changed
    # The verdict compares with the commit: say so when code or parameters differ from it.
    for output in "${COMMITTED_OUTPUTS[@]}"; do excludes+=(":(exclude)$output"); done
    changed="$(git diff --name-only HEAD -- . "${excludes[@]}")"
    if [[ -n "$changed" ]]; then
        notes+=" (uncommitted changes to tracked inputs: ${changed//$'\n'/ })"
        say "warning: uncommitted changes to tracked inputs: ${changed//$'\n'/ }"
    fi
    if [[ -n "$(dvc remote list)" ]]; then
        # The public remote holds the data that cannot be recomputed (toorPIA's maps);
        # everything else is rebuilt by dvc repro.
        say "1/4 dvc pull external_embeddings.dvc"
        if ! dvc pull external_embeddings.dvc; then
            # An unreachable HTTP remote shows up as "missing cache files", not as a network error.
            notes+=" (dvc pull failed: remote unreachable or incomplete, so pulled-only data such as cached toorPIA coordinates may be missing)"
            say "dvc pull failed; continuing, dvc repro recomputes what it can"
        fi
    else
        say "1/4 no DVC remote configured: nothing to pull"
    fi

    say "2/4 dvc repro"
    if ! dvc repro; then
        verdict "NOT REPRODUCED: dvc repro failed${notes}"
        exit 1
    fi

    say "3/4 dvc status"
    if ! dvc status --quiet; then
        dvc status
        verdict "NOT REPRODUCED: pipeline not up to date after dvc repro${notes}"
        exit 1
    fi
    say "pipeline up to date"

    say "4/4 git diff of ${COMMITTED_OUTPUTS[*]}"
    local differs=0 untracked
    git diff --stat --exit-code -- "${COMMITTED_OUTPUTS[@]}" || differs=1
    untracked="$(git ls-files --others --exclude-standard -- "${COMMITTED_OUTPUTS[@]}")"
    if [[ -n "$untracked" ]]; then
        printf 'new files, not in the commit:\n%s\n' "$untracked"
        differs=1
    fi
    if (( differs )); then
        verdict "NOT REPRODUCED: the outputs listed above differ from commit $(git rev-parse --short HEAD)${notes}"
        exit 1
    fi
    verdict "REPRODUCED: ${COMMITTED_OUTPUTS[*]} are byte-identical to commit $(git rev-parse --short HEAD)${notes}"
}

command="${1:-reproduce}"
if (( $# )); then shift; fi
case "$command" in
    reproduce)
        (( $# == 0 )) || die "reproduce takes no arguments, got: $*"
        reproduce
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
