"""The GradNodes whose incoming gradient a hook of the user's replaced in this backward.

``t.register_hook(fn)`` runs ``fn`` on ``t``'s gradient after the op that used ``t`` sent it
and before ``t``'s own GradNode receives it; a gradient ``fn`` returns replaces it. The
statistics hooks see what the senders sent (the edge's gradient), so a rule comparing what a
node received with what it sent (zeros start here, the first NaN/Inf made here) would blame
the node for what the user's hook did: a ``g * 0`` mask, "the zeros start here" at the op after
it; ``g / 0``, "the first NaN/Inf was made here from finite ones".

Paddle's GradNode offers no way to read a node's hooks, so trace(stats=True) watches
``Tensor.register_hook`` while it runs (a hook set before the block is not seen) and wraps each
hook: when it returns a new gradient, its node is noted in ``changed`` (cleared before each
traced backward). A hook that returns None or the gradient it was given changes nothing and is
not noted: oracles and logging hooks leave the statistics as they are. The wrapper holds no
node: a hook runs only while its node is alive, so the noted address is that node's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..read.grad_node import grad_node_of


class UserHooks:
    def __init__(self) -> None:
        self.changed: set[int] = set()  # node ptrs; filled while a backward runs

    def watch(self, swap: Callable[[Any, str, Callable[[Any], Any]], None],
              ours: Callable[[], bool]) -> None:  # fmt: skip
        """Route Tensor.register_hook through here (``swap``: the session's, undone on exit);
        ``ours``: True while our own backward code registers hooks (statistics)."""
        import paddle

        changed = self.changed

        def make(original: Any) -> Any:
            @functools.wraps(original)
            def register_hook(tensor: Any, hook: Any) -> Any:
                node = grad_node_of(tensor) if not ours() else None
                if node is None:
                    return original(tensor, hook)
                ptr = int(node.node_ptr())

                @functools.wraps(hook)
                def noted(grad: Any) -> Any:
                    result = hook(grad)
                    if result is not None and result is not grad:
                        changed.add(ptr)
                    return result

                return original(tensor, noted)

            return register_hook

        swap(paddle.Tensor, "register_hook", make)
