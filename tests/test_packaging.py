"""A wheel built from the sources alone carries the JS bundle (issue 2, item 1).

Builds from a copy of the git-tracked files, so no prebuilt bundle or node_modules can leak in:
the hatch-jupyter-builder hook must run npm and esbuild by itself.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return [f for f in out.split("\0") if f]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to build the widget bundle; install Node.js 20+")
    src = tmp_path_factory.mktemp("src")
    for rel in _tracked_files():
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    assert not (src / "paddleviz_widget" / "static").exists()
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=src,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    (built,) = out.glob("*.whl")
    return built


def test_wheel_contains_bundle_css_and_schema(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        bundle = zf.read("paddleviz_widget/static/widget.js")
    assert "paddleviz_widget/static/widget.css" in names
    assert "paddleviz_widget/schema/graph.schema.json" in names
    # d3-graphviz and the Graphviz WASM are inside: the bundle is large and self-contained.
    assert len(bundle) > 500_000
    assert b"renderDot" in bundle
    assert not any(n.startswith(("node_modules/", "js/", "tests/")) for n in names)


def test_bundle_fetches_nothing_from_a_cdn(wheel):
    with zipfile.ZipFile(wheel) as zf:
        bundle = zf.read("paddleviz_widget/static/widget.js").decode("utf-8", "replace")
    for host in ("unpkg.com", "jsdelivr", "cdnjs", "esm.sh", "skypack"):
        assert host not in bundle
