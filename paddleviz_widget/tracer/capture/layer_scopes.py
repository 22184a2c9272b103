"""Which nn.Layer created each GradNode of a forward pass.

``with LayerScopeRecorder(model) as rec: y = model(x)`` then ``rec.scopes``: the layer tree as
graph.model.Group records and GradNode ptr -> innermost group id.

How a node is attributed: when a layer's call returns, walk backward from its outputs' grad_fns,
stopping at its inputs' grad_fns, at accumulation nodes and at nodes that existed before the
call; every node reached that no layer claimed yet is this layer's. Inner calls return first,
so the first claim is the innermost layer. A walk that meets a node claimed by an inner call
jumps straight to where that call's own walk stopped (its "frontier") instead of re-walking
it: every node is expanded once per forward, whatever the nesting depth. A watched run's
recorder defers these walks to the backward (``deferred``): they are then made, in the order
the calls ended, over the backward's own walk of the graph (same claims, no Paddle calls).

Groups: one per layer instance (a layer called twice keeps one group), id "g<k>" with k its
position in the model's ``named_sublayers(include_self=True)`` order (stable for a model; gaps
where layers are left out). ``name`` is that structured path ("conv.0"); the root is named by
its class ("LeNet"). Listed: layers that created a node or own a parameter (whether or not the
forward reached it), plus their ancestors; ``LayerScopes.restricted_to(graph ptrs)`` keeps only
what a drawn graph holds. Layers called but holding nothing (Identity, a Sequential of empty
layers) are left out. Without a model, the outermost called layers are the roots, and a layer
called but registered under none of them gets Paddle's ``full_name()`` ("linear_3") and the
layer that called it as parent.

Limitation: a tensor a layer uses without receiving it as an argument (an attribute or closure
computed earlier by an enclosing layer's own ops) lets the walk run into those earlier,
still-unclaimed ops, and they are attributed to the inner layer. The same goes for nodes of a
forward already retired (scope_recording.py: a long recording keeps about the last two
forwards) that a later layer reaches without receiving them as an argument.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator, KeysView, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...graph.groups import with_ancestors
from ...graph.model import CallSite, Group
from ..read.walk import WalkResult
from .anchors import Anchor
from .claim_tables import claim_tables
from .scope_recording import Recording
from .snapshot_memo import SnapshotMemo

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class LayerScopes:
    """Plain data (no Paddle objects): the layer groups of one recorded forward."""

    # Groups in model order (``named_sublayers(include_self=True)``); parents before children.
    groups: tuple[Group, ...] = ()
    # GradNode ptr -> innermost group id: op nodes and parameters' accumulation nodes.
    group_of_ptr: dict[int, str] = field(default_factory=dict)
    # group id -> innermost user-code line of the layer's first call.
    call_sites: dict[str, CallSite] = field(default_factory=dict)
    # op node ptr -> innermost user-code line of the layer call that created it.
    node_sites: dict[int, CallSite] = field(default_factory=dict)
    # op node ptr -> GradNode name() when claimed. A node freed after recording can have its
    # address reused by a later node: compare names before trusting group_of_ptr for it.
    node_names: dict[int, str] = field(default_factory=dict)
    # group id -> id() of its layer while recorded: what tells two sessions' groups of one
    # layer apart from two layers' (nested traces, scope_union.py).
    layer_keys: dict[str, int] = field(default_factory=dict)

    def restricted_to(self, ptrs: Iterable[int], *, node_tables: bool = True) -> LayerScopes:
        """Only the given nodes, and the groups holding them (with their ancestors).
        ``node_tables`` False: ``node_sites`` and ``node_names`` are kept whole, for a caller
        that reads them only for the nodes kept (two 100k-entry passes less on big graphs)."""
        keep = ptrs if isinstance(ptrs, (set, frozenset, KeysView)) else set(ptrs)
        group_of_ptr = _only(self.group_of_ptr, keep)
        used = with_ancestors(group_of_ptr.values(), {g.id: g.parent for g in self.groups})
        return LayerScopes(  # a table with nothing to leave out is shared, not copied
            groups=tuple(g for g in self.groups if g.id in used),
            group_of_ptr=group_of_ptr,
            call_sites=_only(self.call_sites, used),
            node_sites=_only(self.node_sites, keep) if node_tables else self.node_sites,
            node_names=_only(self.node_names, keep) if node_tables else self.node_names,
            layer_keys=_only(self.layer_keys, used),
        )


def _only(table: dict[K, V], keep: Set[K]) -> dict[K, V]:
    """``table``'s entries whose key is in ``keep``: ``table`` itself if that is all of them
    (a set test in C per key; 100k-entry tables on big graphs)."""
    if table.keys() <= keep:
        return table
    return {k: v for k, v in table.items() if k in keep}


def _tree(root: Any) -> Iterator[tuple[Any, str, Any]]:
    """(layer, path, parent layer) in named_sublayers(include_self=True) order, first path."""
    stack: list[tuple[Any, str, Any]] = [(root, "", None)]
    seen: set[int] = set()
    while stack:
        layer, path, parent = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        yield layer, path, parent
        for name, child in reversed(_children(layer)):
            stack.append((child, f"{path}.{name}" if path else name, layer))


def _children(layer: Any) -> list[tuple[str, Any]]:
    """``layer.named_children()``, read from the layer's own table (what that generator reads;
    a child listed twice is left to _tree's ``seen``, which keeps its first name as the
    generator does): ~1 us less a layer, ~2,300 layers a llama-10k snapshot."""
    own = getattr(layer, "_sub_layers", None)
    if not isinstance(own, dict):  # not a Paddle Layer as we know it: ask the public way
        return list(layer.named_children())
    return [(name, child) for name, child in own.items() if child is not None]


def _entries(roots: list[Any], rec: Recording) -> list[tuple[Any, str, int | None]]:
    """(layer, group name, parent layer id) for every known layer, in model order."""
    entries: list[tuple[Any, str, int | None]] = []
    placed: set[int] = set()
    root_names: set[str] = set()
    # A called layer that sits inside another called root (model.fc(z) before model(x)) is
    # named from the outer one.
    inner = (
        {id(layer) for root in roots for layer, _, parent in _tree(root) if parent}
        if len(roots) > 1
        else set()  # one root (the model): nothing to place inside another
    )
    for root in roots:
        if id(root) in inner or id(root) in placed:
            continue
        name, k = type(root).__name__, 1
        while name in root_names:
            name, k = f"{type(root).__name__}_{k}", k + 1
        root_names.add(name)
        for layer, path, parent in _tree(root):
            if id(layer) not in placed:
                placed.add(id(layer))
                entries.append((layer, path or name, None if parent is None else id(parent)))
    # Layers called but not registered under any root (made on the fly, kept in a plain list):
    # named by Paddle's unique full_name(), under the layer that was running when called.
    for key, layer in rec.layers.items():
        if key not in placed:
            placed.add(key)
            entries.append((layer, str(layer.full_name()), rec.caller.get(key)))
    return entries


def _scopes(
    roots: list[Any], rec: Recording, only: Collection[int] | None, memo: SnapshotMemo
) -> LayerScopes:
    """The recording as plain data; ``only``: just these GradNodes (and their groups).
    ``memo``: what the recorder's earlier snapshots read that is still so."""
    entries = _entries(roots, rec)
    ids = [id(layer) for layer, _, _ in entries]
    gids = memo.group_ids(len(entries))  # each entry's group id, in entry order
    gid = dict(zip(ids, gids))
    group_of_ptr, node_sites, names = claim_tables(rec, gid, only)
    param_ptr = memo.params.of
    owned_params: set[int] = set()
    for (layer, _, _), g in zip(entries, gids):
        # named_parameters() order: a tied parameter belongs to its first owner.
        for param in _own_params(layer):
            if id(param) in owned_params:
                continue
            owned_params.add(id(param))
            ptr = param_ptr(param)
            if ptr is not None and (only is None or ptr in only):
                group_of_ptr[ptr] = g
    parent_of = {g: gid[parent] for (_, _, parent), g in zip(entries, gids) if parent in gid}
    used = with_ancestors(group_of_ptr.values(), parent_of)
    groups: list[Group] = []
    keys: dict[str, int] = {}
    for (layer, name, _), g, key in zip(entries, gids, ids):
        if g in used:
            groups.append(memo.group(g, name, type(layer).__name__, parent_of.get(g)))
            keys[g] = key
    sites = {gid[k]: s for k, s in rec.sites.items() if k in gid and gid[k] in used}
    return LayerScopes(tuple(groups), group_of_ptr, sites, node_sites, names, keys)


