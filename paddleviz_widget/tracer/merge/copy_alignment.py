"""Match the nodes of a ``paddle.grad`` run, which works on *copies* of the GradNodes, to ours.

Pure: plain data in, plain data out. ``paddle.grad(outputs, inputs)`` copies every node it runs
and prunes every edge that does not lead to one of ``inputs``, so its dump (and log) has other
pointers and fewer edges than the graph we walked. Names alone cannot say which copied edge is
which of ours (a conv's edges to its input and to its weight both end in a
GradNodeAccumulation), so the match follows the structure: from the roots, a node's kept edges
(those leading to an input, in ``next_functions`` order) must pair one to one with its copy's
dumped edges, same count, same target names, and, where the target is a leaf we know, the
leaf's shape. A node whose copy does not agree is left out with everything below it that no
other path reaches: right or absent, never a neighbour's gradient.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..parse.log_parser import ParsedLog, PendingEdge
from ..parse.paddle_dump import BackwardDump, DumpEdge
from .annotate import EdgeNote

# A logged edge whose target has no match: never equal to any pointer of ours.
UNMATCHED_PTR = "unmatched"


@dataclass
class CopyAlignment:
    nodes: dict[str, int] = field(default_factory=dict)  # copy ptr (hex) -> our ptr
    edges: dict[tuple[int, int], EdgeNote] = field(default_factory=dict)
    disagreed: int = 0  # our nodes whose copy did not pair up (their edges stay bare)


def needed_nodes(nexts: Mapping[int, Sequence[int | None]], targets: Iterable[int]) -> set[int]:
    """Our nodes from which a gradient reaches one of ``targets`` (the targets included):
    what ``paddle.grad`` runs. A target is not looked past: Paddle stops there."""
    stops = set(targets)
    preds: dict[int, list[int]] = {}
    for src, outs in nexts.items():
        for dst in outs:
            if dst is not None:
                preds.setdefault(dst, []).append(src)
    found = {t for t in stops if t in nexts}
    pending = deque(found)
    while pending:
        node = pending.popleft()
        for pred in preds.get(node, ()):
            if pred not in found and pred not in stops:
                found.add(pred)
                pending.append(pred)
    return found


def align_copied_dump(
    dump: BackwardDump,
    roots: Sequence[int],
    nexts: Mapping[int, Sequence[int | None]],
    names: Mapping[int, str],
    targets: Iterable[int],
    leaf_shapes: Mapping[int, tuple[int, ...] | None],
) -> CopyAlignment:
    """Pair ``dump``'s copied nodes with ours, and key its edge gradients by our edges.

    ``roots``: our nodes ``paddle.grad`` started from (their names must be distinct: two
    copied roots of one name cannot be told apart). ``targets``: our nodes of the tensors it
    differentiated for (a leaf's accumulation node, or a non-leaf input's grad_fn).
    ``leaf_shapes``: the shape a gradient into each known leaf must have.
    """
    targets = set(targets)
    needed = needed_nodes(nexts, targets)
    out: dict[str, list[DumpEdge]] = {}
    for edge in dump.edges:
        out.setdefault(edge.source, []).append(edge)
    targeted = {edge.target for edge in dump.edges}
    copy_roots: dict[str, list[str]] = {}
    for ptr, name in dump.nodes.items():
        if ptr not in targeted:
            copy_roots.setdefault(name, []).append(ptr)

    result = CopyAlignment()
    mine: dict[int, str] = {}  # our ptr -> its copy, the inverse of result.nodes
    pending: deque[tuple[str, int]] = deque()
    for root in dict.fromkeys(roots):
        candidates = copy_roots.get(names.get(root, ""), [])
        if len(candidates) == 1 and root in needed:
            pending.append((candidates[0], root))

    while pending:
        copy, orig = pending.popleft()
        if result.nodes.get(copy) == orig:
            continue
        if copy in result.nodes or orig in mine:  # two pairings for one node: trust neither
            result.disagreed += 1
            continue
        result.nodes[copy], mine[orig] = orig, copy
        if orig in targets:
            continue
        kept = [(i, t) for i, t in enumerate(nexts.get(orig, ())) if t is not None and t in needed]
        dumped = out.get(copy, [])
        if not _pairs_up(kept, dumped, dump.nodes, names, leaf_shapes):
            result.disagreed += 1
            continue
        for (index, target), edge in zip(kept, dumped):
            if edge.grad is not None:
                result.edges[(orig, index)] = EdgeNote(grad=edge.grad)
            pending.append((edge.target, target))
    return result


def _pairs_up(
    kept: list[tuple[int, int]],
    dumped: list[DumpEdge],
    copy_names: Mapping[str, str],
    names: Mapping[int, str],
    leaf_shapes: Mapping[int, tuple[int, ...] | None],
) -> bool:
    if len(kept) != len(dumped):
        return False
    for (_, target), edge in zip(kept, dumped):
        if copy_names.get(edge.target) != names.get(target):
            return False
        shape = leaf_shapes.get(target)
        if shape is not None and (edge.grad is None or edge.grad.shape != shape):
            return False
    return True


def rekey_copied_runs(log: ParsedLog, nodes: Mapping[str, int]) -> ParsedLog:
    """The runs of copied nodes, re-keyed to our pointers by an alignment's node pairs. Runs
    of unpaired copies are dropped; an edge to an unpaired copy points nowhere of ours."""

    def rekey(text: str | None) -> str:
        ours = nodes.get(text.lower()) if text else None
        return hex(ours) if ours is not None else UNMATCHED_PTR

    runs = []
    for run in log.runs:
        if run.ptr is None or run.ptr.lower() not in nodes:
            continue
        edges = tuple(PendingEdge(e.target_name, rekey(e.target_ptr), e.grad) for e in run.edges)
        runs.append(replace(run, ptr=rekey(run.ptr), edges=edges))
    return ParsedLog(runs=tuple(runs), warnings=log.warnings)
