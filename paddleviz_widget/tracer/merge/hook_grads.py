"""What the statistics hooks saw, as an annotation source of its own: each edge's gradient
(dtype, shape, place) as the sending GradNode's post hook got it, or, for an edge whose sender
cannot be hooked (concat and the other list-slot nodes, PyLayers), as the target's hook
received it: gradients summed into one tensor all have that tensor's dtype and shape, and the
target's received gradients are used only when they all agree. Pure: plain data in.

On steps where the hooks see every edge (hooked_nodes.hooks_cover), Paddle's dump is not
written (session.py): then this is the account of the edges, and an edge it cannot map (its
gradient was never made: an uninitialised tensor, for an input that needed none; or its place
in the hook's list is ambiguous) is left bare with one line saying why.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress, count, repeat
from operator import countOf

from ..capture.stats_rows import BackwardStats
from ..read.replay_safety import is_pylayer
from ..read.walk import WalkResult
from .annotate import Annotations, EdgeNote

UNSEEN_NOTICE = (
    "{n} edge(s) have no gradient shape: the GradNode hooks saw no gradient there (an input "
    "that needed none gets an uninitialised tensor), and Paddle's dump was not written for "
    "this backward (the hooks stood in for it)."
)


PYLAYER_UNSURE_NOTICE = (
    "{n} edge(s) from a PyLayer into a node that other gradients reach too have no gradient "
    "shape: its backward may have returned None there, and without Paddle's backward dump "
    "(paddlepaddle>=3.3) what it sent cannot be told from what the others did."
)


_NONE_ID = id(None)  # gradients told from None by identity, in C


def hooks_layer(
    stats: BackwardStats, walk: WalkResult, *, instead_of_dump: bool, guess: bool = True
) -> Annotations:
    """Edge gradients from one backward's hooks (code "h"). ``instead_of_dump``: no dump was
    written for it, so the edges the hooks did not see are said in a line (edges into a
    parameter are left out of the count: the parameter's own shape names them). ``guess``:
    an unhooked sender's edge may take what its target received; not when Paddle's dump of
    this backward was read whole: it names every edge that carried a gradient, and one it
    leaves out carried none (a PyLayer returning None for that input, while the target got
    another sender's gradient)."""
    layer = Annotations()
    if not stats.grads and not stats.received:
        return layer
    # The edges' gradients looked up in C (11k a 10k-node graph); the loop runs only over the
    # edges whose sender's hooks gave none.
    ptrs, leaves, walked = walk.ptrs, walk.accumulation, walk.edges
    keys = walk.edge_keys
    grads = list(map(stats.grads.get, keys))
    received = (stats.received if guess else {}).get
    unseen = 0
    shared: Counter[int] | None = None  # senders per target, counted once when first needed
    unsure = 0
    for k in compress(count(), map(_NONE_ID.__eq__, map(id, grads))):
        source, target, _ = walked[k]
        if guess:
            # A PyLayer may have returned None for this input: what a target with other
            # senders received is theirs (Paddle < 3.3 writes no dump to say so).
            if is_pylayer(walk.nodes[source].name):
                shared = shared or Counter(t for _, t, _ in walked)
                if shared[target] > 1:
                    unsure += 1
                    continue
            grads[k] = received(ptrs[target])
        if grads[k] is None and ptrs[target] not in leaves:
            unseen += 1
    if countOf(map(id, grads), _NONE_ID):  # (most steps: every edge has its gradient)
        known = list(map(_NONE_ID.__ne__, map(id, grads)))
        keys, grads = list(compress(keys, known)), list(compress(grads, known))
    # EdgeNote(grad, None, "h") by tuple.__new__, called from C: a NamedTuple's own __new__
    # is Python (~0.1 us per edge more, 11k a 10k-GradNode capture)
    notes = map(tuple.__new__, repeat(EdgeNote), zip(grads, repeat(None), repeat("h")))
    layer.edges = dict(zip(keys, notes))
    layer.sources.append("hooks")
    if instead_of_dump and unseen:
        layer.notes.append(UNSEEN_NOTICE.format(n=unseen))
    if unsure:
        layer.notes.append(PYLAYER_UNSURE_NOTICE.format(n=unsure))
    return layer
