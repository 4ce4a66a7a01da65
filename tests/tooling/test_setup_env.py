"""tools/setup-env.sh: one lock, installed anywhere.

Fast checks that the lock, the installer's lock, the file naming PyTorch's CPU index, the
Dockerfile and the script agree; and (slow) the stock path: a machine whose pip knows nothing but
PyPI, with a local file index standing in for PyTorch's CPU index, installs the real lock into a
fresh venv in which torch (CPU) and drfidelity import. Nothing here skips: CI has PyPI and this
machine kind's copy of the torch wheel, so a missing input is a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from lock_helpers import (INSTALLER_IN, INSTALLER_LOCK, LOCK, LOCK_INSTALL_FLAGS, LOCK_TOOL,
                          SDIST_EXCEPTION, SETUP_ENV, TORCH_INDEX, lock_entry, lock_hashes,
                          lock_pins, locked_torch_wheel, logical_lines, normalise, torch_index,
                          with_altered_hashes)
from pipeline_helpers import REPO

#: the package-source options of pip and uv; the script passes them only through its arrays
SOURCE_FLAGS = {"-i", "--index-url", "--default-index", "--extra-index-url", "-f",
                "--find-links", "--index"}


def _script_lines() -> list[str]:
    return [line for line in logical_lines(SETUP_ENV.read_text())
            if not line.lstrip().startswith("#")]


def _installs() -> dict[str, list[str]]:
    """Each install command of the script by what it installs: the installer, torch, the rest
    of the lock, the repository."""
    found = {}
    for line in _script_lines():
        if not re.search(r"\bpip install\b", line):
            continue
        tokens = shlex.split(line)
        what = tokens[tokens.index("-r") + 1] if "-r" in tokens else tokens[tokens.index("-e") + 1]
        found[what] = tokens
    assert set(found) == {"$installer_lock", "$work/torch.lock", "$work/pypi.lock", "$repo"}, found
    return found


# --- the files agree ------------------------------------------------------------------------

def test_pytorch_index_is_named_in_one_place():
    url = torch_index()
    assert url.startswith("https://"), url
    host = url.split("/")[2]
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                             check=True).stdout.decode().split("\0")
    code = [path for path in tracked if path and not path.endswith(".md")
            and (REPO / path).is_file() and host in (REPO / path).read_text(errors="replace")]
    assert code == [str(TORCH_INDEX.relative_to(REPO))], \
        f"{host} named outside {TORCH_INDEX.name} (recipes and scripts must read that file): {code}"
    assert 'torch_index_file="$repo/requirements/torch-index"' in _script_lines()


def test_setup_env_reads_the_locks_it_is_given():
    assignments = {line.split("=", 1)[0]: line.split("=", 1)[1] for line in _script_lines()
                   if re.match(r"^(lock|installer_lock)=", line)}
    assert assignments == {"lock": '"$repo/requirements/requirements.lock"',
                           "installer_lock": '"$repo/requirements/installer.lock"'}
    assert (LOCK.exists(), INSTALLER_LOCK.exists()) == (True, True)


def test_installer_is_pinned_with_hashes_and_installed_hash_checked():
    pins = lock_pins(INSTALLER_LOCK)
    assert list(pins) == ["uv"], pins
    wanted = re.findall(r"^uv==(\S+)", INSTALLER_IN.read_text(), re.MULTILINE)
    assert wanted == [pins["uv"]], "installer.lock is out of date: run tools/lock.sh"
    assert lock_hashes("uv", INSTALLER_LOCK)
    bootstrap = _installs()["$installer_lock"]
    assert bootstrap[:4] == ["$venv/bin/python", "-m", "pip", "install"]
    assert set(LOCK_INSTALL_FLAGS) <= set(bootstrap) and "--target" in bootstrap
    assert not SOURCE_FLAGS & set(bootstrap), "the installer comes from pip's own sources"


def test_lock_tool_regenerates_both_locks():
    lines = logical_lines(LOCK_TOOL.read_text())
    for source, lock in (("requirements.in", LOCK), ("installer.in", INSTALLER_LOCK)):
        compiles = [line for line in lines if re.search(rf"pip compile {source} ", line)]
        assert len(compiles) == 1, source
        assert "--generate-hashes" in compiles[0] and f"-o {lock.name}" in compiles[0]


def test_setup_env_installs_the_lock_with_hashes_and_sources_only_through_its_arrays():
    installs = _installs()
    torch, rest, editable = (installs[k] for k in ("$work/torch.lock", "$work/pypi.lock", "$repo"))
    for tokens in (torch, rest):
        assert tokens[:3] == ["${uv[@]}", "pip", "install"], tokens
        assert set(LOCK_INSTALL_FLAGS) <= set(tokens), tokens
    no_binary = [tokens[i + 1] for tokens in (torch, rest) for i, t in enumerate(tokens)
                 if t == "--no-binary"]
    assert no_binary == [SDIST_EXCEPTION]
    # torch from its one source, the rest from pip's (PyPI by default), the repository from none
    assert "${torch_from[@]}" in torch and "${pypi_sources[@]}" not in torch
    assert "${pypi_sources[@]}" in rest and "${torch_from[@]}" not in rest
    assert {"--no-deps", "--no-index", "-e"} <= set(editable)
    for tokens in installs.values():
        assert not SOURCE_FLAGS & set(tokens), tokens


def test_the_lock_splits_into_torch_and_the_rest(tmp_path):
    splits = [line for line in _script_lines() if line.startswith("awk ") and "$lock" in line]
    assert len(splits) == 2, splits
    subprocess.run(["bash", "-c", "\n".join(splits)], env=dict(os.environ, lock=str(LOCK),
                   work=str(tmp_path)), check=True, timeout=60)
    torch, rest = tmp_path / "torch.lock", tmp_path / "pypi.lock"
    assert list(lock_pins(torch)) == ["torch"]
    assert "torch" not in lock_pins(rest)
    assert sorted(torch.read_text().splitlines() + rest.read_text().splitlines()) == \
        sorted(LOCK.read_text().splitlines())


# --- the installer itself -------------------------------------------------------------------

@pytest.fixture(scope="module")
def pinned_uv(tmp_path_factory) -> Path:
    """uv as tools/setup-env.sh installs it: pip, hash-checked, from installer.lock."""
    target = tmp_path_factory.mktemp("installer")
    subprocess.run([sys.executable, "-m", "pip", "install", "-qq", *LOCK_INSTALL_FLAGS,
                    "--target", str(target), "-r", str(INSTALLER_LOCK)],
                   check=True, capture_output=True, timeout=300)
    return target / "bin" / "uv"


def test_the_installer_rejects_a_lock_entry_with_other_hashes(tmp_path, pinned_uv):
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_")}

    def install(name: str, entry: str) -> subprocess.CompletedProcess:
        (tmp_path / f"{name}.lock").write_text(entry)
        return subprocess.run([str(pinned_uv), "pip", "install", "--no-config", "--no-cache",
                               *LOCK_INSTALL_FLAGS, "--python", sys.executable, "--target",
                               str(tmp_path / name), "-r", str(tmp_path / f"{name}.lock")],
                              env=env, capture_output=True, text=True, timeout=180)

    entry = lock_entry("funcy")     # a small pure-Python wheel, from PyPI
    genuine = install("genuine", entry)
    assert genuine.returncode == 0 and (tmp_path / "genuine" / "funcy").is_dir(), genuine.stderr
    tampered = install("tampered", with_altered_hashes(entry))
    assert tampered.returncode != 0 and "Hash mismatch" in tampered.stderr, tampered.stderr
    assert not (tmp_path / "tampered" / "funcy").exists()


# --- the stock path (slow): PyPI plus a stand-in for PyTorch's CPU index --------------------

def _torch_index_stand_in(root: Path) -> str:
    """A PEP 503 index at root/simple whose one project, torch, links this machine's copy of
    the locked wheel; its file:// URL."""
    wheel = locked_torch_wheel()
    if wheel is None:
        pytest.fail(f"no torch=={lock_pins()['torch']} wheel with the lock's hash in a find-links "
                    "folder of pip's configuration: this machine kind keeps it in one",
                    pytrace=False)
    page = root / "simple" / "torch" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f'<!DOCTYPE html>\n<html><body><a href="{wheel.as_uri()}#sha256='
                    f'{lock_hashes("torch")[0]}">{wheel.name}</a></body></html>\n')
    return (root / "simple").as_uri()


