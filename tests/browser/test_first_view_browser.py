"""A graph's first view is readable: a drawing whose whole fit would shrink node text below
9 px opens at a readable zoom on its output node, with a corner hint that this is part of the
graph; Fit still shows all of it (and the hint says why it is small); a graph that fits
readably is fitted as before, with no hint. Text size is measured on screen (font size times
the text's screen CTM scale). LeNet runs in JupyterLab (tests/browser/notebooks/first_view.ipynb);
ResNet-50 and the 10k-node Llama of benchmarks/models.py on the standalone page of
benchmarks/browser_page.py. The default views are saved to docs/screenshots/first_view_*.png.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from explorer_page import Explorer, explorer_page
from graph_view import GRAPH, zoom_transform
from lab_page import save_screenshot
from playwright.sync_api import Locator

REPO = Path(__file__).resolve().parents[2]
DOCS_SCREENSHOTS = REPO / "docs" / "screenshots"
NOTEBOOK = "first_view.ipynb"
MIN_TEXT_PX = 9
HINT = "[data-testid=pvw-view-hint]"
PART = "Showing part of the graph"
WHOLE = "Whole graph: text too small to read"

# On-screen size (CSS px) of every node label: its font size times its screen CTM's scale.
TEXT_PX_JS = """(root) => [...root.querySelectorAll("[data-testid=pvw-graph] svg g.node text")]
  .map((t) => {
    const m = t.getScreenCTM();
    return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
  })"""


def text_px(root: Locator) -> list[float]:
    sizes = root.evaluate(TEXT_PX_JS)
    assert sizes, "no node labels drawn"
    return sizes


def rect(locator: Locator) -> dict[str, float]:
    return locator.evaluate("(el) => el.getBoundingClientRect().toJSON()")


def inside(inner: dict[str, float], outer: dict[str, float], tol: float = 1.0) -> bool:
    return (
        inner["left"] >= outer["left"] - tol
        and inner["top"] >= outer["top"] - tol
        and inner["right"] <= outer["right"] + tol
        and inner["bottom"] <= outer["bottom"] + tol
    )


def hint_text(root: Locator) -> str | None:
    hint = root.locator(HINT)
    return hint.inner_text() if hint.is_visible() else None


class View:
    """The widget's graph area, drawing and output node on screen."""

    def __init__(self, root: Locator) -> None:
        self.area = rect(root.locator(GRAPH))
        self.drawing = rect(root.locator(f"{GRAPH} svg > g"))
        outputs = root.locator(f"{GRAPH} svg g.node.pvw-output")
        self.output = rect(outputs.first) if outputs.count() else None
        self.text = text_px(root)
        self.hint = hint_text(root)

    @property
    def whole(self) -> bool:
        return inside(self.drawing, self.area)

    def assert_readable_on_output(self) -> None:
        why = f"node text {min(self.text):.1f} px on screen ({self.hint}, {self.drawing})"
        assert min(self.text) >= MIN_TEXT_PX, why
        assert self.output is not None and inside(self.output, self.area), (self.output, self.area)


def test_tall_lenet_opens_readable_on_its_output(chromium_browser: Any, lab_server: Any) -> None:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as ex:
        ex.page.wait_for_timeout(700)  # d3-graphviz takes the first drawing over once painted
        # One drawing: neither GraphWidget(y)'s placeholder graph (its comm opens before the
        # graph is built) nor the kernel's own state, which JupyterLab's widget manager
        # restores as it connects (from before the page's answer), is drawn before or after it.
        assert ex.renders() == 1
        first = View(ex.root)
        assert first.area["height"] < 600  # the 600 px widget, less toolbar and status line
        first.assert_readable_on_output()
        assert not first.whole, "LeNet is too tall to fit readably: only part of it shows"
        assert first.hint is not None and first.hint.startswith(PART)
        save_screenshot(ex.root, "first_view_lenet", DOCS_SCREENSHOTS)

        # The kernel's own state from before the page's answer (as JupyterLab's widget
        # manager restores it when the kernel replies late to its request for every widget's
        # state: nothing open) is answered again, not drawn: the first view stays.
        k, renders = zoom_transform(ex.page).k, ex.renders()
        stale = {"_resolved": [], "expanded": [], "depth": -1}
        ex.run(f"w._send({{'method': 'update', 'state': {stale!r}, 'buffer_paths': []}})")
        ex.page.wait_for_timeout(700)
        assert ex.renders() == renders and ex.root.get_attribute("data-visible-nodes") == "29"
        assert zoom_transform(ex.page).k == pytest.approx(k)
        assert ex.value("w._answered()") and ex.value("len(w.expanded)") > 0

        # Fit: all of it, however small; the hint says why.
        fit_and_wait(ex)
        fitted = View(ex.root)
        assert fitted.whole
        assert max(fitted.text) < MIN_TEXT_PX
        assert fitted.hint is not None and fitted.hint.startswith(WHOLE)

        # A new graph gets a first view of its own: a small one is fitted as before, no hint.
        set_graph(ex, "small")
        small = View(ex.root)
        assert small.whole and small.hint is None
        assert min(small.text) >= MIN_TEXT_PX
        before = zoom_transform(ex.page)
        fit_and_wait(ex)
        assert zoom_transform(ex.page).close_to(before), "the first view is Fit's view"

        # LeNet again (Fit was the last zoom the user asked for): the readable part again.
        set_graph(ex, "lenet")
        again = View(ex.root)
        again.assert_readable_on_output()
        assert not again.whole and again.hint is not None and again.hint.startswith(PART)

        # A later redraw keeps its zoom (anchoring): no refit to the whole graph.
        k = zoom_transform(ex.page).k
        renders = ex.renders()
        ex.set_expanded("w.collapse('conv')")
        assert ex.renders() > renders
        assert zoom_transform(ex.page).k == pytest.approx(k)
        assert min(text_px(ex.root)) >= MIN_TEXT_PX


