"""Helpers for the run explorer's browser tests: its elements, the pixel and cell under a
step and layer of the heatmap (through the canvas's pvwCell hook), and real runs written by a
watched training process (tests/run_logs.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Locator, Page

REPO = Path(__file__).resolve().parents[2]
RUN_ROOT = "[data-testid=pvw-run-root]"
TIMEOUT_MS = 60_000  # the machine the tests share can be slow


@contextmanager
def saved_run_page(browser: Browser, page_file: Path) -> Iterator[tuple[Page, Locator]]:
    """A saved run page (``view -o``) open in its own context, its explorer's root drawn;
    on leaving, no script error was thrown on the page."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(page_file.as_uri())
        root = page.locator(RUN_ROOT)
        root.wait_for(timeout=TIMEOUT_MS)
        yield page, root
        assert not errors, errors
    finally:
        context.close()


NONFINITE_RGB = [214, 39, 40]  # js/view/grad_stats.ts NONFINITE_COLOUR

CELL_JS = "([canvas, i, row]) => canvas.pvwCell(i, row)"
PIXEL_JS = """([canvas, x, y]) => {
  const box = canvas.getBoundingClientRect();
  const k = canvas.width / box.width;
  const d = canvas.getContext("2d").getImageData(Math.floor((x - box.left) * k),
    Math.floor((y - box.top) * k), 1, 1).data;
  return [d[0], d[1], d[2]];
}"""


# Every comm message the kernel sends this page: its method, the state keys it carries, the
# custom message's type (JupyterLab's kernel connection, beside the widgets' manager).
RECORD_COMM_JS = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  window.pvwComm = [];
  kernel.anyMessage.connect((_, { msg, direction }) => {
    if (direction !== "recv" || msg.header.msg_type !== "comm_msg") return;
    const d = msg.content.data || {};
    window.pvwComm.push({ method: d.method, type: d.content?.type,
      keys: Object.keys(d.state || {}).concat((d.buffer_paths || []).map((p) => p[0])) });
  });
}"""


def write_run(run_dir: Path, steps: int, oracle_steps: tuple[int, ...] = ()) -> dict[str, Any]:
    """A watched LeNet run written by a training process of its own; returns its oracle."""
    oracle = run_dir.parent / f"{run_dir.name}.oracle.json"
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    subprocess.run(
        [sys.executable, str(REPO / "tests/run_logs.py"), str(run_dir), str(steps),
         "--oracle", str(oracle), "--oracle-steps", ",".join(map(str, oracle_steps))],
        env=env, check=True, stderr=subprocess.DEVNULL, timeout=600,
    )  # fmt: skip
    return json.loads(oracle.read_text())


class RunView:
    """One run explorer on a page."""

    def __init__(self, page: Page, root: Locator) -> None:
        self.page = page
        self.root = root
        self.heatmap = root.get_by_test_id("pvw-run-heatmap")

    def data(self, key: str) -> str | None:
        return self.root.get_attribute(f"data-{key}")

    def cell(self, step_index: int, row: int) -> tuple[float, float]:
        point = self.heatmap.evaluate("(c, [i, r]) => c.pvwCell(i, r)", [step_index, row])
        assert point, f"step index {step_index}, row {row} is not in view"
        return point["x"], point["y"]

    def pixel(self, step_index: int, row: int) -> list[int]:
        x, y = self.cell(step_index, row)
        return self.heatmap.evaluate("(c, [x, y]) => (" + PIXEL_JS + ")([c, x, y])", [x, y])

    def click_cell(self, step_index: int, row: int) -> None:
        self.heatmap.scroll_into_view_if_needed()
        x, y = self.cell(step_index, row)
        self.page.mouse.click(x, y)

    def wait_detail(self, step: int, detail: str) -> None:
        self.page.wait_for_function(
            "([root, step, detail]) => root.dataset.shownStep === String(step)"
            " && root.dataset.detail === detail",
            arg=[self.root.element_handle(), step, detail],
            timeout=TIMEOUT_MS,
        )

    def graph_ready(self) -> None:
        self.page.wait_for_function(
            "(root) => root.querySelector('[data-testid=pvw-root]')?.dataset.state === 'ready'",
            arg=self.root.element_handle(),
            timeout=TIMEOUT_MS,
        )

    def summary_rows(self) -> list[dict[str, Any]]:
        return self.root.get_by_test_id("pvw-run-summary").evaluate(
            """(t) => [...t.querySelectorAll("tbody tr")].map((r) => ({
              param: r.dataset.param, layer: r.dataset.layer,
              lit: r.classList.contains("pvw-run-lit"),
              cells: [...r.children].map((c) => c.textContent) }))"""
        )

    def selected_in_graph(self) -> list[str]:
        return self.root.evaluate(
            "(r) => [...r.querySelectorAll('[data-testid=pvw-graph] .pvw-selected')]"
            ".map((e) => e.id)"
        )


def close(a: float, b: float, rel: float = 0.06) -> bool:
    """Equal to the 2 significant digits the page shows (formatNorm: "1.2e-3")."""
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-30


def table_row_follows_without_moving_the_notebook(view: RunView, step: int, layer: int) -> None:
    """A short window, the heatmap at its bottom, the summary table below it out of sight: a
    click on row `layer` at `step` (no full capture there) lights that layer's rows, scrolled
    into view inside the table's own box, and the notebook stays where it is
    (Element.scrollIntoView also scrolled the notebook, moving the heatmap from under the
    pointer)."""
    page = view.page
    page.set_viewport_size({"width": 1300, "height": 450})
    notebook = "document.querySelector('.jp-WindowedPanel-outer')"
    page.evaluate(
        f"""(h) => {{ const s = {notebook};
          s.scrollTop += h.getBoundingClientRect().bottom - s.getBoundingClientRect().bottom; }}""",
        view.heatmap.element_handle(),
    )
    page.wait_for_timeout(300)
    before = page.evaluate(f"{notebook}.scrollTop")
    assert before > 0, "the window should be short enough to scroll the heatmap to its bottom"
    x, y = view.cell(step, layer)
    page.mouse.click(x, y)
    page.wait_for_function(
        "([r, l]) => r.dataset.layer === l",
        arg=[view.root.element_handle(), str(layer)],
        timeout=TIMEOUT_MS,
    )
    page.wait_for_timeout(300)
    assert page.evaluate(f"{notebook}.scrollTop") == before, "the notebook scrolled"
    lit = view.root.locator("tr.pvw-run-lit").first.evaluate(
        """(row) => { const box = row.closest('.pvw-run-table-wrap').getBoundingClientRect();
             const r = row.getBoundingClientRect();
             return r.top >= box.top && r.bottom <= box.bottom + 1; }"""
    )
    assert lit, "the lit row should be scrolled into the table's view"
