"""The saved page (standalone_html) of a diff, in Chromium, from file://, offline.

Two real Paddle models with repeated blocks:
one has six residual blocks, the other seven (or the other way round). In Chromium, from
file://, offline: the block only one model has is drawn on its own, green (or red and
dashed), with the count of what it holds; the six blocks both have stay folded and unmarked.
Before, the seventh folded with them into "blocks.0–6 · Block ×7", drawn green: as if every
block were new. Expected counts come from the diff document's own marks.

Two training steps of one model, the second fed an Inf: its gradients' NaN and Inf counts are
what the differences list reads first (the norms, of the finite values, went to 0: "‖g‖ 8.79
→ 0 (+3)" read as a gradient that vanished). The counts are Paddle's own .grad's.

The Gradient flow chart of seven blocks against six, with statistics, is the six's: the
seventh block's parameters (a's gradients) were bars among b's with nothing to tell them apart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import paddle
import paddle.nn as nn
import paddle.nn.functional as F
import pytest
from explorer_page import GRAPH
from paddle_versions import requires_post_hooks
from test_standalone_browser import saved_page

from paddleviz_widget import build_graph, trace
from paddleviz_widget.export.standalone import standalone_html
from paddleviz_widget.graph.diff import diff_graphs

# Per drawn node: its classes, text and the computed outline stroke and dash.
NODES_JS = """(sel) => [...document.querySelectorAll(`${sel} svg g.node`)].map((g) => {
  const shape = g.querySelector("polygon, ellipse, path");
  const style = getComputedStyle(shape);
  return { id: g.id, cls: g.getAttribute("class"), text: g.textContent,
           stroke: style.stroke, dash: style.strokeDasharray };
})"""
SWATCH_JS = """(status) => getComputedStyle(
  document.querySelector(`.pvw-swatch-diff-${status}`)).borderTopColor"""


class Block(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.out = nn.Linear(16, 16)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return x + self.out(F.relu(self.fc(x)))


class Net(nn.Layer):
    def __init__(self, blocks: int) -> None:
        super().__init__()
        self.blocks = nn.LayerList([Block() for _ in range(blocks)])
        self.head = nn.Linear(16, 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def traced(blocks: int, stats: bool = False) -> dict[str, Any]:
    model = Net(blocks)
    with trace(model, stats=stats):
        y = model(paddle.randn([2, 16]))
        y.sum().backward()
    return build_graph(y)


def marks_in_block(doc: dict[str, Any], name: str) -> dict[str, int]:
    """Marks on the nodes inside layer ``name`` and on the edges they send (the Δ count)."""
    parent = {g["id"]: g.get("parent") for g in doc["groups"]}
    block = next(g["id"] for g in doc["groups"] if g["name"] == name)

    def inside(gid: str | None) -> bool:
        while gid is not None and gid != block:
            gid = parent.get(gid)
        return gid == block

    nodes = {n["id"] for n in doc["nodes"] if inside(n.get("group"))}
    tally = {"added": 0, "removed": 0, "changed": 0}
    for item in [n for n in doc["nodes"] if n["id"] in nodes] + [
        e for e in doc["edges"] if e["source"] in nodes
    ]:
        if item.get("diff"):
            tally[item["diff"]["status"]] += 1
    return tally


@pytest.mark.parametrize(
    ("a", "b", "status", "sign"), [(6, 7, "added", "+"), (7, 6, "removed", "\u2212")]
)
def test_a_block_only_one_model_has_is_drawn_apart_from_the_run(
    chromium_browser: Any, tmp_path: Path, a: int, b: int, status: str, sign: str
) -> None:
    doc = diff_graphs(traced(a), traced(b), labels=(f"{a} blocks", f"{b} blocks"))
    tally = marks_in_block(doc, "blocks.6")
    assert tally[status] > 0 and sum(tally.values()) == tally[status]  # wholly one side's
    # Opened on the model and its block list: each block closed, the repeated ones folded.
    opened = [g["id"] for g in doc["groups"] if g["name"] in ("Net", "blocks")]
    path = tmp_path / "diff.html"
    path.write_text(standalone_html(doc, expanded=opened), encoding="utf-8")
    with saved_page(chromium_browser, path) as saved:
        nodes = saved.page.evaluate(NODES_JS, GRAPH)
        runs = [n for n in nodes if "pvw-run" in n["cls"].split()]
        assert len(runs) == 1 and "blocks.0\u20135 \u00b7 Block \u00d76" in runs[0]["text"], runs
        assert "pvw-diff" not in runs[0]["cls"] and "\u0394" not in runs[0]["text"]
        block = next(n for n in nodes if re.search(r"blocks\.6 \u00b7 Block", n["text"]))
        assert {"pvw-diff-holds", f"pvw-diff-{status}"} <= set(block["cls"].split())
        assert f"\u0394 {sign}{tally[status]}" in block["text"]
        assert block["stroke"] == saved.page.evaluate(SWATCH_JS, status)  # the legend's colour
        assert (block["dash"] != "none") == (status == "removed")


class Two(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


@requires_post_hooks
def test_a_gradient_that_went_nan_reads_its_nan_count_first(
    chromium_browser: Any, tmp_path: Path
) -> None:
    paddle.seed(0)
    model, x = Two(), paddle.randn([2, 8])
    docs, nans = [], []
    for feed in (
        x,
        paddle.where(paddle.arange(16).reshape([2, 8]) == 0, paddle.full_like(x, float("inf")), x),
    ):
        with trace(model, stats=True):
            y = model(feed)
            (y * y).sum().backward()
        docs.append(build_graph(y))
        nans.append(int(paddle.isnan(model.fc2.weight.grad).sum()))
        model.clear_gradients()
    assert nans[0] == 0 < nans[1]
    doc = diff_graphs(docs[0], docs[1], labels=("ok", "inf"))
    param = next(
        n["id"] for n in doc["nodes"] if (n.get("param") or {}).get("name") == "fc2.weight"
    )
    edge = next(e["id"] for e in doc["edges"] if e["target"] == param)
    path = tmp_path / "nan.html"
    path.write_text(standalone_html(doc), encoding="utf-8")
    with saved_page(chromium_browser, path) as saved:
        entry = saved.page.locator(f"[data-testid=pvw-inspector] [data-ref='{edge}']")
        assert entry.inner_text().endswith(f": NaN count 0 \u2192 {nans[1]} (+3)"), (
            entry.inner_text()
        )


@requires_post_hooks
def test_the_gradient_flow_of_a_diff_is_b_s(chromium_browser: Any, tmp_path: Path) -> None:
    seven, six = traced(7, stats=True), traced(6, stats=True)
    doc = diff_graphs(seven, six, labels=("seven", "six"))
    wanted = [n["param"]["name"] for n in six["nodes"] if n.get("param")]
    path = tmp_path / "flow.html"
    path.write_text(standalone_html(doc), encoding="utf-8")
    with saved_page(chromium_browser, path) as saved:
        saved.page.get_by_test_id("pvw-tab-flow").click()
        rows = saved.page.get_by_test_id("pvw-flow-rows").locator(".pvw-flow-name")
        assert sorted(rows.all_inner_texts()) == sorted(wanted)  # not blocks.6's
        line = saved.page.get_by_test_id("pvw-flow-line").inner_text()
        assert line == "The gradients of six; 4 parameters only in seven are left out."
        # The Layers tab: six's table (its own parameter count), and a line that says so.
        saved.page.get_by_test_id("pvw-tab-layers").click()
        total = sum(n["param"]["shape"][0] * (n["param"]["shape"][1:] or [1])[0]
                    for n in six["nodes"] if n.get("param"))  # fmt: skip
        foot = saved.page.get_by_test_id("pvw-layers-total").inner_text()
        assert foot.startswith(f"Total params: {total:,} ("), foot
        line = saved.page.get_by_test_id("pvw-layers-line").inner_text()
        gone = [g for g in seven["groups"] if g["name"].startswith("blocks.6")]  # and .fc, .out
        only = f"{len(gone)} layers only in seven left out"
        assert line == f"The layers of six, the diff's second graph; {only}."
