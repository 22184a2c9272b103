"""Turn a captured backward (parsed log, dump) into per-ptr annotations for a walked graph.

Pure: plain data in, plain data out. Edges are keyed by (source ptr, next_functions index),
which is unique even for parallel edges such as the two of ``x * x``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from ...graph.model import GradInfo, Slot
from ..parse.log_parser import GradNodeRun, ParsedLog, PendingEdge, edge_grads
from ..parse.log_slots import LoggedSlot
from ..parse.paddle_dump import BackwardDump, DumpEdge
from .annotate import Annotations, EdgeNote, NodeSlots


def _ptr_int(text: str | None) -> int | None:
    try:
        return None if text is None else int(text, 16)
    except ValueError:
        return None


def _grad(slot: LoggedSlot) -> GradInfo | None:
    if slot.dtype is None and slot.shape is None and slot.place is None:
        return None
    return GradInfo(dtype=slot.dtype, shape=slot.shape, place=slot.place)


def _slot(slot: LoggedSlot) -> Slot:
    return Slot(name=slot.name or "?", tensor=slot.tensor, grad=_grad(slot))


def add_note(ann: Annotations, line: str) -> None:
    """One more line for the widget to show, once (several backward runs say the same)."""
    if line and line != ann.notice and line not in ann.notes:
        ann.notes.append(line)


def runs_by_ptr(log: ParsedLog) -> dict[int, GradNodeRun]:
    """The first run of each node (a retained graph run twice logs the same node twice)."""
    table: dict[int, GradNodeRun] = {}
    for run in log.runs:
        ptr = _ptr_int(run.ptr)
        if ptr is not None and ptr not in table:
            table[ptr] = run
    return table


def from_log(
    log: ParsedLog, next_ptrs: dict[int, list[int | None]]
) -> tuple[dict[tuple[int, int], EdgeNote], dict[int, NodeSlots]]:
    edges: dict[tuple[int, int], EdgeNote] = {}
    slots: dict[int, NodeSlots] = {}
    for ptr, run in runs_by_ptr(log).items():
        nexts = next_ptrs.get(ptr)
        if nexts is None:
            continue  # a node of some other graph that ran in the same backward
        slots[ptr] = NodeSlots(
            inputs=tuple(_slot(s) for s in run.inputs),
            outputs=tuple(_slot(s) for s in run.outputs),
        )
        for index, logged in edge_grads(run, nexts).items():
            edges[(ptr, index)] = EdgeNote(grad=_grad(logged), slot=logged.name)
    return edges, slots


UNMATCHED_LOG_NOTICE = (
    "{n} edge(s) in Paddle's backward log do not match this graph's next_functions; the log's "
    "gradients are not used for them."
)
UNMATCHED_DUMP_NOTICE = (
    "{n} edge(s) in Paddle's backward dump do not match this graph's next_functions; the dump's "
    "gradients are not used for them."
)


def log_mismatches(log: ParsedLog, next_ptrs: dict[int, list[int | None]]) -> int:
    """Logged edges of this graph's nodes that are not its next_functions, position by position
    (``edge_grads`` stops using a run's edges at the first one)."""
    count = 0
    for ptr, run in runs_by_ptr(log).items():
        nexts = next_ptrs.get(ptr)
        if nexts is None:
            continue
        present = [p for p in nexts if p is not None]
        logged = [_ptr_int(e.target_ptr) for e in run.edges]
        agree = next((k for k, (a, b) in enumerate(zip(logged, present)) if a != b), None)
        if agree is not None:
            count += len(logged) - agree
        elif len(logged) > len(present):
            count += len(logged) - len(present)
    return count


def dump_mismatches(dump: BackwardDump, next_ptrs: dict[int, list[int | None]]) -> int:
    """Dump edges out of this graph's nodes that ``from_dump`` cannot place."""
    return placed_dump(dump, next_ptrs)[1]


def note_mismatches(
    ann: Annotations,
    log: ParsedLog | None,
    dump: BackwardDump | None,
    next_ptrs: dict[int, list[int | None]],
) -> None:
    """Say in a line when the log or dump describes this graph's nodes differently from it."""
    in_log = log_mismatches(log, next_ptrs) if log is not None else 0
    if in_log:
        add_note(ann, UNMATCHED_LOG_NOTICE.format(n=in_log))
    in_dump = dump_mismatches(dump, next_ptrs) if dump is not None else 0
    if in_dump:
        add_note(ann, UNMATCHED_DUMP_NOTICE.format(n=in_dump))


def from_dump(
    dump: BackwardDump, next_ptrs: dict[int, list[int | None]]
) -> dict[tuple[int, int], EdgeNote]:
    """The k-th dump edge src -> dst is the k-th next_functions entry of src equal to dst."""
    return placed_dump(dump, next_ptrs)[0]


def placed_dump(
    dump: BackwardDump, next_ptrs: dict[int, list[int | None]], src: str | None = None
) -> tuple[dict[tuple[int, int], EdgeNote], int]:
    """``from_dump`` (each note's source ``src``) and ``dump_mismatches`` in one pass over the
    dump (100k+ edges on big graphs)."""
    once = _placed_once(dump, next_ptrs, src)
    return once if once is not None else _placed_counting(dump, next_ptrs, src)


def _placed_once(
    dump: BackwardDump, next_ptrs: dict[int, list[int | None]], src: str | None
) -> tuple[dict[tuple[int, int], EdgeNote], int] | None:
    """``placed_dump`` of a dump that has each (source, target) pair once (nearly always):
    every edge is its pair's first, at the first slot holding its target, with no count kept
    per pair (three dict operations less per edge). None if a pair comes twice."""
    edges: dict[tuple[int, int], EdgeNote] = {}
    pairs: list[tuple[int, int]] = []
    unplaced = 0
    nexts_of = next_ptrs.get
    notes: dict[int, EdgeNote] = {}  # one per gradient the parser read, as below
    for edge in dump.edges:
        source = int(edge.source, 16)
        nexts = nexts_of(source)
        if nexts is None:
            continue  # a node of some other graph that ran in the same backward
        dst = int(edge.target, 16)
        pairs.append((source, dst))
        try:
            slot = nexts.index(dst)
        except ValueError:
            unplaced += 1
            continue
        grad = edge.grad
        if grad is not None:
            note = notes.get(id(grad))
            if note is None:
                note = notes[id(grad)] = EdgeNote(grad=grad, src=src)
            edges[(source, slot)] = note
    return (edges, unplaced) if len(set(pairs)) == len(pairs) else None


def _placed_counting(
    dump: BackwardDump, next_ptrs: dict[int, list[int | None]], src: str | None
) -> tuple[dict[tuple[int, int], EdgeNote], int]:
    """``placed_dump``: the k-th dump edge source -> target at the k-th slot holding target."""
    edges: dict[tuple[int, int], EdgeNote] = {}
    placed: dict[tuple[int, int], int] = {}  # dump edges with a gradient, per (src, dst)
    every: dict[tuple[int, int], int] = {}  # all dump edges, per (src, dst)
    unplaced = 0
    nexts_of, seen = next_ptrs.get, every.get
    # One note per gradient the parser read (a dump's 114k edges share a few hundred labels, one
    # GradInfo object each): a NamedTuple is the same value shared or not, and ~4x cheaper.
    notes: dict[int, EdgeNote] = {}
    for edge in dump.edges:
        source = int(edge.source, 16)
        nexts = nexts_of(source)
        if nexts is None:
            continue  # a node of some other graph that ran in the same backward
        dst, grad = int(edge.target, 16), edge.grad
        key = (source, dst)
        k = seen(key)
        if k is None:  # the first dump edge source -> dst (nearly all): its first entry
            every[key] = 1
            if grad is not None:
                placed[key] = 1
            try:
                slot = nexts.index(dst)  # list.index and list.count: the lookups run in C
            except ValueError:
                unplaced += 1
                continue
            if grad is not None:
                note = notes.get(id(grad))
                if note is None:
                    note = notes[id(grad)] = EdgeNote(grad=grad, src=src)
                edges[(source, slot)] = note
            continue
        every[key] = k + 1
        unplaced += k >= nexts.count(dst)
        if grad is None:
            continue
        k = placed.get(key, 0)
        placed[key] = k + 1
        found = _kth_index(nexts, dst, k)
        if found is not None:
            edges[(source, found)] = EdgeNote(grad=grad, src=src)
    return edges, unplaced


def _kth_index(values: list[int | None], value: int, k: int) -> int | None:
    """Position of the k-th (from 0) ``value`` in ``values``, None if fewer (list.index: C)."""
    try:
        at = values.index(value)
        for _ in range(k):
            at = values.index(value, at + 1)
    except ValueError:
        return None
    return at


def align_copied_runs(
    log: ParsedLog,
    roots: list[tuple[int, str]],
    next_ptrs: dict[int, list[int | None]],
    names: dict[int, str],
) -> ParsedLog:
    """Re-key a ``paddle.grad`` log, whose runs are on *copies* of the GradNodes, to our ptrs.

    The copies have the same shape as the originals: the copied roots are the runs no logged
    edge points at (matched to ``roots`` in order, by name); from there the k-th logged edge of
    a run is the k-th non-None ``next_functions`` entry of the node it copies.
    """
    runs = runs_by_ptr(log)
    targeted = {_ptr_int(e.target_ptr) for r in runs.values() for e in r.edges}
    copy_roots = [p for p, r in runs.items() if p not in targeted]
    mapping: dict[int, int] = {}
    pending: deque[tuple[int, int]] = deque()
    for (orig, name), copy in zip(roots, copy_roots):
        if runs[copy].node_name == name:
            pending.append((copy, orig))
    while pending:
        copy, orig = pending.popleft()
        if copy in mapping:
            continue
        mapping[copy] = orig
        run = runs.get(copy)
        unused = list(run.edges if run else ())
        for target in (p for p in next_ptrs.get(orig, []) if p is not None):
            # The first not yet used edge to a node of the same name: logs list edges in
            # next_functions order, dumps need not.
            match = next((e for e in unused if e.target_name == names.get(target)), None)
            copy_target = _ptr_int(match.target_ptr) if match else None
            if match is None or copy_target is None:
                continue
            unused.remove(match)
            pending.append((copy_target, target))

    def rekey(text: str | None) -> str | None:
        ptr = _ptr_int(text)
        return hex(mapping[ptr]) if ptr in mapping else None

    new_runs = []
    for run in log.runs:
        if _ptr_int(run.ptr) not in mapping:
            continue
        edges = tuple(PendingEdge(e.target_name, rekey(e.target_ptr), e.grad) for e in run.edges)
        new_runs.append(replace(run, ptr=rekey(run.ptr), edges=edges))
    return ParsedLog(runs=tuple(new_runs), warnings=log.warnings)


def copied_dump_edges(
    dump: BackwardDump,
    roots: list[tuple[int, str]],
    next_ptrs: dict[int, list[int | None]],
    names: dict[int, str],
) -> dict[tuple[int, int], EdgeNote]:
    """``from_dump`` for a dump of *copied* nodes (``paddle.grad``), keyed by our pointers.

    The same alignment as ``align_copied_runs``, done on the dump directly (10k-node dumps are
    aligned on every replay): copied roots are the nodes no edge points at, matched to
    ``roots`` in order by name; then each of our edges takes the first unused copied edge to a
    node of the same name."""
    out: dict[str, list[DumpEdge]] = {}
    for edge in dump.edges:
        out.setdefault(edge.source, []).append(edge)
    targeted = {edge.target for edge in dump.edges}
    copy_roots = [p for p in dump.nodes if p not in targeted]
    seen: set[str] = set()
    pending: deque[tuple[str, int]] = deque(
        (copy, orig) for (orig, name), copy in zip(roots, copy_roots) if dump.nodes[copy] == name
    )
    edges: dict[tuple[int, int], EdgeNote] = {}
    while pending:
        copy, orig = pending.popleft()
        if copy in seen:
            continue
        seen.add(copy)
        unused = list(out.get(copy, ()))
        for slot, target in enumerate(next_ptrs.get(orig, [])):
            if target is None:
                continue
            name = names.get(target)
            match = next((e for e in unused if dump.nodes.get(e.target) == name), None)
            if match is None:
                continue
            unused.remove(match)
            if match.grad is not None:
                edges[(orig, slot)] = EdgeNote(grad=match.grad)
            pending.append((match.target, target))
    return edges
