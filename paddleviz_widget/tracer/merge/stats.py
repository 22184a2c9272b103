"""Parameters whose gradient is not a normal one, from a backward's statistics. Pure."""

from __future__ import annotations

from collections.abc import Callable, Collection
from itertools import compress, repeat
from operator import and_, attrgetter, is_not, itemgetter, not_, or_
from typing import Any

from ..capture.stats_rows import BackwardStats
from ..read.program_nodes import is_program_node
from ..read.replay_safety import is_pylayer
from ..read.walk import WalkResult
from .annotate import Annotations
from .log_annotations import add_note

_TARGET = itemgetter(1)  # WalkedEdge.target
_ZEROS = attrgetter("zero_fraction")
_ZEROS_AT = itemgetter(3)  # a plain tuple's zero_fraction (BackwardStats.rows: GradStats.FIELDS)


def param_statuses(walk: WalkResult, stats: BackwardStats) -> dict[int, str]:
    """Accumulation ptr -> "zero" (every gradient that reached it was all zeros) or "none"
    (its senders ran and sent it nothing). Left out when normal or not known."""
    ptrs, leaves, walked = walk.ptrs, walk.accumulation, walk.edges  # by index, no attribute read
    # The edges into a leaf (1 in 8 on a Llama), picked out in C before the loop
    into = set(compress(range(len(ptrs)), map(leaves.__contains__, ptrs)))
    chosen = list(compress(walked, map(into.__contains__, map(_TARGET, walked))))
    if not chosen:
        return {}
    # A leaf gets a status only if one of its edges could give it one: a "none" edge (its
    # sender ran, no statistics, no gradient seen) or a "zero" one (all zeros). Those edges
    # are found in C, one pass per column; the rule below runs for their leaves only (most
    # steps: none of ~4k on a 10k-GradNode Llama).
    sources, targets, slots = zip(*chosen)
    senders = list(map(ptrs.__getitem__, sources))
    keys = list(zip(senders, slots))
    # each edge's statistics as the capture left them: plain tuples, or GradStats once read
    table: dict[tuple[int, int], Any] = stats.values()
    zeros_of: Callable[[Any], float] = _ZEROS_AT if table is stats.rows else _ZEROS
    got = list(map(table.get, keys))
    has = list(map(is_not, got, repeat(None)))
    zero = map((1.0).__eq__, map(zeros_of, compress(got, has)))
    sent_or_out = map(or_, map(stats.grads.__contains__, keys),
                      map(stats.past_range.__contains__, keys))  # fmt: skip
    bare = map(and_, map(stats.ran.__contains__, senders), map(not_, map(or_, has, sent_or_out)))
    maybe = set(compress(targets, bare)) | set(compress(compress(targets, has), zero))
    if not maybe:
        return {}
    incoming: dict[int, list[tuple[int, int]]] = {}
    for target, key in zip(targets, keys):
        if target in maybe:
            incoming.setdefault(ptrs[target], []).append(key)
    statuses = {}
    for ptr, edges in incoming.items():
        if any(src not in stats.ran for src, _ in edges):
            continue  # a sender that was not hooked or did not run: nothing is known
        found = [table[key] for key in edges if key in table]
        # A gradient the hooks saw but did not reduce (complex, or past float64's range) came:
        # it is no "none" (a complex parameter was called "no gradient reached it")
        sent = any(key in stats.grads or key in stats.past_range for key in edges)
        if not found and not sent:
            statuses[ptr] = "none"
        elif len(found) == len(edges) and all(zeros_of(s) == 1.0 for s in found):
            statuses[ptr] = "zero"
    return statuses


def stats_layer(
    stats: BackwardStats, walk: WalkResult, asked: Collection[int] | None = None
) -> Annotations:
    """trace(stats=True)'s numbers of one traced backward, as a layer of their own."""
    layer = Annotations()
    add_stats(layer, stats, walk, asked)
    return layer


