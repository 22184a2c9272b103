"""``step`` and ``layer`` set in Python (``GraphWidget.from_run(path, step=N, layer=...)``,
``w.step = N``, ``w.layer = "fc1"``), checked against the run: a step past the end, or one
never recorded, was taken without a word and the page showed "Step 99999 is not recorded" (or,
at the opening, quietly another step); a layer the run does not have selected nothing. The
page's own picks are not checked (they are recorded steps and layers of what it was sent)."""

from __future__ import annotations

import difflib
from typing import Any

import numpy as np
import traitlets

from ..errors import RunLogError, shown
from .status import effective_status
from .view_data import RunLike

#: How many stretches of recorded steps an error lists before "...".
LISTED = 4


class StepError(traitlets.TraitError, RunLogError):
    """A step or layer the run log does not hold (a RunLogError, so a ValueError too)."""


def checked_layer(run: RunLike, value: Any) -> str:
    """``value`` if it is one of ``run``'s layers or "" (none); else StepError naming it and
    the layers closest to it."""
    if not isinstance(value, str):
        raise StepError(f'layer is a layer\'s name (layer="fc1"), got {shown(value)}')
    if value == "" or value in run.layers:
        return value
    close = difflib.get_close_matches(value, [str(x) for x in run.layers], n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    first = ", ".join(repr(str(x)) for x in run.layers[:5])
    more = ", ..." if len(run.layers) > 5 else ""
    raise StepError(
        f"layer {shown(value)} is not a layer of run log {run.path}{hint} (its "
        f'{len(run.layers)} layers: {first}{more}; "" for none)'
    )


def checked_step(run: RunLike, value: Any) -> int:
    """``value`` if it is a recorded step of ``run``, -1 (the page picks the opening step), or,
    while the run is being written, a step after its last one (it may come: the page shows it
    once a refresh brings it); else StepError naming the step and the steps there are."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise StepError(f"step is a recorded step's number (step=250), got {shown(value)}")
    step = int(value)
    if step == -1:
        return step
    steps = np.asarray(run.steps, np.int64)
    at = int(np.searchsorted(steps, step))
    if at < len(steps) and int(steps[at]) == step:
        return step
    running = effective_status(dict(run.meta)) == "running"
    if running and step >= 0 and (len(steps) == 0 or step > int(steps[-1])):
        return step  # not written yet: it may come
    where = f"run log {run.path}"
    if len(steps) == 0:
        held = "no step recorded yet"
    else:
        held = f"its recorded steps are {stretches(steps)}"
    later = (
        "; it is still being written: a step after the last one is taken and shown once written"
        if running
        else ""
    )
    raise StepError(
        f"step {step} is not in {where}: {held}{later}. Give one of them, or -1 for the step "
        "the explorer opens on"
    )


def stretches(steps: np.ndarray) -> str:
    """``0–99, 200–399 (300 steps)``: the runs of consecutive steps, the first few."""
    breaks = np.flatnonzero(np.diff(steps) != 1)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(steps) - 1]))
    parts = [
        str(int(steps[a])) if a == b else f"{int(steps[a])}\u2013{int(steps[b])}"
        for a, b in zip(starts[:LISTED], ends[:LISTED])
    ]
    more = ", \u2026" if len(starts) > LISTED else ""
    count = f"{len(steps):,} step{'s' if len(steps) != 1 else ''}"
    return f"{', '.join(parts)}{more} ({count})"
