"""What trace() switches on for its block, each undone on exit through the session's restore
list: Paddle's per-op Python stacks (FLAGS_call_stack_level, for call sites) and its three
backward entry points, which then run through the session (session.py ``_backward``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .backward_args import as_list
from .backward_capture import accepts_dump_kwarg
from .stack_gate import CALL_STACK_FLAG, stacks_would_crash
from .stack_interrupts import sigint_outside_stacks

if TYPE_CHECKING:
    from .session import TraceSession


def set_call_stack_flag(session: TraceSession) -> None:
    """Per-op Python stacks (call sites) on, at level 3, for the session's first steps."""
    import paddle

    if not accepts_dump_kwarg(paddle.Tensor.backward):
        # Paddle < 3.3: the stacks are read from the backward dump's call-stack file, which it
        # has not; on, they were only a cost, kept by Paddle for the life of the process.
        return
    try:
        old = paddle.get_flags([CALL_STACK_FLAG])[CALL_STACK_FLAG]
    except (ValueError, KeyError):
        return  # this Paddle has no such flag: call sites fall back to layer call sites
    if int(old) < 3 and not stacks_would_crash(session.model):
        # A Ctrl-C inside Paddle's stack formatting would crash it (stack_interrupts.py)
        restore_sigint = sigint_outside_stacks()
        paddle.set_flags({CALL_STACK_FLAG: 3})
        # Not inside library layers: their ops' user line is the layer call's (stack_gate).
        session._gate.arm(inside=int(old), elsewhere=3)

        def stop() -> None:
            session._gate.disarm()
            paddle.set_flags({CALL_STACK_FLAG: old})
            restore_sigint()

        session._stop_stacks = stop
        session._restore.append(stop)


def patch_backward_entry_points(session: TraceSession) -> None:
    """Tensor.backward, paddle.autograd.backward and paddle.grad routed to the session's
    _backward (each put back on exit by the session's restore list)."""
    import paddle
    import paddle.autograd

    def wrapping(*, copies: bool, roots_of: Callable[[Any], list[Any]]) -> Any:
        def make(original: Any) -> Any:
            @functools.wraps(original)
            def wrapped(first: Any, *args: Any, **kwargs: Any) -> Any:
                call = (first, *args)
                return session._backward(original, roots_of(first), call, kwargs, copies=copies)

            return wrapped

        return make

    tensor_backward = wrapping(copies=False, roots_of=lambda tensor: [tensor])
    autograd_backward = wrapping(copies=False, roots_of=as_list)
    grad = wrapping(copies=True, roots_of=as_list)  # paddle.grad runs on node copies

    session._swap(paddle.Tensor, "backward", tensor_backward)
    session._swap(paddle.autograd, "backward", autograd_backward)
    original_grad = paddle.grad
    session._swap(paddle, "grad", grad)
    if getattr(paddle.autograd, "grad", None) is original_grad:
        session._restore.append(lambda: setattr(paddle.autograd, "grad", original_grad))
        paddle.autograd.grad = paddle.grad
