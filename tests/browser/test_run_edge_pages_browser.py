"""The saved run page (``view -o``, file://, Chromium) of real watched runs at the edges: a run
whose watch has started but whose first step has not come yet (a slow first batch), a run of
one step, and a run whose backward never had a loss tensor (``y.backward(grad)``).

The page said "Step -1" as its detail's title and "run running, last step 0 s ago" for a run
with no step at all (the age was run.json's, written when the watch started), and "1 steps".
Expected words come from what each run did, not from the page's code."""

from __future__ import annotations

import math
from pathlib import Path

import paddle
from playwright.sync_api import Browser
from run_page import RunView, saved_run_page

from paddleviz_widget import trace
from paddleviz_widget.runs import open_run
from paddleviz_widget.runs.view_page import save_run_html


def model() -> paddle.nn.Layer:
    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 1))


def texts(view: RunView) -> tuple[str, str, str]:
    ids = ("pvw-run-detail-title", "pvw-run-status", "pvw-run-message")
    return tuple(view.root.get_by_test_id(t).inner_text() for t in ids)  # type: ignore[return-value]


def test_edge_runs_saved_pages_say_what_the_runs_did(chromium_browser: Browser, tmp_path: Path):
    net = model()
    with trace(net, stats=True, every=10, run_dir=tmp_path / "started"):
        # the watch is on, its first step not done: the page made now (a live process)
        page_file = save_run_html(open_run(tmp_path / "started"), tmp_path / "started.html")
    with saved_run_page(chromium_browser, page_file) as (page, root):
        view = RunView(page, root)
        page.wait_for_function("(r) => r.dataset.detail === 'none'", arg=root.element_handle())
        title, status, message = texts(view)
        assert title == "No step picked" and message == "No step recorded yet.", (title, message)
        assert status.startswith("0 steps (none yet)"), status
        assert "run running, no step written yet (started " in status, status
        assert "last step" not in status

    net = model()
    with trace(net, stats=True, every=10, run_dir=tmp_path / "one"):
        (net(paddle.randn([2, 4])) ** 2).mean().backward()
    one = save_run_html(open_run(tmp_path / "one"), tmp_path / "one.html")
    with saved_run_page(chromium_browser, one) as (page, root):
        view = RunView(page, root)
        view.wait_detail(0, "graph")  # its one step, captured (every=10: step 0)
        title, status, _ = texts(view)
        assert title.startswith("Step 0: full capture"), title
        assert status.startswith("1 step (0\u20130), "), status

    net = model()
    with trace(net, stats=True, every=2, run_dir=tmp_path / "noloss"):
        for _ in range(3):
            y = net(paddle.randn([2, 4]))
            y.backward(paddle.ones_like(y))  # no loss tensor: the log holds no loss
            net.clear_gradients()
    log = open_run(tmp_path / "noloss")
    assert log.steps.tolist() == [0, 1, 2] and all(math.isnan(v) for v in log.loss)
    noloss = save_run_html(log, tmp_path / "noloss.html")
    with saved_run_page(chromium_browser, noloss) as (page, root):  # (no script error)
        view = RunView(page, root)
        view.wait_detail(2, "graph")  # the last capture
        assert texts(view)[1].startswith("3 steps (0\u20132), ")


def test_a_layer_replaced_mid_run_is_said_on_the_status_line(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    """Its rows then hold the old tensors' gradients (0): the status line says so, where
    before it said nothing of it (the notice did not tell a replaced layer apart)."""
    net = model()
    with trace(net, stats=True, every=3, run_dir=tmp_path / "run"):
        for step in range(8):
            if step == 5:
                net[2] = paddle.nn.Linear(8, 1)  # a new head, same names
            (net(paddle.randn([2, 4])) ** 2).mean().backward()
            net.clear_gradients()
    page_file = save_run_html(open_run(tmp_path / "run"), tmp_path / "run.html")
    with saved_run_page(chromium_browser, page_file) as (page, root):
        view = RunView(page, root)
        view.wait_detail(6, "graph")  # the last capture
        status = texts(view)[1]
        assert status.endswith(
            "; replaced after the run started, their rows hold the old tensors' gradients, not "
            "the new ones': 2 parameters (seen at step 6): 2.weight, 2.bias"
        ), status
