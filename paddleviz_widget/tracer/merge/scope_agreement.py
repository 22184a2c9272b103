"""Whether a trace() session's layer scopes belong to a walked graph: the session's node names
(``LayerScopes.node_names``) against the graph's, pointer by pointer (collect.py's _scopes_layer
and the sighting of a session)."""

from __future__ import annotations

from typing import NamedTuple

from ..capture.layer_scopes import LayerScopes
from ..read.walk import ACCUMULATION_NODE

# A layer-scope match on pointers alone could be a freed node's reused address; unless a backward
# record vouches for the graph, require the op nodes the session knows to keep their names.
SCOPE_MATCH_FRACTION = 0.9


class Agreement(NamedTuple):
    """How the session's node names (``LayerScopes.node_names``) meet the graph's."""

    differ: list[int]  # nodes both name, differently (a freed node's address reused)
    ops: int  # op nodes both name (accumulation nodes left out)
    agree: int  # of those, named alike


def agree_enough(found: Agreement, trusted: bool) -> bool:
    return bool(found.agree) and (trusted or found.agree >= SCOPE_MATCH_FRACTION * found.ops)


def name_agreement(scopes: LayerScopes, names: dict[int, str]) -> Agreement:
    """One pass over the session's named nodes, in its own order (its table read in order;
    the graph's names looked up in C). A node is an accumulation node, which the test leaves
    out, exactly when the graph names it so (WalkResult.accumulation is made from the names)."""
    theirs = scopes.node_names
    ours = list(map(names.get, theirs))
    differ: list[int] = []
    ops = agree = 0
    for ptr, name, there in zip(theirs, ours, theirs.values()):
        if name is None:  # not in this graph
            continue
        alike = name == there
        if not alike:
            differ.append(ptr)
        if name != ACCUMULATION_NODE:
            ops += 1
            agree += alike
    return Agreement(differ, ops, agree)
