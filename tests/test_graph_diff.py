"""GraphWidget.diff / graph.diff: two real Paddle graphs compared. Each test changes one thing
it knows (a layer's width, a branch, one layer's dtype, the gradients of a training step) and
checks that the diff names exactly that, read from the model or from Paddle's own .grad."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import GraphWidget, build_graph, trace
from paddleviz_widget.graph import Graph, validate_graph_dict
from paddleviz_widget.graph.diff import diff_graphs, diff_summary
from paddleviz_widget.graph.summary import Summary

BATCH, IN, OUT, PAD = 2, 8, 4, 3


class Net(nn.Layer):
    """fc1 -> relu -> fc2, and with ``branch`` a second path through ``extra`` added on."""

    def __init__(self, hidden: int = 16, branch: bool = False) -> None:
        super().__init__()
        self.fc1 = nn.Linear(IN, hidden)
        self.fc2 = nn.Linear(hidden, OUT)
        self.extra = nn.Linear(IN, OUT) if branch else None

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        y = self.fc2(F.relu(self.fc1(x)))
        return y if self.extra is None else y + self.extra(x)


class NetV2(Net):
    """The same layers under another class name (a second version of the model)."""


class Pad(nn.Layer):
    """Appends PAD learned columns; in ``dtype`` (its parameter too), cast back to float32.
    Only ops with float16 CPU kernels (cast, concat): Paddle has no float16 matmul on CPU."""

    def __init__(self, dtype: str) -> None:
        super().__init__()
        self.dtype_ = dtype
        self.w = self.create_parameter([BATCH, PAD], dtype=dtype)

    def forward(self, h: paddle.Tensor) -> paddle.Tensor:
        if self.dtype_ == "float32":
            return paddle.concat([h, self.w], axis=1)
        return paddle.concat([h.astype(self.dtype_), self.w], axis=1).astype("float32")


class PadNet(nn.Layer):
    def __init__(self, dtype: str) -> None:
        super().__init__()
        self.fc1 = nn.Linear(IN, 16)
        self.pad = Pad(dtype)
        self.fc2 = nn.Linear(16 + PAD, OUT)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(self.pad(self.fc1(x)))


def traced(model: nn.Layer, x: paddle.Tensor | None = None, **options: Any) -> dict[str, Any]:
    x = paddle.randn([BATCH, IN]) if x is None else x
    with trace(model, **options):
        y = model(x)
        y.sum().backward()
    return build_graph(y)


def diffed(a: dict[str, Any], b: dict[str, Any], **options: Any) -> dict[str, Any]:
    doc = diff_graphs(a, b, **options)
    validate_graph_dict(json.loads(json.dumps(doc)))
    assert Graph.from_dict(doc).to_dict() == doc  # the marks survive the codec
    return diff_summary(doc)


def params(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {e["param"]: e for e in entries if e.get("param")}


def param_change(entry: dict[str, Any], field: str) -> tuple[Any, Any]:
    (change,) = [c for c in entry["changes"] if c["field"] == field and c.get("of") == "param"]
    return change["a"], change["b"]


def nothing(summary: dict[str, Any]) -> bool:
    return not (summary["added"] or summary["removed"] or summary["changed"])


def test_the_same_model_twice_and_a_renamed_version_have_no_differences() -> None:
    # other weights, other input, other GradNode pointers (the models held: a freed model's
    # parameters' nodes would leave their addresses to the next model's)
    models = Net(), Net(), NetV2()
    a, b, c = (traced(m) for m in models)
    assert {n["ptr"] for n in a["nodes"]} != {n["ptr"] for n in b["nodes"]}
    for other in (b, c):
        summary = diffed(a, other)
        assert nothing(summary), summary
        assert summary["counts"] == {
            s: {"nodes": 0, "edges": 0} for s in ("added", "removed", "changed")
        }
    doc = diff_graphs(a, b)
    assert (len(doc["nodes"]), len(doc["edges"])) == (len(a["nodes"]), len(a["edges"]))


def test_a_wider_layer_shows_changed_shapes_named_by_layer_path() -> None:
    a, b = traced(Net(hidden=16)), traced(Net(hidden=32))
    summary = diffed(a, b)
    assert not summary["added"] and not summary["removed"]
    changed = params(summary["changed"])
    shapes = {name: param_change(entry, "shape") for name, entry in changed.items()}
    # What the test changed: the hidden width, i.e. fc1's output and fc2's input.
    assert shapes == {
        "fc1.weight": ([IN, 16], [IN, 32]),
        "fc1.bias": ([16], [32]),
        "fc2.weight": ([16, OUT], [32, OUT]),
    }
    assert {e["layer"] for e in changed.values()} == {"fc1", "fc2"}
    for entry in summary["changed"]:
        assert entry["layer"] in {"fc1", "fc2", "Net"}  # relu is functional: the model's own
        for change in entry["changes"]:
            assert change["field"] == "shape"
            assert [32 if d == 16 else d for d in change["a"]] == change["b"]
    # Every edge whose gradient has the hidden width in b, and no other, is changed.
    wide = [e for e in b["edges"] if "grad" in e and 32 in b["tensors"][e["grad"]][1]]
    changed_edges = [e for e in summary["changed"] if e["kind"] == "edge"]
    assert len(changed_edges) == len(wide) > 0


def test_an_added_branch_shows_added_nodes_and_edges() -> None:
    a, b = traced(Net()), traced(Net(branch=True))
    summary = diffed(a, b)
    assert not summary["removed"] and not summary["changed"]
    added = summary["added"]
    assert set(params(added)) == {"extra.weight", "extra.bias"}
    ops = sorted((e["layer"], e["op"]) for e in added if e["kind"] == "node" and "param" not in e)
    # extra's matmul and bias add, and the add of the two paths in the model's forward
    assert ops == [("Net", "AddGradNode"), ("extra", "AddGradNode"), ("extra", "MatmulGradNode")]
    added_edges = [e for e in added if e["kind"] == "edge"]
    assert len(added_edges) == len(b["edges"]) - len(a["edges"])


def test_one_layer_in_float16_shows_dtype_changes_in_that_layer_only() -> None:
    a, b = traced(PadNet("float32")), traced(PadNet("float16"))
    summary = diffed(a, b)
    changed = summary["changed"]
    assert param_change(params(changed)["pad.w"], "dtype") == ("float32", "float16")
    dtype_changes = [(e, c) for e in changed for c in e["changes"] if c["field"] == "dtype"]
    assert dtype_changes
    for entry, change in dtype_changes:
        assert entry["layer"] == "pad", entry
        assert (change["a"], change["b"]) == ("float32", "float16")
    assert not any(e["layer"] in ("fc1", "fc2") for e in changed if e["kind"] == "node")
    # The two casts the test added, both inside pad; nothing of a is gone but its direct edges.
    added_nodes = [(e["layer"], e["op"]) for e in summary["added"] if e["kind"] == "node"]
    assert added_nodes == [("pad", "CastGradNode")] * 2
    assert not [e for e in summary["removed"] if e["kind"] == "node"]


def _step(
    model: nn.Layer, x: paddle.Tensor, scale: float = 1.0
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One traced backward with gradient statistics, and each parameter's .grad (Paddle's)."""
    with trace(model, stats=True):
        y = model(x)
        (y * scale).sum().backward()
    doc = build_graph(y)
    grads = {p.name: p.grad.numpy().astype(np.float64) for p in model.parameters()}
    names = {p.name: name for name, p in model.named_parameters()}
    return doc, {names[k]: v for k, v in grads.items()}


