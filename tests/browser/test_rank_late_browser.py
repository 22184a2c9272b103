"""The rank explorer and a rank that starts late (issue 21, runs/ranks.py refresh): JupyterLab
on a 3-rank run of which ranks 0-1 are written (rank 0 still running, tests/rank_logs.py);
rank 2's log appears while the page is open, and the page's Refresh puts it in the rank
selector and the rank x layer view."""

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
from run_page import RUN_ROOT, TIMEOUT_MS

TESTS = Path(__file__).resolve().parents[1]
NOTEBOOK = "rank_late.ipynb"


@pytest.fixture(scope="module")
def written(lab_server: LabServer) -> Iterator[dict[str, Any]]:
    sys.path.insert(0, str(TESTS))
    from rank_logs import ranked_run

    path = lab_server.root / "runs" / "late"
    got = ranked_run(path, world_size=3, steps=30, every=10, only=[0, 1], running=(0,))
    yield {"path": path, **got}
    got["writers"][0].close()


@pytest.fixture(scope="module")
def lab(
    chromium_browser: Browser, lab_server: LabServer, written: dict[str, Any]
) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
        yield explorer


def _options(root: Any) -> list[str]:
    return root.get_by_test_id("pvw-run-rank").locator("option").all_inner_texts()


def test_a_rank_that_starts_late_appears_on_refresh(lab: Explorer, written: dict[str, Any]):
    from rank_logs import ranked_run

    page = lab.page
    root = page.locator(RUN_ROOT).first
    assert _options(root) == ["rank 0", "rank 1"]
    notes = root.get_by_test_id("pvw-run-ranks-notes").inner_text()
    assert "rank 2 not started yet" in notes and "rank 0 still being written" in notes, notes
    lines = notes.splitlines()  # one note a line: they have no full stops to part them
    assert any(x.startswith("rank 2 not started yet") for x in lines), lines
    assert any(x.startswith("rank 0 still being written") for x in lines), lines
    assert root.get_by_test_id("pvw-run-rank-grid").get_attribute("data-ranks") == "2"
    assert root.get_by_test_id("pvw-run-status").inner_text().endswith("refreshing")

    ranked_run(written["path"], world_size=3, steps=30, every=10, only=[2])
    root.get_by_test_id("pvw-run-refresh").click()
    page.wait_for_function(
        "(r) => r.querySelector('[data-testid=pvw-run-rank-grid]').dataset.ranks === '3'",
        arg=root.element_handle(), timeout=TIMEOUT_MS,
    )  # fmt: skip
    assert _options(root) == ["rank 0", "rank 1", "rank 2"]
    assert "not started" not in root.get_by_test_id("pvw-run-ranks-notes").inner_text()
    caption = root.get_by_test_id("pvw-run-ranks-caption").first.inner_text()
    assert "ranks 0-2" in caption, caption
    root.get_by_test_id("pvw-run-rank").select_option("2")
    assert lab.value_becomes("w.rank", 2) == 2
    page.wait_for_function(
        "(r) => r.querySelector('[data-testid=pvw-run-title]').textContent.endsWith('rank-00002')",
        arg=root.element_handle(), timeout=TIMEOUT_MS,
    )  # fmt: skip
    save_screenshot(root, "rank_explorer_late_rank")

    written["writers"][0].close()
    lab.run("w.refresh()")
    page.wait_for_function(
        "(r) => !r.querySelector('[data-testid=pvw-run-status]').textContent"
        ".endsWith('refreshing')",
        arg=root.element_handle(), timeout=TIMEOUT_MS,
    )  # fmt: skip
