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


def _lenet_notebook(directory: Path) -> Path:
    nb = json.loads((HERE / "notebooks" / NOTEBOOK).read_text(encoding="utf-8"))
    nb["cells"] = [c for c in nb["cells"] if "resnet" not in "".join(c["source"])]
    path = directory / "lenet.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_nbconvert_html_shows_the_graph_with_javascript_off(
    chromium_browser, tmp_path: Path
) -> None:
    # As a notebook saved from JupyterLab, which keeps no widget state by default: with the
    # state kept, nbconvert's HTML shows the widget's view (needing JavaScript) instead.
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "html",
            "--execute",
            "--ExecutePreprocessor.store_widget_state=False",
            "--ExecutePreprocessor.timeout=300",
            str(_lenet_notebook(tmp_path)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
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
