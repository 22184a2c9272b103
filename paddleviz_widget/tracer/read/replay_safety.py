"""Which graphs must not be replayed, and why, in the one line the widget shows.

A replay (``paddle.grad(..., retain_graph=True)``) is side-effect free only while every node's
backward is Paddle's own kernel. A PyLayer's backward is the user's Python: recompute's
reentrant backward calls ``paddle.autograd.backward`` itself and writes ``.grad`` on every
parameter it hides, other PyLayers may count calls, draw random numbers or log. And once a
plain ``backward()`` has freed such a graph, Paddle's copy of the PyLayer node dereferences
its released context and kills the process (3.3.1) instead of raising. Nothing in Python says
whether a graph was freed, so the node type alone decides: no replay through a PyLayer.
Nor through a compiled program (``paddle.jit.to_static``): its node runs the program's backward
once and then the user's own ``backward()`` fails ("Tensor holds no memory", Paddle 3.3.1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .program_nodes import is_program_node

PYLAYER_PREFIX = "GradNodePyLayer"


def is_pylayer(name: str) -> bool:
    return name.startswith(PYLAYER_PREFIX)


def pylayer_label(name: str) -> str:
    """Turn "GradNodePyLayer_RecomputeFunction" into "RecomputeFunction"."""
    # Paddle < 3.3 names the node after the backward class: "..._Cube_backward".
    label = name[len(PYLAYER_PREFIX) :].lstrip("_")
    return label.removesuffix("_backward") or "PyLayer"


def replay_refusal(node_names: Iterable[str], *, traced: bool = False) -> str | None:
    """The notice for a graph the replay must not touch, or None if it may. ``traced``: a
    trace() saw the forward, so the advice is to run the backward inside it."""
    names = list(node_names)
    kinds = Counter(pylayer_label(n) for n in names if is_pylayer(n))
    programs = sum(1 for n in names if is_program_node(n))
    if not kinds and not programs:
        return None
    advice = (
        "run backward() inside your `with trace(...)` block, then build the graph"
        if traced
        else "wrap forward and backward in `with paddleviz_widget.trace(model):`"
    )
    if programs:
        return (
            f"Gradient shapes not replayed: this graph holds {programs} compiled program "
            f"node(s) (paddle.jit.to_static), whose backward can run only once; {advice} "
            "to see them."
        )
    listed = ", ".join(f"{k} ×{c}" if c > 1 else k for k, c in sorted(kinds.items()))
    return (
        f"Gradient shapes not replayed: this graph holds PyLayer nodes ({listed}) whose "
        f"backward runs Python code; {advice} to see them."
    )
