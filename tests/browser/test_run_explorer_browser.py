"""The run explorer (GraphWidget.from_run, issue 20 item 4) in a real Chromium: JupyterLab,
Notebook 7 and the saved page from file://, on real watched runs (a LeNet trained 400 steps
inside trace(model, stats=True, every=100, run_dir=...) by a process of its own, a NaN batch
at step 137; tests/run_logs.py), and a run still being written that refreshes under the user.

Expected values come from the training process's own reading of ``.grad`` (the oracle file),
from where the NaN was put, and from the kernel's ``w.step`` / ``w.layer``; pixels are read
from the heatmap's canvas.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from explorer_page import Explorer, explorer_page
from lab_page import save_screenshot
from lab_server import LabServer, start_lab
from local_only import route_local_only
from playwright.sync_api import Browser
from run_page import (
    NONFINITE_RGB,
    RECORD_COMM_JS,
    RUN_ROOT,
    TIMEOUT_MS,
    RunView,
    close,
    table_row_follows_without_moving_the_notebook,
    write_run,
)

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
NOTEBOOK = "run_explorer.ipynb"
NAN_STEP = 137
ORACLE_STEPS = (0, 250)
LIVE_STEPS = 150  # the notebook's second run, written while the test watches


@pytest.fixture(scope="module")
def oracle(lab_server: LabServer) -> dict[str, Any]:
    return write_run(lab_server.root / "runs" / "exp1", 400, ORACLE_STEPS)


@pytest.fixture(scope="module")
def lab(
    chromium_browser: Browser, lab_server: LabServer, oracle: dict[str, Any]
) -> Iterator[Explorer]:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as explorer:
        yield explorer  # the notebook's writer ends by itself (LIVE_STEPS steps)


@pytest.fixture(scope="module")
def big_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """run_logs.big_run's log (10,000 steps x 1,000 parameters in 500 layers, a one-step spike
    at BIG_SPIKE, NaN at BIG_NAN), written once (~13 s of CPU) for the saved page and Lab."""
    from run_logs import big_run

    path = tmp_path_factory.mktemp("big_run") / "big"
    big_run(path)
    return path


def run_view(explorer: Explorer, k: int = 0) -> RunView:
    return RunView(explorer.page, explorer.page.locator(RUN_ROOT).nth(k))


def check_opening(view: RunView, layers: list[str]) -> None:
    """400 steps drawn; opened on step 138, the capture after the NaN; the NaN cell red."""
    assert view.data("steps") == "400"
    view.wait_detail(138, "graph")
    view.graph_ready()
    title = view.root.get_by_test_id("pvw-run-detail-title").inner_text()
    assert title.startswith("Step 138: full capture"), title
    problems = view.root.get_by_test_id("pvw-run-problems").inner_text()
    assert "step 137" in problems and "conv.0.weight" in problems, problems
    conv0, fc4 = layers.index("conv.0"), layers.index("fc.4")
    assert view.pixel(NAN_STEP, conv0) == NONFINITE_RGB
    for step, row in ((NAN_STEP - 1, conv0), (NAN_STEP + 1, conv0), (250, fc4), (NAN_STEP, fc4)):
        assert view.pixel(step, row) not in (NONFINITE_RGB, [255, 255, 255]), (step, row)


def check_summary(view: RunView, oracle: dict[str, Any], step: int, layer: str) -> None:
    """The table shows each parameter's norm and max|g| as .grad had them at `step`."""
    rows = view.summary_rows()
    grads = oracle["grads"][str(step)]
    assert [r["param"] for r in rows] == list(grads), "every parameter, in forward order"
    for r in rows:
        norm, max_abs, nan, inf = grads[r["param"]]
        assert close(float(r["cells"][3]), norm) and close(float(r["cells"][4]), max_abs), r
        assert r["cells"][5:] == [str(int(nan)), str(int(inf))]
        assert r["lit"] == (r["layer"] == layer)


def test_lab_shows_the_run_and_opens_on_the_capture_after_the_nan(lab: Explorer) -> None:
    view = run_view(lab)
    layers = lab.value("w.run['layers']")
    check_opening(view, layers)
    assert lab.value("w.step") == 138
    save_screenshot(view.root, "run_explorer_lab_opening")


def test_lab_a_step_without_capture_shows_its_parameters(
    lab: Explorer, oracle: dict[str, Any]
) -> None:
    view = run_view(lab)
    layers = lab.value("w.run['layers']")
    view.click_cell(250, layers.index("fc.4"))
    view.wait_detail(250, "params")
    assert (lab.value("w.step"), lab.value("w.layer")) == (250, "fc.4")
    check_summary(view, oracle, 250, "fc.4")
    message = view.root.get_by_test_id("pvw-run-message").inner_text()
    assert message == (
        "No full capture of step 250: its per-parameter summary "
        "(nearest full captures: steps 200 and 300)."
    ), message
    save_screenshot(view.root, "run_explorer_lab_summary")


