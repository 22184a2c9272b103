"""The bookkeeping behind LayerScopeRecorder: which layer call claimed which GradNode.

How a node is claimed is described in layer_scopes.py. This module also bounds what a long
recording keeps (issue 11): claims are grouped by *forward* (one top-level layer call and
everything inside it); a finished forward drops the inputs and frontiers its walks needed,
and a whole forward is *retired* (its claims forgotten, its GradNodes let go) once two
backward passes have run since it, or when more than MAX_FORWARDS forwards are kept. A
claimed node is held only while its claim is kept: a freed node's address can be reused by
a later node, which must then not be mistaken for the claimed one.
"""

from __future__ import annotations

import functools
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from ...graph.model import CallSite
from ..parse.call_sites import is_library_file
from ..read.grad_node import grad_node_later, release
from ..read.walk import ACCUMULATION_NODE, WalkResult
from .anchors import Anchor, anchor_of
from .walked_graph import NO_WALK, WalkedGraph

_MAX_OUTPUT_ITEMS = 100_000  # bound on nested outputs searched for tensors
# Forwards kept at most, backward or not: a forward never differentiated (an eval pass with
# gradients on) holds the activations its nodes saved until it is retired.
MAX_FORWARDS = 8
MAX_OUTPUT_ANCHORS = 64  # top-level outputs remembered for backward records to anchor on


_NONE: list[Any] = []  # shared, never appended to: a call's lists before it has any


class _Call:
    """One running (then finished) layer call. Holds GradNodes only while its forward runs.
    A plain class with slots: ~1,800 are made per llama-10k forward, one per layer call."""

    __slots__ = ("layer", "seq", "inputs", "site", "observed", "frontier", "forward", "outputs")

    def __init__(
        self, layer: Any, seq: int, inputs: list[Any], site: CallSite | None, observed: bool,
        forward: _Forward,
    ) -> None:  # fmt: skip
        self.layer = layer
        self.seq = seq
        # Input grad_fns, kept so their addresses stay theirs; their pointers are read when
        # the call is claimed (a node held keeps its address; in the forward each Paddle
        # call costs ~10 us: cold caches after the model's ops).
        self.inputs = inputs
        self.site = site  # the user-code line of this call
        self.observed = observed  # the observer wants to hear when this call ends
        # (ptr, wrapper or None when in the walk read) where this call's walk stopped: made
        # when it is claimed (no list per call until then: fewer collector passes)
        self.frontier: list[tuple[int, Any]] = _NONE
        self.forward: _Forward | None = forward  # the forward it is part of
        self.outputs: list[Any] = _NONE  # its outputs' grad_fns (set when it ends), until claimed


@dataclass
class _Forward:
    """One top-level layer call and everything called inside it."""

    calls: list[_Call] = field(default_factory=list)
    # Its claims as columns, in claim order: a snapshot makes its tables from them by zips
    # in C, a retirement drops them (no Python step per claim for either).
    claimed: list[int] = field(default_factory=list)  # ptrs this forward's calls claimed
    names: list[str] = field(default_factory=list)  # ... their GradNode names
    by: list[_Call] = field(default_factory=list)  # ... the call that claimed each
    nodes: list[Any] = field(default_factory=list)  # ... held so their addresses stay theirs
    layers: set[int] = field(default_factory=set)  # id() of every layer called
    epoch: int = 0  # backward passes seen when it finished
    done: bool = False  # its top-level call has ended


def _drop_walk_state(forward: _Forward) -> None:
    for call in forward.calls:
        call.inputs, call.frontier, call.outputs = _NONE, _NONE, _NONE
    forward.calls = []


