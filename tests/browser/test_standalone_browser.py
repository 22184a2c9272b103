"""The saved explorer page and the SVG/PNG buttons (issue 12, part 1), in a real Chromium.

A page written by ``standalone_html`` is opened from file://, offline, with every request that
is not file:, blob: or data: aborted: it must draw real Paddle graphs, open a layer group on a
click, show the inspector, let no hostile name run, and save the drawing as SVG and PNG. In
JupyterLab, the same buttons save what the widget shows (direction, theme), and the widget's
view options reach the kernel. Expected values come from the payload (tests/fixtures/graphs/
payload.py reads it independently of the widget), from Graphviz's own attributes in the file,
or from the page; the saved files are read with ElementTree and Pillow.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

import paddle
import pytest
from explorer_page import ROOT, Explorer, explorer_page
from fixtures.graphs.payload import (
    largest_partial_group,
    representative,
    to_depth,
    visible_nodes,
    wrapper,
)
from hostile_model import CLASS, LAYERS, PARAM, hostile_output, hostile_params
from local_only import LOCAL, route_local_only
from models import traced_lenet_graph
from PIL import Image
from playwright.sync_api import Browser, Page
from stats_models import trained_with_stats

from paddleviz_widget import build_graph, trace
from paddleviz_widget.export.standalone import standalone_html

SVG = "{http://www.w3.org/2000/svg}"
VIEWPORT = {"width": 1300, "height": 860}
TIMEOUT_MS = 20_000
NODE_IDS_JS = (
    "() => [...document.querySelectorAll('[data-testid=pvw-graph] svg g.node')].map((g) => g.id)"
)
TEXTS_JS = (
    "(id) => [...document.getElementById(id).querySelectorAll('text')].map((t) => t.textContent)"
)
POINT = re.compile(r"(-?[\d.]+),(-?[\d.]+)")
ROWS_JS = "(rows) => rows.map((r) => [...r.children].map((c) => c.textContent))"
# Anything a name would leave in the page if it ever became markup or ran.
INJECTED_JS = """() => [
  ...document.querySelectorAll('img, iframe, object, embed, foreignObject'),
  ...document.querySelectorAll('svg a, svg image, svg script'),
  ...document.querySelectorAll('[onerror], [onload], [onclick]'),
].map((e) => e.outerHTML.slice(0, 200))"""


@dataclass
class SavedPage:
    page: Page
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def renders(self) -> int:
        return int(self.page.locator(ROOT).get_attribute("data-renders") or 0)

    def redrawn(self, action: Any) -> None:
        before = self.renders()
        action()
        self.page.wait_for_function(
            "([sel, n]) => { const r = document.querySelector(sel);"
            " return r.dataset.state === 'ready' && Number(r.dataset.renders) > n; }",
            arg=[ROOT, before],
            timeout=TIMEOUT_MS,
        )
        self.page.wait_for_timeout(600)  # the expand animation

    def node_ids(self) -> set[str]:
        return set(self.page.evaluate(NODE_IDS_JS))


@contextmanager
def saved_page(browser: Browser, path: Path) -> Iterator[SavedPage]:
    """`path` opened from file:// offline; on exit: no console error, no dialog, no request
    that left the file, and nothing a name injected."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_offline(True)
    saved = SavedPage(context.new_page())

    route_local_only(context, saved.blocked)
    page = saved.page
    page.on("request", lambda r: saved.requests.append(r.url))
    page.on("console", lambda m: saved.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: saved.errors.append(f"uncaught: {exc}"))
    page.on("dialog", lambda d: (saved.dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(path.as_uri())
        page.locator(f"{ROOT}[data-state=ready]").wait_for(timeout=TIMEOUT_MS)
        yield saved
        assert saved.errors == [], saved.errors
        assert saved.dialogs == [] and page.evaluate("() => window.__pwned") is None
        assert page.evaluate(INJECTED_JS) == []
        assert saved.blocked == [], f"the page asked the network for {saved.blocked}"
        assert all(u.startswith(LOCAL) for u in saved.requests), saved.requests
    finally:
        context.close()


@pytest.fixture(scope="module")
def lenet() -> dict[str, Any]:
    return traced_lenet_graph()


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_saved_page_runs_offline_from_file(chromium_browser, lenet, tmp_path: Path) -> None:
    path = _write(tmp_path, "lenet.html", standalone_html(lenet, depth=0))
    with saved_page(chromium_browser, path) as saved:
        page = saved.page
        root = page.locator(ROOT)
        # Graphviz runs in its Web Worker, started from a Blob URL, under file:// too.
        assert root.get_attribute("data-layout") == "worker"
        box = root.bounding_box()
        assert box is not None and box["height"] == VIEWPORT["height"]  # the whole window
        expanded = set(to_depth(lenet, 0))  # depth 0: a group around the whole model stays open
        assert saved.node_ids() == {f"pvw-{i}" for i in visible_nodes(lenet, expanded)}

        group = largest_partial_group(lenet)
        saved.redrawn(lambda: page.locator(f"[id='pvw-{group['id']}']").click())
        expanded.add(group["id"])
        assert saved.node_ids() == {f"pvw-{i}" for i in visible_nodes(lenet, expanded)}
        assert page.locator(f"[id='pvw-{group['id']}-cluster']").count() == 1

        node = next(n for n in lenet["nodes"] if f"pvw-{n['id']}" in saved.node_ids())
        page.locator(f"[id='pvw-{node['id']}']").click()
        inspector = page.get_by_test_id("pvw-inspector")
        inspector.wait_for(state="visible")
        assert inspector.get_attribute("data-id") == node["id"]
        assert page.get_by_test_id("pvw-inspector-title").text_content() == node["name"]

        # The Layers tab has no kernel to ask: the page carries its rows.
        page.get_by_test_id("pvw-tab-layers").click()
        total = page.get_by_test_id("pvw-layers-total")
        total.wait_for(state="visible", timeout=5_000)
        params = sum(
            math.prod(n["param"]["shape"]) for n in lenet["nodes"] if n.get("kind") == "param"
        )
        assert f"{params:,}" in (total.text_content() or "")


def test_saved_page_opens_on_the_view_it_was_given(chromium_browser, lenet, tmp_path) -> None:
    top = wrapper(lenet)
    group = largest_partial_group(lenet)
    expanded = [top, group["id"]]
    html = standalone_html(lenet, expanded=expanded, selected=group["id"], height="500px")
    with saved_page(chromium_browser, _write(tmp_path, "view.html", html)) as saved:
        assert saved.node_ids() == {f"pvw-{i}" for i in visible_nodes(lenet, set(expanded))}
        inspector = saved.page.get_by_test_id("pvw-inspector")
        inspector.wait_for(state="visible")
        assert inspector.get_attribute("data-id") == group["id"]
        box = saved.page.locator(ROOT).bounding_box()
        assert box is not None and box["height"] == 500


def _title(group: dict[str, Any]) -> str:
    name, kind = group["name"], group.get("type")
    return name if name == kind else f"{name} \u00b7 {kind}"


def test_hostile_names_in_a_saved_page_stay_text(chromium_browser, tmp_path: Path) -> None:
    model, y = hostile_output(traced=True)
    doc = build_graph(y, params=hostile_params(model))
    title = f"{LAYERS[1]} {CLASS}"
    groups = [g["id"] for g in doc["groups"]]
    html = standalone_html(doc, title=title, expanded=groups)
    with saved_page(chromium_browser, _write(tmp_path, "hostile.html", html)) as saved:
        page = saved.page
        assert page.title() == title
        assert page.locator("script").count() == 4  # the page's own, and no other
        for group in doc["groups"]:
            texts = page.evaluate(TEXTS_JS, f"pvw-{group['id']}-cluster")
            assert texts == f"\u25be {_title(group)}".split("\n")
        param = next(n for n in doc["nodes"] if (n.get("param") or {}).get("name") == PARAM)
        page.locator(f"[id='pvw-{param['id']}']").click()
        inspector = page.get_by_test_id("pvw-inspector")
        inspector.wait_for(state="visible")
        assert ["name", PARAM] in inspector.locator(".pvw-row").evaluate_all(ROWS_JS)


# -- saving the drawing -------------------------------------------------------------------------


def _download(page: Page, testid: str) -> tuple[str, bytes]:
    with page.expect_download() as info:
        page.get_by_test_id(testid).click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes()


def _rgb(css: str) -> tuple[int, int, int]:
    if css.startswith("#"):
        return tuple(int(css[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
    m = re.fullmatch(r"rgb\((\d+), (\d+), (\d+)\)", css)
    assert m, css
    return (int(m[1]), int(m[2]), int(m[3]))


def _luminance(rgb: tuple[int, int, int]) -> float:
    def f(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = map(f, rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _shape(g: ET.Element) -> ET.Element:
    return next(e for e in g if e.tag in {f"{SVG}path", f"{SVG}polygon", f"{SVG}ellipse"})


def _style(el: ET.Element) -> dict[str, str]:
    pairs = (p.split(":", 1) for p in (el.get("style") or "").split(";") if ":" in p)
    return {k.strip(): v.strip() for k, v in pairs}


@dataclass
class SvgFile:
    root: ET.Element
    width_pt: float
    height_pt: float

    def ids(self, kind: str) -> set[str]:
        return {g.get("id", "") for g in self.root.iter(f"{SVG}g") if kind in g.get("class", "")}

    def background(self) -> tuple[int, int, int]:
        rect = self.root.find(f"{SVG}rect")
        assert rect is not None, "the file has no background"
        return _rgb(rect.get("fill", ""))

    def centre_x(self, node_id: str) -> float:
        """Middle of the node's outline, in Graphviz's coordinates."""
        g = next(g for g in self.root.iter(f"{SVG}g") if g.get("id") == node_id)
        shape = _shape(g)
        if shape.tag == f"{SVG}ellipse":
            return float(shape.get("cx", "nan"))
        xs = [float(x) for x, _ in POINT.findall(shape.get("points") or shape.get("d") or "")]
        return (min(xs) + max(xs)) / 2


def _read_svg(filename: str, data: bytes) -> SvgFile:
    assert filename == "backward_graph.svg"
    root = ET.fromstring(data)  # well-formed XML, or this raises
    assert root.tag == f"{SVG}svg"
    # Only what is drawn: no hit areas for the pointer, no script, no external reference.
    assert not [p for p in root.iter(f"{SVG}path") if "pvw-hit" in p.get("class", "")]
    assert b"<script" not in data and b"href" not in data
    width, height = (float(root.get(k, "").removesuffix("pt")) for k in ("width", "height"))
    for g in root.iter(f"{SVG}g"):
        if "node" in g.get("class", "").split():  # styled in the file, not by widget.css
            assert "fill" in _style(_shape(g)) and "fill" in _style(next(g.iter(f"{SVG}text")))
    return SvgFile(root, width, height)


def _check_png(filename: str, data: bytes, svg: SvgFile) -> Image.Image:
    assert filename == "backward_graph.png"
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(BytesIO(data))
    # 2x the SVG's size in CSS pixels (a point is 4/3 px).
    want = (round(svg.width_pt * 4 / 3 * 2), round(svg.height_pt * 4 / 3 * 2))
    assert all(abs(a - b) <= 1 for a, b in zip(image.size, want)), (image.size, want)
    assert image.convert("RGB").getpixel((1, 1)) == svg.background()
    assert len(image.convert("RGB").getcolors(1_000_000) or []) > 20  # something is drawn
    return image


def test_saved_page_saves_the_drawing_with_its_grad_colours(chromium_browser, tmp_path) -> None:
    model, y = trained_with_stats(steps=3)
    doc = build_graph(y, model=model)
    with saved_page(chromium_browser, _write(tmp_path, "stats.html", standalone_html(doc))) as sp:
        svg = _read_svg(*_download(sp.page, "pvw-save-svg"))
        assert svg.ids("node") == sp.node_ids()
        assert svg.background() == (255, 255, 255)  # the light colours outside Jupyter
        graded = [g for g in svg.root.iter(f"{SVG}g") if "pvw-graded" in g.get("class", "")]
        assert graded, "colour by |grad| is on for a graph with statistics"
        for g in graded:  # the colour Graphviz was given, now written on the path itself
            path = next(g.iter(f"{SVG}path"))
            assert _rgb(_style(path)["stroke"]) == _rgb(path.get("stroke", ""))
        _check_png(*_download(sp.page, "pvw-save-png"), svg)


def test_saved_page_says_why_a_batchnorm_over_2_values_explodes(chromium_browser, tmp_path) -> None:
    """ResNet-18 at batch 2, 32x32: layer4's BatchNorms see 2 values per channel and the
    gradients are 3e5x the loss's (real). The overview's finding says why, not only "far
    above healthy scale"."""
    paddle.seed(0)
    model = paddle.vision.models.resnet18(num_classes=10)
    x, label = paddle.randn([2, 3, 32, 32]), paddle.randint(0, 10, [2, 1])
    with trace(model, stats=True):
        loss = paddle.nn.functional.cross_entropy(model(x), label)
        loss.backward()
        doc = build_graph(loss)
    with saved_page(chromium_browser, _write(tmp_path, "bn.html", standalone_html(doc))) as sp:
        finding = sp.page.get_by_test_id("pvw-inspector").get_by_text("total gradient norm")
        finding.wait_for(timeout=TIMEOUT_MS)
        why = finding.get_attribute("title") or ""
        assert "far above healthy scale" in why
        assert "BatchNorm layers normalise over only 2 values per channel" in why, why


# -- in JupyterLab ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def explorer(chromium_browser, lab_server) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, "explorer.ipynb") as page:
        yield page


def _view_options(explorer: Explorer, **want: Any) -> dict[str, Any]:
    """Poll the kernel until ``w._view_options`` has the values in ``want``."""
    for _ in range(100):
        got = explorer.value("w._view_options")
        if got and all(got.get(k) == v for k, v in want.items()):
            return got
        explorer.page.wait_for_timeout(100)
    raise AssertionError(f"w._view_options is {got}, wanted {want}")


def test_view_options_reach_the_kernel(explorer: Explorer) -> None:
    first = _view_options(explorer, rankdir="TB")
    assert first == {"rankdir": "TB", "edgeLabels": False, "gradColour": False, "step": None}
    direction = explorer.page.get_by_test_id("pvw-direction")
    explorer.redrawn(lambda: direction.select_option("LR"))
    _view_options(explorer, rankdir="LR", edgeLabels=False)
    explorer.redrawn(lambda: explorer.page.get_by_test_id("pvw-edge-labels").check())
    _view_options(explorer, rankdir="LR", edgeLabels=True)
    explorer.redrawn(lambda: direction.select_option("TB"))
    explorer.redrawn(lambda: explorer.page.get_by_test_id("pvw-edge-labels").uncheck())
    _view_options(explorer, rankdir="TB", edgeLabels=False)


def test_jupyterlab_buttons_save_what_is_shown(explorer: Explorer) -> None:
    page = explorer.page
    graph = explorer.value("w.graph")
    output = next(n for n in graph["nodes"] if n.get("kind") == "output")
    explorer.set_expanded("w.collapse_all()")
    shown = representative(graph, output, set(explorer.value("w.expanded")))
    explorer.redrawn(lambda: page.get_by_test_id("pvw-direction").select_option("LR"))
    try:
        svg = _read_svg(*_download(page, "pvw-save-svg"))
        assert svg.ids("node") == explorer.node_ids()
        assert svg.ids("cluster") == explorer.cluster_ids()
        # Left to right: the loss's GradNode, where the backward starts, is leftmost.
        xs = {i: svg.centre_x(i) for i in svg.ids("node")}
        assert xs[f"pvw-{shown}"] == min(xs.values())
        assert svg.width_pt > svg.height_pt
        _check_png(*_download(page, "pvw-save-png"), svg)

        explorer.set_theme("JupyterLab Dark")
        dark = _read_svg(*_download(page, "pvw-save-svg"))
        assert _luminance(dark.background()) < 0.1
        text = next(dark.root.iter(f"{SVG}text"))
        assert _luminance(_rgb(_style(text)["fill"])) > 0.4  # light text on the dark ground
    finally:
        explorer.set_theme("JupyterLab Light")
        explorer.redrawn(lambda: page.get_by_test_id("pvw-direction").select_option("TB"))
