"""The hash-locked environment as the tests see it: requirements/requirements.lock, the
installer's lock, the file naming PyTorch's CPU index, and the installer script
(tools/setup-env.sh) that the Makefile, CI and docker/Dockerfile run."""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
import sys
from pathlib import Path

from pipeline_helpers import REPO

REQUIREMENTS = REPO / "requirements"
LOCK = REQUIREMENTS / "requirements.lock"
INSTALLER_LOCK = REQUIREMENTS / "installer.lock"
INSTALLER_IN = REQUIREMENTS / "installer.in"
TORCH_INDEX = REQUIREMENTS / "torch-index"
SETUP_ENV = REPO / "tools" / "setup-env.sh"
LOCK_TOOL = REPO / "tools" / "lock.sh"
#: the one sdist the lock allows (pure Python, no wheel on PyPI; its hash is still checked)
SDIST_EXCEPTION = "antlr4-python3-runtime"
#: the flags that make an install "the lock and nothing else" (artifact.md)
LOCK_INSTALL_FLAGS = ("--no-deps", "--require-hashes", "--only-binary", ":all:")


def logical_lines(script: str) -> list[str]:
    """Lines of a shell text with backslash continuations joined."""
    return script.replace("\\\n", " ").splitlines()


def normalise(name: str) -> str:
    """PEP 503 name normalisation, so that lock and installed metadata compare."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(lock: Path = LOCK) -> dict[str, str]:
    """``{normalised name: version}`` of every entry of a hash-locked requirements file."""
    return {normalise(name): version for name, version in
            re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+) \\$", lock.read_text(), re.MULTILINE)}


def lock_entry(name: str, lock: Path = LOCK) -> str:
    """The block of one package in a lock: ``name==version \\`` plus its hash lines."""
    match = re.search(rf"^{re.escape(name)}==\S+ \\\n(?:    --hash=sha256:[0-9a-f]{{64}}(?: \\)?\n)+",
                      lock.read_text(), re.MULTILINE)
    assert match, f"{name} not in {lock.name}"
    return match[0]


def with_altered_hashes(entry: str) -> str:
    """A lock entry with every hash changed (an installer accepts a file matching any listed
    hash, so altering one would not do)."""
    return re.sub(r"sha256:([0-9a-f])",
                  lambda m: "sha256:" + "0123456789abcdef"[(int(m[1], 16) + 1) % 16], entry)


def lock_hashes(name: str, lock: Path = LOCK) -> list[str]:
    """The sha256 digests a lock accepts for one package."""
    return re.findall(r"--hash=sha256:([0-9a-f]{64})", lock_entry(name, lock))


def torch_index() -> str:
    """PyTorch's CPU index as requirements/torch-index names it (its one line that is not a
    comment)."""
    lines = [line.strip() for line in TORCH_INDEX.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(lines) == 1, f"{TORCH_INDEX.name} must name exactly one index: {lines}"
    return lines[0]


def pip_find_links() -> list[str]:
    """The find-links folders of this machine's pip configuration (files and PIP_* variables),
    read as tools/setup-env.sh reads them."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                            text=True, check=True, timeout=60).stdout
    found: list[str] = []
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        if key.rpartition(".")[2] == "find-links":
            found = ast.literal_eval(value).split()
    return [entry.removeprefix("file://") for entry in found]


def locked_torch_wheel() -> Path | None:
    """This machine's copy of the lock's torch wheel (the file PyTorch's CPU index serves), from
    a find-links folder of pip's configuration, its hash checked against the lock; None when
    there is none."""
    version = lock_pins()["torch"]
    for folder in pip_find_links():
        for wheel in sorted(Path(folder).glob(f"torch-{version}-*.whl")):
            digest = hashlib.sha256()
            with wheel.open("rb") as stream:
                for block in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(block)
            if digest.hexdigest() in lock_hashes("torch"):
                return wheel
    return None
