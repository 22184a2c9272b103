"""Which GradNodes the statistics hooks can hook, and whether they see every edge of a
backward (then Paddle's dump of it is not needed: session.py). By node name, cached."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import compress
from operator import itemgetter, not_

from ..read.program_nodes import is_program_node
from ..read.replay_safety import is_pylayer
from ..read.walk import ACCUMULATION_NODE, WalkedEdge, WalkResult

# GradNode types whose backward returns a list of tensors in one slot (from Paddle's grad
# kernels with a std::vector<DenseTensor*> output); a post hook there aborts the backward.
LIST_SLOT_NODES = (
    "ConcatGradNode",
    "StackGradNode",
    "AddNGradNode",
    "SumGradNodeList",
    "MeshgridGradNode",
    "EinsumGradNode",
    "BroadcastTensorsGradNode",
    "MultiDotGradNode",
    "MultiplexGradNode",
    "RnnGradNode",
    "CudnnLstmGradNode",
    "FusedSeqpoolCvmGradNode",
    "PartialConcatGradNode",
    "PartialSumGradNode",
    "CoalesceTensorGradNode",
)


# By node name: a graph has ~10k nodes of a few dozen names, asked about per node and edge.
@lru_cache(maxsize=4096)
def hookable(name: str) -> bool:
    if name == ACCUMULATION_NODE or is_pylayer(name):
        return False
    return not name.startswith(LIST_SLOT_NODES)


@lru_cache(maxsize=4096)
def _post_hooked(name: str) -> bool:
    return hookable(name) and not is_program_node(name)


def _names(walk: WalkResult) -> list[str]:
    return list(map(_NAME, walk.nodes))


_NAME = itemgetter(1)  # WalkedNode.name, read in C
_SOURCE = itemgetter(0)  # WalkedEdge.source


def _hooked_nodes(walk: WalkResult) -> list[bool]:
    """Per node (walk order): whether a post hook sees what it sends. Asked once per distinct
    name (a graph has ~10k nodes of a few dozen names), then mapped in C; once per walk
    (hooks_cover and received_of both ask, before the same backward)."""
    return walk.memo("_hooked_nodes", _hooked_of)


def _hooked_of(walk: WalkResult) -> list[bool]:
    names = _names(walk)
    hooked = {name: _post_hooked(name) for name in set(names)}
    return list(map(hooked.__getitem__, names))


def _unhooked_edges(walk: WalkResult) -> list[WalkedEdge]:
    """The edges whose sender no post hook sees (few: accumulation nodes send nothing), found
    in C, once per walk."""

    def edges(walk: WalkResult) -> list[WalkedEdge]:
        hooked = _hooked_nodes(walk)
        return list(
            compress(walk.edges, map(not_, map(hooked.__getitem__, map(_SOURCE, walk.edges))))
        )

    return walk.memo("_unhooked_edges", edges)


def received_of(walk: WalkResult) -> frozenset[int]:
    """Nodes whose received gradient is read too: the targets of edges whose sender cannot be
    hooked (concat, PyLayer, ...). Every gradient summed into one tensor has that tensor's
    dtype and shape, so what such a node received is what each such edge carried."""
    ptrs, hooked = walk.ptrs, _hooked_nodes(walk)
    return frozenset(ptrs[target] for _, target, _ in _unhooked_edges(walk) if hooked[target])


def hooks_cover(walk: WalkResult) -> bool:
    """Whether the hooks see every edge's gradient (its sender or its target is hooked), so
    that Paddle's dump of this backward would say nothing more about dtypes and shapes. Not
    with to_static program nodes (their edges are read through tensor hooks, not always).
    A PyLayer's edge is seen through its target only if nothing else sends there: its
    backward may return None for that input, and what the target got then came from others."""
    names = set(_names(walk))  # the per-name questions asked once per distinct name
    if any(map(is_program_node, names)):
        return False
    hooked = _hooked_nodes(walk)
    if not all(hooked[target] for _, target, _ in _unhooked_edges(walk)):
        return False
    if not any(map(is_pylayer, names)):
        return True
    pylayers = [is_pylayer(n.name) for n in walk.nodes]
    senders = Counter(target for _, target, _ in walk.edges)
    return all(senders[target] == 1 for source, target, _ in walk.edges if pylayers[source])
