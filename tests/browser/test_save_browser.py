"""GraphWidget.save writes the view the page shows (issue 12): its open layer groups, its
direction and its edge labels, as the user left them in a real JupyterLab. The oracle is the
page's own drawing."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from explorer_page import GRAPH, Explorer, explorer_page

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def explorer(chromium_browser, lab_server) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, "explorer.ipynb") as page:
        yield page


def saved_ids(svg: Path, kind: str) -> set[str]:
    groups = ET.parse(svg).getroot().iter(f"{SVG}g")
    return {g.get("id", "") for g in groups if kind in (g.get("class") or "").split()}


def saved_edge_labels(svg: Path) -> list[str]:
    groups = ET.parse(svg).getroot().iter(f"{SVG}g")
    edges = [g for g in groups if "edge" in (g.get("class") or "").split()]
    return sorted(t.text or "" for g in edges for t in g.iter(f"{SVG}text"))


def page_edge_labels(explorer: Explorer) -> list[str]:
    texts = explorer.page.locator(f"{GRAPH} svg g.edge text")
    return sorted(texts.evaluate_all("(els) => els.map((e) => e.textContent)"))


def test_save_writes_the_view_on_screen(explorer: Explorer, tmp_path: Path) -> None:
    explorer.set_expanded("w.collapse_all()")
    explorer.set_expanded("w.expand('conv')")
    toolbar = explorer.page.get_by_test_id
    explorer.redrawn(lambda: toolbar("pvw-direction").select_option("LR"))
    explorer.redrawn(lambda: toolbar("pvw-edge-labels").check())
    for _ in range(100):  # the page reports how it draws to the kernel
        options = explorer.value("w._view_options")
        if options.get("rankdir") == "LR" and options.get("edgeLabels"):
            break
        explorer.page.wait_for_timeout(50)
    svg, dot, html = tmp_path / "view.svg", tmp_path / "view.dot", tmp_path / "view.html"
    explorer.run(f"w.save({str(svg)!r}); w.save({str(dot)!r}); w.save({str(html)!r})")

    assert saved_ids(svg, "node") == explorer.node_ids()
    assert saved_ids(svg, "cluster") == explorer.cluster_ids()
    assert saved_edge_labels(svg) == page_edge_labels(explorer) != []
    assert "rankdir=LR" in dot.read_text()
    state = html.read_text().split('id="pvw-state">', 1)[1].split("</script>", 1)[0]
    assert sorted(json.loads(state)["expanded"]) == sorted(explorer.value("w.expanded"))
