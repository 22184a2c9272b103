"""The saved run page (``view -o``) of a real watched run whose layer, class and parameter names
are tests/fixtures/hostile_names.json's (markup that would run a script, quotes, braces,
Graphviz escapes, a newline, entities): opened from file:// offline in Chromium, every name
it shows (heatmap tooltip, problems list, per-parameter table, the captured step's graph) is
that name as text, and nothing a name holds runs, loads or becomes an element.

Expected names are the model's own (``named_parameters``, ``named_sublayers``), and the
problem is the NaN batch the test put at NAN_STEP.
"""

from __future__ import annotations

from pathlib import Path

import paddle
from hostile_model import LAYERS, HostileModel
from local_only import route_local_only
from playwright.sync_api import Browser
from run_page import RUN_ROOT, TIMEOUT_MS, RunView

from paddleviz_widget import trace
from paddleviz_widget.runs import open_run
from paddleviz_widget.runs.view_page import save_run_html

NAN_STEP = 4
STEPS = 8
# Anything a name would leave in the page if it ever became markup.
INJECTED_JS = """() => [
  ...document.querySelectorAll('img, iframe, object, embed, foreignObject, a[href]'),
  ...document.querySelectorAll('svg a, svg image, svg script'),
  ...document.querySelectorAll('[onerror], [onload], [onclick]'),
].map((e) => e.outerHTML.slice(0, 200))"""


def _watched_run(run_dir: Path) -> HostileModel:
    paddle.seed(0)
    model = HostileModel()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    with trace(model, stats=True, every=3, run_dir=run_dir):
        for step in range(STEPS):
            x = paddle.randn([2, 4])
            if step == NAN_STEP:
                x[0, 0] = float("nan")
            model(x).sum().backward()
            opt.step()
            opt.clear_grad()
    return model


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def test_hostile_names_in_a_saved_run_page_stay_text(chromium_browser: Browser, tmp_path: Path):
    model = _watched_run(tmp_path / "run")
    run = open_run(tmp_path / "run")
    page_file = save_run_html(run, tmp_path / "run.html")
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 900})
    context.set_offline(True)
    page = context.new_page()
    blocked: list[str] = []
    problems: list[str] = []

    route_local_only(context, blocked)
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    try:
        page.goto(page_file.as_uri())
        view = RunView(page, page.locator(RUN_ROOT))
        view.root.wait_for(timeout=TIMEOUT_MS)

        # The problems list: the NaN step's finding, its names as text.
        picker = view.root.get_by_test_id("pvw-run-problems")
        options = [_collapsed(t) for t in picker.locator("option").all_inner_texts()]
        nan = [o for o in options if o.startswith(f"step {NAN_STEP}: first non-finite step")]
        assert len(nan) == 1, options
        assert all(_collapsed(name) in nan[0] for name in LAYERS[:2]), nan[0]

        # The heatmap's tooltip names each row's layer: those owning parameters ('' the model).
        layers = list(run.layers)
        owners = {name.rpartition(".")[0] for name, _ in model.named_parameters()}
        assert set(layers) == owners and f"{LAYERS[2]}.inner" in owners, layers
        tip = view.root.get_by_test_id("pvw-run-tip")
        for row, layer in enumerate(layers):
            x, y = view.cell(0, row)
            page.mouse.move(x, y)
            tip.wait_for(state="visible", timeout=TIMEOUT_MS)
            assert layer in tip.inner_text() or _collapsed(layer) in _collapsed(tip.inner_text())

        # A step without capture: its per-parameter table, a row per parameter by its name.
        view.click_cell(1, layers.index(LAYERS[0]))
        view.wait_detail(1, "params")
        shown = {row["param"] for row in view.summary_rows()}
        assert shown == {name for name, _ in model.named_parameters()}

        # A captured step: its graph, each layer group drawn under its own name.
        view.click_cell(3, layers.index(LAYERS[1]))
        view.wait_detail(3, "graph")
        view.graph_ready()
        drawn = _collapsed(view.root.get_by_test_id("pvw-run-graph").inner_text())
        assert _collapsed(LAYERS[1]) in drawn, drawn[:500]  # the picked row: its group shown

        assert page.evaluate("() => window.__pwned") is None
        assert page.locator("script").count() == 5  # the page's own, and no other
        assert page.evaluate(INJECTED_JS) == []
        assert not blocked and not problems, (blocked, problems)
    finally:
        context.close()
