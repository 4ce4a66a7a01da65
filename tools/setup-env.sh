#!/usr/bin/env bash
# Create (or refresh) the project's virtual environment from the hash-locked requirements.
#
# Usage: tools/setup-env.sh [VENV_DIR]          (default: .venv)
#
# What it installs. Every package of requirements/requirements.lock with its sha256 checked, as
# binary wheels, without dependency resolution: the lock is the whole environment. One
# exception to "wheels only": antlr4-python3-runtime 4.9.3 (dvc -> hydra-core -> omegaconf)
# exists on PyPI only as a pure-Python sdist; its hash is still checked (the setuptools that
# builds it is fetched unpinned, as with pip). Then the repository, editable. Last, and also
# when the venv is up to date with the lock, it warms the metric engine's compiled kernels
# (python -m drfidelity.metrics.warm): a few seconds when cached, 15-50 s when compiled.
#
# The installer. uv, pinned with its wheels' hashes in requirements/installer.lock (tools/lock.sh
# regenerates it from installer.in), installed by the venv's own pip (--require-hashes) into a
# temporary folder that is removed at the end. Like pip, it writes every package's .pyc files at
# install (--compile-bytecode). Compiled at first import instead, a package whose source holds an
# invalid escape sequence (torchdr, under PCC) warns there, and the test suite's
# warnings-are-errors turns that warning into a SyntaxError on import.
#
# Where packages come from. torch (the CPU build, torch==...+cpu) is not on PyPI: it comes from
# exactly one source, in this order of choice:
#   1. DRFIDELITY_TORCH_INDEX, when set: a PEP 503 index URL (https://... or file:///...), or a
#      local folder holding the wheel;
#   2. else a folder of pip's find-links (below) that holds the locked torch wheel: a local
#      wheelhouse standing in for PyTorch's index, for machines that cannot reach it;
#   3. else PyTorch's CPU index, named in requirements/torch-index (the Docker image's build
#      uses this same file through this script).
# Every other package comes from PyPI, or from what this machine's pip is configured with:
# uv does not read pip's configuration, so this script hands it over. It reads the effective
# index-url, extra-index-url, find-links, no-index and cert of `pip config list` (pip.conf files
# and PIP_* variables, later ones winning, as pip does) and passes them to uv as --index-url,
# --extra-index-url, --find-links, --no-index and SSL_CERT_FILE (unless already set). Several
# indexes are searched as pip searches them (uv's --index-strategy unsafe-best-match); the
# hashes decide what is accepted. uv's own source variables (UV_INDEX_URL, UV_FIND_LINKS, ...)
# and uv.toml files are ignored, so that pip's configuration is the one description of a
# machine's package sources. uv's cache (UV_CACHE_DIR, default ~/.cache/uv) is used unless
# UV_NO_CACHE=1. The first line printed names the sources used.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$repo/.venv}"
lock="$repo/requirements/requirements.lock"
installer_lock="$repo/requirements/installer.lock"
torch_index_file="$repo/requirements/torch-index"
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
work="$(mktemp -d -t drfidelity-setup.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# The installer, hash-checked, from pip's configured sources.
"$venv/bin/python" -m pip install -qq --no-deps --require-hashes --only-binary :all: \
    --target "$work/installer" -r "$installer_lock"
# uv reads no package source but those this script gives it: no uv.toml, no UV_* source
# variable. Its temporary files (build locks among them) go into $work, so none stays behind.
uv=(env -u UV_INDEX -u UV_INDEX_URL -u UV_DEFAULT_INDEX -u UV_EXTRA_INDEX_URL -u UV_FIND_LINKS
    -u UV_NO_INDEX -u UV_INDEX_STRATEGY -u UV_CONSTRAINT -u UV_OVERRIDE -u UV_TORCH_BACKEND
    TMPDIR="$work" "$work/installer/bin/uv" --no-config)

