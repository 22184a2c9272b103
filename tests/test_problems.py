"""find_problems: what looks wrong in a graph's gradients, in words (graph/problems.py)."""

from __future__ import annotations

from paddleviz_widget.graph import CallSite, Graph, Node, ParamInfo
from paddleviz_widget.graph.problems import find_problems, problems_text


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
        ("unreached", "head.bias", None),
    ]
    text = problems_text(find_problems(graph))
    assert "made here from finite ones (forward op at model.py:12)" in text
    assert "all zeros" in text and "stop_gradient=True" in text


def test_a_nan_from_the_forward_says_so():
    graph = _graph({"first_nonfinite": "n1", "nonfinite_in_forward": True}, {})
    reason = find_problems(graph)[0].reason
    assert "already NaN/Inf when the backward started" in reason
    assert "made here" not in reason  # no gradient was finite: it was not made here
    assert "FLAGS_check_nan_inf" in reason


def test_a_healthy_graph_has_nothing_to_say():
    graph = _graph({}, {"fc.weight": None})
    assert find_problems(graph) == []
    assert problems_text([]) == "No problems found in this graph's gradients."
