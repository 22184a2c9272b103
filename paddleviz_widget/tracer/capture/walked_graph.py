"""A walk of the backward graph as scope_recording's claims read it (a watched run claims a
forward's nodes from the backward's own walk: names, wrappers and edges, no Paddle calls)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from ..read.walk import WalkResult


class WalkedGraph:
    """A walk of the backward graph read as the claims need it: by node pointer, its name,
    its wrapper and the pointers of its ``next_functions`` (None left out, slot order)."""

    def __init__(self, walk: WalkResult, objects: Sequence[Any]) -> None:
        ptrs = walk.ptrs  # the walk's columns (a node's index is its position), read in C
        self.index_of = dict(zip(ptrs, range(len(ptrs))))
        # id(wrapper) -> ptr: a call's input and output wrappers are these objects (pybind
        # hands out a node's live wrapper), no node_ptr() each (~3,600 a llama-10k step). Both
        # alive, an id() match is the same object; any other is asked node_ptr().
        self.ptr_of = dict(zip(map(id, objects), ptrs))
        self.names = list(map(_NAME, walk.nodes))
        self.objects = objects
        children: list[list[int]] = [[] for _ in ptrs]
        for source, target, _ in walk.edges:  # per source in slot order (walk.py)
            children[source].append(ptrs[target])
        self.children = children


_NAME = itemgetter(1)  # WalkedNode.name
NO_WALK: dict[int, int] = {}  # (no walk: every ptr asked of its node)
