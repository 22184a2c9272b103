"""trace(stats=True) and a PyLayer whose backward returns None for an input that also gets
another sender's gradient: the statistics hooks cannot see a PyLayer, and what its target
received came from the other sender alone. Paddle's own dump of the backward (read by the
tests' parser) is the oracle: the graph annotates no edge Paddle sent nothing on."""

from __future__ import annotations

import collections
from pathlib import Path

import paddle
import pytest
from dump_reader import read_dump_dir
from paddle_versions import HAS_DUMP, requires_paddle_33, requires_post_hooks

from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import nested_dict

pytestmark = requires_post_hooks


class Square(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def]
        (x,) = ctx.saved_tensor()
        return 2 * x * grad


class FirstOnly(paddle.autograd.PyLayer):
    """Differentiates its first input only: None for the second (a straight-through gate)."""

    @staticmethod
    def forward(ctx, x, y):  # type: ignore[no-untyped-def]
        return x * 3.0, y + 1

    @staticmethod
    def backward(ctx, g1, g2):  # type: ignore[no-untyped-def]
        return g1 * 3.0, None


def _run(
    dump: Path | None, square: bool = True, **options: bool
) -> tuple[paddle.Tensor, dict[str, object]]:
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 4)
    x = paddle.randn([3, 4])
    with trace(fc, stats=True, **options):
        a = fc(x)
        first = Square.apply(a) if square else a * 2
        kept, dropped = FirstOnly.apply(first, a)  # a: from Square (or a * 2) and FirstOnly
        y = kept.sum() + dropped.mean()
        y.backward(**({"dump_backward_graph_path": str(dump)} if dump else {}))
    return y, build_graph(y)


def _annotated(
    doc: dict[str, object],
) -> collections.Counter[tuple[str, str, str, tuple[int, ...]]]:
    graph = nested_dict(doc)
    ptr = {n["id"]: n["ptr"] for n in graph["nodes"]}
    return collections.Counter(
        (ptr[e["source"]], ptr[e["target"]], e["grad"]["dtype"], tuple(e["grad"]["shape"]))
        for e in graph["edges"]
        if e.get("grad")
    )


@requires_paddle_33  # Paddle's dump is the oracle
def test_no_gradient_claimed_where_the_pylayer_sent_none(tmp_path: Path) -> None:
    _, doc = _run(tmp_path)
    dump = read_dump_dir(tmp_path)
    paddles = collections.Counter(
        (e.source, e.target, e.grad.dtype, tuple(e.grad.shape)) for e in dump.edges if e.grad
    )
    extra = _annotated(doc) - paddles
    assert not extra, f"edges annotated that Paddle sent no gradient on: {dict(extra)}"


@pytest.mark.parametrize(
    ("square", "options"),
    [(True, {}), (False, {}), (False, {"call_sites": False, "slots": False})],
    ids=["pylayer-to-pylayer", "hooked-neighbour", "no-stacks-no-slots"],
)
def test_the_edge_is_bare_with_the_tracers_own_account(
    tmp_path: Path, square: bool, options: dict[str, bool]
) -> None:
    # The last: every edge has a hooked end, no stacks, no VLOG: the hooks alone would be the
    # account, and what AddGradNode received (from a * 2) would be pinned on the gate's edge.
    _, doc = _run(None, square, **options)
    graph = nested_dict(doc)
    name = {n["id"]: n["name"] for n in graph["nodes"]}
    # Paddle < 3.3 names the node "GradNodePyLayer_FirstOnly_backward"
    gate = [e for e in graph["edges"] if name[e["source"]].startswith("GradNodePyLayer_FirstOnly")]
    to_a = [e for e in gate if name[e["target"]] == "AddGradNode"]
    assert len(gate) == 2 and len(to_a) == 1
    assert to_a[0].get("grad") is None, to_a[0]
    # Said as what it is, not as a graph traced wrong ("run backward() inside trace()").
    notices = doc["meta"].get("notices") or [doc["meta"].get("notice")]
    said = "1 edge(s) carried no gradient" if HAS_DUMP else " edge(s) from a PyLayer into a node"
    assert any(said in str(line) for line in notices), notices
    assert not any("inside your" in str(line) for line in notices), notices
    if not HAS_DUMP:
        return
    # Paddle's dump of the same backward, untraced: that edge is not in it
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 4)
    a = fc(paddle.randn([3, 4]))
    kept, dropped = FirstOnly.apply(Square.apply(a) if square else a * 2, a)
    (kept.sum() + dropped.mean()).backward(dump_backward_graph_path=str(tmp_path))
    dump = read_dump_dir(tmp_path)
    sent = {(dump.nodes[e.source], dump.nodes[e.target]) for e in dump.edges}
    assert ("GradNodePyLayer_FirstOnly", "AddGradNode") not in sent
    other = "GradNodePyLayer_Square" if square else "ScaleGradNode"
    assert (other, "AddGradNode") in sent