@pytest.mark.slow
def test_stock_machine_installs_the_lock_from_pypi_and_the_torch_index(tmp_path):
    index = _torch_index_stand_in(tmp_path / "pytorch")
    # pip's configuration of this machine switched off (files and PIP_*), no UV_* either:
    # PyPI is the only source of everything but torch.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, DRFIDELITY_TORCH_INDEX=index)
    venv = tmp_path / "venv"
    result = subprocess.run(["bash", str(SETUP_ENV), str(venv)], env=env, capture_output=True,
                            text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    pin = lock_pins()["torch"]
    assert result.stdout.splitlines()[0] == \
        f"setup-env: torch {pin} from {index}; the rest from PyPI", result.stdout
    probe = ("import json, torch, drfidelity, importlib.metadata as m; "
             "print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda, "
             "'drfidelity': drfidelity.__file__, "
             "'installed': {d.metadata['Name']: d.version for d in m.distributions()}}))")
    found = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", probe],
                                      capture_output=True, text=True, check=True,
                                      timeout=300).stdout)
    assert (found["torch"], found["cuda"]) == (pin, None)
    # Compiled at install, as pip does: torchdr (under PCC) holds invalid escape sequences,
    # which warn when compiled at import, and warnings are errors in the test suite.
    site = next((venv / "lib").glob("python3.*/site-packages"))
    uncompiled = [p for p in sorted((site / "torchdr").rglob("*.py"))
                  if not Path(importlib.util.cache_from_source(str(p))).is_file()]
    assert not uncompiled, uncompiled
    assert Path(found["drfidelity"]).is_relative_to(REPO / "src")
    installed = {normalise(k): v for k, v in found["installed"].items()}
    assert {k: v for k, v in installed.items() if k not in ("pip", "drfidelity")} == lock_pins()