def test_lab_selection_is_linked_both_ways(lab: Explorer) -> None:
    view = run_view(lab)
    lab.run("w.step = 200")
    view.wait_detail(200, "graph")
    view.graph_ready()
    graph = lab.value("w.log.graph(200)")
    gid = {g["name"]: g["id"] for g in graph["groups"]}
    # A layer's name in the heatmap selects its group in the graph.
    view.heatmap.scroll_into_view_if_needed()
    x, y = view.cell(0, lab.value("w.run['layers']").index("fc.0"))
    box = view.heatmap.bounding_box()
    lab.page.mouse.click(box["x"] + 40, y)
    lab.page.wait_for_function("(r) => r.dataset.layer === 'fc.0'", arg=view.root.element_handle())
    assert lab.value("w.layer") == "fc.0" and lab.value("w.step") == 200
    lab.page.wait_for_timeout(300)
    selected = view.selected_in_graph()  # the group, open (a cluster) or closed (a node)
    assert {f"pvw-{gid['fc.0']}-cluster", f"pvw-{gid['fc.0']}"} & set(selected), selected
    # A parameter clicked in the graph lights its layer's row.
    node = next(
        n["id"] for n in graph["nodes"] if (n.get("param") or {}).get("name") == "fc.2.weight"
    )
    view.root.locator(f"[data-testid=pvw-graph] g.node[id$='{node}']").first.click()
    lab.page.wait_for_function("(r) => r.dataset.layer === 'fc.2'", arg=view.root.element_handle())
    assert lab.value("w.layer") == "fc.2"
    save_screenshot(view.root, "run_explorer_lab_linked")


def test_lab_a_run_being_written_refreshes_and_keeps_the_view(lab: Explorer) -> None:
    view = run_view(lab, 1)
    lab.page.evaluate(RECORD_COMM_JS)
    first = int(view.data("steps") or 0)
    assert 30 <= first < LIVE_STEPS and lab.value("live.run['meta']['status']") == "running"
    for _ in range(2):
        view.root.get_by_test_id("pvw-run-zoom-in").click()
    window = (view.data("from"), view.data("to"))
    assert window != ("0", str(first)), "zoomed in"
    layers = lab.value("live.run['layers']")
    pick = int(window[0]) + 2  # steps are 0, 1, 2, ...: index and step are the same
    view.click_cell(pick, layers.index("conv.3"))
    view.wait_detail(pick, "params")
    assert (lab.value("live.step"), lab.value("live.layer")) == (pick, "conv.3")
    # The page asks the kernel to re-read the run every few seconds: steps arrive.
    lab.page.wait_for_function(
        "([r, n]) => Number(r.dataset.steps) > n", arg=[view.root.element_handle(), first],
        timeout=TIMEOUT_MS,
    )  # fmt: skip
    assert (view.data("from"), view.data("to")) == window, "the zoomed window stays"
    assert (lab.value("live.step"), lab.value("live.layer")) == (pick, "conv.3")
    assert view.data("shown-step") == str(pick) and view.data("layer") == "conv.3"
    # Until the run ends, then it says so.
    lab.page.wait_for_function(
        "([r, n]) => r.dataset.steps === String(n)",
        arg=[view.root.element_handle(), LIVE_STEPS],
        timeout=300_000,
    )
    status = view.root.get_by_test_id("pvw-run-status")
    lab.page.wait_for_function(
        "(s) => s.textContent.includes('run finished')",
        arg=status.element_handle(),
        timeout=TIMEOUT_MS,
    )
    assert (view.data("from"), view.data("to")) == window
    # Each refresh sent the new steps only, never the whole run again (at 10,000 steps x 500
    # layers that is 30 MB, and the page froze for 1-2 s at every refresh).
    comm = lab.page.evaluate("window.pvwComm")
    assert not [m for m in comm if "_norms" in m["keys"]], comm  # update, or echo of the page's
    assert any(m["type"] == "pvw-run-append" for m in comm), comm
    save_screenshot(view.root, "run_explorer_lab_live")


