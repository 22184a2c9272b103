"""``trace(model)``: record layer scopes during the forward and Paddle's own account of the
backward, so that ``build_graph(y)`` / ``GraphWidget(y)`` can annotate the graph afterwards.

Everything patched or switched on entry (Tensor.backward, paddle.autograd.backward, paddle.grad,
FLAGS_call_stack_level, layer hooks) is put back exactly on exit, exceptions included.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..read.grad_node import grad_node_of
from ..read.pylayer_info import PyLayerInfo, describe_pylayers
from ..read.replay_safety import is_pylayer
from ..read.walk import WalkResult, walk_backward_graph
from .backward_capture import DUMP_KWARG, CapturedBackward, run_captured
from .layer_scopes import LayerScopeRecorder, LayerScopes
from .stack_gate import CALL_STACK_FLAG, LibraryForwardGate

# Slot names come from Paddle's VLOG 6, which costs about 0.5 ms per GradNode here (Paddle's
# formatting, about +30% backward time, plus capture and parsing: benchmarks/RESULTS.md). By
# default it is on while that stays around 0.1 s; trace(slots=True) asks for it at any size.
SLOT_LOG_MAX_NODES = 200
CALL_SITE_MAX_LAYERS = 500


@dataclass
class BackwardRecord:
    # The GradNodes backward started from, held so that no node of this graph can be freed and
    # its address reused while the record may still be matched against a graph.
    roots: tuple[Any, ...]
    captured: CapturedBackward
    copies: bool  # paddle.grad runs on copies of the nodes: log pointers differ from ours
    # paddle.grad only: the nodes of the tensors it differentiated for (None: not known, or
    # no_grad_vars pruned more than we can tell), what its copied dump is paired by.
    targets: frozenset[int] | None = None
    # What its PyLayer nodes stand for, read before the backward releases their contexts.
    pylayers: tuple[PyLayerInfo, ...] = ()
    _ptrs: frozenset[int] | None = None

    def walk(self) -> WalkResult:
        """This backward's graph (fixed while the roots live). Not kept: 20k small objects on
        a big graph would weigh on every later garbage collection of the user's process."""
        return walk_backward_graph(self.roots)

    def node_ptrs(self) -> frozenset[int]:
        """Every GradNode of this backward's graph (walked once)."""
        if self._ptrs is None:
            self.scan(None)
        assert self._ptrs is not None
        return self._ptrs

    def scan(self, model: Any) -> None:
        """Walk the graph once, before it runs: its nodes, and its PyLayers' contexts."""
        walk = self.walk()
        self._ptrs = frozenset(n.ptr for n in walk.nodes)
        if any(is_pylayer(n.name) for n in walk.nodes):
            self.pylayers = tuple(describe_pylayers(walk, model))


def _layer_count(model: Any) -> int:
    return sum(1 for _ in model.sublayers(include_self=True))


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _grad_targets(args: tuple[Any, ...], kwargs: dict[str, Any]) -> frozenset[int] | None:
    """The GradNodes of paddle.grad's ``inputs`` (a leaf's accumulation node, else grad_fn)."""
    inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
    no_grad_vars = args[7] if len(args) > 7 else kwargs.get("no_grad_vars")
    if inputs is None or no_grad_vars is not None:
        return None
    nodes = (grad_node_of(t) for t in _as_list(inputs) if hasattr(t, "grad_fn"))
    return frozenset(int(n.node_ptr()) for n in nodes if n is not None)


