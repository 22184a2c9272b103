"""The run explorer's rank axis (issue 21 item 3) in a real Chromium: JupyterLab on a 4-rank
run written by the run log's own writer (tests/rank_logs.py: a NaN in rank 2's batch at step
5, a branch only rank 1 takes), and the saved page of the same run from file://. The rank
selector, the rank x layer view, the cross-rank report list and its graph difference; the
kernel's ``w.rank`` / ``w.step`` / ``w.layer`` and the canvas's pixels are what is checked."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from explorer_page import Explorer, explorer_page
from lab_page import save_screenshot
from lab_server import LabServer
from playwright.sync_api import Browser
from run_page import NONFINITE_RGB, RUN_ROOT, TIMEOUT_MS

TESTS = Path(__file__).resolve().parents[1]
NOTEBOOK = "rank_explorer.ipynb"
GRID_PIXEL_JS = """([canvas, rank, row, R, L]) => {
  const d = canvas.getContext("2d").getImageData(
    Math.floor((rank + 0.5) * canvas.width / R), Math.floor((row + 0.5) * canvas.height / L),
    1, 1).data;
  return [d[0], d[1], d[2]];
}"""


def _write(path: Path) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from rank_logs import Plant, ranked_run

    # every=1: every step captured in full, so the explorer opens on a graph (step 5)
    return ranked_run(path, world_size=4, steps=30, every=1, plant=Plant(nan=(2, 5), branch_rank=1))


@pytest.fixture(scope="module")
def oracle(lab_server: LabServer) -> dict[str, Any]:
    return _write(lab_server.root / "runs" / "ranks4")


@pytest.fixture(scope="module")
def lab(
    chromium_browser: Browser, lab_server: LabServer, oracle: dict[str, Any]
) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
        yield explorer


def _wait(page: Any, root: Any, js: str) -> None:
    page.wait_for_function(f"(r) => {js}", arg=root.element_handle(), timeout=TIMEOUT_MS)


def _grid_pixel(root: Any, rank_index: int, row: int, L: int) -> list[int]:
    canvas = root.get_by_test_id("pvw-run-rank-grid")
    return canvas.evaluate("(c, a) => (" + GRID_PIXEL_JS + ")([c, ...a])", [rank_index, row, 4, L])


def check_report_and_grid(page: Any, root: Any, layers: list[str]) -> None:
    """Opened on the first finding: rank 2, step 5; two findings in words; every rank's every
    layer red (NaN/Inf) at step 5 in the rank x layer view."""
    _wait(page, root, "r.dataset.shownStep === '5'")
    assert root.get_by_test_id("pvw-run-rank").input_value() == "2"
    assert root.get_by_test_id("pvw-run-title").inner_text().endswith("rank-00002")
    findings = root.get_by_test_id("pvw-run-finding")
    assert findings.count() == 2
    first, second = findings.nth(0).inner_text(), findings.nth(1).inner_text()
    assert first.startswith("non-finite") and "step 5: rank 2 went non-finite first" in first
    assert second.startswith("missing gradient") and "ranks 0, 2, 3" in second
    assert "branch.weight" in second and "with one on rank 1" in second
    caption = root.get_by_test_id("pvw-run-ranks-caption").first.inner_text()
    assert "step 5" in caption and "ranks 0-3" in caption, caption
    for r in range(4):
        assert _grid_pixel(root, r, layers.index("fc1"), len(layers)) == NONFINITE_RGB


def test_lab_rank_selector_report_and_graph_difference(lab: Explorer) -> None:
    page = lab.page
    root = page.locator(RUN_ROOT).first
    layers = lab.value("w.run['layers']")
    check_report_and_grid(page, root, layers)
    assert (lab.value("w.rank"), lab.value("w.step")) == (2, 5)
    save_screenshot(root, "rank_explorer_lab_opening")

    # The selector: rank 1 is shown; the step stays; the grid marks rank 1's column.
    root.get_by_test_id("pvw-run-rank").select_option("1")
    assert lab.value_becomes("w.rank", 1) == 1
    _wait(
        page,
        root,
        "r.querySelector('[data-testid=pvw-run-title]').textContent.endsWith('rank-00001')",
    )
    assert lab.value("w.step") == 5

    # A finding clicked picks its rank, step and layer; at step 12 the branch is white
    # (no gradient) on ranks 0, 2, 3 and coloured on rank 1.
    root.get_by_test_id("pvw-run-finding").nth(1).click()
    assert lab.value_becomes("[w.rank, w.step, w.layer]", [0, 0, "branch"]) == [0, 0, "branch"]
    lab.run("w.step = 12")
    _wait(page, root, "r.dataset.shownStep === '12'")
    page.wait_for_timeout(300)
    row = layers.index("branch")
    pixels = [_grid_pixel(root, r, row, len(layers)) for r in range(4)]
    assert pixels[0] == pixels[2] == pixels[3] == [255, 255, 255], pixels
    assert pixels[1] not in ([255, 255, 255], NONFINITE_RGB), pixels

    # Its graph difference: the branch's nodes added, drawn by the explorer's diff.
    root.get_by_test_id("pvw-run-finding-diff").click()
    _wait(page, root, "r.dataset.detail === 'diff'")
    page.wait_for_function(
        "(r) => r.querySelector('[data-testid=pvw-root]')?.dataset.state === 'ready'",
        arg=root.element_handle(), timeout=TIMEOUT_MS,
    )  # fmt: skip
    title = root.get_by_test_id("pvw-run-detail-title").inner_text()
    assert title.startswith("Graph difference at step") and "rank 0 (without" in title, title
    added = root.locator("[data-testid=pvw-graph] g.node.pvw-diff-added")
    assert added.count() > 0
    save_screenshot(root, "rank_explorer_lab_diff")


def test_saved_page_switches_rank_offline(
    chromium_browser: Browser, oracle: dict[str, Any], lab_server: LabServer, tmp_path: Path
) -> None:
    from paddleviz_widget.runs.ranks import open_ranks
    from paddleviz_widget.runs.view_page import save_run_html

    ranked = open_ranks(lab_server.root / "runs" / "ranks4")
    out = save_run_html(ranked, tmp_path / "ranks.html")
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 950})
    try:
        page = context.new_page()
        page.goto(out.as_uri())
        root = page.locator(RUN_ROOT).first
        check_report_and_grid(page, root, ranked.layers)
        root.get_by_test_id("pvw-run-rank").select_option("3")
        _wait(
            page,
            root,
            "r.querySelector('[data-testid=pvw-run-title]').textContent.endsWith('rank-00003')",
        )
        root.get_by_test_id("pvw-run-finding-diff").click()
        _wait(page, root, "r.dataset.detail === 'diff'")
        save_screenshot(root, "rank_explorer_saved_page")
    finally:
        context.close()
