"""Any Graph survives schema 2.2 exactly (through JSON text), and its document validates.

Slot and op names come from tiny alphabets, so nodes of one op often share a signature and
often differ from it (extra, missing, renamed slots, other tensor names): both the compact and
the spelled-out slot forms get exercised, as do edge slots that are and are not among their
source's outputs.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paddleviz_widget.graph import (
    CallSite,
    Edge,
    GradInfo,
    GradStats,
    Graph,
    Group,
    Node,
    ParamInfo,
    Slot,
    decode,
    encode,
    nested_dict,
    validate_graph_dict,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

maybe = st.none().__or__
shapes = maybe(st.lists(st.integers(-1, 64), max_size=4).map(tuple))
grads = st.builds(
    GradInfo,
    dtype=maybe(st.sampled_from(["float32", "float16", "int64"])),
    shape=shapes,
    place=maybe(st.sampled_from(["cpu", "gpu:0"])),
)
slot_names = st.sampled_from(["grad_out", "x", "y", "out", "grad_x", "grad_y", ""])
slots = st.builds(
    Slot,
    name=slot_names,
    tensor=maybe(st.sampled_from(["@Grad", "Tensor_0x1", ""])),
    grad=maybe(grads),
)
sites = st.builds(
    CallSite,
    file=st.sampled_from(["model.py", "/abs/path/layers.py", ""]),
    line=st.integers(0, 500),
    function=maybe(st.sampled_from(["forward", "<module>"])),
)
params = st.builds(
    ParamInfo,
    name=st.text(max_size=8),
    shape=shapes,
    dtype=maybe(st.just("float32")),
)
texts = st.text(max_size=6)
sizes = st.floats(0, 1e30, allow_nan=False, allow_infinity=False)
grad_stats = st.builds(
    GradStats,
    norm=sizes,
    max_abs=sizes,
    mean_abs=sizes,
    zero_fraction=st.floats(0, 1),
    nan=st.integers(0, 2**40),
    inf=st.integers(0, 2**40),
)


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    group_ids = [f"g{k}" for k in range(draw(st.integers(0, 4)))]
    groups = tuple(
        Group(gid, draw(texts), draw(texts), draw(maybe(st.sampled_from(group_ids[:k]))))
        if k
        else Group(gid, draw(texts), draw(texts))
        for k, gid in enumerate(group_ids)
    )
    count = draw(st.integers(0, 8))
    nodes = tuple(
        Node(
            id=f"n{k}",
            name=draw(st.sampled_from(["AddGradNode", "MatmulGradNode", "X"])),
            ptr=hex(draw(st.integers(0, 2**48))),
            kind=draw(st.sampled_from(["op", "param", "output"])),
            group=draw(maybe(st.sampled_from(group_ids))) if group_ids else None,
            param=draw(maybe(params)),
            call_site=draw(maybe(sites)),
            inputs=tuple(draw(st.lists(slots, max_size=4))),
            outputs=tuple(draw(st.lists(slots, max_size=3))),
            tensor=draw(maybe(grads)),
            grad_status=draw(maybe(st.sampled_from(["zero", "none"]))),
        )
        for k in range(count)
    )
    edges = ()
    if nodes:
        ends = st.sampled_from([n.id for n in nodes])
        edges = tuple(
            Edge(
                id=f"e{k}",
                source=draw(ends),
                target=draw(ends),
                index=draw(st.integers(0, 3)),
                grad=draw(maybe(grads)),
                slot=draw(maybe(slot_names)),
                stats=draw(maybe(grad_stats)),
            )
            for k in range(draw(st.integers(0, 10)))
        )
    meta = draw(st.sampled_from([{}, {"annotations": ["dump"], "notice": "hint"}]))
    return Graph(nodes, edges, groups, meta)


@SETTINGS
@given(graphs())
def test_any_graph_round_trips_exactly_through_json_text(graph: Graph) -> None:
    doc = json.loads(json.dumps(encode(graph)))
    validate_graph_dict(doc)
    assert decode(doc) == graph
    assert Graph.from_dict(graph.to_dict()) == graph


@SETTINGS
@given(graphs())
def test_the_1_0_layout_carries_the_same_graph(graph: Graph) -> None:
    # 1.0 flattens a slot's gradient into it: a description with nothing known reads back as
    # no description. That is the one thing 1.0 cannot say, and 2.0 can.
    def known(g: GradInfo | None) -> GradInfo | None:
        return None if g == GradInfo() else g

    expected = Graph(
        tuple(
            Node(
                **{
                    **n.__dict__,
                    "inputs": tuple(Slot(s.name, s.tensor, known(s.grad)) for s in n.inputs),
                    "outputs": tuple(Slot(s.name, s.tensor, known(s.grad)) for s in n.outputs),
                }
            )
            for n in graph.nodes
        ),
        graph.edges,
        graph.groups,
        graph.meta,
    )
    assert decode(json.loads(json.dumps(nested_dict(graph)))) == expected
