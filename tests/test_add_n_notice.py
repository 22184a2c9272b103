"""A traced graph summing layers' outputs with paddle.add_n (build_graph inside trace(), after
the backward). Paddle 2.6 and 3.0 log nothing add_n's backward sends, so those edges have no
shape there; the notice said "no backward() of this graph ran inside its trace()" and told
the user to move backward(), which had run inside it. Now it names the log and the op
(merge/bare_notice.py); Paddle 3.3's log gives every edge its shape, and there is no notice.
Oracle for the shapes: each branch's output, the tensor add_n summed."""

from __future__ import annotations

import paddle
from graph_dicts import nested
from paddle_versions import PADDLE_VERSION

from paddleviz_widget import build_graph, trace


class _Summed(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.branches = paddle.nn.LayerList([paddle.nn.Linear(4, 3) for _ in range(3)])

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        self.outs = [b(x) for b in self.branches]
        return paddle.add_n(self.outs).sum()


def test_add_n_edges_have_their_shape_or_a_notice_naming_the_log_and_the_op():
    paddle.seed(0)
    model = _Summed()
    with trace(model):
        y = model(paddle.randn([2, 4]))
        y.backward(retain_graph=True)
        doc = nested(build_graph(y, model=model))
    names = {n["id"]: n["name"] for n in doc["nodes"]}
    out_of_add_n = [e for e in doc["edges"] if names[e["source"]].startswith("AddN")]
    assert len(out_of_add_n) == 3
    shapes = {tuple(o.shape) for o in model.outs}
    assert shapes == {(2, 3)}
    bare = [e for e in doc["edges"] if not e.get("grad")]
    notice = doc["meta"].get("notice")
    if PADDLE_VERSION >= (3, 3):
        assert bare == [] and notice is None
        assert {tuple(e["grad"]["shape"]) for e in out_of_add_n} == shapes
        return
    assert bare == out_of_add_n  # exactly add_n's, nothing else
    assert notice.startswith(f"3 edge(s) have no gradient shape: the backward log of Paddle "
                             f"{paddle.__version__} gives none")  # fmt: skip
    assert "AddNGradNode" in notice
    assert "no backward() of this graph ran" not in notice
