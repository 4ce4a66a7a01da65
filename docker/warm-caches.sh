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
# The metric engine's warm-up command (issue 19, branch fast-start) is not in the package yet;
# until it is, the cache starts empty and this line in the build log says so.
if python -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("drfidelity.warmup") is None)'; then
    python -m drfidelity.warmup
else
    echo "warm-caches: drfidelity has no warm-up module (drfidelity.warmup) yet; numba's cache starts empty"
fi
# Readable and writable for any --user uid: kernels that miss (a mounted checkout's own files
# are newer than the image's copy) are compiled and added beside these.
chmod -R a+rwX "$cache"
echo "warm-caches: $(find "$cache" -name '*.nbi' | wc -l) cached kernel index(es) in $cache"