def add_stats(
    ann: Annotations, stats: BackwardStats, walk: WalkResult, asked: Collection[int] | None = None
) -> None:
    """A traced backward's statistics on the graph's edges and parameters (newest first:
    what is already there wins). ``asked``: for paddle.grad, the nodes of its ``inputs``
    (None: a backward, which sends every leaf its gradient)."""
    changed = _into_user_hooked(stats, walk)
    # The plain tuples where no GradStats was made: a watched capture's columns take them as
    # they are; annotated_rows makes the GradStats of the edges it keeps (graph_rows.py)
    table: dict[tuple[int, int], Any] = stats.values()
    if not ann.stats and not changed:  # (stats_layer's fresh layer) a copy made in C
        ann.stats = dict(table)
    else:
        for key, value in table.items():
            if key not in changed:
                ann.stats.setdefault(key, value)
    if changed:
        add_note(ann, USER_HOOK_NOTE.format(n=len(changed)))
        for key in changed:
            ann.no_stats.setdefault(key, USER_HOOK_NO_STATS)
    if stats.past_range:
        add_note(ann, PAST_RANGE_NOTE.format(n=len(stats.past_range)))
        for key, top in stats.past_range.items():
            ann.no_stats.setdefault(key, PAST_RANGE_NO_STATS.format(top=top))
    if ann.first_nonfinite is None and stats.first_nonfinite is not None:
        ann.first_nonfinite = stats.first_nonfinite
        ann.nonfinite_in_forward = stats.nonfinite_in_forward
        ann.nonfinite_after_user_hook = stats.nonfinite_after_user_hook
    if ann.forward_culprit is None:
        ann.forward_culprit = stats.forward_culprit
    for ptr, status in param_statuses(walk, stats).items():
        # paddle.grad computes what its inputs need only: a parameter it was not asked for
        # gets nothing by design, which is no "no gradient reached it" problem.
        if status == "none" and asked is not None and ptr not in asked:
            continue
        if ptr in stats.user_hooked:  # (a user's hook on the parameter changed what it got)
            continue
        ann.grad_status.setdefault(ptr, status)
    if stats.skipped:
        ann.notes.extend(skipped_notes(stats.skipped, walk))
    scale = stats.loss_scale
    if ann.loss_scale is None:
        ann.loss_scale = scale
    if scale is not None and scale.scale != 1.0:
        ann.notes.append(
            f"These gradients are scaled by the GradScaler: its loss scale {scale.scale:g} is "
            "multiplied into every gradient until scaler.step() / unscale_() divides it out. "
            f"Divide the norms and max |g| shown by {scale.scale:g} for the gradients the "
            "optimizer applies (a watched run's log records them divided)."
        )


USER_HOOK_NOTE = (
    "{n} edge(s) lead into a tensor with a hook of yours (Tensor.register_hook), which changes "
    "the gradient before its GradNode gets it: they show no statistics, so that nothing is "
    "blamed on that GradNode for what the hook did."
)


USER_HOOK_NO_STATS = (
    "no statistics: a hook of yours (Tensor.register_hook) replaces this gradient before the "
    "GradNode it leads to gets it"
)


PAST_RANGE_NOTE = (
    "{n} edge(s) carry a float64 gradient whose L2 norm or mean |g| is past float64's range "
    "(finite elements near 1e308): they show no statistics."
)


PAST_RANGE_NO_STATS = (
    "no statistics: this gradient's L2 norm or mean |g| is past float64's range (its largest "
    "|g| is {top:.3g})"
)


def _into_user_hooked(stats: BackwardStats, walk: WalkResult) -> set[tuple[int, int]]:
    """The edges (source ptr, slot) into op nodes whose incoming gradient a user's hook
    changed: their statistics are what the sender sent, not what the node received. (Into a
    parameter they stay: nothing compares a leaf's input with its output; its status, from
    what was sent, is left out instead.)"""
    if not stats.user_hooked:
        return set()
    ptrs, leaves = walk.ptrs, walk.accumulation
    hooked = stats.user_hooked - leaves
    return {(ptrs[src], slot) for src, dst, slot in walk.edges if ptrs[dst] in hooked}


def skipped_notes(skipped: Collection[int], walk: WalkResult) -> list[str]:
    """Why the edges some GradNodes send have no statistics, a line per reason."""
    # The skipped nodes' names looked up (a few hundred), not every node's tested (10k)
    names = [n for n in map(walk.names.get, skipped) if n is not None]
    pylayers = sum(1 for n in names if is_pylayer(n))
    # A program node is skipped only when its forward ran outside trace() (inside, the
    # program's receivers give its edges statistics): not a concat-like node.
    programs = sum(1 for n in names if is_program_node(n))
    notes = []
    if pylayers:
        notes.append(
            f"{pylayers} PyLayer node(s) (recompute, custom PyLayers) take no post hook: the "
            "gradients they send have no statistics."
        )
    if programs:
        notes.append(
            f"{programs} to_static program node(s) ran their forward outside trace() (or in "
            "eval mode): the gradients they send have no statistics (run the forward inside "
            "the `with trace(model, stats=True):` block to have them)."
        )
    if len(skipped) > pylayers + programs:
        notes.append(
            f"{len(skipped) - pylayers - programs} GradNode(s) send a list of gradients through "
            "one slot (concat, stack, ...), which Paddle's hooks cannot observe: their edges "
            "have no statistics."
        )
    return notes
