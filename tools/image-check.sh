#!/usr/bin/env bash
# The image, built and run (`make image-check`; CI's slow tier runs it from .ci/run).
#
# Usage: tools/image-check.sh           build, then check the image (about 20 min on 2 cores)
#        tools/image-check.sh --full    the same, plus the full `verify` (about an hour more)
#        tools/image-check.sh --list    print the commands of docker/README.md's blocks: block
#                                       number, `run` (always), `throwaway` (with CI set, or
#                                       --full) or `full` (only --full), command
#
# Every ```sh block of docker/README.md is a reviewer's command, and this runs each one as
# written, in the order written, from the root of this checkout: the build (`make image`)
# first, then the rest (with `docker` being tools/podman/docker where no docker engine works, and
# IMPORTS set to ../shared/dvc-remote, the previous release's DVC objects, mounted read-only).
# A block fails the check when it exits non-zero. The full `verify` (the default word; an hour
# on 2 cores) waits for --full; the DVC experiment (it changes the working tree) runs where CI is
# set (CI checks a clean clone it then throws away) or with --full. Between the build and the other blocks, checks of what a
# reviewer does not type: the installed packages equal the lock, an unknown first word is an
# error that lists the words, a checkout the --user uid cannot write is refused in one line, and
# a --user uid without a passwd entry writes its files as itself into a mounted folder and
# reads and adds to numba's cache.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
readme=docker/README.md
image=drfidelity:local
mode="${1:-check}"
[[ "$mode" == check || "$mode" == --full || "$mode" == --list ]] \
    || { echo "usage: $0 [--full | --list]" >&2; exit 2; }

say() { printf 'image-check: %s\n' "$*"; }
fail() { printf 'image-check: FAILED: %s\n' "$*" >&2; exit 1; }

# --- the README's blocks ----------------------------------------------------------------------
work="$(mktemp -d -t drfidelity-image-check.XXXXXX)"
trap 'rm -rf "$work"' EXIT
awk -v dir="$work" '
    /^```sh$/ { n++; file = sprintf("%s/block-%02d.sh", dir, n); inside = 1; next }
    /^```/    { inside = 0; next }
    inside    { print > file }
' "$readme"
blocks=("$work"/block-*.sh)
[[ -e "${blocks[0]}" ]] || fail "no \`\`\`sh block in $readme"