@requires_post_hooks
def test_a_scaled_loss_changes_every_gradient_beyond_tolerance_and_none_within() -> None:
    paddle.seed(1)
    model, x = Net(), paddle.randn([BATCH, IN])
    a, _ = _step(model, x)
    model.clear_gradients()
    b, _ = _step(model, x, scale=3.0)  # same graph, every gradient x3 (backward is linear)
    summary = diffed(a, b, rtol=0.1)
    assert not summary["added"] and not summary["removed"]
    with_stats = [e for e in b["edges"] if "stats" in e]
    changed = [e for e in summary["changed"] if e["kind"] == "edge"]
    assert len(changed) == len(with_stats) == len(b["edges"])
    for entry in changed:
        norm = [c for c in entry["changes"] if c["field"] == "norm"]
        assert len(norm) == 1 and norm[0]["b"] == pytest.approx(3 * norm[0]["a"], rel=1e-5)
    # x3 moves a value by 2/3 of the larger: within rtol=0.7, nothing changed.
    assert nothing(diffed(a, b, rtol=0.7))


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    """How far the L2 norm and max |g| moved, relative to the larger (the test's own oracle)."""
    moves = []
    for f in (np.linalg.norm, lambda g: np.abs(g).max()):
        va, vb = float(f(a)), float(f(b))
        moves.append(abs(vb - va) / max(va, vb) if max(va, vb) > 0 else 0.0)
    return max(moves)


