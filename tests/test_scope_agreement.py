"""The layer scopes' name check (tracer/merge/scope_agreement.py, collect.py): a session's
groups join a graph only for nodes both name alike, and, unless a backward record vouches for
the graph, only when most op nodes both name agree. Checked against the rule written with
plain sets, on tables with reused addresses, accumulation nodes and nodes only one side knows."""

from __future__ import annotations

import random

import pytest

from paddleviz_widget.graph.model import CallSite, Group
from paddleviz_widget.tracer.capture.layer_scopes import LayerScopes
from paddleviz_widget.tracer.merge import collect, scope_agreement
from paddleviz_widget.tracer.read.walk import ACCUMULATION_NODE, WalkedNode, WalkResult

ACC = ACCUMULATION_NODE


def _walk(names: dict[int, str]) -> WalkResult:
    nodes = tuple(WalkedNode(i, name, ptr, i == 0) for i, (ptr, name) in enumerate(names.items()))
    return WalkResult(nodes, (), (0,))


def _plain_rule(ours: dict[int, str], theirs: dict[int, str], trusted: bool) -> set[int] | None:
    """The ptrs whose group the session may give, or None if it may give none (sets only)."""
    leaves = {p for p, n in ours.items() if n == ACC}
    both = set(ours) & set(theirs)
    agreeing = {p for p in both if ours[p] == theirs[p]}
    agree = len(agreeing - leaves)
    if not agree or not (
        trusted or agree >= scope_agreement.SCOPE_MATCH_FRACTION * len(both - leaves)
    ):
        return None
    return set(ours) - (both - agreeing)


def _case(rng: random.Random, differ: int) -> tuple[dict[int, str], dict[int, str]]:
    ptrs = rng.sample(range(16, 1 << 40, 16), 60)
    ours = {p: rng.choice(["MatmulGradNode", "AddGradNode", ACC]) for p in ptrs[:50]}
    theirs = {p: ours.get(p, "ScaleGradNode") for p in ptrs[10:60]}  # 40 shared, 10 not ours
    for p in rng.sample(ptrs[10:50], differ):  # an address reused by another kind of node
        theirs[p] = "ReluGradNode" if ours[p] != "ReluGradNode" else "ExpGradNode"
    return ours, theirs


@pytest.mark.parametrize("differ", [0, 1, 3, 6, 20, 40])
@pytest.mark.parametrize("trusted", [True, False])
def test_the_groups_given_are_those_the_plain_rule_allows(differ: int, trusted: bool) -> None:
    rng = random.Random(differ * 2 + trusted)
    for _ in range(20):
        ours, theirs = _case(rng, differ)
        group_of_ptr = {p: f"g{i % 3 + 1}" for i, p in enumerate(theirs)}
        sites = {p: CallSite("m.py", i + 1, "forward") for i, p in enumerate(theirs)}
        groups = (Group("g0", "M", "M"), *(Group(f"g{k}", f"l{k}", "L", "g0") for k in (1, 2, 3)))
        scopes = LayerScopes(groups, group_of_ptr, {}, sites, dict(theirs))
        layer = collect._scopes_layer(scopes, collect._Graph(_walk(ours)), trusted, {})
        allowed = _plain_rule(ours, theirs, trusted)
        if allowed is None:
            assert layer.group_of_ptr == {} and layer.groups == ()
            continue
        assert layer.group_of_ptr == {p: g for p, g in group_of_ptr.items() if p in allowed}
        want_sites = {p: sites[p] for p in layer.group_of_ptr if ours[p] != ACC}
        assert layer.call_sites == want_sites  # none from a node left out, none on a leaf
        used = {"g0", *layer.group_of_ptr.values()}
        assert [g.id for g in layer.groups] == [g.id for g in groups if g.id in used]


def test_an_untrusted_session_needs_most_op_nodes_to_agree() -> None:
    ours = {16 * k: "AddGradNode" for k in range(1, 11)} | {16 * 11: ACC}
    theirs = dict(ours)
    theirs[16] = "ReluGradNode"  # 9 of 10 op nodes agree: enough (0.9)
    graph = collect._Graph(_walk(ours))
    found = scope_agreement.name_agreement(LayerScopes(node_names=theirs), graph.names)
    assert scope_agreement.agree_enough(found, False)
    theirs[32] = "ReluGradNode"  # 8 of 10: not enough, unless a record vouches
    found = scope_agreement.name_agreement(LayerScopes(node_names=theirs), graph.names)
    assert (found.ops, found.agree, sorted(found.differ)) == (10, 8, [16, 32])
    assert not scope_agreement.agree_enough(found, False)
    assert scope_agreement.agree_enough(found, True)
    theirs[16 * 11] = "AddGradNode"  # a leaf named otherwise: differs, counts in neither
    found = scope_agreement.name_agreement(LayerScopes(node_names=theirs), graph.names)
    assert (found.ops, found.agree, sorted(found.differ)) == (10, 8, [16, 32, 176])
