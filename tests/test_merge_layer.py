"""merge_layer (tracer/merge/annotate.py) is the one place the annotation sources' layers meet:
what is known first stays, field by field, and each gradient keeps the source that gave it."""

from __future__ import annotations

from paddleviz_widget.graph.model import GradInfo, Group
from paddleviz_widget.tracer.merge.annotate import Annotations, EdgeNote, merge_layer

A = GradInfo(dtype="float32", shape=(2, 3))
B = GradInfo(dtype="float16", shape=(9,))


def _layer(**fields: object) -> Annotations:
    return Annotations(**fields)  # type: ignore[arg-type]


def test_an_edge_keeps_the_first_gradient_and_its_source_and_takes_a_later_slot() -> None:
    ann = Annotations()
    merge_layer(ann, _layer(edges={(1, 0): EdgeNote(A, None, "l"), (1, 1): EdgeNote(None, "x")}))
    merge_layer(
        ann, _layer(edges={(1, 0): EdgeNote(B, "grad_x", "d"), (1, 1): EdgeNote(B, None, "d")})
    )
    assert ann.edges[(1, 0)] == EdgeNote(A, "grad_x", "l")
    assert ann.edges[(1, 1)] == EdgeNote(B, "x", "d")  # the gradient and its source came later


def test_the_first_notice_stays_and_notes_are_said_once() -> None:
    ann = Annotations()
    merge_layer(ann, _layer(notice="first", notes=["a"]))
    merge_layer(ann, _layer(notice="second", notes=["a", "first", "b"]))
    assert ann.notice == "first"
    assert ann.notes == ["a", "b"]


def test_groups_come_from_the_first_source_and_a_recompute_node_is_regrouped() -> None:
    g0, g1 = Group("g0", "net", "Net"), Group("g1", "net.fc", "Linear", "g0")
    ann = Annotations()
    merge_layer(ann, _layer(groups=(g0,), group_of_ptr={7: "g0", 8: "g0"}))
    merge_layer(ann, _layer(groups=(g1,), group_of_ptr={7: "g1"}))  # not built on the known
    assert ann.groups == (g0,) and ann.group_of_ptr == {7: "g0", 8: "g0"}
    merge_layer(ann, _layer(groups=(g0, g1), regroup={8: "g1"}))  # PyLayer: extends, overrides
    assert ann.groups == (g0, g1) and ann.group_of_ptr == {7: "g0", 8: "g1"}


def test_the_first_edges_taken_whole_keep_the_rules_of_the_later_ones() -> None:
    """Into an empty table (a fast path) or a table holding other edges, the same notes."""
    grad = GradInfo("float32", (2,))
    notes = {
        (1, 0): EdgeNote(grad, "grad_x", "d"),
        (1, 1): EdgeNote(None, "grad_y", "d"),  # no gradient: no source
        (2, 0): EdgeNote(grad, None, None),
    }
    for src in (None, "l"):
        empty, other = Annotations(), Annotations(edges={(9, 0): EdgeNote(grad, None, "p")})
        empty.add_edges(notes, src)
        other.add_edges(notes, src)
        del other.edges[(9, 0)]
        assert empty.edges == other.edges and list(empty.edges) == list(notes)
    taken = Annotations()
    taken.add_edges(notes)
    assert taken.edges[(1, 0)].src == "d" and taken.edges[(1, 1)].src is None
    assert taken.edges[(2, 0)].src is None


def test_node_fields_into_an_empty_table_are_noted_with_their_source() -> None:
    ann = Annotations()
    merge_layer(ann, _layer(group_of_ptr={1: "g0", 2: "g1"}, src={"group": "t"}))
    merge_layer(ann, _layer(group_of_ptr={2: "g9", 3: "g2"}, src={"group": "o"}))
    assert ann.group_of_ptr == {1: "g0", 2: "g1", 3: "g2"}
    assert ann.node_src["group"] == {1: "t", 2: "t", 3: "o"}