@pytest.fixture(scope="module")
def notebook7_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    try:
        server = start_lab(tmp_path_factory.mktemp("notebook7"), NOTEBOOKS, app="notebook")
    except RuntimeError as exc:
        pytest.fail(f"Could not start Notebook 7: {exc}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


NOTEBOOK7_BUGS = (re.compile(r"reading 'schema'\)\s+at \S+/static/notebook/notebook_core\."),)


def test_notebook7_shows_the_run(
    chromium_browser: Browser, notebook7_server: LabServer, lab_server: LabServer,
    oracle: dict[str, Any],
) -> None:  # fmt: skip
    shutil.copytree(lab_server.root / "runs" / "exp1", notebook7_server.root / "runs" / "exp1")
    with explorer_page(chromium_browser, notebook7_server, NOTEBOOK, NOTEBOOK7_BUGS) as nb7:
        assert nb7.page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
        view = run_view(nb7)
        layers = nb7.value("w.run['layers']")
        check_opening(view, layers)
        view.click_cell(250, layers.index("conv.0"))
        view.wait_detail(250, "params")
        check_summary(view, oracle, 250, "conv.0")
        save_screenshot(view.root, "run_explorer_notebook7")
        nb7.run("writer.kill(); writer.wait()")


def test_the_saved_page_works_from_file_offline(
    chromium_browser: Browser, lab_server: LabServer, oracle: dict[str, Any], tmp_path: Path,
) -> None:  # fmt: skip
    import subprocess
    import sys

    out = tmp_path / "run.html"
    subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", str(lab_server.root / "runs" / "exp1"),
         "-o", str(out)], check=True, timeout=300,
    )  # fmt: skip
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    blocked: list[str] = []
    errors: list[str] = []

    route_local_only(page, blocked)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(out.as_uri())
        view = RunView(page, page.locator(RUN_ROOT))
        view.root.wait_for(timeout=TIMEOUT_MS)
        layers = ["conv.0", "conv.3", "fc.0", "fc.2", "fc.4"]
        assert view.root.get_by_test_id("pvw-run-refresh").is_hidden()  # nothing to re-read
        check_opening(view, layers)
        view.click_cell(250, layers.index("fc.4"))
        view.wait_detail(250, "params")
        check_summary(view, oracle, 250, "fc.4")
        step = view.root.get_by_test_id("pvw-run-step-input")
        step.fill("0")
        step.press("Enter")
        view.wait_detail(0, "graph")
        view.graph_ready()
        node_count = page.locator("[data-testid=pvw-graph] g.node").count()
        assert node_count > 10
        save_screenshot(page, "run_explorer_saved_page")
        assert not blocked and not errors, (blocked, errors)
    finally:
        context.close()


def test_a_saved_run_of_10k_steps_and_1k_parameters_stays_interactive(
    chromium_browser: Browser, tmp_path: Path, big_run_dir: Path
) -> None:
    # Written with the run log's own writer (run_logs.big_run).
    import subprocess
    import sys

    from run_logs import BIG_NAN, BIG_SPIKE

    out = tmp_path / "big.html"
    subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", str(big_run_dir), "-o", str(out)],
        check=True, timeout=600,
    )  # fmt: skip
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(out.as_uri(), timeout=120_000)
        view = RunView(page, page.locator(RUN_ROOT))
        # Opens on the spike, its layer selected and scrolled into view.
        view.wait_detail(BIG_SPIKE[0], "params")
        assert view.data("steps") == "10000" and view.data("layer") == str(BIG_SPIKE[1])
        assert int(view.heatmap.get_attribute("data-columns") or 0) < 10_000  # pooled
        # Max-pooling keeps the one-step spike: its column is the top of the ramp.
        assert view.pixel(BIG_SPIKE[0], BIG_SPIKE[1]) == [253, 231, 37]
        assert len(view.summary_rows()) == 1000
        # Zoom, zoom out, all steps: each redraw well under a frame budget a user feels.
        times = page.evaluate(
            """() => {
              const root = document.querySelector('[data-testid=pvw-run-root]');
              return ['zoom-in', 'zoom-in', 'zoom-out', 'all'].map((b) => {
                const t = performance.now();
                root.querySelector(`[data-testid=pvw-run-${b}]`).click();
                return performance.now() - t;
              });
            }"""
        )
        assert max(times) < 500, times  # ~50-150 ms measured on the loaded test machine
        # The NaN step, picked from its layer's row: red, and its summary says which.
        nan_layer = BIG_NAN[1] // 2
        page.get_by_test_id("pvw-run-step-input").fill(str(BIG_NAN[0]))
        page.get_by_test_id("pvw-run-step-input").press("Enter")
        view.wait_detail(BIG_NAN[0], "params")
        for _ in range(200):  # scroll rows up to the NaN layer's
            if view.heatmap.evaluate("(c, r) => c.pvwCell(0, r)", nan_layer):
                break
            box = view.heatmap.bounding_box()
            page.mouse.move(box["x"] + 400, box["y"] + 100)
            page.mouse.wheel(0, -200)
        assert view.pixel(BIG_NAN[0], nan_layer) == NONFINITE_RGB
        bad = [r for r in view.summary_rows() if r["cells"][5] != "0"]
        name = f"{nan_layer}.{('weight', 'bias')[BIG_NAN[1] % 2]}"  # Linear: weight, bias
        assert [(r["param"], r["cells"][5]) for r in bad] == [(name, "3")]
        save_screenshot(page, "run_explorer_10k_steps")
        assert not errors, errors
    finally:
        context.close()