def tensors_in(obj: Any) -> list[Any]:
    """Tensors in a (nested) tuple/list/dict output, iteratively and bounded."""
    Tensor = _tensor_type()  # noqa: N806 (no import statement: this runs on every layer call)
    if isinstance(obj, Tensor):  # the common case, kept cheap: this runs on every layer call
        return [obj]
    found, stack, budget, seen = [], [obj], _MAX_OUTPUT_ITEMS, set()
    while stack and budget > 0:
        budget -= 1
        item = stack.pop()
        if isinstance(item, Tensor):
            found.append(item)
        elif isinstance(item, (list, tuple, Mapping)) and id(item) not in seen:
            seen.add(id(item))
            values = list(item.values() if isinstance(item, Mapping) else item)
            stack.extend(reversed(values))
    return found


def _inputs(args: Any, kwargs: Any) -> list[Any]:
    """tensors_in((args, kwargs)), in its order; a call with tensor arguments only (most
    layer calls: ~1,800 a llama-10k forward) without its walk (~4 us)."""
    if not kwargs and type(args) is tuple:
        tensor = _tensor_type()
        for a in args:
            if not isinstance(a, tensor):
                return tensors_in((args, kwargs))
        return list(args)
    return tensors_in((args, kwargs))


@functools.cache
def _tensor_type() -> type:
    from paddle import Tensor

    return Tensor


_LIBRARY: dict[str, bool] = {}  # filename -> is_library_file: a dict, no lru wrapper per frame
_LIBRARY_MAX = 4096


def _is_library(filename: str) -> bool:
    known = _LIBRARY.get(filename)
    if known is None:
        if len(_LIBRARY) >= _LIBRARY_MAX:
            _LIBRARY.clear()
        known = _LIBRARY[filename] = is_library_file(filename)
    return known


# (file, line, function) -> its CallSite, shared: a frozen dataclass costs ~2 us to make, and
# a forward's ~1,800 layer calls come from a few dozen lines.
_SITES: dict[tuple[str, int, str], CallSite] = {}


def _user_call_site() -> CallSite | None:
    frame: Any = sys._getframe(1)
    library = _LIBRARY.get
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        known = library(filename)
        if not (_is_library(filename) if known is None else known):
            key = (filename, frame.f_lineno, code.co_name)
            site = _SITES.get(key)
            if site is None:
                if len(_SITES) >= _LIBRARY_MAX:
                    _SITES.clear()
                site = _SITES[key] = CallSite(*key)
            return site
        frame = frame.f_back
    return None


