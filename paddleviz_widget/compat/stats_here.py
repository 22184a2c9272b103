"""Whether trace(stats=True) can be used in this process, asked by ``problems()`` of a graph
without statistics: on Paddle 2.6 (no GradNode post hooks) the way to them is an upgrade, not
the ``trace(model, stats=True)`` that the general advice names and 2.6 refuses."""

from __future__ import annotations

import sys


def no_stats_here() -> str | None:
    """What ``problems()`` says of a graph without statistics where this process's Paddle
    cannot make them; None where it can, or where Paddle is not imported (a saved graph read
    without it: the general advice stands)."""
    paddle = sys.modules.get("paddle")
    if paddle is None:
        return None
    from ..tracer.capture.stats_watch import post_hooks_available

    if post_hooks_available():
        return None
    return (
        "No gradient statistics in this graph, so nothing was checked: trace(stats=True) "
        f"reads them with GradNode post hooks, which paddlepaddle {paddle.__version__} does "
        "not have; upgrade to paddlepaddle>=3.0. On this version a watched run "
        "(`trace(model, run_dir=...)`) still checks every step's per-parameter gradients: "
        "open_run(...).problems()."
    )