def test_lab_a_run_of_10k_steps_and_1k_parameters_stays_interactive(
    chromium_browser: Browser, lab_server: LabServer, big_run_dir: Path
) -> None:
    # The kernel's path: 25 MB of buffers through the comm, each picked step asked for.
    from lab_page import _RUN_ALL, _WAIT_FOR_NOTEBOOK
    from run_logs import BIG_SPIKE

    shutil.copytree(big_run_dir, lab_server.root / "runs" / "big")  # Lab serves its own copy
    name = "run_explorer_big.ipynb"
    shutil.copy(NOTEBOOKS / name, lab_server.root / name)
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(lab_server.url(lab_server.notebook_path(name)), timeout=120_000)
        page.wait_for_function(_WAIT_FOR_NOTEBOOK, arg=name, timeout=120_000)
        assert page.evaluate(_RUN_ALL, 300_000) is True
        view = RunView(page, page.locator(RUN_ROOT))
        view.wait_detail(BIG_SPIKE[0], "params")
        assert view.data("steps") == "10000" and len(view.summary_rows()) == 1000
        # big_run captures step 0 only (it said "full captures nearby: 0": a count of none?).
        assert view.root.get_by_test_id("pvw-run-message").inner_text() == (
            f"No full capture of step {BIG_SPIKE[0]}: its per-parameter summary "
            "(nearest full capture: step 0)."
        )
        view.heatmap.scroll_into_view_if_needed()
        assert view.pixel(BIG_SPIKE[0], BIG_SPIKE[1]) == [253, 231, 37]
        times = page.evaluate(
            """() => {
              const root = document.querySelector('[data-testid=pvw-run-root]');
              return ['zoom-in', 'zoom-in', 'zoom-out', 'all'].map((b) => {
                const t = performance.now();
                root.querySelector(`[data-testid=pvw-run-${b}]`).click();
                return performance.now() - t;
              });
            }"""
        )
        assert max(times) < 500, times
        # A click picks the largest step of its pixel column (~9 steps wide here), asked of
        # the kernel.
        view.click_cell(BIG_SPIKE[0] + 100, BIG_SPIKE[1])
        page.wait_for_function(
            "([r, s]) => Math.abs(Number(r.dataset.shownStep) - s) < 20"
            " && r.dataset.detail === 'params'",
            arg=[view.root.element_handle(), BIG_SPIKE[0] + 100],
            timeout=TIMEOUT_MS,
        )
        table_row_follows_without_moving_the_notebook(view, BIG_SPIKE[0] + 300, BIG_SPIKE[1] - 3)
        # The capture (step 0) draws the 500 Linear layers as one folded run; the selected layer
        # is shown on its own inside it, selected (it stayed hidden in the fold).
        layer = BIG_SPIKE[1] - 3
        view.root.get_by_test_id("pvw-run-prev-capture").click()
        view.wait_detail(0, "graph")
        view.graph_ready()
        page.wait_for_function(
            "(r) => r.querySelectorAll('[data-testid=pvw-graph] g.node').length === 3",
            arg=view.root.element_handle(),
            timeout=TIMEOUT_MS,
        )
        labels = view.root.locator("[data-testid=pvw-graph] g.node").all_text_contents()
        assert sorted(" ".join(t.split()) for t in labels) == sorted([
            f"0\u2013{layer - 1} \u00b7 Linear \u00d7{layer} each 2 ops \u00b7 2 params",
            f"{layer} \u00b7 Linear 2 ops \u00b7 2 params",
            f"{layer + 1}\u2013499 \u00b7 Linear \u00d7{499 - layer} each 2 ops \u00b7 2 params",
        ])  # fmt: skip
        selected = view.root.locator("[data-testid=pvw-graph] g.node.pvw-selected")
        assert " ".join(selected.all_text_contents()[0].split()).startswith(f"{layer} \u00b7")
        save_screenshot(page, "run_explorer_lab_10k_steps")
        assert not errors, errors
    finally:
        context.close()  # its kernel goes with the module's (explorer_page shuts them down)
