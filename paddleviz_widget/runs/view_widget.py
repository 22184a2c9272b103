"""RunWidget: the run explorer of a run log (``GraphWidget.from_run(path)``), an anywidget of
its own (front end: js/run_widget.ts).

The kernel sends the run's description and its matrices once (view_data.py); ``refresh()``
sends the steps appended since (view_append.py), or all again if the run changed otherwise.
The page asks for what one picked step needs (its per-parameter summary, and its graph when
the step was captured in full) with a custom message, so a run of 10,000 steps does not send
10,000 summaries up front.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import numpy as np
import traitlets

from ..export.bundle import bundle_source, widget_asset, widget_esm
from ..widget.options import check_keywords, css_height
from ..widget.own_layout import ClosesOwnLayout
from ..widget.resend import is_resend, resend_state
from .errors import RunLogError
from .ranks import RankedRun, open_any
from .step_pick import checked_layer, checked_step
from .view_append import appended
from .view_data import (
    SUMMARY_STATS,
    RunLike,
    run_buffers,
    run_description,
    run_line,
    step_index,
    summary_bytes,
)
from .view_ranks import missing_grad_diff, opening, rank_norms, ranks_description

#: The custom message's ``type``, both ways: the page sends ``{"type", "id", "step"}``; the
#: kernel answers ``{"type", "id", "step", "captured", "layer_rows"?, "error"?}`` with buffers
#: [summary float32 (4, P), graph JSON text (captured steps only)].
STEP_MESSAGE = "pvw-run-step"
#: The page's Refresh (button, or its timer while the run is being written): ``{"type"}``.
REFRESH_MESSAGE = "pvw-run-refresh"


def load_run(run: str | os.PathLike[str] | RunLike) -> RunLike | RankedRun:
    """A run log, or a multi-rank run (a dir of rank-NNNNN/ logs): ``run`` itself when it is
    one already, else the reader's ``open_run`` / ``open_ranks``."""
    if isinstance(run, (str, os.PathLike)):
        return open_any(run)
    if not all(hasattr(run, name) for name in ("steps", "params", "refresh", "param_stat")):
        raise TypeError(  # (it raised AttributeError: 'int' object has no attribute 'steps')
            f"from_run takes a run log's directory (a str or path: the run_dir of "
            f"trace(..., run_dir=) or --run-dir) or what open_run returned, not "
            f"{type(run).__name__}"
        )
    return run


def diff_reply(ranked: RankedRun, index: int) -> tuple[dict[str, Any], list[bytes]]:
    """The answer to the page's request for the graph difference of finding ``index``."""
    from ..export.layer_rows import layer_rows

    reply: dict[str, Any] = {"type": STEP_MESSAGE, "diff": index, "captured": False}
    report = ranked.report()
    if not 0 <= index < len(report) or report[index].kind != "missing_grad":
        return {**reply, "error": f"finding {index} has no graph difference"}, []
    try:
        doc, title = missing_grad_diff(ranked, report[index])
    except Exception as exc:  # no common capture, a damaged one: the page says so
        return {**reply, "error": f"no graph difference: {exc}"}, []
    try:
        rows: Any = layer_rows(doc)
    except ValueError as error:
        rows = {"error": f"no layer table: {error}"}
    text = json.dumps(doc, separators=(",", ":")).encode()
    return {**reply, "captured": True, "layer_rows": rows, "title": title}, [b"", text]


def graph_reply(
    run: RunLike, step: int, summary: Callable[[int], bytes]
) -> tuple[dict[str, Any], list[bytes]]:
    """The answer to the page's request for ``step`` (see STEP_MESSAGE); ``summary(step)``
    gives its per-parameter summary."""
    from ..export.layer_rows import layer_rows

    reply: dict[str, Any] = {"type": STEP_MESSAGE, "step": step, "captured": False}
    try:
        buffers = [summary(step)]
    except Exception as exc:  # a step the log does not hold (any more): the page says so
        return {**reply, "error": str(exc)}, []
    if step in set(run.captured_steps):
        try:
            graph = run.graph(step)
            buffers.append(json.dumps(graph, separators=(",", ":")).encode())
            reply["captured"] = True
            try:
                reply["layer_rows"] = layer_rows(graph)
            except ValueError as error:  # the Layers tab says why
                reply["layer_rows"] = {"error": f"no layer table: {error}"}
        except Exception as exc:  # the summary still shows; the page says why the graph cannot
            reply["graph_error"] = f"the graph of step {step} could not be read: {exc}"
    return reply, buffers


