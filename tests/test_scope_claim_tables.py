"""A snapshot's node tables for some GradNodes only (``snapshot(only)``, what a backward
record keeps) are the whole recording's tables restricted to those nodes, over several kept
forwards: the forward of the graph, an older one outside it, and nodes picked at random (a
forward's claims partly in the graph take claim_tables' filtering path)."""

from __future__ import annotations

import random

import paddle
from paddle_versions import requires_hook_kwargs
from test_layer_scopes import MODELS, _input

from paddleviz_widget.tracer.capture.layer_scopes import LayerScopeRecorder, LayerScopes
from paddleviz_widget.tracer.read.grad_node import grad_node_of
from paddleviz_widget.tracer.read.walk import walk_backward_graph


def _restricted(whole: LayerScopes, keep: set[int]) -> tuple[dict, dict, dict]:
    """The rule written out: each table's entries whose ptr is kept, in the table's order."""
    return tuple(  # type: ignore[return-value]
        {p: v for p, v in table.items() if p in keep}
        for table in (whole.group_of_ptr, whole.node_sites, whole.node_names)
    )


@requires_hook_kwargs
def test_tables_for_some_nodes_are_the_whole_tables_restricted():
    rng = random.Random(5)
    for key in sorted(MODELS):
        paddle.seed(0)
        cls, shape = MODELS[key]
        model = cls()
        rec = LayerScopeRecorder(model).start()
        try:
            outputs = [model(_input(shape)) for _ in range(2)]  # two forwards kept
            whole = rec.snapshot()
            assert whole is not None
            claimed = list(whole.node_names)  # op nodes, in claim order
            ops_known = set(claimed)
            graph = {n.ptr for n in walk_backward_graph([grad_node_of(outputs[-1])]).nodes}
            picks = [graph, set(rng.sample(claimed, len(claimed) // 3)), set(), set(claimed)]
            for keep in picks:
                part = rec.snapshot(frozenset(keep))
                assert part is not None
                # parameters are placed by ownership: only op nodes come from claims
                ops = {p: g for p, g in part.group_of_ptr.items() if p in whole.node_names}
                want = _restricted(whole, keep)
                assert list(ops.items()) == [(p, g) for p, g in want[0].items() if p in ops_known]
                assert list(part.node_sites.items()) == list(want[1].items())
                assert list(part.node_names.items()) == list(want[2].items())
        finally:
            rec.stop()
