"""Static pictures of the default view (paddleviz_widget/export, widget/static_picture.py)
against what the user sees: the nodes of the kernel's SVG are the ones the live explorer
draws in JupyterLab (LeNet, ResNet-18: tests/browser/notebooks/static_fallback.ipynb), and a
notebook converted to HTML by nbconvert shows the graph with JavaScript off."""

from __future__ import annotations

import html
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ahead import Ahead, ahead_fixture, commands
from explorer_page import ROOT, Explorer, explorer_page
from models import LeNet

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import nested_dict
from paddleviz_widget.widget.static_picture import CAPTION

NOTEBOOK = "static_fallback.ipynb"
HERE = Path(__file__).resolve().parent
NODES = "[data-testid=pvw-graph] svg g.node"

# In the kernel: the node ids of the static SVG (export) and of the output's fallback.
KERNEL_HELPERS = r"""
import html, re
from paddleviz_widget.export import render_picture, view_dot

def static_ids(w):
    svg = render_picture(view_dot(w.graph), "svg").decode()
    return sorted(html.unescape(i) for i in re.findall(r'<g id="([^"]+)" class="node', svg))

def fallback_ids(w):
    block = w._repr_mimebundle_()[0]["text/html"]
    ids = [html.unescape(i) for i in re.findall(r'<g id="([^"]+)" class="node', block)]
    return sorted(re.sub(r"^pvws[0-9a-f]{8}-", "", i) for i in ids)
"""

# Every visible node of the widget's view drawn, and the drawing finished.
DRAWN_JS = """([root, nodes]) => {
  const r = document.querySelectorAll(root)[%d];
  return r && r.dataset.state === "ready" &&
    r.querySelectorAll(nodes).length === Number(r.dataset.visibleNodes);
}"""


@pytest.fixture(scope="module")
def notebook(chromium_browser, lab_server) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as page:
        page.run(KERNEL_HELPERS)
        yield page


@pytest.mark.parametrize(("name", "index"), [("lenet", 0), ("resnet", 1)])
def test_the_static_svg_holds_the_nodes_the_explorer_draws(
    notebook: Explorer, name: str, index: int
) -> None:
    root = notebook.page.locator(ROOT).nth(index)
    root.scroll_into_view_if_needed()
    notebook.answered(name)
    notebook.page.wait_for_function(DRAWN_JS % index, arg=[ROOT, NODES], timeout=30_000)
    live = sorted(root.locator(NODES).evaluate_all("(els) => els.map((e) => e.id)"))
    assert len(live) > 10
    assert notebook.value(f"static_ids({name})") == live
    assert notebook.value(f"fallback_ids({name})") == live


def _lenet_notebook() -> str:
    nb = json.loads((HERE / "notebooks" / NOTEBOOK).read_text(encoding="utf-8"))
    nb["cells"] = [c for c in nb["cells"] if "resnet" not in "".join(c["source"])]
    return json.dumps(nb)


# As a notebook saved from JupyterLab, which keeps no widget state by default: with the state
# kept, nbconvert's HTML shows the widget's view (needing JavaScript) instead.
NBCONVERT = commands(
    {"lenet.ipynb": _lenet_notebook()},
    [sys.executable, "-m", "nbconvert", "--to", "html", "--execute",
     "--ExecutePreprocessor.store_widget_state=False", "--ExecutePreprocessor.timeout=300",
     "lenet.ipynb"],
    timeout=600,
)  # fmt: skip


# nbconvert's own kernel runs the LeNet notebook (tests/ahead.py) while the module's first
# tests wait for JupyterLab's.
ahead = ahead_fixture(
    "nbconvert",
    {"nbconvert": NBCONVERT},
    {"test_nbconvert_html_shows_the_graph_with_javascript_off": "nbconvert"},
    autouse=True,
)


