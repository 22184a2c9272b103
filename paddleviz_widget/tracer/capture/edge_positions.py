"""Which ``next_functions`` edge each gradient of a GradNode post hook belongs to."""

from __future__ import annotations

from collections.abc import Sequence


def edge_positions(initialized: Sequence[bool], edges: int) -> list[int | None]:
    """The ``next_functions`` index of each gradient a post hook got (None: not known).

    A hook gets one gradient per input slot of the forward op, ``next_functions`` lists one
    edge per input that has grad metadata: BatchNorm's mean and variance have none, so its
    hook gets 5 gradients for 3 edges. Slots without an edge get an uninitialized tensor, so
    the extra ones are among the uninitialized; an initialized gradient's edge is known when
    every way of dropping them puts it at the same index, and left out otherwise."""
    extra = len(initialized) - edges
    if extra == 0:
        return list(range(edges))
    blanks = initialized.count(False)
    if extra < 0 or blanks < extra:
        return [None] * len(initialized)
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
