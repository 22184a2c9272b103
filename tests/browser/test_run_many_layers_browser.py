"""A run of a model with a few dozen layers (paddle.vision's ResNet-18: 41 layers with
gradients), its saved page opened as a notebook shows it (720 px high, file://, offline).

Before the fix the heatmap fitted all 41 rows at 5 px, too low to draw a name: every row was a
nameless stripe and the label column said "41 layers, 1-41"; now each row shown is named and
the rest scroll (the wheel), the column saying which rows show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_only import route_local_only
from playwright.sync_api import Browser
from run_page import RUN_ROOT, TIMEOUT_MS, RunView

REPO = Path(__file__).resolve().parents[2]
TRAIN = """
import sys, numpy as np, paddle
from paddleviz_widget import trace
paddle.seed(0)
model = paddle.vision.models.resnet18(num_classes=10)
opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
rng = np.random.default_rng(0)
with trace(model, stats=True, every=2, run_dir=sys.argv[1]):
    for step in range(3):
        x = paddle.to_tensor(rng.standard_normal((2, 3, 32, 32)).astype("float32"))
        y = paddle.to_tensor(rng.integers(0, 10, (2, 1)).astype("int64"))
        paddle.nn.functional.cross_entropy(model(x), y).backward()
        opt.step(); opt.clear_grad()
"""
# Dark pixels of the label column in a row's band: its name, drawn or not.
INK_JS = """(canvas, [y0, y1]) => {
  const box = canvas.getBoundingClientRect(), k = canvas.width / box.width;
  const d = canvas.getContext("2d").getImageData(0, Math.round((y0 - box.top) * k),
    Math.floor(140 * k), Math.max(1, Math.round((y1 - y0) * k))).data;
  let ink = 0;
  for (let o = 0; o < d.length; o += 4) {
    if (d[o + 3] > 128 && d[o] + d[o + 1] + d[o + 2] < 384) ink++;
  }
  return ink;
}"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    tmp = tmp_path_factory.mktemp("bb23e_many_layers")
    run_dir = tmp / "bb23e_resnet18"
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    subprocess.run([sys.executable, "-c", TRAIN, str(run_dir)], env=env, check=True,
                   stderr=subprocess.DEVNULL, timeout=600)  # fmt: skip
    out = tmp / "run.html"
    subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", str(run_dir), "-o", str(out)],
        check=True, timeout=300, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return out, json.loads((run_dir / "run.json").read_text())["layers"]


def test_every_row_shown_is_named_and_the_rest_scroll(
    chromium_browser: Browser, saved: tuple[Path, list[str]]
) -> None:
    page_file, layers = saved
    assert len(layers) > 30  # more than fit at a readable height
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 720})
    page = context.new_page()
    blocked: list[str] = []
    route_local_only(page, blocked)
    try:
        page.goto(page_file.as_uri())
        view = RunView(page, page.locator(RUN_ROOT))
        view.root.wait_for(timeout=TIMEOUT_MS)
        page.wait_for_function("(c) => c.pvwCell(0, 0)", arg=view.heatmap.element_handle())
        first, second = view.cell(0, 0)[1], view.cell(0, 1)[1]
        row_h = second - first
        assert row_h >= 8, f"rows {row_h:.1f} px high: too low for a name"
        shown = view.heatmap.evaluate(  # the rows in view (the canvas's hook says which)
            "(c, n) => { let r = 0; while (r < n && c.pvwCell(0, r)) r++; return r; }", len(layers)
        )
        for row in (0, 1, shown // 2, shown - 1):  # each row shown has its name drawn
            y = view.cell(0, row)[1]
            ink = view.heatmap.evaluate(INK_JS, [y - row_h / 2 + 1, y + row_h / 2 - 1])
            assert ink > 10, f"row {row} ({layers[row]}) has no name"
        # The last layer is reached by the wheel over the heatmap.
        x, y = view.cell(0, 0)
        page.mouse.move(x, y)
        for _ in range(40):
            if view.heatmap.evaluate("(c, r) => c.pvwCell(0, r)", len(layers) - 1):
                break
            page.mouse.wheel(0, 200)
            page.wait_for_timeout(50)
        assert view.heatmap.evaluate("(c, r) => c.pvwCell(0, r)", len(layers) - 1)
        assert not blocked
    finally:
        context.close()
