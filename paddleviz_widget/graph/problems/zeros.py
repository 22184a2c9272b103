"""All-zero gradients: the GradNode where they begin (it received a non-zero gradient and sent
only zeros: a dead ReLU, a multiplication by zero, a mask) is the cause, and the parameters its
zeros reach are affected, in one problem. A zero parameter no such node explains is its own."""

from __future__ import annotations

from ...digits import is_int_text
from .empty_input import EMPTY_REASON, empty_input_params
from .flow import Flow
from .problem import Problem

PROGRAM_NODES = ("Dy2StGradNode", "RunProgramGradNode")  # tracer/read/program_nodes.py

ZERO_REASON = (
    "its gradient is all zeros: the layer is saturated (e.g. dead ReLUs), its output is "
    "multiplied by zero, or the loss does not depend on it"
)


def _zero(flow: Flow, edge_ids: list) -> bool:
    return bool(edge_ids) and all(e.stats is not None and e.stats.zero_fraction == 1.0
                                  for e in edge_ids)  # fmt: skip


def _received_nonzero(flow: Flow, node_id: str) -> bool:
    # A root's seed is not recorded (a graph of the model's output y gets no edge from the
    # loss): not known, so never a start.
    got = flow.node_in.get(node_id, [])
    return any(e.stats is not None and e.stats.zero_fraction < 1.0 for e in got)


def _reached(flow: Flow, start: str, zero_params: set[str]) -> list[str]:
    """Zero parameters reached from ``start`` along all-zero edges."""
    seen, todo, found = {start}, [start], []
    while todo:
        for e in flow.node_out.get(todo.pop(), []):
            if e.target in seen or e.stats is None or e.stats.zero_fraction < 1.0:
                continue
            seen.add(e.target)
            if e.target in zero_params:
                found.append(e.target)
            else:
                todo.append(e.target)
    return found


def _in_program(flow: Flow, node_id: str) -> str | None:
    """Where a parameter's all-zero gradient came out of a compiled program (directly, or
    through eager ops that passed its zeros on): that program's layer. Its ops carry no
    statistics, so the op where the zeros start cannot be found."""
    seen, todo = {node_id}, [node_id]
    while todo:
        for e in flow.node_in.get(todo.pop(), []):
            source = flow.nodes[e.source]
            if source.kind == "program_op" or source.name in PROGRAM_NODES:
                return flow.layer_of(e.source) or source.name
            zero = e.stats is not None and e.stats.zero_fraction == 1.0
            if zero and e.source not in seen:
                seen.add(e.source)
                todo.append(e.source)
    return None


def _param_name(flow: Flow, node_id: str) -> str:
    n = flow.nodes[node_id]
    return n.param.name if n.param is not None else n.name


def zeros(flow: Flow) -> list[Problem]:
    zero_params = {n.id for n in flow.graph.nodes if n.grad_status == "zero"}
    if not zero_params:
        return []
    empty = empty_input_params(flow, zero_params)
    info = [
        Problem("zero", _param_name(flow, p), EMPTY_REASON, p, flow.layer_of(p), severity="info")
        for p in sorted(empty, key=lambda i: int(i[1:]) if is_int_text(i[1:]) else 0)
    ]
    zero_params -= empty  # never merged into another cause below
    found, explained = [], set()
    for n in flow.graph.nodes:
        if n.kind == "param" or not _received_nonzero(flow, n.id):
            continue
        if not _zero(flow, flow.node_out.get(n.id, [])):
            continue
        reached = _reached(flow, n.id, zero_params)
        if not reached:
            continue
        explained.update(reached)
        names = tuple(sorted(_param_name(flow, p) for p in reached))
        reason = (
            f"the gradient reaching this op is non-zero but every gradient it sends is zero: "
            f"the zeros start here (dead ReLUs, a multiplication by zero, a mask); "
            f"{len(names)} parameter(s) behind it get all-zero gradients: {', '.join(names)}"
        )
        found.append(Problem("zero", n.name, reason, n.id, flow.layer_of(n.id),
                             affected=names, site=flow.site_of(n.id)))  # fmt: skip
    rest = sorted(zero_params - explained, key=lambda i: int(i[1:]) if is_int_text(i[1:]) else 0)
    if found and rest:
        # A weight fed the dead layer's all-zero output gets a zero gradient too (its input
        # is zero in the forward): the same cause, listed with it.
        first = found[0]
        more = tuple(_param_name(flow, p) for p in rest)
        found[0] = Problem(
            first.kind, first.name,
            f"{first.reason}; and, fed all-zero inputs in the forward: {', '.join(more)}",
            first.node, first.layer, affected=first.affected + more, site=first.site,
        )  # fmt: skip
        return found + info
    for p in rest:
        program = _in_program(flow, p)
        reason = ZERO_REASON if program is None else (
            f"{ZERO_REASON}; the zeros came out of the compiled program run by {program}, "
            "whose ops carry no statistics: the op where they start is not known"
        )  # fmt: skip
        found.append(Problem("zero", _param_name(flow, p), reason, p, flow.layer_of(p)))
    return found + info
