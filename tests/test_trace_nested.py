"""Nested trace() sessions: ``with trace(G): ... with trace(D): ...`` (a GAN's discriminator
traced inside the generator's loop, a helper that traces its own submodel). The graph holds
both models' nodes and must get both models' layer groups.

Oracles: the same graph traced once with both models in one ``nn.LayerList`` (each node's
group read as model index, path under its model and layer type), and ``trace()`` without a
model around both (the same tree, the same names); a submodel traced again inside its model's
trace gives exactly the groups of the model's trace alone.
"""

from __future__ import annotations

from typing import Any

import paddle
import paddle.nn as nn
from graph_dicts import nested
from paddle_versions import requires_paddle_33

from paddleviz_widget import build_graph, trace


class Generator(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 28 * 28)
        self.act = nn.Tanh()

    def forward(self, z: paddle.Tensor) -> paddle.Tensor:
        return self.act(self.fc(z)).reshape([-1, 1, 28, 28])


def _gan() -> tuple[nn.Layer, nn.Layer, paddle.Tensor]:
    paddle.seed(3)
    return Generator(), paddle.vision.models.LeNet(num_classes=1), paddle.randn([2, 16])


def _placed(doc: dict[str, Any]) -> list[tuple[str, tuple[int, str, str] | None]]:
    """Each node (walk order): its name and its group as (model index, path under the
    model, layer type). One model root (a LayerList) is read as its children."""
    graph = nested(doc)
    groups = {g["id"]: g for g in graph["groups"]}
    roots = [g["id"] for g in graph["groups"] if g.get("parent") is None]
    if len(roots) == 1 and groups[roots[0]]["type"] == "LayerList":
        outer = roots[0]
        roots = [g["id"] for g in graph["groups"] if g.get("parent") == outer]
        groups = {k: g for k, g in groups.items() if k != outer}

    def place(gid: str) -> tuple[int, str, str]:
        g, chain = groups[gid], []
        while g["id"] not in roots:
            chain.append(g["name"].split(".")[-1])
            g = groups[g["parent"]]
        return roots.index(g["id"]), ".".join(reversed(chain)), groups[gid]["type"]

    return [(n["name"], place(n["group"]) if n.get("group") else None) for n in graph["nodes"]]


@requires_paddle_33  # asserts no notice: < 3.3 says VLOG cannot be switched on
def test_nested_traces_give_both_models_groups_as_one_layerlist_does() -> None:
    g, d, z = _gan()
    with trace(g):
        fake = g(z)
        with trace(d):
            loss = d(fake).mean()
            loss.backward()
    doc = build_graph(loss)
    # Captured once, by the inner trace: two nested captures read each other's log lines
    # ("Paddle's backward log was only partly understood").
    assert doc["meta"].get("notice") is None
    got = _placed(doc)
    both = nn.LayerList([g, d])
    with trace(both):
        loss2 = d(g(z)).mean()
        loss2.backward()
    want = _placed(build_graph(loss2))
    assert got == want
    assert {p[0] for _, p in got if p is not None} == {0, 1}  # both models' groups


def test_nested_traces_with_backward_after_the_inner_block_match_a_modelless_trace() -> None:
    g, d, z = _gan()
    with trace(g):
        fake = g(z)
        with trace(d):
            out = d(fake)
        loss = out.mean()
        loss.backward()
    got = nested(build_graph(loss))
    with trace():
        loss2 = d(g(z)).mean()
        loss2.backward()
    want = nested(build_graph(loss2))
    assert got["groups"] == want["groups"]
    assert [n.get("group") for n in got["nodes"]] == [n.get("group") for n in want["nodes"]]
    assert [g["name"] for g in got["groups"] if g.get("parent") is None] == ["Generator", "LeNet"]


def test_a_submodel_traced_inside_its_models_trace_keeps_the_models_groups() -> None:
    paddle.seed(4)
    model = paddle.vision.models.resnet18(num_classes=4)
    x = paddle.randn([1, 3, 32, 32])

    def train_step(watch: nn.Layer) -> paddle.Tensor:  # a helper tracing the part it watches
        with trace(watch):
            loss = model(x).mean()
            loss.backward()
        return loss

    with trace(model):
        loss = train_step(model.layer1)
        got = nested(build_graph(loss))  # inside the outer block, the inner one ended
    with trace(model):
        loss2 = model(x).mean()
        loss2.backward()
    want = nested(build_graph(loss2))
    assert got["groups"] == want["groups"]
    assert [n.get("group") for n in got["nodes"]] == [n.get("group") for n in want["nodes"]]


@requires_paddle_33  # asserts no notice: < 3.3 says VLOG cannot be switched on
def test_statistics_asked_by_the_outer_trace_are_kept() -> None:
    g, d, z = _gan()
    with trace(g, stats=True):
        with trace(d):  # no statistics asked here: the outer trace captures the backward
            loss = d(g(z)).mean()
            loss.backward()
        doc = nested(build_graph(loss))
    assert doc["meta"].get("notice") is None
    assert all(e.get("stats") for e in doc["edges"] if e.get("grad"))
    assert len([g for g in doc["groups"] if g.get("parent") is None]) == 2


def test_a_watched_run_around_a_nested_trace_records_every_step(tmp_path, capfd) -> None:
    g, d, z = _gan()
    with trace(g, every=1, run_dir=tmp_path):
        for _ in range(3):
            with trace(d):
                d(g(z)).mean().backward()
    assert len(list((tmp_path / "captures").glob("capture-*.json.zst"))) == 3
    assert "Traceback" not in capfd.readouterr().err