def test_nbconvert_html_shows_the_graph_with_javascript_off(chromium_browser, ahead: Ahead) -> None:
    tmp_path, (run,) = ahead("nbconvert")
    assert run.returncode == 0, run.stderr[-3000:]
    page_html = (tmp_path / "lenet.html").read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-view+json" not in page_html.split("</head>")[-1]

    # The oracle: traced LeNet's default view opens every group, so it draws every GradNode,
    # each parameter labelled with its name.
    import paddle

    paddle.seed(0)
    model = LeNet()
    with trace(model):
        y = model(paddle.randn([1, 3, 32, 32]))
        y.sum().backward()
    nodes_in_graph = nested_dict(build_graph(y, model=model))["nodes"]
    params = sorted(n["param"]["name"] for n in nodes_in_graph if n.get("param"))

    context = chromium_browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto((tmp_path / "lenet.html").as_uri())
        svg = page.locator("div.pvw-static svg")
        assert svg.count() == 1 and svg.is_visible()
        box = svg.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 100
        nodes = svg.locator("g.node")
        assert nodes.count() == len(nodes_in_graph)
        assert all(nodes.nth(k).is_visible() for k in range(nodes.count()))
        drawn = set(svg.locator("g.node text").all_text_contents())
        assert len(params) == 10 and set(params) <= drawn
        assert page.get_by_text(CAPTION).is_visible()
        assert page.get_by_text("Loading widget").count() == 0
        assert html.unescape(page_html).count(CAPTION) == 1
    finally:
        context.close()


# -- in JupyterLab: the widget first, the picture after, and both in the saved notebook -------

LATE = "div.pvw-static-late"


def _saved_outputs(path: Path) -> list[list[dict]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [c.get("outputs", []) for c in nb["cells"] if c["cell_type"] == "code"]
    return [[o for o in out if o["output_type"] != "stream"] for out in cells]  # no warnings


def test_a_display_costs_the_cell_little_and_the_saved_notebook_holds_the_picture(
    notebook: Explorer, lab_server, chromium_browser, tmp_path: Path
) -> None:
    page = notebook.page
    # The kernel knows a widget front end is there, so displays leave the picture for later.
    notebook.run("from paddleviz_widget.widget.late_picture import wait_idle, widget_front_end")
    assert notebook.value("widget_front_end()")
    # What a display costs the cell: the CPU time of the kernel's main thread (load affects
    # it less than wall time), for a widget not displayed before.
    notebook.run(
        "import time\nfrom IPython.display import display\n"
        "w2 = GraphWidget.from_graph(resnet.graph)\n"
        "t, c = time.thread_time(), time.perf_counter()\ndisplay(w2)\n"
        "cost = [time.thread_time() - t, time.perf_counter() - c]\nassert wait_idle()"
    )
    cost = notebook.value("cost")
    assert cost[0] < 0.05, cost

    # In the live page: both widgets drawn, each picture output there but hidden.
    late = page.locator(LATE)
    page.wait_for_function(
        "(sel) => [...document.querySelectorAll(sel)].filter((e) => e.querySelector('svg'))"
        ".length === 2",
        arg=LATE,
        timeout=60_000,
    )
    assert late.count() == 2 and not any(late.nth(k).is_visible() for k in range(2))
    rows = page.locator(".jp-OutputArea-child:has(div.pvw-static-late)")
    assert all(rows.nth(k).bounding_box() is None for k in range(rows.count()))
    assert page.locator(ROOT).nth(0).is_visible()

    # Saved now, the notebook holds each widget and, in the same cell, its picture.
    assert page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')") is not False
    saved = lab_server.root / NOTEBOOK
    for _ in range(100):
        outputs = _saved_outputs(saved)
        if sum("pvw-static-late" in json.dumps(o) and "<svg" in json.dumps(o) for o in outputs):
            break
        page.wait_for_timeout(100)
    shown = [o for o in outputs if any("widget-view" in json.dumps(x) for x in o)]
    assert len(shown) == 2
    for cell in shown:
        widget, picture = cell
        assert "application/vnd.jupyter.widget-view+json" in widget["data"]
        assert "".join(widget["data"]["text/plain"]).startswith("GraphWidget: ")
        block = "".join(picture["data"]["text/html"])
        assert "<svg" in block and html.unescape(block).count(CAPTION) == 1

    # And nbconvert's HTML of that saved notebook (not executed again) shows both pictures
    # with JavaScript off, the LeNet one with every node the explorer draws.
    copy = tmp_path / "saved.ipynb"
    copy.write_text(saved.read_text(encoding="utf-8"), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(copy)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    context = chromium_browser.new_context(java_script_enabled=False)
    try:
        offline = context.new_page()
        offline.goto((tmp_path / "saved.html").as_uri())
        svgs = offline.locator("div.pvw-static svg")
        assert svgs.count() == 2 and all(svgs.nth(k).is_visible() for k in range(2))
        drawn = svgs.nth(0).locator("g.node").count()
        assert drawn == page.locator(ROOT).nth(0).locator(NODES).count() > 10
    finally:
        context.close()
