#!/usr/bin/env bash
# Re-resolve requirements/requirements.lock (every transitive package, with sha256 hashes)
# from requirements/requirements.in, for CPython 3.11 on x86-64 Linux; and
# requirements/installer.lock (the uv that tools/setup-env.sh installs, with the hashes of all
# its wheels) from requirements/installer.in.
#
# torch is the CPU build (torch==2.13.0+cpu): --find-links points uv at a directory holding
# that wheel (TORCH_WHEELS, default /opt/wheels on our machines; PyTorch's CPU index, which
# requirements/torch-index names, serves the same file).
# torchvision is left out on purpose: pymde declares it but only uses it to download demo
# data, and the only wheels matching torch 2.13 are CUDA builds that fail to import
# (see src/drfidelity/methods and spec methods.md).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wheels="${TORCH_WHEELS:-/opt/wheels}"
uv="${UV:-uv}"
command -v "$uv" >/dev/null || {
    echo "lock.sh needs uv (pip install --require-hashes -r requirements/installer.lock)" >&2
    exit 1
}
cd "$repo/requirements"
"$uv" pip compile requirements.in --generate-hashes --python-version 3.11 \
    --python-platform x86_64-manylinux_2_28 --find-links "$wheels" \
    --no-emit-package torchvision --no-header -o requirements.lock
"$uv" pip compile installer.in --generate-hashes --python-version 3.11 --no-header \
    -o installer.lock