# pip's effective package sources, one "option<TAB>value" line each.
"$venv/bin/python" -m pip config list > "$work/pip-config"
"$venv/bin/python" - "$work/pip-config" > "$work/sources" <<'PY'
import ast, sys
found = {}
for line in open(sys.argv[1]):
    key, _, value = line.rstrip("\n").partition("=")
    section, _, option = key.rpartition(".")
    if option in ("index-url", "extra-index-url", "find-links", "no-index", "cert") and \
            section in ("global", "install", ":env:"):
        found[option] = ast.literal_eval(value)   # later lines win: env over files
for option, value in found.items():
    for item in value.split():
        print(f"{option}\t{item}")
PY
pypi_sources=(--index-strategy unsafe-best-match)
wheelhouses=()
pypi_named="PyPI" also=""
while IFS=$'\t' read -r option value; do
    case "$option" in
        index-url) pypi_sources+=(--index-url "$value"); pypi_named="$value" ;;
        extra-index-url) pypi_sources+=(--extra-index-url "$value"); also+=" + $value" ;;
        find-links) pypi_sources+=(--find-links "$value"); also+=" + $value"
                    wheelhouses+=("${value#file://}") ;;
        no-index) [[ "$value" =~ ^(1|true|yes|on)$ ]] && pypi_sources+=(--no-index) \
                      && pypi_named="no index" ;;
        cert) export SSL_CERT_FILE="${SSL_CERT_FILE:-$value}" ;;
    esac
done < "$work/sources"

# The lock split in two: torch's entry, and everything else.
awk '/^[^ #]/ { torch = ($1 ~ /^torch==/) } torch' "$lock" > "$work/torch.lock"
awk '/^[^ #]/ { torch = ($1 ~ /^torch==/) } !torch' "$lock" > "$work/pypi.lock"
torch_pin="$(sed -n 's/^torch==\([^ ]*\) .*/\1/p' "$work/torch.lock")"
[[ -n "$torch_pin" ]] || { echo "setup-env: no torch==... entry in $lock" >&2; exit 1; }

# torch's one source (see the header). A folder is a flat folder of wheels unless it is a PEP 503
# index (it has a torch/ page); anything else is an index URL.
torch_source="${DRFIDELITY_TORCH_INDEX:-}"
if [[ -z "$torch_source" ]]; then
    for dir in "${wheelhouses[@]}"; do
        if compgen -G "$dir/torch-$torch_pin-*.whl" >/dev/null; then torch_source="$dir"; break; fi
    done
fi
[[ -n "$torch_source" ]] || torch_source="$(grep -v '^#' "$torch_index_file" | head -1)"
torch_dir="${torch_source#file://}"
if [[ -d "$torch_dir" && ! -d "$torch_dir/torch" ]]; then
    torch_from=(--no-index --find-links "$torch_dir")
elif [[ -d "$torch_dir" ]]; then
    torch_from=(--index-url "file://$(cd "$torch_dir" && pwd)")
else
    torch_from=(--index-url "$torch_source")
fi

target=(--python "$venv/bin/python" --quiet --compile-bytecode)
echo "setup-env: torch $torch_pin from $torch_source; the rest from $pypi_named$also"
"${uv[@]}" pip install "${target[@]}" --no-deps --require-hashes \
    --only-binary :all: "${torch_from[@]}" -r "$work/torch.lock"
"${uv[@]}" pip install "${target[@]}" --no-deps --require-hashes \
    --only-binary :all: --no-binary antlr4-python3-runtime "${pypi_sources[@]}" -r "$work/pypi.lock"
"${uv[@]}" pip install "${target[@]}" --no-deps --no-build-isolation --no-index \
    -e "$repo"
echo "$want" > "$stamp"
echo "setup-env: installed $(grep -c '^[a-zA-Z]' "$lock") locked packages into $venv"
# Compile the metric engine's kernels into numba's on-disk cache now, so that the first score
# is fast (src/drfidelity/metrics/jit.py says where that cache lives). Without .pyc files: the
# warm-up is to leave nothing in the source tree.
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m drfidelity.metrics.warm
