"""trace(run_dir=...)'s backward: the plain backward and a summary between full captures,
the session's full capture (and the step's graph document) on the others (runs/watch.py)."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from ...compat.zlib_guard import refuse_broken_zlib
from ...gc_pause import gc_paused

if TYPE_CHECKING:
    from ...runs.watch import RunWatch
    from .session import TraceSession


def watch_of(
    model: Any, every: int | None, run_dir: str | os.PathLike[str] | None,
    thresholds: dict[str, float] | None, ranks: Any = "all",
) -> RunWatch | None:  # fmt: skip
    if run_dir is None:
        if every is not None or thresholds is not None or not _all(ranks):
            raise ValueError(
                "every=, thresholds= and ranks= are for watching a run: add run_dir=, e.g. "
                "trace(model, stats=True, every=100, run_dir='runs/exp1')"
            )
        return None
    if not isinstance(run_dir, (str, os.PathLike)):  # else pathlib's words, naming no option
        raise TypeError(
            f"run_dir is the run log's directory, a path (run_dir='runs/exp1'), got "
            f"{type(run_dir).__name__} {run_dir!r}"
        )
    refuse_broken_zlib()  # before pyarrow is imported (compat/zlib_guard.py)
    from ...runs.watch import RunWatch

    return RunWatch(model, run_dir, every, thresholds, ranks=ranks)


def _all(ranks: Any) -> bool:
    return isinstance(ranks, str) and ranks == "all"


def discovering_watch(
    run_dir: str | os.PathLike[str], every: int, ranks: Any = "all"
) -> RunWatch:  # fmt: skip
    """The CLI's watch: no model given; the one the first backward reaches is watched."""
    refuse_broken_zlib()
    from ...runs.watch import RunWatch

    return RunWatch(None, run_dir, every, None, discover=True, ranks=ranks)


def watched_backward(
    session: TraceSession, original: Any, roots: list[Any], args: tuple[Any, ...],
    kwargs: dict[str, Any], *, copies: bool,
) -> Any:  # fmt: skip
    if copies:  # paddle.grad sets no .grad: not a training step
        return original(*args, **kwargs)
    gate = session.sigint_gate  # a Ctrl-C meanwhile waits for the step's record (sigint_gate)
    if gate.owner != threading.get_ident():  # a thread's but the main one's: not its Ctrl-C
        return _step(session, original, roots, args, kwargs)
    gate.closed = True
    try:
        return _step(session, original, roots, args, kwargs)
    finally:
        gate.open()


def _step(
    session: TraceSession, original: Any, roots: list[Any], args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:  # fmt: skip
    watch = session.watch
    assert watch is not None
    if watch.writer is None:  # the first step (it may walk the graph for the model)
        with gc_paused():
            if not watch.ready(roots):
                return original(*args, **kwargs)
    watch.before_backward()
    if not watch.full_due():  # a step between captures: no collector pause, few calls
        # A backward called inside this one (a reentrant recompute's PyLayer runs its block's
        # backward) is part of this step, not a step of its own: the session passes it on.
        session._in_backward = True
        try:
            result = original(*args, **kwargs)
        finally:
            session._in_backward = False
        _record_between(session, watch, roots)
        return result
    # Walks, hooks and their records allocate ~100k objects without cycles: with the
    # collector on, its full passes over the user's heap cost more than all of it.
    with gc_paused():
        return _captured(session, watch, original, roots, args, kwargs)


def _captured(
    session: TraceSession, watch: RunWatch, original: Any, roots: list[Any],
    args: tuple[Any, ...], kwargs: dict[str, Any],
) -> Any:  # fmt: skip
    """A fully captured step: the session's capture, then the step's record and graph."""
    result = session._captured_backward(original, roots, args, kwargs, copies=False)
    # The watch builds the step's graph (runs/ sits above the tracer; capture never imports
    # build), from the walk this backward made (one root: the graph build_graph would walk)
    record = session.records[-1] if session.records else None
    walk = record.walk() if record is not None and len(roots) == 1 else None
    try:
        _record(session, watch, roots, full=True, walk=walk)
    finally:
        for kept in session.records:
            kept.drop_walk()
    session._settle(0)  # the captured graph is written: hold none of its GradNodes
    session.records.clear()
    return result


def _record(
    session: TraceSession, watch: RunWatch, roots: list[Any], *, full: bool, walk: Any = None
) -> None:
    """The step's summary (and capture); a failure of ours never reaches the training."""
    try:
        scale = session.scaled.of(roots)  # a GradScaler's scaled loss: its scale
        watch.after_backward(roots, full=full, model=session.model, walk=walk, scale=scale)
        _arm_recorder(session)
    except Exception as error:  # noqa: BLE001
        _failed(session, watch, error)


def _record_between(session: TraceSession, watch: RunWatch, roots: list[Any]) -> None:
    """_record of a step between captures in fewer calls (each costs microseconds right after
    Paddle's backward): the layer hooks are left alone while _arm_recorder has them off and
    the next step is not a capture (nothing else starts them between)."""
    try:
        scale = session.scaled.of(roots)
        if scale is None:
            watch.between_captures(roots)
        else:
            watch.after_backward(roots, model=session.model, scale=scale)
        if not session._hooks_off or watch.full_due():
            _arm_recorder(session)
    except Exception as error:  # noqa: BLE001
        _failed(session, watch, error)


def _failed(session: TraceSession, watch: RunWatch, error: Exception) -> None:
    watch.fail(error)
    if session._recorder is not None and session._recorder.recording:
        session._recorder.pause()
    if session._finite is not None:
        session._finite.stop()


def _arm_recorder(session: TraceSession) -> None:
    """Layer hooks (scopes, forward NaN/Inf checks) only in the forwards of fully captured
    steps: between them a step costs no Python per layer call. A forward check left over from
    a summary-only step is dropped, so a capture never names another step's culprit."""
    recorder = session._recorder
    if recorder is None or session.watch is None:
        return
    finite = session._finite
    if session.watch.full_due():
        session._hooks_off = False
        if not recorder.recording:
            recorder.start()
        if finite is not None and not finite.started:
            finite.take()
            finite.start()
    else:
        if recorder.recording:
            recorder.pause()
        if finite is not None and finite.started:
            finite.stop()
        session._hooks_off = True
