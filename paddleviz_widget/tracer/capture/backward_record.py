"""What one backward pass inside trace() left behind (session.py keeps a few of them)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ..read.kept_walk import KeptWalk
from ..read.program import ProgramRead
from ..read.pylayer_info import PyLayerInfo, describe_pylayers
from ..read.replay_safety import is_pylayer
from ..read.walk import WalkResult, walk_backward_graph
from .anchors import Anchor, anchor_of, any_alive, live_node, proven
from .backward_capture import CapturedBackward
from .layer_scopes import LayerScopes
from .stats_rows import BackwardStats


@dataclass
class BackwardRecord:
    # The GradNodes backward started from, held so that no node of this graph can be freed and
    # its address reused while the record may be matched by pointer alone. Emptied by
    # release(); from then on only ``anchors`` prove that a pointer is still this graph's.
    roots: tuple[Any, ...]
    captured: CapturedBackward
    copies: bool  # paddle.grad runs on copies of the nodes: log pointers differ from ours
    # paddle.grad only: the nodes of the tensors it differentiated for (None: not known, or
    # no_grad_vars pruned more than we can tell), what its copied dump is paired by.
    targets: frozenset[int] | None = None
    # What its PyLayer nodes stand for, read before the backward releases their contexts.
    pylayers: tuple[PyLayerInfo, ...] = ()
    # Weak anchors: the tensors backward started from, then outputs of the model calls whose
    # nodes are in this graph (a model's output outlives the loss built on it).
    anchors: tuple[Anchor, ...] = ()
    root_count: int = 0  # the first root_count anchors are the tensors backward started from
    # Layer groups of this graph's nodes, read from the recorder while they were all alive.
    scopes: LayerScopes | None = None
    stats: BackwardStats | None = None  # trace(stats=True): what its gradients looked like
    # trace(stats=True): each node's position in this graph (what the step history is kept
    # by) and the kept steps of the same shape, read while the nodes were held.
    positions: dict[int, int] | None = None
    signature: tuple[str, ...] = ()
    # Program nodes (to_static): each one's program, read from Paddle's program objects.
    programs: dict[int, ProgramRead] = field(default_factory=dict)
    _ptrs: frozenset[int] | None = None
    # One walk (and the nodes' wrappers, for the statistics hooks) shared by everything this
    # backward and its capture do; held only from scan() to drop_walk(): kept for longer,
    # 20k small objects on a big graph would weigh on every later collection.
    _walk: WalkResult | None = None
    _objects: list[Any] = field(default_factory=list)
    # That walk as flat arrays, kept with the record: build_graph walks the graph of a node
    # this record vouches for from it, not through Paddle's accessors again (kept_walk.py).
    kept: KeptWalk | None = None

    def walk(self) -> WalkResult | None:
        """This backward's graph (fixed while the roots live; None once they may not)."""
        if self._walk is not None:
            return self._walk
        if self.roots:
            return walk_backward_graph(self.roots)
        roots = [live_node(a) for a in self.anchors[: self.root_count]]
        if not roots or any(r is None for r in roots):
            return None
        return walk_backward_graph(roots)

    def node_ptrs(self) -> frozenset[int]:
        """Every GradNode of this backward's graph (walked once, while the roots were held)."""
        if self._ptrs is None:
            self.scan(None)
            self.drop_walk()
        assert self._ptrs is not None
        return self._ptrs

    def node_objects(self) -> list[Any]:
        """The GradNodes' Python wrappers in walk order (empty once drop_walk() ran)."""
        return self._objects

    def keep_walk(self) -> None:
        if self._walk is not None:
            self.kept = KeptWalk(self._walk)

    def drop_walk(self) -> None:
        self._walk, self._objects = None, []

    def scan(self, model: Any) -> None:
        """Walk the graph once, before it runs: its nodes, and its PyLayers' contexts; the
        walk is held until drop_walk()."""
        assert self.roots, "scan() needs the roots"
        self._objects = []
        walk = self._walk = walk_backward_graph(self.roots, self._objects)
        self._ptrs = frozenset(walk.ptrs)  # the walk's column, made with it
        if any(map(is_pylayer, {n.name for n in walk.nodes})):  # per distinct name
            self.pylayers = tuple(describe_pylayers(walk, model))

    def release(self, user_tensors: list[Any]) -> None:
        """Let go of the GradNodes; the record now vouches only through live anchors, to
        which the user's variables holding a node of this graph are added (the nodes are
        still held here, so a pointer match proves it is this graph's node)."""
        ptrs = self.node_ptrs()
        found = (anchor_of(t) for t in user_tensors)
        self.anchors += tuple(a for a in found if a is not None and a.ptr in ptrs)
        self.roots = ()
        self.drop_walk()

    def alive(self) -> bool:
        """Can any graph still be matched to this record?"""
        return bool(self.roots) or any_alive(self.anchors)

    def vouches_for(self, root_ptrs: Collection[int]) -> bool:
        """True if the nodes at ``root_ptrs`` are provably nodes of this backward's graph:
        held by the record, or reachable from a tensor of it that is still alive."""
        wanted = set(root_ptrs)
        if not wanted or not wanted <= self.node_ptrs():
            return False
        return bool(self.roots) or proven(self.anchors, wanted) == wanted