@requires_post_hooks
def test_two_training_steps_mark_the_parameters_whose_gradient_moved_beyond_rtol() -> None:
    paddle.seed(2)
    model, x = Net(), paddle.randn([BATCH, IN])
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=model.parameters())
    a, grads_a = _step(model, x)
    opt.step()
    opt.clear_grad()
    b, grads_b = _step(model, x)
    rtol = 0.1
    summary = diffed(a, b, rtol=rtol)
    assert not summary["added"] and not summary["removed"]
    marked = {e["to_param"] for e in summary["changed"] if e["kind"] == "edge" and "to_param" in e}
    moved = {name: _relative(grads_a[name], grads_b[name]) for name in grads_a}
    assert any(m > rtol * 1.05 for m in moved.values())  # the step did move something
    for name, move in moved.items():
        if move > rtol * 1.05:
            assert name in marked, (name, move)
        elif move < rtol * 0.95:
            assert name not in marked, (name, move)


@requires_post_hooks
def test_a_tiny_step_changes_nothing_beyond_tolerance() -> None:
    paddle.seed(3)
    model, x = Net(), paddle.randn([BATCH, IN])
    opt = paddle.optimizer.SGD(learning_rate=1e-5, parameters=model.parameters())
    a, grads_a = _step(model, x)
    opt.step()
    opt.clear_grad()
    b, grads_b = _step(model, x)
    assert max(_relative(grads_a[k], grads_b[k]) for k in grads_a) < 0.01
    assert nothing(diffed(a, b))


@requires_post_hooks
def test_stats_on_one_side_only_are_not_compared_and_the_notice_says_why() -> None:
    model = Net()
    a, b = traced(model), traced(model, stats=True)
    doc = diff_graphs(a, b, labels=("plain", "stats"))
    assert doc["meta"]["diff"]["compared"] == ["shape"]
    assert "graph 'plain' has none" in doc["meta"]["notice"]
    assert nothing(diff_summary(doc))


def untraced(model: nn.Layer, x: paddle.Tensor | None = None) -> dict[str, Any]:
    """Built without trace(): layer groups inferred from which layer owns the parameters."""
    y = model(paddle.randn([BATCH, IN]) if x is None else x)
    return build_graph(y, model=model)


def test_a_traced_graph_and_one_built_without_trace_match_op_for_op() -> None:
    # The Tanh layer holds no parameter: traced, its op is in "1"; inferred, in the model.
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(IN, 16), nn.Tanh(), nn.Linear(16, OUT))
    x = paddle.randn([BATCH, IN])
    a, b = traced(model, x), untraced(model, x)
    groups = {g["id"]: g["name"] for g in a["groups"]}
    tanh = next(n for n in a["nodes"] if n["name"] == "TanhGradNode")
    assert groups[tanh["group"]] == "1" and "o" in b["meta"]["sources"]["nodes"]["group"]
    assert nothing(diffed(a, b)) and nothing(diffed(b, a))
    # A real difference is still one: a branch added, seen by a graph built without trace()
    summary = diffed(traced(Net()), untraced(Net(branch=True)))
    assert not summary["removed"] and not summary["changed"]
    assert set(params(summary["added"])) == {"extra.weight", "extra.bias"}


# -- the widget ------------------------------------------------------------------------------


def test_widget_diff_takes_tensors_documents_and_saved_files(tmp_path: Any) -> None:
    model = Net(hidden=16)
    with trace(model):
        y = model(paddle.randn([BATCH, IN]))
        y.sum().backward()
    wide = traced(Net(hidden=32))
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(wide))
    w = GraphWidget.diff(y, str(path), labels=("narrow", "wide"), height=500)
    summary = w.summary()
    assert summary == diff_summary(w.graph) and summary["labels"] == ["narrow", "wide"]
    assert set(params(summary["changed"])) == {"fc1.weight", "fc1.bias", "fc2.weight"}
    assert w.height == "500px"
    assert isinstance(GraphWidget(y).summary(), Summary)  # a normal widget: the layer table


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (lambda: paddle.randn([2]), ValueError, r"graph 'a': tensor .* has no backward graph"),
        (lambda: "/no/such/graph.json", FileNotFoundError, r"graph 'a': no file .*json\.dump"),
        (lambda: {"weights": [1, 2]}, TypeError, r"not a graph document, nor a dict of tensors"),
        (lambda: {"schema_version": "9.9"}, ValueError, r"graph 'a' is not a graph document"),
    ],
)
def test_widget_diff_bad_input_says_what_to_pass(bad: Any, error: type, message: str) -> None:
    good = traced(Net())
    with pytest.raises(error, match=message):
        GraphWidget.diff(bad(), good)
    with pytest.raises(ValueError, match="rtol must be a number >= 0"):
        GraphWidget.diff(good, good, rtol=-0.5)