def _own_params(layer: Any) -> Iterable[Any]:
    """``layer.named_parameters(include_sublayers=False)``'s parameters, in its order, read
    from the layer's own table (what that generator reads): ~2 us less a layer, ~1,800
    layers a llama-10k capture. (A parameter listed twice in one layer: the caller keeps
    its first, as named_parameters' set does.)"""
    own = getattr(layer, "_parameters", None)
    if not isinstance(own, dict):  # not a Paddle Layer as we know it: ask the public way
        return [p for _, p in layer.named_parameters(include_sublayers=False)]
    return [p for p in own.values() if p is not None]


class _ScopeHooks:
    """The recorder's pre and post hooks, bound methods of one object per recording: a copy
    of the model made while they are on (``copy.deepcopy``: a "best model so far", an EMA
    copy) gets an inert twin of it, not our closures, which recorded the copy's calls into
    the model's recording and kept it unpicklable ("Can't pickle local object")."""

    def __init__(self, rec_ref: list[Recording | None]) -> None:
        self.rec_ref = rec_ref

    def __deepcopy__(self, memo: Any) -> _ScopeHooks:
        return _ScopeHooks([None])  # records nothing, ever

    def __reduce__(self) -> tuple[Any, ...]:
        return (_ScopeHooks, ([None],))

    def pre(self, layer: Any, args: Any, kwargs: Any = None) -> None:
        rec = self.rec_ref[0]
        if rec is not None:
            rec.enter(layer, args, kwargs)

    def post(self, layer: Any, args: Any, outputs: Any) -> None:
        rec = self.rec_ref[0]
        if rec is not None:
            rec.exit(layer, outputs)