WHAT = "GraphWidget.from_run"  # the constructor users call, in its errors


class RunWidget(ClosesOwnLayout, anywidget.AnyWidget):
    """The run explorer of a run log written by ``trace(..., run_dir=...)``: a layer x step
    heatmap of gradient norms, the loss curve and a step picker; a fully captured step shows
    its backward graph, any other step its per-parameter summary.

    ``step`` (the picked step, -1 for none) and ``layer`` (the selected heatmap row, "" for
    none) follow the page and can be set from Python. ``refresh()`` reads what a running writer
    appended; the page also does so on its own every few seconds while the run is written.
    """

    _esm = widget_esm("run_widget.js")
    _bundle = traitlets.Unicode(bundle_source("run_widget.js")).tag(sync=True)
    _css = widget_asset("run_widget.css")

    #: The run's description (view_data.run_description).
    run = traitlets.Dict().tag(sync=True)
    _steps = traitlets.Bytes(b"").tag(sync=True)
    _loss = traitlets.Bytes(b"").tag(sync=True)
    _norms = traitlets.Bytes(b"").tag(sync=True)
    _bad = traitlets.Bytes(b"").tag(sync=True)
    height = traitlets.Unicode("720px").tag(sync=True)
    #: The picked step (-1: none yet; the page picks the first anomaly or the last capture).
    step = traitlets.Int(-1).tag(sync=True)
    #: The selected layer (a heatmap row), "" for none.
    layer = traitlets.Unicode("").tag(sync=True)
    #: The rank shown (a multi-rank run; -1 for a single-rank one).
    rank = traitlets.Int(-1).tag(sync=True)
    #: The ranks, their notes and the cross-rank report (view_ranks.ranks_description).
    _ranks = traitlets.Dict().tag(sync=True)
    #: float32 (ranks, layers): each rank's layer norms at ``_rank_step``.
    _rank_norms = traitlets.Bytes(b"").tag(sync=True)
    _rank_step = traitlets.Int(-1).tag(sync=True)

    def __init__(
        self, run: str | os.PathLike[str] | RunLike, *, height: str | int = "720px", **kwargs: Any
    ) -> None:
        height = css_height(height, what=WHAT)
        # the run's own state is read from the log: the rest are the traits a user may set
        named = ("height", "step", "layer", "rank")
        check_keywords(kwargs, set(self.trait_names()) - {"run"}, named, what=WHAT)
        loaded = load_run(run)
        # the user's step and layer, checked below
        wanted = {k: kwargs[k] for k in ("step", "layer") if k in kwargs}
        self.ranked: RankedRun | None = loaded if isinstance(loaded, RankedRun) else None
        extra: dict[str, Any] = {}
        if self.ranked is not None:
            shown, step = opening(self.ranked)
            if "rank" in kwargs:  # from_run(..., rank=1): that rank, at the opening step
                shown = self._valid_rank({"value": kwargs.pop("rank")})
            self._log = self.ranked.rank(shown)
            extra = {"rank": shown, "step": kwargs.pop("step", step)}
        else:
            self._log = loaded  # type: ignore[assignment]
        if "step" in wanted:
            checked_step(self._log, wanted["step"])
        if "layer" in wanted:
            checked_layer(self._log, wanted["layer"])
        super().__init__(height=height, **kwargs, **extra, **self._state())
        self._steps_checked = True  # from now on, a step set in Python is checked
        if self.ranked is not None and (not self._ranks or self._rank_step != self.step):
            self._rank_state()
        self.on_msg(self._on_msg)

    def __repr__(self) -> str:  # a prompt or a saved notebook's text: what the run holds
        if self.ranked is None:
            return run_line(self.run)
        return run_line(self.run, len(self.ranked.ranks), self.ranked.path, self.rank)

    @traitlets.validate("rank")
    def _valid_rank(self, proposal: Any) -> int:
        if isinstance(proposal["value"], bool):
            raise traitlets.TraitError(f"rank is a rank's number (rank=1), got {proposal['value']}")
        try:  # a NumPy integer too
            value = operator.index(proposal["value"])
        except TypeError:
            raise traitlets.TraitError(
                f"rank is a rank's number (rank=1), got {proposal['value']!r}"
            ) from None
        if self.ranked is not None and value not in self.ranked.ranks:
            raise traitlets.TraitError(
                f"rank {value} is not in this run: its ranks are {self.ranked.ranks}"
            )
        return value

    @traitlets.observe("rank")
    def _rank_changed(self, change: Any) -> None:
        if self.ranked is None or change["new"] == change["old"]:
            return
        try:
            self._log = self.ranked.rank(change["new"])
        except RunLogError as error:  # its dir now holds another run: said, the rank shown kept
            self._said(error)
            self.rank = change["old"]
            return
        with self.hold_sync():
            for name, value in self._state().items():
                setattr(self, name, value)

    @traitlets.validate("step", "layer")
    def _check_pick(self, proposal: Any) -> Any:
        # Set in Python after the start: a step or layer the run holds (step_pick.py); the
        # page's own picks (of what it was sent) are not checked.
        name, value = proposal["trait"].name, proposal["value"]
        if not getattr(self, "_steps_checked", False) or name in self._property_lock:
            return value
        return (checked_step if name == "step" else checked_layer)(self._log, value)

    @traitlets.observe("step")
    def _step_changed(self, change: Any) -> None:
        if self.ranked is not None:
            try:
                self._rank_state()
            except RunLogError as error:  # (a change from the page: never raised in its comm)
                self._said(error)

    def _said(self, error: Exception) -> None:
        """An error reading the run, on the page's status line."""
        self.send({"type": REFRESH_MESSAGE, "error": str(error)})

    def _rank_state(self) -> None:
        """The ranks' description and the rank x layer norms at the picked step."""
        assert self.ranked is not None
        with self.hold_sync():
            self._ranks = ranks_description(self.ranked, self.rank)
            self._rank_norms = rank_norms(self.ranked, self.step)
            self._rank_step = self.step

    @property
    def log(self) -> RunLike:
        """The run log shown (the reader's RunLog; of rank ``rank`` in a multi-rank run)."""
        return self._log

    def _state(self) -> dict[str, Any]:
        buffers = run_buffers(self._log)
        self._stats: dict[str, np.ndarray] = {}
        return {
            "run": run_description(self._log),
            "_steps": buffers["steps"],
            "_loss": buffers["loss"],
            "_norms": buffers["norms"],
            "_bad": buffers["bad"],
        }

    def refresh(self) -> bool:
        """Read what the run's writer appended since; True if anything was new. The page keeps
        its view (zoom, scroll, picked step, selection) and shows the new steps."""
        if self.ranked is not None:
            if not self.ranked.refresh():
                return False
            self._rank_state()
        elif not self._log.refresh():
            return False
        state = self._state()
        change = appended({name: getattr(self, name) for name in state}, state)
        if change is None:
            with self.hold_sync():
                for name, value in state.items():
                    setattr(self, name, value)
            return True
        # Only the new steps go to the page (view_append.py says why); the traits take the whole
        # state unsent: ipywidgets sends no value that equals its lock (the page's own, after
        # the page joined the message's parts).
        with self._lock_property(**{**state, "run": json.loads(json.dumps(state["run"]))}):
            for name, value in state.items():
                setattr(self, name, value)
        self.send(*change)
        return True

    def _summary(self, step: int) -> bytes:
        at = step_index(self._log, step)
        if self.ranked is not None:  # ranks switch often: only the part holding the step
            rows = np.stack([np.asarray(self._log.param_row(s, step), np.float64)
                             for s in SUMMARY_STATS])  # fmt: skip
            return summary_bytes(rows)
        # Each stat read once per refresh: a click then costs one row of each.
        for stat in SUMMARY_STATS:
            if stat not in self._stats:
                self._stats[stat] = np.asarray(self._log.param_stat(stat))
        rows = np.stack([np.asarray(self._stats[s][at], np.float64) for s in SUMMARY_STATS])
        return summary_bytes(rows)  # exact counts: float64 past 2**24

    def _on_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, Mapping):
            return
        kind = content.get("type")
        if is_resend(content):  # the page missed what was sent (widget/resend.py)
            resend_state(self)
        elif kind == REFRESH_MESSAGE:
            try:
                self.refresh()
            except Exception as exc:  # a half-written file: said on the page, never raised here
                self.send({"type": REFRESH_MESSAGE, "error": str(exc)})
        elif kind == STEP_MESSAGE:
            step, diff = content.get("step"), content.get("diff")
            if isinstance(diff, int) and self.ranked is not None:
                reply, buffers = diff_reply(self.ranked, diff)
                self.send({**reply, "id": content.get("id")}, buffers)
            elif isinstance(step, int) and not isinstance(step, bool):
                self._reply_step(step, content.get("id"))

    def _reply_step(self, step: int, request: Any) -> None:
        reply, buffers = graph_reply(self._log, step, self._summary)
        self.send({**reply, "id": request}, buffers)