class TraceSession:
    """Use as ``with trace(model):`` around the forward and the backward."""

    def __init__(
        self, model: Any = None, *, call_sites: bool | None = None, slots: bool | None = None
    ) -> None:
        import paddle

        if model is not None and not isinstance(model, paddle.nn.Layer):
            raise TypeError(
                f"trace() takes your paddle.nn.Layer model (or nothing), got a "
                f"{type(model).__name__}; use `with trace(model):` or `with trace():`"
            )
        self.model = model
        if call_sites is None:  # per-op Python stacks cost ~0.2 ms an op in the forward
            call_sites = model is None or _layer_count(model) <= CALL_SITE_MAX_LAYERS
        self.call_sites = call_sites
        self.slots = slots
        self.records: list[BackwardRecord] = []
        self.scopes: LayerScopes | None = None
        self._recorder: LayerScopeRecorder | None = None
        self._restore: list[Callable[[], None]] = []
        self._in_backward = False

    # -- context manager -------------------------------------------------------------------
    def __enter__(self) -> TraceSession:
        if self._recorder is not None:
            raise RuntimeError("this trace() is already in use; start a new `with trace(...)`")
        self._gate = LibraryForwardGate()
        self._recorder = LayerScopeRecorder(self.model, observer=self._gate)
        self._recorder.start()
        try:
            if self.call_sites:
                self._set_call_stack_flag()
            self._patch_backward_entry_points()
        except BaseException:
            self._undo()
            raise
        RECENT_SESSIONS.add(self)  # build_graph inside the block already sees its backward runs
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._undo()
        RECENT_SESSIONS.add(self)

    def _undo(self) -> None:
        try:
            while self._restore:
                self._restore.pop()()
        finally:
            if self._recorder is not None and self._recorder.recording:
                self.scopes = self._recorder.stop()

    # -- what is switched on while tracing ---------------------------------------------------
    def _set_call_stack_flag(self) -> None:
        import paddle

        try:
            old = paddle.get_flags([CALL_STACK_FLAG])[CALL_STACK_FLAG]
        except (ValueError, KeyError):
            return  # this Paddle has no such flag: call sites fall back to layer call sites
        if int(old) < 3:
            paddle.set_flags({CALL_STACK_FLAG: 3})
            self._restore.append(lambda: paddle.set_flags({CALL_STACK_FLAG: old}))
            # Not inside library layers: their ops' user line is the layer call's (stack_gate).
            self._gate.arm(inside=int(old), elsewhere=3)
            self._restore.append(self._gate.disarm)

    def _swap(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        original = owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name)
        setattr(owner, name, make(original))
        self._restore.append(lambda: setattr(owner, name, original))

    def _patch_backward_entry_points(self) -> None:
        import paddle
        import paddle.autograd

        def wrapping(*, copies: bool, roots_of: Callable[[Any], list[Any]]) -> Any:
            def make(original: Any) -> Any:
                @functools.wraps(original)
                def wrapped(first: Any, *args: Any, **kwargs: Any) -> Any:
                    call = (first, *args)
                    return self._backward(original, roots_of(first), call, kwargs, copies=copies)

                return wrapped

            return make

        tensor_backward = wrapping(copies=False, roots_of=lambda tensor: [tensor])
        autograd_backward = wrapping(copies=False, roots_of=_as_list)
        grad = wrapping(copies=True, roots_of=_as_list)  # paddle.grad runs on node copies

        self._swap(paddle.Tensor, "backward", tensor_backward)
        self._swap(paddle.autograd, "backward", autograd_backward)
        original_grad = paddle.grad
        self._swap(paddle, "grad", grad)
        if getattr(paddle.autograd, "grad", None) is original_grad:
            self._restore.append(lambda: setattr(paddle.autograd, "grad", original_grad))
            paddle.autograd.grad = paddle.grad

    def _backward(
        self, original: Any, roots: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any],
        *, copies: bool,
    ) -> Any:  # fmt: skip
        if self._in_backward:  # e.g. paddle.grad inside a PyLayer's backward: already captured
            return original(*args, **kwargs)
        nodes = tuple(n for n in (grad_node_of(t) for t in roots if hasattr(t, "grad_fn")) if n)
        record = BackwardRecord(nodes, CapturedBackward(), copies)
        if copies:
            record.targets = _grad_targets(args, kwargs)
        record.scan(self.model)  # kept for matching graphs later
        slot_log = self.slots
        if slot_log is None:  # decide by size
            slot_log = len(record.node_ptrs()) <= SLOT_LOG_MAX_NODES
        self._in_backward = True
        try:
            result, captured = run_captured(
                lambda extra: original(*args, **{**kwargs, **extra}),
                function=original,
                user_dump_dir=kwargs.get(DUMP_KWARG),
                log=slot_log,
                call_sites=not copies,  # stacks of copied nodes match no graph node
            )
        finally:
            self._in_backward = False
        record.captured = captured
        self.records.append(record)
        return result


class _RecentSessions:
    """The last few finished traces, newest last, for build_graph to find its own in."""

    def __init__(self, size: int = 2) -> None:
        self._items: deque[TraceSession] = deque(maxlen=size)

    def add(self, session: TraceSession) -> None:
        if session in self._items:
            self._items.remove(session)
        self._items.append(session)

    def newest_first(self) -> Iterator[TraceSession]:
        return reversed(list(self._items))

    def clear(self) -> None:
        self._items.clear()


RECENT_SESSIONS = _RecentSessions()


def trace(
    model: Any = None, *, call_sites: bool | None = None, slots: bool | None = None
) -> TraceSession:
    """Record what ``build_graph``/``GraphWidget`` need while your forward and backward run::

        with trace(model):
            y = model(x)
            y.sum().backward()
        GraphWidget(y)

    ``model``: hook its sublayers to group GradNodes by layer (None: every nn.Layer called).
    ``call_sites``: ask Paddle for a Python stack per GradNode (FLAGS_call_stack_level=3), for
    the exact user line of each op (None: unless the model has over CALL_SITE_MAX_LAYERS
    sublayers; without it, ops get the line that called their layer).
    ``slots``: capture Paddle's VLOG for each node's slot names and the shapes of the tensors
    its backward saved (True/False; None: only for graphs up to SLOT_LOG_MAX_NODES nodes, as
    the log roughly doubles the backward's cost). Edge gradients come from Paddle's
    structured dump either way where Paddle writes one (>= 3.3).
    """
    return TraceSession(model, call_sites=call_sites, slots=slots)
