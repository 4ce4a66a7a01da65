#!/usr/bin/env bash
# Create (or refresh) the project's virtual environment from the hash-locked requirements.
#
# Usage: tools/setup-env.sh [VENV_DIR]          (default: .venv)
#
# Every package comes from requirements/requirements.lock with its sha256 checked, as binary
# wheels, without dependency resolution: the lock is the whole environment. The Docker image
# runs this same script. One exception to "wheels only": antlr4-python3-runtime 4.9.3 (needed by
# dvc -> hydra-core -> omegaconf) exists on PyPI only as a pure-Python sdist; its hash is still
# verified. torch is the CPU build (torch==2.13.0+cpu). Last, and also when the venv is up to
# date, it warms the metric engine's compiled kernels (python -m drfidelity.metrics.warm): a
# few seconds when they are cached already, 15-50 s when they are compiled.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$repo/.venv}"
lock="$repo/requirements/requirements.lock"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null || python=python3

stamp="$venv/.drfidelity-lock.sha256"
want="$(sha256sum "$lock" | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "setup-env: $venv is up to date with $(basename "$lock")"
    PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m drfidelity.metrics.warm
    exit 0
fi

"$python" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"setup-env: Python 3.11 is required (the lock is resolved for it), found {sys.version.split()[0]}")
PY
"$python" -m venv "$venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$venv/bin/pip" install --quiet --no-deps --require-hashes --only-binary :all: \
    --no-binary antlr4-python3-runtime -r "$lock"
"$venv/bin/pip" install --quiet --no-deps --no-build-isolation -e "$repo"
echo "$want" > "$stamp"
echo "setup-env: installed $(grep -c '^[a-zA-Z]' "$lock") locked packages into $venv"
# Compile the metric engine's kernels into numba's on-disk cache now, so that the first score
# is fast (src/drfidelity/metrics/jit.py says where that cache lives). Without .pyc files: the
# warm-up is to leave nothing in the source tree.
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m drfidelity.metrics.warm
