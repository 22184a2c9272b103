"""The run explorer in a real JupyterLab (notebook tests/browser/notebooks/bb25c_run_picks.ipynb)
on a real watched run written here: a Sequential of 60 Linear layers (120 parameters: the
Parameters table scrolls) trained 30 steps inside trace(model, stats=True, run_dir=...), the
batches of steps 10-14 holding a NaN (their loss NaN, their update skipped).

- The loss curve marked only step 10, the first of the five NaN losses (the anomaly names a
  stretch's first step): each of the five now has its red tick.
- A step pick rebuilt the whole table and scrolled it to the selected layer's rows, losing the
  user's place in a sorted table: the rows are now updated in place, the sort and the scroll
  stay (the selected layer's rows are revealed when the layer changes).

Expected values come from the training (which steps had a NaN put in), from the kernel's
``w.step`` and from pixels read off the loss curve's canvas."""

from __future__ import annotations

from collections.abc import Iterator

import paddle
import pytest
from explorer_page import Explorer, explorer_page
from lab_server import LabServer
from playwright.sync_api import Browser
from run_page import NONFINITE_RGB, PIXEL_JS, RUN_ROOT, RunView

from paddleviz_widget import trace

NOTEBOOK = "bb25c_run_picks.ipynb"
NAN_STEPS = range(10, 15)
STEPS = 30
LABEL_W = 150  # js/ui/run_heatmap.ts: the names' strip left of the cells, the loss curve's too


@pytest.fixture(scope="module")
def lab(chromium_browser: Browser, lab_server: LabServer) -> Iterator[Explorer]:
    paddle.seed(0)
    model = paddle.nn.Sequential(*[paddle.nn.Linear(4, 4) for _ in range(60)])
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    with trace(model, stats=True, every=100, run_dir=lab_server.root / "runs" / "bb25c_picks"):
        for step in range(STEPS):
            x = paddle.randn([2, 4])
            if step in NAN_STEPS:
                x[0, 0] = float("nan")
            (model(x) ** 2).mean().backward()
            if step not in NAN_STEPS:
                opt.step()
            opt.clear_grad()
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
        yield explorer


def loss_pixel(view: RunView, i: int) -> list[int]:
    """The loss curve's pixel at the bottom of step index i's columns (its red tick's row)."""
    canvas = view.root.get_by_test_id("pvw-run-loss")
    box = canvas.bounding_box()
    assert box
    x = box["x"] + LABEL_W + (i + 0.5) * (box["width"] - LABEL_W) / STEPS
    y = box["y"] + box["height"] - 2
    return canvas.evaluate("(c, [x, y]) => (" + PIXEL_JS + ")([c, x, y])", [x, y])


def test_every_nan_loss_step_is_marked_on_the_loss_curve(lab: Explorer) -> None:
    view = RunView(lab.page, lab.page.locator(RUN_ROOT))
    lab.run("w.step = 20")
    view.wait_detail(20, "params")
    for i in NAN_STEPS:  # (before: step 10's tick only)
        assert loss_pixel(view, i) == NONFINITE_RGB, i
    for i in (NAN_STEPS[0] - 1, NAN_STEPS[-1] + 1, 25):
        assert loss_pixel(view, i) != NONFINITE_RGB, i
    canvas = view.root.get_by_test_id("pvw-run-loss")
    assert canvas.get_attribute("data-nonfinite") == str(len(NAN_STEPS))


TABLE_JS = """(r) => { const t = r.querySelector("[data-testid=pvw-run-summary]");
  return { sort: [...t.querySelectorAll("th")].map((th) => th.getAttribute("aria-sort")),
           scroll: t.parentElement.scrollTop, max: t.parentElement.scrollHeight
             - t.parentElement.clientHeight, rows: t.querySelectorAll("tbody tr").length,
           lit: [...t.querySelectorAll("tr.pvw-run-lit")].map((tr) => tr.dataset.param) }; }"""