def fit_and_wait(ex: Explorer) -> None:
    ex.page.get_by_test_id("pvw-fit").click()
    ex.page.wait_for_timeout(600)  # Fit animates


def set_graph(ex: Explorer, name: str) -> None:
    before = ex.renders()
    ex.run(f"w.graph = {name}")
    ex.wait_ready(after=before)


# -- ResNet-50 and the 10k-node Llama, on the standalone page (no Lab) ----------------------


def benchmark_module(name: str) -> ModuleType:
    """benchmarks/<name>.py, loaded by path (tests/models.py is `models` here)."""
    spec = importlib.util.spec_from_file_location(
        f"pvw_bench_{name}", REPO / "benchmarks" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def widget_state(name: str) -> dict[str, Any]:
    """What GraphWidget(y) sends for a traced benchmark model (as bench_browser.py does)."""
    from paddleviz_widget import GraphWidget, trace

    model, x = benchmark_module("models").MODELS[name]()
    with trace(model):
        y = model(x)
        y.sum().backward()
    w = GraphWidget(y)
    return {"graph": w.graph, "expanded": w.expanded, "depth": w.depth, "_request": w._request}


@pytest.fixture(scope="module")
def bench_page(chromium_browser: Any) -> Any:
    serve_page = benchmark_module("browser_page").serve_page
    states = {name: widget_state(name) for name in ("resnet50", "llama-10k")}
    payloads = {name: state.pop("graph") for name, state in states.items()}
    with serve_page(payloads) as url:
        context = chromium_browser.new_context(
            viewport={"width": 1400, "height": 1000}, device_scale_factor=2
        )
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("window.pvwBenchReady === true")
        try:
            yield page, states
        finally:
            context.close()


def mount(page: Any, name: str, state: dict[str, Any]) -> Locator:
    page.evaluate("(n) => window.pvwBench.load(n)", name)
    args = {**state, "height": "600px", "selected": "", "cold": True}
    page.evaluate("([n, s]) => window.pvwBench.mount(n, s)", [name, args])
    page.wait_for_function(
        "document.querySelector('[data-testid=pvw-root]').dataset.state === 'ready'"
    )
    page.wait_for_timeout(700)
    page.mouse.move(700, 950)  # below the widget: no button hovered from an earlier click
    return page.locator("[data-testid=pvw-root]")


@pytest.mark.parametrize("name", ["resnet50", "llama-10k"])
def test_big_graphs_open_readable_on_their_output(bench_page: Any, name: str) -> None:
    page, states = bench_page
    root = mount(page, name, states[name])
    first = View(root)
    first.assert_readable_on_output()
    # The hint is there exactly when the view does not hold the whole drawing.
    assert (first.hint is not None) == (not first.whole), (first.hint, first.drawing, first.area)
    if first.hint is not None:
        assert first.hint.startswith(PART)
    save_screenshot(root, f"first_view_{name.replace('-', '')}", DOCS_SCREENSHOTS)

    page.get_by_test_id("pvw-fit").click()
    page.wait_for_timeout(600)
    assert View(root).whole


def test_resnet50_is_too_tall_to_fit_readably(bench_page: Any) -> None:
    page, states = bench_page
    root = mount(page, "resnet50", states["resnet50"])
    assert View(root).hint == f"{PART} \u2014 Fit shows all"
    page.get_by_test_id("pvw-fit").click()
    page.wait_for_timeout(600)
    fitted = View(root)
    assert max(fitted.text) < MIN_TEXT_PX and fitted.hint is not None
    assert fitted.hint.startswith(WHOLE)
