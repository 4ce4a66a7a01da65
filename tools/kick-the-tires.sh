#!/usr/bin/env bash
# Kick-the-tires: run the whole DVC pipeline (every stage, every method in params.yaml) on small
# data (N=300, D=64, 2 seeds, PyMDE and PCC on 50 iterations; every supplement on a few small
# inputs: the kick profile of tools/profiles.py) in a throwaway copy of this checkout, leaving
# the checkout untouched. Runs two stages at a time (tools/repro.py --stages 2); its time, mostly
# the start-up of its stages and their job processes, is in docs/performance.md ("make kick").
# Needs the project's environment on PATH (make kick does it).
#
# Usage: tools/kick-the-tires.sh [WORKDIR]      (default: a new temporary directory)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$(mktemp -d -t drfidelity-kick.XXXXXX)}"
mkdir -p "$work"
export DVC_NO_ANALYTICS=1

echo "kick-the-tires: copying the tracked files of $repo to $work"
bash "$repo/tools/throwaway-copy.sh" "$work"
cd "$work"
# every stage runs again on the kick profile, so the committed lock only slows DVC down: it
# parses dvc.lock (pure-Python YAML, 0.27 s of CPU for the full file) several times a stage
rm -f dvc.lock

python tools/profiles.py apply kick

start=$SECONDS
# the root pipeline (a release below releases/ has its own), two stages at a time: most of a
# small run's stages keep one core busy starting up
python tools/repro.py --stages 2 dvc.yaml
echo "kick-the-tires: dvc repro took $((SECONDS - start)) s"
if dvc repro --dry dvc.yaml | grep -q "Running stage"; then
    echo "kick-the-tires: FAILED: a second dvc repro would run stages again" >&2
    exit 1
fi
head -n 30 REPORT.md
echo "kick-the-tires: OK (outputs in $work)"
