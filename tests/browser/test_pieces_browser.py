"""A big graph goes to the page in deflated pieces of JSON text (widget/wire.py), each inflated
and read in its own task (js/kernel_sync.ts), in a real JupyterLab: the ~10k-node Llama of
benchmarks/models.py takes that path here (tests/browser/notebooks/pieces.ipynb lowers the
threshold for its kernel). The folded first view paints, the page holds the whole graph (its
counts, an inspector's shapes against the kernel's document), and a save after it holds the
whole document."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from explorer_page import GRAPH, TIMEOUT_MS, Explorer, explorer_page
from fixtures.graphs.payload import shape_text
from lab_page import save_screenshot

NOTEBOOK = "pieces.ipynb"


@pytest.fixture(scope="module")
def explorer(chromium_browser, lab_server) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as page:
        yield page


@pytest.fixture(scope="module")
def doc(explorer: Explorer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The kernel's document, through a file (printed, it would trip IOPub's rate limit)."""
    path = tmp_path_factory.mktemp("doc") / "w.json"
    explorer.run(f"import json; json.dump(w.graph, open({str(path)!r}, 'w'))")
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_graph_went_in_pieces_and_the_folded_view_paints(
    explorer: Explorer, doc: dict[str, Any]
) -> None:
    assert len(doc["nodes"]) > 9000
    sent = explorer.value(
        "sorted(__import__('paddleviz_widget.widget.wire', fromlist=['w'])"
        ".graph_to_json(w.graph, __import__('types').SimpleNamespace()))"
    )
    assert sent == ["deflate", "edges", "head", "nodes"], "this kernel sends deflated pieces"
    explorer.wait_ready()
    ids = explorer.node_ids()
    assert any(".." in i for i in ids), f"a folded run of blocks is drawn: {sorted(ids)}"
    status = explorer.root.get_by_test_id("pvw-status").inner_text()
    # The page read every piece: its counts are the whole document's.
    assert f"{len(doc['nodes'])} GradNodes" in status
    assert f"{len(doc['edges'])} edges" in status
    assert f"{len(doc['groups'])} layer groups" in status
    save_screenshot(explorer.root, "pieces_folded")
    # Inflated by the page's inflate worker (js/inflate_worker.ts): Lab's page lets it run.
    names = [worker.evaluate("self.name") for worker in explorer.page.workers]
    assert "paddleviz-widget-inflate" in names, names


def test_the_inspector_shows_what_the_last_pieces_carried(
    explorer: Explorer, doc: dict[str, Any]
) -> None:
    # The output node and the first edge out of it (edges come in the last pieces).
    node = doc["nodes"][0]
    group = next(g for g in doc["groups"] if g["id"] == node["group"])
    explorer.set_expanded(f"w.expand({group['id']!r})")
    explorer.element(f"pvw-{node['id']}").click()
    inspector = explorer.page.get_by_test_id("pvw-inspector")
    explorer.page.wait_for_function(
        "(id) => document.querySelector('[data-testid=pvw-inspector]').dataset.id === id",
        arg=node["id"],
        timeout=TIMEOUT_MS,
    )
    text = inspector.inner_text()
    dtype, shape, _ = doc["tensors"][node["tensor"]]
    assert node["name"] in text and shape_text(shape) in text and dtype in text
    last = doc["edges"][-1]
    explorer.run(f"w.selected = {last['id']!r}")
    explorer.page.wait_for_function(
        "(id) => document.querySelector('[data-testid=pvw-inspector]').dataset.id === id",
        arg=last["id"],
        timeout=TIMEOUT_MS,
    )
    text = inspector.inner_text()
    assert shape_text(doc["tensors"][last["grad"]][1]) in text
    assert explorer.page.locator(f"{GRAPH} svg g.node").count() > 0


def test_a_save_after_holds_the_whole_document(
    explorer: Explorer, doc: dict[str, Any], tmp_path: Path
) -> None:
    saved, page = tmp_path / "saved.json", tmp_path / "saved.html"
    explorer.run(f"w.save({str(saved)!r}); w.save({str(page)!r})")
    assert json.loads(saved.read_text(encoding="utf-8")) == doc
    assert f'"id":"{doc["nodes"][-1]["id"]}"' in page.read_text(encoding="utf-8")
