"""paddle.grad's copies of the graph, freed while our statistics hooks still have an owner.

``paddle.grad`` runs on copies of the GradNodes, post hooks included. When it raises (an
input it cannot reach, ``no_grad_vars`` cutting the path, a user hook that raises), Paddle
keeps those copies until the *next* ``paddle.grad`` call, which frees them with the GIL
released. Once trace(stats=True) has taken its hooks off the original nodes, the copies hold
the hooks' last references, and freeing a Python object there ends the process ("Fatal
Python error: PyThreadState_Get", Paddle 3.3.1): a failed paddle.grad inside the block made
the user's next paddle.grad, anywhere, abort. Untraced, the same calls raise and go on.

``free_failed_copies`` runs one paddle.grad of a throwaway one-op graph right after the
failure, while the originals still hold the hooks: Paddle frees the leftover copies then, and
the hooks' references drop to the originals', which disarm() removes with the GIL held.
"""

from __future__ import annotations

from .vlog import vlog_silenced


def free_failed_copies() -> None:
    import paddle
    import paddle.base.dygraph.base as dygraph_base

    grad = dygraph_base.grad  # the unpatched entry point: not a backward of the user's
    try:
        with vlog_silenced(), paddle.set_grad_enabled(True):
            x = paddle.ones([1])
            x.stop_gradient = False
            grad([x * 2.0], [x])
    except Exception:  # noqa: BLE001 - the user's own error is the one to see
        pass
