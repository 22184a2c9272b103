"""Run a compiled layer's forward once more, eagerly, with nothing of the user's changed.

A layer whose ``forward`` is a ``paddle.jit.to_static`` function (full graph or SOT) runs as
one compiled program: its sublayers' forward hooks do not fire with real tensors, so a
per-layer check sees only the program's outputs. When one of them held a NaN/Inf, running the
same forward once more as plain dygraph code (``StaticFunction.dygraph_function``), under
``paddle.no_grad``, on the same inputs and from the same RNG state, lets hooks see each
sublayer. Only then, once per NaN/Inf seen.

Undone afterwards, whatever happens: the RNG state (set to the one the compiled run started
from, then put back), every parameter and buffer of the layer (BatchNorm's running statistics
move in a training forward; written back only where the bytes changed, in place, so their
identity and inplace version stay), the layers' plain attributes (a forward that counts its
calls), every forward hook (the user's and the tracer's own are taken off for the run: none
of them runs twice), and whatever the forward prints or warns (kept from the user's
stdout/stderr). ``no_grad`` makes no GradNode and touches no ``.grad``.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import MethodType
from typing import Any

from .vlog import flags_v_cell

# Keys of the hooks put in for the re-run: negative, so never one of Paddle's hook ids (which
# its kwargs/always-called flag dicts are keyed by).
PRE_KEY, POST_KEY = -1, -1


@dataclass
class ProgramFrame:
    """One call of a compiled layer, as its forward pre hook saw it."""

    layer: Any
    args: tuple[Any, ...]
    rng: Any  # paddle.get_rng_state() before the program ran
    culprit_inside: bool = False  # a NaN/Inf was seen while it ran


def compiled_forward(layer: Any) -> Any:
    """The ``StaticFunction`` a layer's forward is (``to_static(model)`` or a decorated
    ``forward``), or None. Runs in every checked layer call, which SOT simulates for a hooked
    layer: plain code only (a cached class lookup made SOT's guard fail, InnerError).
    A plain bound method (nearly every layer) is answered before the import statement, which
    costs ~0.8 us a call (~1,800 a llama-10k forward); a StaticFunction is never one."""
    forward = getattr(layer, "forward", None)
    if type(forward) is MethodType:
        return None
    try:
        from paddle.jit.dy2static.program_translator import StaticFunction
    except ImportError:
        return None
    return forward if isinstance(forward, StaticFunction) else None


def enter_frame(layer: Any, args: Any) -> ProgramFrame | None:
    """A frame for a compiled layer called with real tensors (not while Paddle converts)."""
    if compiled_forward(layer) is None:  # (before the import statement: every layer call)
        return None
    import paddle

    if not paddle.in_dynamic_mode():
        return None
    return ProgramFrame(layer, tuple(args), paddle.get_rng_state())


def forward_source(layer: Any) -> tuple[str, int, int] | None:
    """(file, first line, last line) of the layer's forward code."""
    forward = compiled_forward(layer)
    function = forward.dygraph_function if forward is not None else type(layer).forward
    try:
        lines, first = inspect.getsourcelines(inspect.unwrap(function))
        file = inspect.getsourcefile(inspect.unwrap(function))
    except (OSError, TypeError):
        return None
    return (file, first, first + len(lines) - 1) if file else None


@contextlib.contextmanager
def _only_hooks(
    layers: list[Any], pre: Callable[..., Any], post: Callable[..., Any]
) -> Iterator[None]:
    """Each layer's forward hooks replaced by ``pre``/``post`` alone, and its plain
    attributes put back afterwards."""
    saved = []
    for layer in layers:
        attrs = dict(layer.__dict__)
        saved.append((layer, attrs))
        layer.__dict__["_forward_pre_hooks"] = OrderedDict({PRE_KEY: pre})
        layer.__dict__["_forward_post_hooks"] = OrderedDict({POST_KEY: post})
    try:
        yield
    finally:
        for layer, attrs in saved:
            for key in [k for k in layer.__dict__ if k not in attrs]:
                del layer.__dict__[key]
            for key, value in attrs.items():
                if layer.__dict__.get(key, attrs) is not value:
                    layer.__dict__[key] = value


@contextlib.contextmanager
def _vlog_off() -> Iterator[None]:
    """A re-run from inside a captured backward (the device path reads its flags there) logs
    nothing into the backward's log."""
    cell = flags_v_cell()
    saved = int(cell.value) if cell is not None else 0
    if cell is not None and saved:
        cell.value = 0
    try:
        yield
    finally:
        if cell is not None and saved:
            cell.value = saved


@contextlib.contextmanager
def _state_kept(layer: Any, rng: Any) -> Iterator[None]:
    import numpy as np
    import paddle

    tensors = [*layer.parameters(), *layer.buffers()]
    with paddle.no_grad():
        copies = [t.clone() for t in tensors]
    now = paddle.get_rng_state()
    paddle.set_rng_state(rng)
    try:
        yield
    finally:
        paddle.set_rng_state(now)
        with paddle.no_grad():
            for t, copy in zip(tensors, copies, strict=True):
                if not np.array_equal(t.numpy().view(np.uint8), copy.numpy().view(np.uint8)):
                    t.set_value(copy)


def rerun(frame: ProgramFrame, pre: Callable[..., Any], post: Callable[..., Any]) -> Any:
    """The compiled layer's forward run eagerly on the frame's inputs, with ``pre``/``post``
    as the only forward hooks of its sublayers; returns its outputs."""
    import paddle

    forward = compiled_forward(frame.layer)
    if forward is None:
        raise TypeError("not a to_static layer")
    layers = frame.layer.sublayers(include_self=True)
    printed = io.StringIO()
    with (
        _vlog_off(), _state_kept(frame.layer, frame.rng), _only_hooks(layers, pre, post),
        paddle.no_grad(), warnings.catch_warnings(record=True),
        contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed),
    ):  # fmt: skip
        return forward.dygraph_function(*frame.args)