def _register_hooks(layer: Any, hooks: _ScopeHooks) -> list[Any]:
    pre, post = hooks.pre, hooks.post
    try:  # with_kwargs/always_call/prepend: Paddle >= 3.0
        pre_handle = layer.register_forward_pre_hook(pre, with_kwargs=True)
    except TypeError:
        pre_handle = layer.register_forward_pre_hook(pre)
    handles = [pre_handle]
    try:
        # First post-hook to see the forward's own outputs; always_call pops the call stack
        # when the forward raises.
        handles.append(layer.register_forward_post_hook(post, prepend=True, always_call=True))
    except TypeError:
        handles.append(layer.register_forward_post_hook(post))
    return handles


class LayerScopeRecorder:
    """Record which nn.Layer creates each GradNode while a forward pass runs.

    ``LayerScopeRecorder(model)`` hooks every sublayer of ``model``;
    ``LayerScopeRecorder()`` follows every nn.Layer called inside the block (it temporarily
    wraps ``paddle.nn.Layer.__call__``) and names layers from the outermost called ones.
    Use as a context manager or with start()/stop(); the result is ``scopes`` (plain data).
    Not thread-safe: record one forward at a time.
    """

    def __init__(self, model: Any = None, *, observer: Any = None, deferred: bool = False) -> None:
        import paddle

        if model is not None and not isinstance(model, paddle.nn.Layer):
            raise TypeError(
                f"model must be a paddle.nn.Layer, got a {type(model).__name__}; pass the "
                "model object itself, or no model to follow every layer called in the block"
            )
        self.model = model
        self.observer = observer  # told of every layer call (enter/leave), see Recording
        self.deferred = deferred  # claims made when asked for (claim_pending), see Recording
        self.scopes: LayerScopes | None = None
        self.leftover_outputs: list[Anchor] = []  # after stop(): outputs no backward took
        self._rec_ref: list[Recording | None] = [None]
        self._handles: list[Any] = []
        self._patched: tuple[Any, Any] | None = None  # (original __call__, our wrapper)
        self._memo = SnapshotMemo()  # kept across start()/pause(): a watched run's captures

    @property
    def recording(self) -> bool:
        return self._rec_ref[0] is not None

    def start(self) -> LayerScopeRecorder:
        if self.recording:
            raise RuntimeError("LayerScopeRecorder is already recording; stop() it first")
        self.scopes = None
        self._rec_ref = [Recording(self.observer, deferred=self.deferred)]
        try:
            if self.model is not None:
                hooks = _ScopeHooks(self._rec_ref)
                for layer, _, _ in _tree(self.model):
                    self._handles += _register_hooks(layer, hooks)
            else:
                self._patch_layer_call()
        except BaseException:
            self._detach()
            raise
        return self

    def _patch_layer_call(self) -> None:
        import paddle

        layer_cls = paddle.nn.Layer
        original = layer_cls.__dict__["__call__"]
        rec_ref = self._rec_ref

        @functools.wraps(original)
        def __call__(layer: Any, *args: Any, **kwargs: Any) -> Any:
            rec = rec_ref[0]
            if rec is None:  # stopped, but someone wrapped __call__ over us: pass through
                return original(layer, *args, **kwargs)
            rec.enter(layer, args, kwargs)
            try:
                outputs = original(layer, *args, **kwargs)
            except BaseException:
                rec.abort(layer)
                raise
            rec.exit(layer, outputs)
            return outputs

        layer_cls.__call__ = __call__  # type: ignore[method-assign, assignment]
        self._patched = (original, __call__)

    def _detach(self) -> Recording | None:
        """Remove hooks / restore Layer.__call__ and forget every Paddle object."""
        import paddle

        for handle in self._handles:
            handle.remove()
        self._handles = []
        if self._patched is not None:
            original, wrapper = self._patched
            if paddle.nn.Layer.__dict__.get("__call__") is wrapper:
                paddle.nn.Layer.__call__ = original  # type: ignore[method-assign]
            self._patched = None
        rec = self._rec_ref[0]
        self._rec_ref[0] = None  # a wrapper left in someone's chain now holds nothing
        return rec

    def pause(self) -> None:
        """Stop recording and forget it (watch mode, between full captures); start() again."""
        rec = self._detach()
        if rec is not None:
            rec.clear()

    def _roots(self, rec: Recording) -> list[Any]:
        if self.model is not None:
            return [self.model]
        return [layer for key, layer in rec.layers.items() if rec.caller[key] is None]

    def snapshot(self, only: Collection[int] | None = None) -> LayerScopes | None:
        """What is recorded so far (every kept claim's node is alive, so each pointer still
        means the node claimed); ``only``: just these GradNodes. After stop(): ``scopes``."""
        rec = self._rec_ref[0]
        if rec is None:
            return self.scopes
        rec.claim_pending()
        return _scopes(self._roots(rec), rec, only, self._memo)

    def claim_pending(self, walk: WalkResult | None, objects: Sequence[Any]) -> None:
        """Claim the nodes of the layer calls that ended since the last claims, from ``walk``
        (a walk holding them; ``objects``: its nodes' wrappers in its order) where it can."""
        rec = self._rec_ref[0]
        if rec is not None:
            rec.claim_pending(walk, objects)

    def end_epoch(self) -> None:
        """A backward pass has run: let go of forwards no later graph needs (scope_recording)."""
        rec = self._rec_ref[0]
        if rec is not None:
            rec.end_epoch()

    def take_outputs(self, ptrs: frozenset[int]) -> list[Anchor]:
        """Weak anchors on the outputs of finished top-level calls whose grad_fn is in ``ptrs``."""
        rec = self._rec_ref[0]
        return rec.take_outputs(ptrs) if rec is not None else []

    def stop(self) -> LayerScopes:
        """Stop recording and return (and keep in ``scopes``) what was recorded."""
        rec = self._detach()
        if rec is None:
            raise RuntimeError("LayerScopeRecorder is not recording; call start() first")
        try:
            rec.claim_pending()
            self.scopes = _scopes(self._roots(rec), rec, None, self._memo)
            self.leftover_outputs = [a for a in rec.outputs if a.tensor() is not None]
        finally:
            rec.clear()  # drop every GradNode wrapper and layer now, even if _scopes failed
        return self.scopes

    def __enter__(self) -> LayerScopeRecorder:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
