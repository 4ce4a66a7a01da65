#!/usr/bin/env bash
# Warm numba's on-disk kernel cache at build time, so that the image's first call does not
# compile. numba keys each cached kernel on its source file's modification time and size: with
# SOURCE_DATE_EPOCH the sources carry that time (docker/settle-venv.sh set the venv's; the
# copied src/ is set here), which is also what a timestamp-clamping build (podman --timestamp,
# BuildKit rewrite-timestamp) stores, so the kernels compiled here match the files shipped.
#
# Usage: docker/warm-caches.sh SRC CACHE_DIR
set -euo pipefail
src="${1:?usage: $0 SRC CACHE_DIR}" cache="${2:?usage: $0 SRC CACHE_DIR}"
if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
    find "$src" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
fi
# drfidelity's own kernels are not compiled here: numba checks a cached kernel against its
# source file's modification time, and the checkout mounted at /work at run time is not this
# copy, so kernels baked from it would never be loaded (`python -m drfidelity.metrics.warm` in
# the container fills the cache for the mounted code instead). The libraries' kernels ship in
# the image, so they are baked: one small UMAP fit compiles every umap-learn and pynndescent
# function a map needs into the cache (drfidelity.methods.umap turns their caching on), so
# that a container's first UMAP job loads them (2-5 s) instead of compiling (22-27 s).
mkdir -p "$cache"
NUMBA_CACHE_DIR="$cache" python - <<'PY'
from drfidelity.core import runtime

runtime.configure("exact")  # before numpy loads
import numpy as np  # noqa: E402

from drfidelity.methods.umap import fit_umap  # noqa: E402

fit_umap(np.random.default_rng(0).normal(size=(300, 10)), 0, n_neighbors=15, min_dist=0.1)
PY
# Readable and writable for any --user uid: kernels that miss (a mounted checkout's own files
# are newer than the image's copy) are compiled and added beside these.
chmod -R a+rwX "$cache"
echo "warm-caches: $(find "$cache" -name '*.nbi' | wc -l) cached kernel index(es) in $cache"
