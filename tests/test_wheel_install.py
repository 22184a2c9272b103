"""A wheel installs and works where there is no Node.js (issue 12, item 5).

``python -m build`` makes the sdist and, from it, the wheel (Node is present at build time);
the wheel is installed into a fresh virtual environment with node/npm off PATH, and in that
environment the installed package (not the source tree's) traces a real LeNet, builds a
GraphWidget and saves it as the self-contained explorer (``w.save("lenet.html")``, made of the
installed ``static/`` files), which Chromium opens from file:// and draws, offline.

Slow for a unit test (15-30 s; up to a minute on a busy machine): a build, a virtual
environment, a pip install, a Python process that imports Paddle, and Chromium. Installing
Paddle and the other dependencies afresh would take minutes and a download, so the new
environment links the test environment's third-party packages in (every entry of its
site-packages but paddleviz_widget's own editable install, which points at the source tree);
pip then installs the wheel offline (--no-index), which also checks that every dependency the
wheel declares is satisfied there. tests/test_packaging.py checks that a wheel built from the
git-tracked sources alone runs the JS build itself; this module does not repeat that.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fixtures.graphs.payload import to_depth, visible_clusters, visible_nodes
from graph_dicts import nested

ROOT = Path(__file__).resolve().parents[1]
BUILT_STATIC = ROOT / "paddleviz_widget" / "static"  # what `npm run build` made (setup.sh)
SMOKE = ROOT / "tests" / "wheel_smoke.py"
READY = "[data-testid=pvw-root][data-state=ready]"


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert (BUILT_STATIC / "widget.js").is_file(), "run `npm run build` (scripts/setup.sh) first"
    out = tmp_path_factory.mktemp("dist")
    # Without isolation: the build tools are in the test environment, nothing is downloaded.
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)])
    return out


def no_node_env(venv: Path) -> dict[str, str]:
    """The environment of a user of `venv` without Node: its bin/ is all there is on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "NODE"))}
    env.update(PATH=str(venv / "bin"), VIRTUAL_ENV=str(venv))
    return env


def link_dependencies(venv: Path) -> None:
    """Make the test environment's third-party packages visible in `venv` (symlinks), except
    paddleviz_widget itself: the test environment has it installed editable, pointing at the
    source tree, which must not be importable in `venv`."""
    test_env = Path(sysconfig.get_paths()["purelib"])
    assert sys.prefix != sys.base_prefix, "run the tests from the project's virtual environment"
    new_env = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    assert new_env.is_dir(), new_env
    for entry in test_env.iterdir():
        if "paddleviz_widget" in entry.name.lower() or entry.name == "__pycache__":
            continue
        if entry.suffix == ".pth" and str(ROOT) in entry.read_text(encoding="utf-8"):
            continue
        (new_env / entry.name).symlink_to(entry)


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed by pip, with no Node on PATH."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    link_dependencies(venv)
    (wheel,) = dist.glob("*.whl")
    python = str(venv / "bin" / "python")
    # --isolated: no pip config or PIP_* variable (an extra index, find-links) takes part.
    run(
        [python, "-m", "pip", "--isolated", "install", "--no-index", str(wheel)],
        env=no_node_env(venv),
        cwd=venv,
    )
    return venv


def test_sdist_and_wheel_carry_every_built_front_end_file(dist: Path) -> None:
    built = sorted(p.name for p in BUILT_STATIC.iterdir() if p.is_file())
    assert {"widget.js", "widget.css"} <= set(built), built
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        shipped = {n.rsplit("/", 1)[1]: zf.getinfo(n).file_size for n in zf.namelist()
                   if n.startswith("paddleviz_widget/static/")}  # fmt: skip
    assert sorted(shipped) == built
    for name in built:
        assert shipped[name] == (BUILT_STATIC / name).stat().st_size, name
    # The sdist has the built files too (a wheel made from it needs no Node either), and the
    # sources to rebuild them.
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {f"paddleviz_widget/static/{name}" for name in built} <= names
    assert {"package.json", "package-lock.json", "js/widget.ts", "js/build.mjs"} <= names


@pytest.fixture(scope="module")
def smoke(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/wheel_smoke.py's output dir (report.json, lenet.html), run by the new
    environment's Python without Node."""
    out = tmp_path_factory.mktemp("smoke")
    python = str(venv / "bin" / "python")
    run([python, "-I", str(SMOKE), str(out)], env=no_node_env(venv), cwd=out)
    return out


@pytest.fixture(scope="module")
def report(smoke: Path) -> dict[str, Any]:
    return json.loads((smoke / "report.json").read_text(encoding="utf-8"))


def test_installed_package_runs_without_node(venv: Path, report: dict[str, Any]) -> None:
    assert report["tools"] == {"node": None, "npm": None, "npx": None}
    assert Path(report["prefix"]) == venv
    package = Path(report["package"])
    assert package.is_relative_to(venv) and not package.is_relative_to(ROOT), package
    assert len(report["graph"]["nodes"]) > 20  # the traced LeNet


DRAW_SCRIPT = """
import json, sys
from playwright.sync_api import sync_playwright
from browser.chromium import CHROMIUM_ARGS, chromium_path

uri, ready = sys.argv[1], sys.argv[2]
ids = "(els) => els.map((e) => e.id)"
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors, requests = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: requests.append(r.url))
    page.goto(uri)
    page.wait_for_selector(ready + " svg g.node", timeout=60_000)
    drawn = page.locator(ready + " svg g.node").evaluate_all(ids)
    clusters = page.locator(ready + " svg g.cluster").evaluate_all(ids)
    browser.close()
print(json.dumps({"drawn": drawn, "clusters": clusters, "errors": errors, "requests": requests}))
"""


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_saved_explorer_draws_the_graph_offline(smoke: Path, report: dict[str, Any]) -> None:
    # lenet.html was written by the installed package from its installed static files. The
    # browser runs in a process of its own: the suite's session Chromium already holds this
    # process's Playwright event loop, and a second sync_playwright() here would refuse.
    out = subprocess.run(
        [sys.executable, "-c", DRAW_SCRIPT, (smoke / "lenet.html").as_uri(), READY],
        capture_output=True, text=True, timeout=240, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    drawn, clusters = set(seen["drawn"]), set(seen["clusters"])
    errors, requests = seen["errors"], seen["requests"]
    graph = nested(report["graph"])
    opened = set(to_depth(graph, report["depth"]))
    assert drawn == {f"pvw-{i}" for i in visible_nodes(graph, opened)}
    assert clusters == {f"pvw-{g}-cluster" for g in visible_clusters(graph, opened)}
    assert len(drawn) > 5 and clusters, "the depth-1 view shows open and collapsed layers"
    assert not errors, errors
    # One file, offline: nothing but the page itself and what it makes in memory.
    assert all(url.startswith(("file:", "blob:", "data:")) for url in requests), requests
