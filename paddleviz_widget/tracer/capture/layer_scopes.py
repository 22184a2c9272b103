"""Which nn.Layer created each GradNode of a forward pass.

``with LayerScopeRecorder(model) as rec: y = model(x)`` then ``rec.scopes``: the layer tree as
graph.model.Group records and GradNode ptr -> innermost group id.

How a node is attributed: when a layer's call returns, walk backward from its outputs' grad_fns,
stopping at its inputs' grad_fns, at accumulation nodes and at nodes that existed before the
call; every node reached that no layer claimed yet is this layer's. Inner calls return first,
so the first claim is the innermost layer. A walk that meets a node claimed by an inner call
jumps straight to where that call's own walk stopped (its "frontier") instead of re-walking
it: every node is expanded once per forward, whatever the nesting depth.

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
still-unclaimed ops, and they are attributed to the inner layer.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...graph.groups import with_ancestors
from ...graph.model import CallSite, Group
from ..parse.call_sites import is_library_file
from ..read.grad_node import grad_node_of
from ..read.params import accumulation_ptr
from ..read.walk import ACCUMULATION_NODE

_MAX_OUTPUT_ITEMS = 100_000  # bound on nested outputs searched for tensors


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

    def restricted_to(self, ptrs: Iterable[int]) -> LayerScopes:
        """Only the given nodes, and the groups holding them (with their ancestors)."""
        keep = set(ptrs)
        group_of_ptr = {p: g for p, g in self.group_of_ptr.items() if p in keep}
        used = with_ancestors(group_of_ptr.values(), {g.id: g.parent for g in self.groups})
        return LayerScopes(
            groups=tuple(g for g in self.groups if g.id in used),
            group_of_ptr=group_of_ptr,
            call_sites={g: s for g, s in self.call_sites.items() if g in used},
            node_sites={p: s for p, s in self.node_sites.items() if p in keep},
            node_names={p: n for p, n in self.node_names.items() if p in keep},
        )


@dataclass
class _Call:
    """One running (then finished) layer call. Holds GradNodes only until stop()."""

    layer: Any
    seq: int
    inputs: list[Any]  # input grad_fns: kept so their addresses stay theirs
    input_ptrs: set[int]
    site: CallSite | None = None  # the user-code line of this call
    observed: bool = False  # the observer wants to hear when this call ends
    frontier: list[Any] = field(default_factory=list)  # where this call's walk stopped


def _tensors(obj: Any) -> list[Any]:
    """Tensors in a (nested) tuple/list/dict output, iteratively and bounded."""
    from paddle import Tensor

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


@functools.lru_cache(maxsize=4096)
def _is_library(filename: str) -> bool:
    return is_library_file(filename)


def _user_call_site() -> CallSite | None:
    frame: Any = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not _is_library(code.co_filename):
            return CallSite(code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


class _Recording:
    """Everything one recording touches; dropped whole at stop()."""

    def __init__(self, observer: Any = None) -> None:
        self.observer = observer  # enter(layer) -> bool, leave(): e.g. a LibraryForwardGate
        self.clear()

    def clear(self) -> None:
        self.active: list[_Call] = []
        self.next_seq = 0
        self.owner: dict[int, _Call] = {}  # claimed ptr -> the (finished) call that claimed it
        self.names: dict[int, str] = {}
        # Claimed GradNodes stay alive while recording so no later node can take their address.
        self.alive: list[Any] = []
        self.layers: dict[int, Any] = {}  # id(layer) -> layer, in first-call order
        self.caller: dict[int, int | None] = {}  # id(layer) -> id of enclosing layer, 1st call
        self.sites: dict[int, CallSite] = {}

    def enter(self, layer: Any, args: Any, kwargs: Any) -> None:
        key = id(layer)
        site = _user_call_site()
        if key not in self.layers:
            self.layers[key] = layer
            self.caller[key] = id(self.active[-1].layer) if self.active else None
            if site is not None:
                self.sites[key] = site
        nodes = [n for t in _tensors((args, kwargs)) if (n := grad_node_of(t)) is not None]
        ptrs = {int(n.node_ptr()) for n in nodes}
        observed = bool(self.observer and self.observer.enter(layer))
        self.active.append(_Call(layer, self.next_seq, nodes, ptrs, site, observed))
        self.next_seq += 1

    def _pop(self, layer: Any) -> _Call | None:
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
        self._pop(layer)

    def exit(self, layer: Any, outputs: Any) -> None:
        call = self._pop(layer)
        if call is None:
            return
        stack = [n for t in _tensors(outputs) if (n := grad_node_of(t)) is not None]
        seen: set[int] = set()
        jumped: set[int] = set()
        while stack:
            node = stack.pop()
            ptr = int(node.node_ptr())
            if ptr in seen:
                continue
            seen.add(ptr)
            owner = self.owner.get(ptr)
            if ptr in call.input_ptrs or (owner is not None and owner.seq < call.seq):
                call.frontier.append(node)  # made before this call: outside it
            elif owner is not None:
                # Claimed by a call that started after this one and has finished: an inner
                # call. Its inside is settled; continue from where its walk stopped.
                if owner.seq not in jumped:
                    jumped.add(owner.seq)
                    stack.extend(owner.frontier)
            else:
                name = str(node.name())
                if name == ACCUMULATION_NODE:
                    # A leaf: nothing beyond it, and parameters are placed by ownership.
                    continue
                self.owner[ptr] = call
                self.names[ptr] = name
                self.alive.append(node)
                stack.extend(n for n in node.next_functions if n is not None)


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
        children = list(layer.named_children())
        for name, child in reversed(children):
            stack.append((child, f"{path}.{name}" if path else name, layer))


def _entries(roots: list[Any], rec: _Recording) -> list[tuple[Any, str, int | None]]:
    """(layer, group name, parent layer id) for every known layer, in model order."""
    entries: list[tuple[Any, str, int | None]] = []
    placed: set[int] = set()
    root_names: set[str] = set()
    # A called layer that sits inside another called root (model.fc(z) before model(x)) is
    # named from the outer one.
    inner = {id(layer) for root in roots for layer, _, parent in _tree(root) if parent}
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


def _scopes(roots: list[Any], rec: _Recording) -> LayerScopes:
    entries = _entries(roots, rec)
    gid = {id(layer): f"g{k}" for k, (layer, _, _) in enumerate(entries)}
    group_of_ptr = {ptr: gid[id(call.layer)] for ptr, call in rec.owner.items()}
    owned_params: set[int] = set()
    for layer, _, _ in entries:
        # named_parameters() order: a tied parameter belongs to its first owner.
        for _, param in layer.named_parameters(include_sublayers=False):
            if id(param) in owned_params:
                continue
            owned_params.add(id(param))
            ptr = accumulation_ptr(param)
            if ptr is not None:
                group_of_ptr[ptr] = gid[id(layer)]
    parent_of = {gid[id(layer)]: gid[parent] for layer, _, parent in entries if parent is not None}
    used = with_ancestors(group_of_ptr.values(), parent_of)
    groups = tuple(
        Group(gid[id(layer)], name, type(layer).__name__, parent_of.get(gid[id(layer)]))
        for layer, name, _ in entries
        if gid[id(layer)] in used
    )
    sites = {gid[k]: s for k, s in rec.sites.items() if k in gid and gid[k] in used}
    node_sites = {p: call.site for p, call in rec.owner.items() if call.site is not None}
    return LayerScopes(groups, group_of_ptr, sites, node_sites, dict(rec.names))


def _register_hooks(layer: Any, rec_ref: list[_Recording | None]) -> list[Any]:
    def pre(layer: Any, args: Any, kwargs: Any = None) -> None:
        if rec_ref[0] is not None:
            rec_ref[0].enter(layer, args, kwargs)

    def post(layer: Any, args: Any, outputs: Any) -> None:
        if rec_ref[0] is not None:
            rec_ref[0].exit(layer, outputs)

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

    def __init__(self, model: Any = None, *, observer: Any = None) -> None:
        import paddle

        if model is not None and not isinstance(model, paddle.nn.Layer):
            raise TypeError(
                f"model must be a paddle.nn.Layer, got a {type(model).__name__}; pass the "
                "model object itself, or no model to follow every layer called in the block"
            )
        self.model = model
        self.observer = observer  # told of every layer call (enter/leave), see _Recording
        self.scopes: LayerScopes | None = None
        self._rec_ref: list[_Recording | None] = [None]
        self._handles: list[Any] = []
        self._patched: tuple[Any, Any] | None = None  # (original __call__, our wrapper)

    @property
    def recording(self) -> bool:
        return self._rec_ref[0] is not None

    def start(self) -> LayerScopeRecorder:
        if self.recording:
            raise RuntimeError("LayerScopeRecorder is already recording; stop() it first")
        self.scopes = None
        self._rec_ref = [_Recording(self.observer)]
        try:
            if self.model is not None:
                for layer, _, _ in _tree(self.model):
                    self._handles += _register_hooks(layer, self._rec_ref)
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

    def _detach(self) -> _Recording | None:
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

    def stop(self) -> LayerScopes:
        """Stop recording and return (and keep in ``scopes``) what was recorded."""
        rec = self._detach()
        if rec is None:
            raise RuntimeError("LayerScopeRecorder is not recording; call start() first")
        try:
            if self.model is not None:
                roots = [self.model]
            else:
                roots = [layer for key, layer in rec.layers.items() if rec.caller[key] is None]
            self.scopes = _scopes(roots, rec)
        finally:
            rec.clear()  # drop every GradNode wrapper and layer now, even if _scopes failed
        return self.scopes

    def __enter__(self) -> LayerScopeRecorder:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
