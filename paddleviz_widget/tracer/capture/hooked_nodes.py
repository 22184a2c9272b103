"""Which GradNodes the statistics hooks can hook, and whether they see every edge of a
backward (then Paddle's dump of it is not needed: session.py). By node name, cached."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from operator import itemgetter

from ..read.program_nodes import is_program_node
from ..read.replay_safety import is_pylayer
from ..read.walk import ACCUMULATION_NODE, WalkResult

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


def _hooked_nodes(walk: WalkResult) -> list[bool]:
    """Per node (walk order): whether a post hook sees what it sends. Asked once per distinct
    name (a graph has ~10k nodes of a few dozen names), then mapped in C."""
    names = _names(walk)
    hooked = {name: _post_hooked(name) for name in set(names)}
    return list(map(hooked.__getitem__, names))


def received_of(walk: WalkResult) -> frozenset[int]:
    """Nodes whose received gradient is read too: the targets of edges whose sender cannot be
    hooked (concat, PyLayer, ...). Every gradient summed into one tensor has that tensor's
    dtype and shape, so what such a node received is what each such edge carried."""
    nodes, hooked = walk.nodes, _hooked_nodes(walk)
    return frozenset(
        nodes[target].ptr
        for source, target, _ in walk.edges
        if not hooked[source] and hooked[target]
    )


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
    if not all(hooked[source] or hooked[target] for source, target, _ in walk.edges):
        return False
    if not any(map(is_pylayer, names)):
        return True
    pylayers = [is_pylayer(n.name) for n in walk.nodes]
    senders = Counter(target for _, target, _ in walk.edges)
    return all(senders[target] == 1 for source, target, _ in walk.edges if pylayers[source])