def test_a_step_pick_keeps_the_tables_sort_and_scroll(lab: Explorer) -> None:
    view = RunView(lab.page, lab.page.locator(RUN_ROOT))
    lab.run("w.step = 20")
    view.wait_detail(20, "params")
    view.root.get_by_test_id("pvw-run-params-tab").evaluate("(b) => b.hidden || b.click()")
    view.root.get_by_test_id("pvw-run-summary").locator("th", has_text="norm").click()
    rows = view.summary_rows()
    assert len(rows) == 120
    top = rows[0]["layer"]  # the largest norm at step 20: its rows at the table's top
    lab.run(f"w.layer = {top!r}")
    lab.page.wait_for_function("([r, l]) => r.dataset.layer === l",
                               arg=[view.root.element_handle(), top])  # fmt: skip
    wrap = view.root.locator(".pvw-run-table-wrap")
    wrap.evaluate("(w) => { w.scrollTop = w.scrollHeight; }")  # the user reads the bottom
    lab.page.wait_for_timeout(300)
    before = view.root.evaluate(TABLE_JS)
    assert before["scroll"] > 0 and before["scroll"] == before["max"], before
    for step in (21, 22):
        view.root.get_by_test_id("pvw-run-next").click()
        view.wait_detail(step, "params")
        assert lab.value_becomes("w.step", step) == step
        after = view.root.evaluate(TABLE_JS)
        # sorted by norm still, the user's scroll where it was, every row there, the layer lit
        assert after["sort"] == before["sort"] and after["rows"] == 120, after
        assert after["scroll"] == before["scroll"], (before, after)
        assert sorted(after["lit"]) == [f"{top}.bias", f"{top}.weight"], after
        # and the rows are in the step's order of norm, as the kernel's numbers say
        norms = [float(r["cells"][3].split()[-1]) for r in view.summary_rows()]
        assert norms == sorted(norms, reverse=True), norms


LIT_IN_VIEW_JS = """(r) => { const w = r.querySelector(".pvw-run-table-wrap");
  const box = w.getBoundingClientRect(); const head = w.querySelector("thead").offsetHeight;
  const lit = [...w.querySelectorAll("tr.pvw-run-lit")];
  return lit.length > 0 && lit.some((tr) => { const b = tr.getBoundingClientRect();
    return b.top >= box.top + head - 1 && b.bottom <= box.bottom + 1; }); }"""


def test_a_heatmap_click_reveals_its_layers_rows_in_the_new_steps_order(lab: Explorer) -> None:
    # A click picks a step and a layer at once: its rows are scrolled to in the picked step's
    # sorted order (they were revealed in the old step's, then the rows moved).
    view = RunView(lab.page, lab.page.locator(RUN_ROOT))
    lab.run("w.step = 20; w.layer = ''")
    view.wait_detail(20, "params")
    sorted_by_norm = view.root.evaluate(TABLE_JS)["sort"][3] == "descending"
    if not sorted_by_norm:
        view.root.get_by_test_id("pvw-run-summary").locator("th", has_text="norm").click()
    # the layer whose rows move most between steps 20 and 25 in the norm order (the kernel's
    # numbers: its first row's place at each step)
    lab.run(
        "import numpy as np\n"
        "_n = np.asarray(w.log.param_stat('norm'), float)\n"
        "def _first_row(layer, s):\n"
        "    order = np.argsort(-_n[s], kind='stable')\n"
        "    return min(k for k, p in enumerate(order) if w.log.params[p].layer == layer)\n"
        "_moved = max(w.run['layers'], key=lambda l: abs(_first_row(l, 20) - _first_row(l, 25)))"
    )
    layer = lab.value("_moved")
    lab.run(f"w.layer = {layer!r}; w.layer = ''")  # its heatmap row scrolled into view
    lab.page.wait_for_function("(r) => r.dataset.layer === ''", arg=view.root.element_handle())
    view.root.locator(".pvw-run-table-wrap").evaluate("(w) => { w.scrollTop = 0; }")
    view.click_cell(25, int(layer))
    view.wait_detail(25, "params")
    assert lab.value_becomes("w.layer", layer) == layer
    lab.page.wait_for_timeout(300)
    assert view.root.evaluate(LIT_IN_VIEW_JS), view.root.evaluate(TABLE_JS)
