"""The run explorer's keys in Notebook 7 (notebook tests/browser/notebooks/bb23e_run_keys.ipynb,
a watched LeNet run, tests/run_logs.py).

Before the fix Notebook 7 took them: it matches its shortcuts on the document in the capture
phase, before the focused explorer sees the key, so ↓ moved to the next cell (and ← →, which
README promised, did nothing). Now the explorer marks itself data-lm-suppress-shortcuts for
its own keys only; Notebook 7's other shortcuts still work on it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from explorer_page import Explorer, explorer_page
from lab_server import start_lab
from playwright.sync_api import Browser
from run_page import RUN_ROOT, TIMEOUT_MS, write_run

NOTEBOOK = "bb23e_run_keys.ipynb"
NOTEBOOKS_DIR = Path(__file__).resolve().parent / "notebooks"
NOTEBOOK7_BUGS = (re.compile(r"reading 'schema'\)\s+at \S+/static/notebook/notebook_core\."),)
LAYERS = ["conv.0", "conv.3", "fc.0", "fc.2", "fc.4"]  # LeNet's, in the model's order
ACTIVE_CELL_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')]
  .indexOf(document.querySelector('.jp-Notebook .jp-Cell.jp-mod-active'))"""


@pytest.fixture(scope="module")
def nb7(chromium_browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Explorer]:
    try:
        server = start_lab(tmp_path_factory.mktemp("bb23e_nb7"), NOTEBOOKS_DIR, app="notebook")
    except RuntimeError as exc:
        pytest.fail(f"Could not start Notebook 7 for the browser tests: {exc}", pytrace=False)
    try:
        write_run(server.root / "runs" / "bb23e_keys", 30)
        with explorer_page(chromium_browser, server, NOTEBOOK, NOTEBOOK7_BUGS) as explorer:
            yield explorer
    finally:
        server.stop()


def test_the_arrow_keys_are_the_explorers_not_the_notebooks(nb7: Explorer) -> None:
    page = nb7.page
    assert page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
    root = page.locator(RUN_ROOT)
    root.get_by_test_id("pvw-run-title").click()  # focuses the explorer, as a user would
    page.keyboard.press("Shift")  # a key press the front end may lose after load
    active = page.evaluate(ACTIVE_CELL_JS)
    assert page.evaluate("() => document.activeElement.dataset.testid") == "pvw-run-root"
    step = int(nb7.value("w.step"))
    row = LAYERS.index(nb7.value("w.layer")) if nb7.value("w.layer") else -1
    page.keyboard.press("ArrowDown")
    assert nb7.value_becomes("w.layer", LAYERS[row + 1]) == LAYERS[row + 1]
    page.keyboard.press("ArrowRight")
    assert nb7.value_becomes("w.step", step + 1) == step + 1
    page.keyboard.press("Escape")
    assert nb7.value_becomes("w.layer", "") == ""
    # Still the same cell, the explorer still focused, and nothing left marked.
    assert page.evaluate(ACTIVE_CELL_JS) == active
    assert page.evaluate("() => document.activeElement.dataset.testid") == "pvw-run-root"
    page.wait_for_function(
        "(r) => !r.hasAttribute('data-lm-suppress-shortcuts')",
        arg=root.element_handle(), timeout=TIMEOUT_MS,
    )  # fmt: skip
