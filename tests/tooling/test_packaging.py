"""The package as a user installs it: metadata in pyproject.toml, and (slow) a wheel that works
in a bare virtual environment with only the core dependencies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

from pipeline_helpers import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_one_version_source_and_lower_bounds():
    import drfidelity

    project = PYPROJECT["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "drfidelity.__version__"}
    from importlib.metadata import version

    assert version("drfidelity") == drfidelity.__version__
    names = {spec.split(">=")[0] for spec in project["dependencies"]}
    assert names == {"numpy", "scipy", "numba"}  # what drfidelity.metrics imports
    for spec in project["dependencies"] + project["optional-dependencies"]["methods"]:
        assert ">=" in spec, f"{spec}: dependencies need a lower bound"
    assert set(project["optional-dependencies"]) == {"methods", "pipeline"}
    assert (REPO / "src" / "drfidelity" / "py.typed").is_file()


def test_score_cli_imports_nothing_beyond_the_core_dependencies():
    """``drfidelity score`` must work where only numpy, scipy and numba are installed."""
    code = ("import sys; import drfidelity.cli, drfidelity.core.params; "
            "print('yaml' in sys.modules or 'numpy' in sys.modules); "  # numba imports yaml
            "import drfidelity.metrics, drfidelity.metrics.cli; "
            "print(sorted(m for m in ('pandas', 'sklearn', 'torch', 'umap') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "[]"]


def test_cli_works_without_the_exact_variables_set():
    """The CLI must configure numerics before numpy loads: with none of runtime's variables in
    the environment (as under `dvc repro`), `drfidelity env` runs and reports exact mode."""
    from drfidelity.core import runtime

    env = {k: v for k, v in os.environ.items()
           if k not in (*runtime.EXACT_VARIABLES, *runtime.THREAD_VARIABLES,
                        "DRFIDELITY_NUMERICS")}
    done = subprocess.run([sys.executable, "-m", "drfidelity", "env"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "numerics: exact" in done.stdout


@pytest.mark.slow
def test_wheel_in_a_bare_venv_scores_random_data(tmp_path):
    """Build the wheel, install it (core dependencies from the package index) into a venv
    without the lock, and score random data through the API and the CLI."""
    def run(*cmd, **kw):
        done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                              timeout=900, **kw)
        assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
        tmp_path / "dist", REPO)
    [wheel] = (tmp_path / "dist").glob("drfidelity-*.whl")
    venv = tmp_path / "bare"
    run(sys.executable, "-m", "venv", venv)
    run(venv / "bin" / "pip", "install", "-q", wheel)
    installed = run(venv / "bin" / "pip", "list", "--format=json")
    names = {p["name"].lower() for p in json.loads(installed)}
    assert {"numpy", "scipy", "numba"} <= names and not names & {"scikit-learn", "pandas",
                                                                  "torch", "pyyaml"}
    script = ("import json, numpy as np\n"
              "from drfidelity.metrics import score, neighbourhood_scores\n"
              "rng = np.random.default_rng(0)\n"
              "X = rng.normal(size=(200, 10)); Y = X[:, :2] + 0.1 * rng.normal(size=(200, 2))\n"
              "np.savez('data.npz', X=X); np.save('emb.npy', Y)\n"
              "row = score(X, Y)\n"
              "nb = neighbourhood_scores(X, Y, k=(5, 15, 30))\n"
              "print(json.dumps({'trust_k15': row['trust_k15'],"
              " 'multi': nb['trust_k15']}))\n")
    api = json.loads(run(venv / "bin" / "python", "-c", script, cwd=tmp_path))
    assert 0 < api["trust_k15"] < 1 and api["multi"] == api["trust_k15"]
    cli = json.loads(run(venv / "bin" / "drfidelity", "score", "data.npz", "emb.npy",
                         cwd=tmp_path))
    assert abs(cli["trust_k15"] - api["trust_k15"]) < 1e-12
    assert list(venv.glob("lib/python3*/site-packages/drfidelity/py.typed"))
