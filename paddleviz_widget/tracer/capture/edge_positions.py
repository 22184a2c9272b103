"""Which ``next_functions`` edge each gradient of a GradNode post hook belongs to."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache
from itertools import combinations

# Ways of dropping the extra gradients tried one by one; past it, the closed form alone.
_MAX_WAYS = 256


def edge_positions(
    initialized: Sequence[bool], edges: int, absent: Collection[int] = ()
) -> list[int | None]:
    """The ``next_functions`` index of each gradient a post hook got (None: not known).

    A hook gets one gradient per input slot of the forward op, ``next_functions`` lists one
    edge per input that has grad metadata: BatchNorm's mean and variance have none, so its
    hook gets 5 gradients for 3 edges. Slots without an edge get an uninitialized tensor, so
    the extra ones are among the uninitialized; an initialized gradient's edge is known when
    every way of dropping them puts it at the same index, and left out otherwise.
    ``absent``: the indices whose ``next_functions`` entry is None (an input with
    stop_gradient): Paddle sends no gradient there, so no way of dropping that puts an
    initialized gradient on one is possible (``where(mask, x, zeros)``: the mask has no edge,
    the zeros a None one; x's gradient is edge 0)."""
    extra = len(initialized) - edges
    if extra == 0:
        return list(range(edges))
    blanks = initialized.count(False)
    if extra < 0 or blanks < extra:
        return [None] * len(initialized)
    if absent:
        return list(_by_trying(tuple(initialized), edges, frozenset(absent)))
    out: list[int | None] = []
    before = 0  # uninitialized gradients before this one
    for i, ok in enumerate(initialized):
        if not ok:
            out.append(None)
            before += 1
            continue
        least, most = max(0, extra - (blanks - before)), min(extra, before)
        out.append(i - least if least == most else None)
    return out


@lru_cache(maxsize=256)  # a model has few distinct (slots, absent) patterns
def _by_trying(
    initialized: tuple[bool, ...], edges: int, absent: frozenset[int]
) -> tuple[int | None, ...]:
    blanks = [i for i, ok in enumerate(initialized) if not ok]
    extra = len(initialized) - edges
    seen: list[set[int]] = [set() for _ in initialized]
    for ways, dropped in enumerate(combinations(blanks, extra)):
        if ways >= _MAX_WAYS:
            return tuple(edge_positions(initialized, edges))
        kept = [i for i in range(len(initialized)) if i not in dropped]
        if any(initialized[i] and at in absent for at, i in enumerate(kept)):
            continue  # an initialized gradient on an edge Paddle sends nothing to
        for at, i in enumerate(kept):
            seen[i].add(at)
    return tuple(next(iter(s)) if ok and len(s) == 1 else None for ok, s in zip(initialized, seen))


class EdgeSlots:
    """The hooks' view of which edges have a target, asked only when a node's gradients leave
    one unplaced (rare: the inversion of ``senders`` is built once per backward, then)."""

    def __init__(self, senders: Mapping[int, list[tuple[int, int]]] | None) -> None:
        self._senders = senders
        self._present: dict[int, set[int]] | None = None

    def positions(self, ptr: int, initialized: Sequence[bool], edges: int) -> list[int | None]:
        out = edge_positions(initialized, edges)
        # (any() first: senders may be made only when asked for, stats_watch.Senders)
        if any(ok and at is None for ok, at in zip(initialized, out)) and self._senders:
            if self._present is None:
                present: dict[int, set[int]] = {}
                for edges_in in self._senders.values():
                    for source, index in edges_in:
                        present.setdefault(source, set()).add(index)
                self._present = present
            have = self._present.get(ptr, set())
            absent = [k for k in range(edges) if k not in have]
            if absent:
                out = edge_positions(initialized, edges, absent)
        return out
