"""The rank explorer on a REAL launched job: tests/launched_jobs.py's 4-rank
``paddle.distributed.launch`` run (CPU, gloo, DataParallel; scenario "nan": a NaN only in rank
2's batch at step 5), the same launch tests/distributed/ uses (one per session), opened with
``GraphWidget.from_run`` in JupyterLab. The oracle is what the training script planted
(its own scenario.json), not the reader: the rank selector marks rank 2, the cross-rank report
names rank 2 and step 5, and clicking the finding from elsewhere shows rank 2 at step 5."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from lab_page import _RUN_ALL, _WAIT_FOR_NOTEBOOK, save_screenshot
from lab_server import LabServer
from playwright.sync_api import Browser
from run_page import NONFINITE_RGB, RUN_ROOT, TIMEOUT_MS
from test_rank_explorer_browser import _grid_pixel

NOTEBOOK = "rank_launched.ipynb"
pytestmark = pytest.mark.timeout(900)  # the launch, when no other test has made it yet


@pytest.fixture(scope="module")
def job(launched: Any, lab_server: LabServer) -> dict[str, Any]:
    done = launched("nan")
    link = lab_server.root / "runs" / "launched-nan"
    link.parent.mkdir(exist_ok=True)
    if not link.exists():
        link.symlink_to(done.run_dir, target_is_directory=True)
    (planted,) = json.loads((done.out / "scenario.json").read_text())["findings"]
    return planted


@pytest.fixture(scope="module")
def lab(chromium_browser: Browser, lab_server: LabServer, job: dict[str, Any]) -> Iterator[Any]:
    from explorer_page import NOTEBOOKS, Explorer

    shutil.copy(NOTEBOOKS / NOTEBOOK, lab_server.root / NOTEBOOK)
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(lab_server.url(lab_server.notebook_path(NOTEBOOK)), timeout=120_000)
        page.wait_for_function(_WAIT_FOR_NOTEBOOK, arg=NOTEBOOK, timeout=120_000)
        assert page.evaluate(_RUN_ALL, 120_000) is True
        root = page.locator(RUN_ROOT).first
        root.wait_for(timeout=TIMEOUT_MS)
        yield Explorer(page, root)
        assert not errors, errors
    finally:
        context.close()
        lab_server.shutdown_sessions()


def _shown(page: Any, root: Any, rank: int, step: int) -> None:
    """The explorer shows rank ``rank`` (its heatmap and its step detail) at ``step``."""
    page.wait_for_function(
        """([r, want, step]) => r.dataset.shownStep === String(step)
          && (r.dataset.shownPath || "").endsWith(want) && r.dataset.detail !== "loading"
          && r.querySelector("[data-testid=pvw-run-title]").textContent.endsWith(want)""",
        arg=[root.element_handle(), f"rank-{rank:05d}", step],
        timeout=TIMEOUT_MS,
    )


def test_a_launched_nan_job_names_rank_2_at_step_5(lab: Any, job: dict[str, Any]) -> None:
    page, root = lab.page, lab.root
    rank, step = job["ranks"][0], job["step"]
    assert (rank, step) == (2, 5)  # what train_dp.py planted
    _shown(page, root, rank, step)  # opened on the finding
    assert (lab.value("w.rank"), lab.value("w.step")) == (rank, step)

    # The selector marks rank 2 alone.
    options = root.get_by_test_id("pvw-run-rank").locator("option").all_inner_texts()
    assert options == ["rank 0", "rank 1", "rank 2 \u26a0", "rank 3"], options
    # The report names rank 2 and step 5, in words.
    findings = root.get_by_test_id("pvw-run-finding")
    assert findings.count() == 1
    said = findings.first.inner_text()
    assert said.startswith("non-finite") and f"step {step}: rank {rank} went non-finite" in said
    assert "loss is non-finite" in said, said
    # The toolbar's problem picker says the cross-rank finding beside rank 2's own problems.
    picker = root.get_by_test_id("pvw-run-problems").locator("option")
    assert "1 cross-rank finding" in picker.first.inner_text(), picker.first.inner_text()
    assert said.endswith(picker.last.inner_text()), picker.last.inner_text()
    # The rank x layer view at step 5: the all-reduce carried the NaN to every rank's gradients.
    layers = lab.value("w.run['layers']")
    row = layers.index(job["layer"])
    assert [_grid_pixel(root, r, row, len(layers)) for r in range(4)] == [NONFINITE_RGB] * 4
    save_screenshot(root, "rank_explorer_launched_nan")

    # Another rank at the same step: its own step detail, not rank 2's kept.
    root.get_by_test_id("pvw-run-rank").select_option("3")
    _shown(page, root, 3, step)
    # Elsewhere (rank 0, step 1), then the finding clicked: rank 2 at step 5 again.
    root.get_by_test_id("pvw-run-rank").select_option("0")
    lab.run("w.step = 1")
    _shown(page, root, 0, 1)
    findings.first.click()
    _shown(page, root, rank, step)
    assert lab.value_becomes("[w.rank, w.step]", [rank, step]) == [rank, step]
    title = root.get_by_test_id("pvw-run-detail-title").inner_text()
    assert title.startswith(f"Step {step}"), title
