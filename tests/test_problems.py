"""find_problems: what looks wrong in a graph's gradients, in words (graph/problems/)."""

from __future__ import annotations

from paddle_versions import HAS_POST_HOOKS, requires_post_hooks

from paddleviz_widget.graph import CallSite, Graph, Node, ParamInfo
from paddleviz_widget.graph.problems import Problem, find_problems, problems_text


def _graph(meta: dict, statuses: dict[str, str]) -> Graph:
    nodes = (
        Node("n0", "MeanGradNode", "0x1", "output"),
        Node("n1", "SqrtGradNode", "0x2", "op", call_site=CallSite("model.py", 12, "forward")),
        *(
            Node(f"n{k + 2}", "GradNodeAccumulation", hex(k + 3), "param",
                 param=ParamInfo(name, (3,), "float32"), grad_status=status)
            for k, (name, status) in enumerate(statuses.items())
        ),
    )  # fmt: skip
    return Graph(nodes, (), (), meta)


def test_each_problem_is_named_with_its_reason():
    graph = _graph(
        {
            "first_nonfinite": "n1",
            "nonfinite_in_forward": False,
            "unreached_params": [{"name": "head.bias", "reason": "stop_gradient=True: frozen"}],
        },
        {"fc.weight": "zero", "fc.bias": None, "emb.weight": "none"},
    )
    found = [(p.kind, p.name, p.node) for p in find_problems(graph)]
    assert found == [
        ("nonfinite", "SqrtGradNode", "n1"),
        ("zero", "fc.weight", "n2"),
        ("none", "emb.weight", "n4"),
        ("frozen", "head.bias", None),  # information, listed after the problems
    ]
    text = problems_text(find_problems(graph))
    assert "SqrtGradNode (model.py:12): the first NaN/Inf gradient was made here" in text
    assert "all zeros" in text
    assert text.index("For information (not problems):") < text.index("stop_gradient=True")
    assert find_problems(graph)[-1].severity == "info"


def test_a_nan_from_the_forward_says_so():
    graph = _graph({"first_nonfinite": "n1", "nonfinite_in_forward": True}, {})
    reason = find_problems(graph)[0].reason
    assert "already NaN/Inf when the backward started" in reason
    assert "made here" not in reason  # no gradient was finite: it was not made here
    assert "FLAGS_check_nan_inf" in reason


def test_a_forward_culprit_layer_is_named_before_the_loss_node():
    meta = {"first_nonfinite": "n1", "nonfinite_in_forward": True,
            "forward_nonfinite": {"layer": "enc.attn", "layer_type": "Attention",
                                  "inputs_finite": True, "ops": ["n1"],
                                  "call_site": {"file": "m.py", "line": 3}}}  # fmt: skip
    (p,) = find_problems(_graph(meta, {}))
    assert (p.layer, p.name, p.node) == ("enc.attn", "SqrtGradNode", "n1")
    assert p.line().startswith("nonfinite  enc.attn / SqrtGradNode (model.py:12): ")


def test_to_dict_keeps_the_old_keys_and_round_trips():
    (p,) = find_problems(_graph({"first_nonfinite": "n1"}, {}))
    d = p.to_dict()
    assert {"kind", "name", "node", "reason"} <= set(d)
    assert Problem.from_dict(d) == p


def test_a_healthy_graph_has_nothing_to_say():
    graph = _graph({}, {"fc.weight": None})
    assert find_problems(graph) == []
    assert problems_text([]) == "No problems found in this graph's gradients."


def test_a_graph_without_statistics_says_nothing_was_checked():
    # The loss is NaN (sqrt of negatives): without stats=True no rule can see it, and "No
    # problems found" would read as a clean bill of health.
    import paddle

    from paddleviz_widget import GraphWidget, trace

    paddle.seed(0)
    fc = paddle.nn.Linear(4, 3)
    x = paddle.randn([2, 4])
    for stats in (False, True) if HAS_POST_HOOKS else (False,):
        with trace(fc, stats=stats):
            y = paddle.sqrt(fc(x) - 10.0).sum()
            y.backward()
        assert bool(paddle.isnan(y))
        found = GraphWidget(y).problems()
        if stats:
            assert [p.kind for p in found] == ["nonfinite"]
        else:
            assert found == []
            assert str(found).startswith("No gradient statistics in this graph")
            # (on 2.6, which refuses stats=True, the way is an upgrade: test_problems_no_stats_here)
            assert ("trace(model, stats=True)" if HAS_POST_HOOKS else ">=3.0") in str(found)
    if not HAS_POST_HOOKS:
        return
    with trace(fc, stats=True):
        healthy = fc(x).sum()
        healthy.backward()
    assert str(GraphWidget(healthy).problems()) == "No problems found in this graph's gradients."


@requires_post_hooks
def test_edges_without_statistics_are_not_said_to_be_fine():
    # An LSTM's fused weights reach its RNN node through one slot (a list): Paddle's hooks
    # cannot see them, so "No problems found" would vouch for gradients nobody looked at.
    import paddle

    from paddleviz_widget import GraphWidget, trace

    paddle.seed(0)
    lstm = paddle.nn.LSTM(4, 8)
    with trace(lstm, stats=True):
        y, _ = lstm(paddle.randn([2, 3, 4]))
        y.mean().backward()
    text = str(GraphWidget(y).problems())
    weights = sum(1 for p in lstm.parameters() if not p.stop_gradient)
    assert f"{weights} edge(s) carried a gradient without them" in text
    assert "not checked" in text
