"""A graph built without trace() after backward, from a model that calls its residual blocks in
its own forward: the residual stream's ops sit at the model's own level (200 of them here), so
the widget starts with the model closed, one node painted at once (js/view/auto_open.ts), not
a 200-node tangle; the depth menu says "custom", the kernel sees the view it got, and a click
opens the model. Shown in place of LeNet in the first-view notebook's widget ``w``."""

from __future__ import annotations

from typing import Any

from explorer_page import explorer_page
from graph_view import SVG_NODES

NOTEBOOK = "first_view.ipynb"
RESIDUAL = """
import paddle
from paddle import nn

class Norm(nn.Layer):
    def __init__(self, width):
        super().__init__()
        self.weight = self.create_parameter([width], default_initializer=nn.initializer.Constant(1))
    def forward(self, x):
        return x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

class Block(nn.Layer):
    def __init__(self, width):
        super().__init__()
        self.norm, self.fc = Norm(width), nn.Linear(width, width)
    def forward(self, x):
        return x + self.fc(self.norm(x))

class Residual(nn.Layer):
    def __init__(self, width=16):
        super().__init__()
        self.embed = nn.Linear(8, width)
        self.blocks = nn.LayerList([Block(width) for _ in range(40)])
        self.head = nn.Linear(width, 1)
    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)

paddle.seed(0)
residual = Residual()
out = residual(paddle.randn([4, 8]))
out.mean().backward()
untraced = build_graph(out, model=residual)
root = next(g["id"] for g in untraced["groups"] if not g.get("parent"))
"""


def test_an_untraced_residual_model_starts_closed_and_opens_by_a_click(
    chromium_browser: Any, lab_server: Any
) -> None:
    with explorer_page(chromium_browser, lab_server, NOTEBOOK) as ex:
        ex.run(RESIDUAL)
        ex.redrawn(lambda: ex.run("w.graph = untraced"))
        ex.answered()
        root = ex.value("root")
        assert ex.root.get_attribute("data-visible-nodes") == "1"
        assert ex.node_ids() == {f"pvw-{root}"}
        assert ex.page.get_by_test_id("pvw-depth").input_value() == "custom"
        assert ex.value("[w.depth, w.expanded]") == [-1, []]
        status = ex.root.get_by_test_id("pvw-status").inner_text()
        assert "showing 1 node (1 collapsed group)" in status, status

        ex.redrawn(ex.element(f"pvw-{root}").click)
        assert ex.value("w.expanded") == [root]
        assert int(ex.root.get_attribute("data-visible-nodes") or 0) > 200
        assert ex.page.locator(SVG_NODES).count() > 200
