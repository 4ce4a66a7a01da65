"""Write the offline page template of ``dvc plots show`` / ``dvc plots diff``.

DVC's own page loads Vega, Vega-Lite and Vega-Embed from a CDN, so it stays blank without a
network. This script fetches the three packages from the npm registry (``npm pack``, pinned
versions, checked against the registry's sha512 integrity), and writes
``.dvc/plots/offline.html``: a page template (DVC's ``{plot_divs}`` placeholder) with the
three minified bundles inlined and their BSD-3-Clause licences quoted. ``.dvc/config`` points
``plots.html_template`` at it, so ``dvc plots show`` works offline with no option.

The template is committed; run this only to move to other versions (edit PACKAGES):

    python tools/vega_template.py
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

#: (package, version, npm integrity, bundle inside the tarball): loaded in this order, as
#: vega-embed needs vega and vega-lite defined
PACKAGES = (
    ("vega", "5.33.1",
     "sha512-1fArfVDUqVbb5z8n+/nVQb+VNBzx8svY6CrsyTK4Ujm4yrd9I1auoKxBAPXLCavY1LcrbHUskQbGUP8gXOzyQw==",
     "package/build/vega.min.js"),
    ("vega-lite", "5.23.0",
     "sha512-l4J6+AWE3DIjvovEoHl2LdtCUkfm4zs8Xxx7INwZEAv+XVb6kR6vIN1gt3t2gN2gs/y4DYTs/RPoTeYAuEg6mA==",
     "package/build/vega-lite.min.js"),
    ("vega-embed", "6.29.0",
     "sha512-PmlshTLtLFLgWtF/b23T1OwX53AugJ9RZ3qPE2c01VFAbgt3/GSNI/etzA/GzdrkceXFma+FDHNXUppKuM0U6Q==",
     "package/build/vega-embed.min.js"),
)
TEMPLATE = Path(__file__).resolve().parent.parent / ".dvc" / "plots" / "offline.html"
#: DVC fills these in the template; a bundle must not contain them
PLACEHOLDERS = ("{plot_divs}", "{scripts}", "{refresh_tag}")
STYLE = ("body{font-family:sans-serif;margin:1em}"
         "div[id]{display:inline-block;vertical-align:top;margin:0 1em 1em 0}")


def fetch(package: str, version: str, integrity: str, folder: Path) -> tarfile.TarFile:
    """The package's tarball from the npm registry, refused unless its sha512 matches."""
    name = subprocess.run(["npm", "pack", f"{package}@{version}", "--silent",
                           "--pack-destination", str(folder)], check=True, text=True,
                          capture_output=True).stdout.strip().splitlines()[-1]
    data = (folder / name).read_bytes()
    found = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if found != integrity:
        raise SystemExit(f"vega_template: {package}@{version}: integrity {found} is not the "
                         f"pinned {integrity}")
    return tarfile.open(folder / name)


def licence_text(archive: tarfile.TarFile) -> str:
    """The package's LICENSE file; for a package that ships none (vega), its package.json
    licence and where the text lives."""
    if "package/LICENSE" in archive.getnames():
        return archive.extractfile("package/LICENSE").read().decode()
    meta = json.load(archive.extractfile("package/package.json"))
    return (f"{meta['license']}, author {meta.get('author')} (the package ships no LICENSE "
            f"file; the text is in its GitHub repository {meta.get('repository')}, LICENSE)")


def page(parts: list[tuple[str, str, str, str]]) -> str:
    """The template: licences (HTML comments), the bundles inline, DVC's placeholders."""
    notices, scripts = [], []
    for package, version, licence, bundle in parts:
        for mark in PLACEHOLDERS:
            if mark in bundle:
                raise SystemExit(f"vega_template: {package} contains DVC's {mark}")
        notices.append(f"<!-- {package} {version}, from the npm registry; its licence:\n"
                       f"{licence.replace('--', '- -').strip()}\n-->")
        inline = bundle.replace("</script", "<\\/script")  # would end the element early
        scripts.append(f"<script>/* {package} {version} */\n{inline}\n</script>")
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n{refresh_tag}\n"
            "<title>drfidelity: DVC plots</title>\n"
            "<!-- Written by tools/vega_template.py: DVC's plots page with Vega, Vega-Lite "
            "and Vega-Embed inlined, so that it renders offline. -->\n"
            + "\n".join(notices) + "\n" + "\n".join(scripts)
            + f"\n<style>{STYLE}</style>\n</head>\n<body>\n{{plot_divs}}\n</body>\n</html>\n")


def main() -> int:
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for package, version, integrity, bundle in PACKAGES:
            with fetch(package, version, integrity, Path(tmp)) as archive:
                licence = licence_text(archive)
                code = archive.extractfile(bundle).read().decode()
            parts.append((package, version, licence, code))
    TEMPLATE.write_text(page(parts), encoding="utf-8")
    print(f"vega_template: wrote {TEMPLATE} ({TEMPLATE.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
