"""The figures and report stages on a small run, and their outputs as a reader sees them.

REPORT.html is opened in headless Chromium over the DevTools protocol: every image must load
and the console stay free of errors, for the linked and the self-contained page; screenshots
(top of the page, whole page scaled) are saved in the workspace. The paper is built with
latexmk and its pages rendered to PNG with pdftoppm. Chromium, latexmk and pdftoppm are Debian
packages; without them these tests skip locally and fail under CI.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import shutil

import aiohttp
import pytest

from drfidelity.report.studies import study_paper_figures

from pipeline_helpers import stage, tree_digest
from report_helpers import DATASETS, build_report_workspace, require_tool

pytestmark = pytest.mark.slow  # CI runs it (make test-slow); it builds a small pipeline

OUTPUTS = ("figures", "REPORT.md", "REPORT.html", "paper/tables", "paper/macros.tex",
           "paper/figures")

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--remote-debugging-port=0")
WIDTH, HEIGHT = 1200, 900
IMAGES = ("JSON.stringify(Array.from(document.images).map("
          "i => [i.getAttribute('src').slice(0, 80), i.complete && i.naturalWidth > 0]))")


@pytest.fixture(scope="module")
def report_root(tmp_path_factory) -> Path:
    return build_report_workspace(tmp_path_factory.mktemp("browser"))


class DevTools:
    """The few DevTools calls the test needs, on one page target."""

    def __init__(self, socket):
        self.socket, self.next_id, self.events = socket, 0, []

    async def call(self, method: str, **params):
        self.next_id += 1
        await self.socket.send_json({"id": self.next_id, "method": method, "params": params})
        while True:
            message = json.loads((await self.socket.receive()).data)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    async def wait_for(self, event: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == event for e in self.events):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"timed out waiting for {event}"
            message = await self.socket.receive(timeout=remaining)
            self.events.append(json.loads(message.data))

    def errors(self) -> list[str]:
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:300])
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(json.dumps(params.get("args"))[:300])
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"].get("text", "")[:300])
        return found


async def inspect(port: int, url: str, shots: Path) -> tuple[list, list[str]]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
            pages = [t for t in await response.json() if t["type"] == "page"]
        async with session.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            tools = DevTools(ws)
            for domain in ("Runtime", "Log", "Page"):
                await tools.call(f"{domain}.enable")
            await tools.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
                             deviceScaleFactor=1, mobile=False)
            await tools.call("Page.navigate", url=url)
            await tools.wait_for("Page.loadEventFired")
            images = json.loads((await tools.call("Runtime.evaluate", expression=IMAGES))
                                ["result"]["value"])
            top = await tools.call("Page.captureScreenshot", format="png")
            (shots.with_name(shots.name + "-top.png")).write_bytes(base64.b64decode(top["data"]))
            size = (await tools.call("Page.getLayoutMetrics"))["cssContentSize"]
            whole = await tools.call("Page.captureScreenshot", format="png",
                                     captureBeyondViewport=True,
                                     clip={"x": 0, "y": 0, "width": size["width"],
                                           "height": size["height"], "scale": 0.25})
            (shots.with_name(shots.name + "-page.png")).write_bytes(
                base64.b64decode(whole["data"]))
            return images, tools.errors()


def open_in_chromium(html: Path, shots: Path, profile: Path) -> tuple[list, list[str]]:
    chromium = require_tool("chromium")
    process = subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert process.poll() is None, "chromium exited before opening its DevTools port"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        return asyncio.run(inspect(port, html.resolve().as_uri(), shots))
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize("variant", ["linked", "standalone"])
def test_report_html_loads_every_image_without_console_errors(report_root, tmp_path, variant):
    page = report_root / "REPORT.html"
    if variant == "standalone":
        page = report_root / "REPORT.standalone.html"
        subprocess.run([sys.executable, "-m", "drfidelity.report.standalone",
                        str(report_root / "REPORT.html"), str(page)], check=True)
        assert 'src="figures/' not in page.read_text()
    shots = report_root / f"screenshot-{variant}"
    images, errors = open_in_chromium(page, shots, tmp_path / "profile")
    n_figures = page.read_text().count("<img ")
    assert len(images) == n_figures >= 9 * 5
    assert [src for src, ok in images if not ok] == []
    assert errors == []
    assert shots.with_name(shots.name + "-top.png").stat().st_size > 10_000
    print(f"screenshots: {shots}-top.png, {shots}-page.png")


def test_stages_write_every_figure_and_say_which_method_is_missing(report_root):
    facts = [json.loads((report_root / "figures" / d / "facts.json").read_text())
             for d in DATASETS]
    pngs = sorted((report_root / "figures").rglob("*.png"))
    assert len(pngs) == 9 * len(DATASETS) == sum(len(f["files"]) for f in facts)
    assert all(f["methods"] == ["PCA", "Isomap"] for f in facts)
    report = (report_root / "REPORT.md").read_text()
    for dataset in DATASETS:
        assert f"figures/{dataset}/" in report
    # toorPIA has no cached map and no key here: the captions and tables say so, with the reason
    reason = "TOORPIA_API_KEY unset"
    assert report.count("Not shown: toorPIA (no map at") >= len(DATASETS) * 9
    assert reason in report and reason in (report_root / "REPORT.html").read_text()
    for dataset in DATASETS:
        tex = (report_root / "paper" / "tables" / f"{dataset}.tex").read_text()
        assert "Not run: toorPIA" in tex and reason.replace("_", "\\_") in tex
    assert reason.replace("_", "\\_") in (report_root / "paper" / "macros.tex").read_text()


def test_rerunning_figures_and_report_gives_identical_bytes(report_root, tmp_path):
    again = tmp_path / "again"
    shutil.copytree(report_root, again, symlinks=True,
                    ignore=shutil.ignore_patterns("screenshot-*"))
    for name in OUTPUTS:
        target = again / name
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    for dataset in DATASETS:
        stage(again, "figures", dataset)
    stage(again, "report")
    assert tree_digest(again, *OUTPUTS) == tree_digest(report_root, *OUTPUTS)


def test_paper_builds_and_every_page_renders(report_root, tmp_path):
    latexmk = require_tool("latexmk")
    pdftoppm = require_tool("pdftoppm")
    paper = tmp_path / "paper"
    shutil.copytree(report_root / "paper", paper)
    tex = (paper / "main.tex").read_text()
    graphics = re.findall(r"\{([\w-]+\.png)\}", tex)  # \includegraphics and \figurepair
    # study figures are drawn only when built (this small run builds none): a framed note
    optional = {g for g in graphics if g.startswith("study_")}
    assert optional == {f"study_{key}.png" for key in study_paper_figures()}
    required = set(graphics) - optional
    assert len(required) >= 10 and all((paper / "figures" / g).exists() for g in required)
    build = subprocess.run([latexmk, "-pdf", "-interaction=nonstopmode", "-halt-on-error",
                            "main.tex"], cwd=paper, capture_output=True, text=True)
    log = (paper / "main.log").read_text(errors="replace")
    assert build.returncode == 0, log[-3000:]
    unresolved = re.findall(r"(?:Reference|Citation) `[^']+' on page \d+ undefined", log)
    assert unresolved == [] and "There were undefined references" not in log
    subprocess.run([pdftoppm, "-r", "50", "-png", str(paper / "main.pdf"),
                    str(report_root / "paper-page")], check=True)
    pages = sorted(report_root.glob("paper-page-*.png"))
    assert len(pages) >= 5
    assert all(p.stat().st_size > 5_000 for p in pages)
    print("pages:", *pages)
