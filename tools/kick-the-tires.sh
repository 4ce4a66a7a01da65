#!/usr/bin/env bash
# Kick-the-tires: run every stage of the DVC pipeline on small data (N=300, D=64, 2 seeds;
# three methods, one of each kind of library, on two datasets; every study on a few small
# inputs: the kick profile of tools/profiles.py) in a throwaway copy of this checkout, leaving
# the checkout untouched. The copy runs its own code (its src/ comes first on PYTHONPATH, before
# the checkout's editable install). Two stages at a time (tools/repro.py --stages 2); the
# terminal gets a line per stage and the end, the whole log goes to kick.log in the copy. It
# ends on the ranking the run computed, then removes the copy it made in a temporary folder
# (a WORKDIR you name is kept, and so is any copy with KEEP=1 or after a failure).
# Its time: docs/performance.md ("make kick"). Needs the project's environment on PATH (make
# kick does it).
#
# Usage: [KEEP=1] tools/kick-the-tires.sh [WORKDIR]      (default: a new temporary directory)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
keep="${KEEP:-0}"
if [[ $# -ge 1 ]]; then work="$1" keep=1; else work="$(mktemp -d -t drfidelity-kick.XXXXXX)"; fi
mkdir -p "$work"
export DVC_NO_ANALYTICS=1
export PYTHONPATH="$work/src${PYTHONPATH:+:$PYTHONPATH}"

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
if ! python tools/repro.py --stages 2 --log kick.log dvc.yaml; then
    echo "kick-the-tires: FAILED; the whole log: $work/kick.log" >&2
    exit 1
fi
again="$(dvc repro --dry dvc.yaml 2>>kick.log)"
echo "$again" >> kick.log
if grep -q "Running stage" <<<"$again"; then
    echo "kick-the-tires: FAILED: a second dvc repro would run stages again ($work/kick.log)" >&2
    exit 1
fi
read -r n d < <(python -c "import yaml; data = yaml.safe_load(open('params.yaml'))['data']
print(data['n'], data['d'])")
echo
echo "kick-the-tires: the pipeline ran in $((SECONDS - start)) s on N = $n, D = $d, the kick"
echo "profile's small data: a check of the machinery, not the benchmark's results. Its ranking:"
python tools/exps.py --run results/headline.json
if [[ "$keep" == 1 ]]; then
    echo "kick-the-tires: OK; the report: $work/REPORT.html (and REPORT.md), the log: $work/kick.log"
else
    cd /
    rm -rf "$work"
    echo "kick-the-tires: OK; its copy is removed (KEEP=1 make kick keeps it, with REPORT.html)"
fi
