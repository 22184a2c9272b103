"""``trace()``, the user's entry point: its arguments documented in one place, the session
(session.py) doing the work."""

from __future__ import annotations

import os
from typing import Any

from .session import TraceSession


def trace(
    model: Any = None, *, call_sites: bool | None = None, slots: bool | None = None,
    stats: bool = False, steps: int | None = None, every: int | None = None,
    run_dir: str | os.PathLike[str] | None = None, thresholds: dict[str, float] | None = None,
    ranks: Any = "all",
) -> TraceSession:  # fmt: skip
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
    ``stats``: record statistics of the real gradient on every edge (norm, max/mean |g|,
    zeros, NaN/Inf), where a NaN/Inf was born, and parameters whose gradient is all zeros
    (Paddle >= 3.0). ``steps``: keep the statistics of the last K backward passes, for the
    widget's step slider (memory: K times one step's edges).
    ``run_dir``: watch a whole training run and write its run log there (README "Watching a
    training run"): every backward's per-parameter gradient summary, anomalies, and a full
    capture (the graph; with ``stats``, its statistics) of step 0, every ``every``-th step
    (default 100) and the step after an anomaly; ``thresholds``: the anomaly rules' (see
    paddleviz_widget/runs/anomalies.py). Read it with ``paddleviz_widget.open_run``.
    Under ``paddle.distributed.launch`` each rank writes its own log in RUN_DIR/rank-NNNNN;
    ``ranks``: which ranks record ("all", a rank, a list; README "Multi-rank runs").
    """
    return TraceSession(
        model, call_sites=call_sites, slots=slots, stats=stats, steps=steps, every=every,
        run_dir=run_dir, thresholds=thresholds, ranks=ranks,
    )  # fmt: skip