# The block's commands, continuation lines joined, without comments and blank lines.
commands() { sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' "$1" | grep -v -e '^#' -e '^$'; }
# Its first comment (what it does) or else its first command, for the log.
title() { { grep -m1 '^# ' "$1" | sed 's/^# //' || commands "$1" | head -1; } | cut -c1-100; }
# `full`: the block runs the image's default word (a `docker run` line ending at the tag), the
# hour-long full verify. `throwaway`: a DVC experiment, which changes the working tree it runs
# in: it runs where that checkout is thrown away afterwards (CI's clean clone: CI is set) or
# with --full.
tier() {
    if commands "$1" | grep -Eq "^docker run .* ${image}\$"; then
        echo full
    elif commands "$1" | grep -Eq " ${image} dvc exp run( |\$)"; then
        echo throwaway
    else
        echo run
    fi
}

if [[ "$mode" == --list ]]; then
    for block in "${blocks[@]}"; do
        tier="$(tier "$block")" n="$(basename "$block" .sh)"
        commands "$block" | while IFS= read -r line; do printf '%s\t%s\t%s\n' "${n#block-}" "$tier" "$line"; done
    done
    exit 0
fi

# --- the engine and the shared data ---------------------------------------------------------
if ! { command -v docker >/dev/null && docker info >/dev/null 2>&1; }; then
    export PATH="$repo/tools/podman:$PATH"
    say "no working docker engine: \`docker\` is podman (tools/podman/docker)"
fi
shared="${DRFIDELITY_SHARED:-$repo/../shared}"
[[ -d "$shared/dvc-remote/files/md5" ]] \
    || fail "$shared/dvc-remote holds no DVC objects: the imports cannot be restored offline"
IMPORTS="$(cd "$shared/dvc-remote" && pwd)"
export IMPORTS
say "IMPORTS=$IMPORTS"

start=$SECONDS
run_block() {
    local block="$1" began=$SECONDS rc=0
    say "$(tier "$block"): $(title "$block")"
    if grep -q -- ' -it ' "$block"; then
        # An interactive shell: give it a terminal and type `exit`.
        printf 'exit\n' | script -qec "bash -euo pipefail $block" /dev/null || rc=$?
    else
        bash -euo pipefail "$block" || rc=$?
    fi
    (( rc == 0 )) || fail "$(title "$block") exited $rc"
    say "ok in $((SECONDS - began)) s"
}

builds=()
for block in "${blocks[@]}"; do grep -q '^make image$' "$block" && builds+=("$block"); done
(( ${#builds[@]} == 1 )) || fail "$readme must have exactly one block that is \`make image\`"
run_block "${builds[0]}"

# --- what a reviewer does not type ------------------------------------------------------------
began=$SECONDS
say "environment = lock (--network none)"
docker run --rm --network none -v "$repo/requirements/requirements.lock":/tmp/lock:ro "$image" \
    python -c '
import json, re, importlib.metadata as m
import torch
from drfidelity.core import runtime
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
pins = {norm(n): v for n, v in re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+) \\$", open("/tmp/lock").read(), re.M)}
found = {norm(d.metadata["Name"]): d.version for d in m.distributions()}
extra = sorted(set(found) - set(pins) - {"pip", "drfidelity"})
wrong = {k: (v, found.get(k)) for k, v in pins.items() if found.get(k) != v}
assert not extra and not wrong, f"not the lock: extra {extra}, locked vs installed {wrong}"
assert torch.version.cuda is None and runtime.current_mode() == "exact"
print(f"image-check: {len(pins)} locked packages at their versions, CPU torch, exact numerics")
'

say "an unknown first word is an error that names the words; python is python; a checkout the uid cannot write is refused"
rc=0; out="$(docker run --rm --network none "$image" no-such-word 2>&1)" || rc=$?
[[ $rc == 2 && "$out" == *"unknown command 'no-such-word'"* && "$out" == *verify-main* ]] \
    || fail "unknown word: exit $rc, said: $out"
[[ "$(docker run --rm --network none "$image" python -c 'print(6 * 7)')" == 42 ]] \
    || fail "\`python -c\` did not run Python"
rc=0; out="$(docker run --rm --network none --user 4242:4242 -v "$repo":/work:ro -w /work "$image" \
    verify 2>&1)" || rc=$?
[[ $rc == 2 && "$out" == *"cannot write to the checkout"*"--user"* ]] \
    || fail "a checkout the uid cannot write: exit $rc, said: $out"

say "a --user uid with no passwd entry: owns what it writes, reads and adds to numba's cache"
out_dir="$work/out"
mkdir -p "$out_dir" && chown 4242:4242 "$out_dir"
cat > "$out_dir/kernel.py" <<'PY'
import numba, numpy, pathlib, sys
@numba.njit(cache=True)
def total(x):
    return x.sum()
total(numpy.arange(3.0))
pathlib.Path(sys.argv[1]).write_text(f"{total.stats.cache_hits.get(total.signatures[0], 0)}\n")
PY
docker run --rm --network none --user 4242:4242 -v "$out_dir":/out -w /out "$image" bash -c '
    baked=$(find "$NUMBA_CACHE_DIR" -name "*.nbi" | wc -l)
    python kernel.py first && python kernel.py second
    echo "image-check: $baked kernel index(es) baked into $NUMBA_CACHE_DIR"'
[[ "$(stat -c %u "$out_dir/second")" == 4242 ]] || fail "files written as uid 4242 are not its"
[[ "$(cat "$out_dir/first")" == 0 && "$(cat "$out_dir/second")" != 0 ]] \
    || fail "numba's cache was not written by the first process and read by the second"
say "ok in $((SECONDS - began)) s"

# --- the rest of the README, in order ---------------------------------------------------------
for block in "${blocks[@]}"; do
    [[ "$block" == "${builds[0]}" ]] && continue
    tier="$(tier "$block")"
    if [[ "$tier" == full && "$mode" != --full ]]; then
        say "not run without --full: $(title "$block")"
        continue
    fi
    if [[ "$tier" == throwaway && "$mode" != --full && -z "${CI:-}" ]]; then
        say "not run on a checkout that is kept (set CI, or --full): $(title "$block")"
        continue
    fi
    run_block "$block"
done
say "OK: every block of $readme ran$([[ "$mode" == --full ]] || echo ' (the full verify not: --full)') in $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s"