class Recording:
    """Everything one recording touches; dropped whole at stop()."""

    def __init__(self, observer: Any = None, *, deferred: bool = False) -> None:
        self.observer = observer  # enter(layer) -> bool, leave(): e.g. a LibraryForwardGate
        # Claims made by claim_pending() when asked for (a watched run: from the backward's
        # own walk), not by a walk of its own as each call ends.
        self.deferred = deferred
        # Nodes read by grad_node_later, their leaked reference not undone yet: released when
        # the top-level call ends, at clear(), or when the recording is freed.
        self.leaked: list[Any] = []
        self.clear()

    def __del__(self) -> None:
        leaked = getattr(self, "leaked", None)
        if leaked:  # dropped inside a forward (a recorder never stopped)
            try:  # noqa: SIM105 (no contextlib: at interpreter exit it may be gone)
                release(leaked)
            except Exception:  # noqa: BLE001, S110 (nothing printed)
                pass

    def clear(self) -> None:
        release(self.leaked)
        self.active: list[_Call] = []
        self.next_seq = 0
        self.owner: dict[int, _Call] = {}  # claimed ptr -> the (finished) call that claimed it
        self.forwards: deque[_Forward] = deque()  # kept forwards, oldest first
        self.epoch = 0
        self.outputs: deque[Anchor] = deque(maxlen=MAX_OUTPUT_ANCHORS)
        self.layers: dict[int, Any] = {}  # id(layer) -> layer, in first-call order
        self.caller: dict[int, int | None] = {}  # id(layer) -> id of enclosing layer, 1st call
        self.sites: dict[int, CallSite] = {}
        self.pending: list[_Call] = []  # ended calls whose nodes are not claimed yet

    def enter(self, layer: Any, args: Any, kwargs: Any) -> None:
        key = id(layer)
        site = _user_call_site()
        if not self.active:
            self.forwards.append(_Forward())
        forward = self.forwards[-1]
        if key not in self.layers:
            self.layers[key] = layer
            self.caller[key] = id(self.active[-1].layer) if self.active else None
            if site is not None:
                self.sites[key] = site
        forward.layers.add(key)
        leaked = self.leaked
        nodes = [n for t in _inputs(args, kwargs) if (n := grad_node_later(t, leaked)) is not None]
        observed = bool(self.observer and self.observer.enter(layer))
        call = _Call(layer, self.next_seq, nodes, site, observed, forward)
        forward.calls.append(call)
        self.active.append(call)
        self.next_seq += 1

    def _pop(self, layer: Any) -> _Call | None:
        active = self.active
        if active and active[-1].layer is layer:  # the usual case: the innermost call ends
            call = active.pop()
            if call.observed:
                self.observer.leave()
            return call
        # Innermost matching call; calls above it were abandoned by an exception.
        for i in range(len(self.active) - 1, -1, -1):
            if self.active[i].layer is layer:
                call = self.active[i]
                for ended in self.active[i:]:
                    if ended.observed:
                        self.observer.leave()
                del self.active[i:]
                return call
        return None

    def abort(self, layer: Any) -> None:
        if self._pop(layer) is not None and not self.active:
            self._finish_forward()

    def exit(self, layer: Any, outputs: Any) -> None:
        call = self._pop(layer)
        if call is None:
            return
        tensors = tensors_in(outputs)
        leaked = self.leaked
        call.outputs = [n for t in tensors if (n := grad_node_later(t, leaked)) is not None]
        self.pending.append(call)
        if not self.deferred:
            self.claim_pending()
        if not self.active:
            # What backward records anchor on: a model's output outlives the loss built on it.
            self.outputs.extend(a for t in tensors if (a := anchor_of(t)) is not None)
            self._finish_forward()

    def claim_pending(self, walk: WalkResult | None = None, objects: Sequence[Any] = ()) -> None:
        """Claim the nodes of the calls that have ended, in the order they ended: what each
        call's walk would have claimed when it ended (the nodes and their edges are the same
        now). ``walk``: a walk of the graph that holds them (``objects``: its nodes' wrappers,
        in its order), whose names and edges are read instead of asking Paddle again."""
        if not self.pending:
            return
        usable = walk is not None and len(objects) == len(walk.nodes)
        graph = WalkedGraph(walk, objects) if usable else None  # type: ignore[arg-type]
        for call in self.pending:
            self._claim(call, graph)
        self.pending.clear()
        for forward in self.forwards:
            if forward.done and forward.calls:
                _drop_walk_state(forward)

    def _claim(self, call: _Call, graph: WalkedGraph | None) -> None:
        forward = call.forward
        assert forward is not None
        call.forward = None  # claimed once; its forward's ``by`` holds it: no cycle
        owner_of, owner = self.owner.get, self.owner
        claimed, names, by, held = forward.claimed, forward.names, forward.by, forward.nodes
        objects: dict[int, Any] = {}  # wrappers of the nodes not in ``graph``
        known = graph.ptr_of.get if graph is not None else NO_WALK.get
        inputs = {known(id(node)) or int(node.node_ptr()) for node in call.inputs}
        frontier = call.frontier = []
        stack: list[int] = []
        for node in call.outputs:
            ptr = known(id(node)) or int(node.node_ptr())
            objects[ptr] = node
            stack.append(ptr)
        index_of = graph.index_of if graph is not None else {}
        seen: set[int] = set()
        jumped: set[int] = set()
        while stack:
            ptr = stack.pop()
            if ptr in seen:
                continue
            seen.add(ptr)
            found = owner_of(ptr)
            if ptr in inputs or (found is not None and found.seq < call.seq):
                frontier.append((ptr, objects.get(ptr)))  # made before it: outside it
            elif found is not None:
                # Claimed by a call that started after this one and has finished: an inner
                # call. Its inside is settled; continue from where its walk stopped.
                if found.seq not in jumped:
                    jumped.add(found.seq)
                    for p, node in found.frontier:
                        if node is not None:
                            objects.setdefault(p, node)
                        stack.append(p)
            else:
                k = index_of.get(ptr)
                if k is not None:
                    assert graph is not None
                    name, node = graph.names[k], graph.objects[k]
                else:
                    node = objects[ptr]
                    name = str(node.name())
                if name == ACCUMULATION_NODE:
                    # A leaf: nothing beyond it, and parameters are placed by ownership.
                    continue
                owner[ptr] = call
                claimed.append(ptr)
                names.append(name)
                by.append(call)
                held.append(node)
                if k is not None:
                    assert graph is not None
                    stack.extend(graph.children[k])
                    continue
                for nxt in node.next_functions:
                    if nxt is not None:
                        p = int(nxt.node_ptr())
                        objects.setdefault(p, nxt)
                        stack.append(p)

    def _finish_forward(self) -> None:
        """Later forwards never walk into this one's calls: drop what only its walks needed."""
        release(self.leaked)
        forward = self.forwards[-1]
        forward.epoch = self.epoch
        forward.done = True
        if not self.pending:
            _drop_walk_state(forward)
        if len(self.forwards) > MAX_FORWARDS:
            self.claim_pending()
        while len(self.forwards) > MAX_FORWARDS:
            self._retire(self.forwards.popleft())

    def end_epoch(self) -> None:
        """A backward pass ran: retire the forwards that finished before the one before it."""
        # A forward that raised where post hooks cannot be always_call (Paddle < 3.3) never
        # ended: its calls' leaked references go here, not with the user's next graphs.
        release(self.leaked)
        self.claim_pending()
        self.epoch += 1
        keep_running = bool(self.active)
        while len(self.forwards) > keep_running and self.forwards[0].epoch < self.epoch - 1:
            self._retire(self.forwards.popleft())

    def take_outputs(self, ptrs: frozenset[int]) -> list[Anchor]:
        """Anchors on top-level outputs whose grad_fn is in ``ptrs`` (taken), live ones only."""
        taken: list[Anchor] = []
        rest: list[Anchor] = []
        for a in self.outputs:
            if a.tensor() is None:
                continue
            (taken if a.ptr in ptrs else rest).append(a)
        self.outputs.clear()
        self.outputs.extend(rest)
        return taken

    def _retire(self, forward: _Forward) -> None:
        # Its claims leave the owner table in C (~10k a llama-10k step; never a KeyError)
        deque(map(self.owner.pop, forward.claimed, repeat(None)), maxlen=0)
        forward.claimed, forward.names, forward.by, forward.nodes = [], [], [], []
        # Layers no kept forward called (e.g. a loss layer made anew each step), except the
        # enclosing layers that name the kept ones.
        keep: set[int] = set()
        for f in self.forwards:
            keep |= f.layers
        if forward.layers <= keep:
            # Every layer it called a kept forward calls too (a training loop's steps): none
            # goes. ``self.layers`` holds only layers of kept forwards and their enclosing
            # layers (what the last retirement kept, and what calls since added, each in its
            # forward's ``layers``); the kept forwards' layers, and so their enclosing ones,
            # are what they were, with this forward's now all among them.
            return
        for key in list(keep):
            parent = self.caller.get(key)
            while parent is not None and parent not in keep:
                keep.add(parent)
                parent = self.caller.get(parent)
        for key in [k for k in self.layers if k not in keep]:
            del self.layers[key]
            self.caller.pop(key, None)
            self.sites.pop(key, None)
