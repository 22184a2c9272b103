"""The run explorer as a keyboard user and a narrow output area meet it, on a saved page of a
real watched LeNet run (tests/run_logs.py) opened from file:// with the network blocked.

Before the fixes: ↑ ↓ did nothing, so a keyboard user had no way to a layer (the heatmap's
and the table's rows take clicks only) and the root that takes the arrow keys showed no focus
ring; and in an output area 300-460 px wide the wrapped toolbars took the explorer's fixed
height, leaving the picked step's graph ~110 px (0 at 320 px) under the inspector."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_only import route_local_only
from playwright.sync_api import Browser, Page
from run_page import RUN_ROOT, TIMEOUT_MS, RunView, write_run

LAYERS = ["conv.0", "conv.3", "fc.0", "fc.2", "fc.4"]  # LeNet's, in the model's order


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("bb23e_run_keys")
    write_run(tmp / "bb23e_keys", 30)  # one full capture: step 0, the page opens on it
    out = tmp / "run.html"
    subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", str(tmp / "bb23e_keys"), "-o", str(out)],
        check=True, timeout=300, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return out


@pytest.fixture
def opened(
    chromium_browser: Browser, saved: Path, request: pytest.FixtureRequest
) -> Iterator[RunView]:
    width = getattr(request, "param", 1300)  # narrow: as high as a notebook's explorer (720px)
    context = chromium_browser.new_context(
        viewport={"width": width, "height": 900 if width > 600 else 720}
    )
    page = context.new_page()
    blocked: list[str] = []
    errors: list[str] = []
    route_local_only(page, blocked)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(saved.as_uri())
        view = RunView(page, page.locator(RUN_ROOT))
        view.wait_detail(0, "graph")
        view.graph_ready()
        yield view
        assert not blocked and not errors, (blocked, errors)
    finally:
        context.close()


def layer_is(page: Page, view: RunView, layer: str) -> None:
    page.wait_for_function(
        "([root, layer]) => root.dataset.layer === layer",
        arg=[view.root.element_handle(), layer], timeout=TIMEOUT_MS,
    )  # fmt: skip


def test_arrow_keys_pick_layers_and_escape_clears_them(opened: RunView) -> None:
    page, root = opened.page, opened.root
    page.locator("body").focus()
    page.keyboard.press("Tab")  # the explorer's root: its first stop, before its buttons
    assert page.evaluate("() => document.activeElement.dataset.testid") == "pvw-run-root"
    ring = root.evaluate("(r) => r.matches(':focus-visible') && getComputedStyle(r).outlineStyle")
    assert ring not in (False, "none"), "the focused explorer shows no focus ring"
    start = root.get_attribute("data-layer") or ""
    row = LAYERS.index(start) if start else -1
    for key, delta in [("ArrowDown", 1), ("ArrowDown", 1), ("ArrowUp", -1)]:
        page.keyboard.press(key)
        row = max(0, min(len(LAYERS) - 1, row + delta)) if row >= 0 else 0
        layer_is(page, opened, LAYERS[row])
    # The graph follows the row: the layer's group is selected in the step's graph.
    page.wait_for_function(
        "(r) => r.querySelector('[data-testid=pvw-graph] .pvw-selected')",
        arg=root.element_handle(), timeout=TIMEOUT_MS,
    )  # fmt: skip
    page.keyboard.press("ArrowRight")  # the step still moves
    opened.wait_detail(1, "params")
    lit = [r["layer"] for r in opened.summary_rows() if r["lit"]]
    assert lit and set(lit) == {LAYERS[row]}
    page.keyboard.press("Escape")
    layer_is(page, opened, "")
    assert not any(r["lit"] for r in opened.summary_rows())


@pytest.mark.parametrize("opened", [320, 460], indirect=True)
def test_a_narrow_explorer_keeps_the_steps_graph_usable(opened: RunView) -> None:
    boxes = opened.root.evaluate(
        """(r) => Object.fromEntries(
           ['pvw-run-heatmap', 'pvw-graph', 'pvw-run-status'].map((id) => {
             const b = r.querySelector(`[data-testid=${id}]`).getBoundingClientRect();
             return [id, { top: b.top, bottom: b.bottom, height: b.height }];
           }))"""
    )
    assert boxes["pvw-graph"]["height"] >= 250, boxes  # the graph, not a sliver of it
    assert boxes["pvw-run-heatmap"]["height"] >= 90, boxes
    # Nothing is cut off: the status line is below the graph, inside the explorer.
    assert boxes["pvw-run-status"]["top"] >= boxes["pvw-graph"]["bottom"] - 1, boxes
    root_box = opened.root.bounding_box()
    assert root_box and boxes["pvw-run-status"]["bottom"] <= root_box["y"] + root_box["height"] + 1


def test_the_tables_sort_headers_take_enter_and_space(opened: RunView) -> None:
    page = opened.page
    opened.root.get_by_test_id("pvw-run-step-input").fill("1")
    opened.root.get_by_test_id("pvw-run-step-input").press("Enter")
    opened.wait_detail(1, "params")

    def norms() -> list[float]:
        return [float(r["cells"][3].split()[-1]) for r in opened.summary_rows()]

    forward = norms()
    assert forward != sorted(forward, reverse=True)  # else sorting could not be seen
    header = opened.root.locator("[data-testid=pvw-run-summary] th", has_text="norm")
    header.focus()
    assert page.evaluate("() => document.activeElement.textContent") == "norm"
    page.keyboard.press("Enter")
    assert norms() == sorted(forward, reverse=True)
    assert header.get_attribute("aria-sort") == "descending"
    page.keyboard.press(" ")  # again: back to the forward order
    assert norms() == forward


def test_the_step_box_always_reads_the_step_shown(opened: RunView) -> None:
    """↓ in the step box on the first step used to leave it reading -1 (and a step past the
    last, 99, stayed) while the explorer still showed step 0 or 29: the box said a step that
    does not exist. Now it reads back the step the explorer moved to."""
    page = opened.page
    box = page.get_by_test_id("pvw-run-step-input")
    box.focus()
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(300)
    assert box.input_value() == "0" and opened.root.get_attribute("data-shown-step") == "0"
    box.fill("99")
    page.keyboard.press("Enter")
    opened.wait_detail(29, "params")  # the last of the 30 steps: its parameters' table
    assert box.input_value() == "29"
    page.keyboard.press("ArrowUp")
    page.wait_for_timeout(300)
    assert box.input_value() == "29"
