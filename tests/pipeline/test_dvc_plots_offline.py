"""`dvc plots show` / `dvc plots diff` render with no network.

The page is written from the template .dvc/plots/offline.html (Vega, Vega-Lite and Vega-Embed
inline, tools/vega_template.py), which .dvc/config names. In a temporary copy of the plots'
files, `dvc plots diff` against the committed revision writes the page; headless Chromium, with
every request sent to a dead proxy, must draw one chart per plot of dvc.yaml (its DOM holds
their canvases) and a screenshot that is not blank. Chromium is a Debian package: without it
the test skips locally and fails under CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipeline_helpers import REPO
from report_helpers import require_tool

pytestmark = pytest.mark.slow

#: what `dvc plots` reads: the pipeline file with its plots, the files it interpolates (its
#: `vars:`, read from it below, and the params), the DVC config (which names the page template),
#: the templates and the curves
FILES = ("dvc.yaml", *yaml.safe_load((REPO / "dvc.yaml").read_text()).get("vars", []),
         "params.yaml", "scale.yaml", ".dvc/config", ".dvc/plots", "results/plots")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--proxy-server=http://127.0.0.1:9", "--virtual-time-budget=20000",
         "--window-size=1000,3000")


def run(*args: str, cwd: Path) -> str:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@localhost"}
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The HTML of `dvc plots diff HEAD` after one curve moved in the workspace."""
    root = tmp_path_factory.mktemp("plots")
    for name in FILES:
        source, target = REPO / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    run("git", "init", "-q", cwd=root)
    run("git", "add", "-A", cwd=root)
    run("git", "commit", "-qm", "plots", cwd=root)
    curve = root / "results" / "plots" / "noise_dims.csv"
    lines = curve.read_text().splitlines()
    first = lines[1].split(",")
    first[2] = str(float(first[2]) / 2)
    curve.write_text("\n".join([lines[0], ",".join(first), *lines[2:]]) + "\n")
    log = run(sys.executable, "-m", "dvc", "plots", "diff", "HEAD", "-o", "plots_out", cwd=root)
    html = root / "plots_out" / "index.html"
    assert html.is_file(), f"`dvc plots diff` wrote no page; it printed:\n{log}"
    return html


def chromium(*args: str, profile: Path) -> str:
    return subprocess.run([require_tool("chromium"), *FLAGS, f"--user-data-dir={profile}",
                           *args], check=True, capture_output=True, text=True,
                          timeout=180).stdout


def test_the_page_loads_no_script_from_the_network(page):
    html = page.read_text()
    assert not re.search(r"<script[^>]*\bsrc=", html)
    assert "vegaEmbed" in html and "cdn.jsdelivr" not in html


def test_chromium_draws_every_plot_offline(page, tmp_path):
    plots = len(yaml.safe_load((REPO / "dvc.yaml").read_text())["plots"])
    dom = chromium("--dump-dom", page.as_uri(), profile=tmp_path / "dom")
    assert dom.count('class="marks"') == plots  # one drawn vega canvas (or svg) per plot
    assert "Error" not in re.sub(r"<script.*?</script>", "", dom, flags=re.S)
    shot = tmp_path / "plots.png"
    chromium(f"--screenshot={shot}", page.as_uri(), profile=tmp_path / "shot")
    from matplotlib.image import imread

    pixels = imread(shot)[..., :3]
    inked = np.any(pixels < 0.9, axis=2).mean()
    colours = len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert inked > 0.02 and colours > 20, (inked, colours)
