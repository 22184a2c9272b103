"""What ``python -m paddleviz_widget`` keeps of a script's backward calls, and how it writes it.

Each graph is built from the tensors its backward call started from, while the trace() that
recorded the call still holds its record: the document ``build_graph(loss)`` gives right after
``loss.backward()`` inside trace(), minus the replay build_graph tries on a graph nothing
recorded (that would run Paddle on the script's graph). Only what will be written is kept: by
default the last call's tensors (its graph is built once the script ends, so earlier calls
cost nothing), with ``--step N`` the graph of call N, with ``--all`` each graph is written to a
temporary directory beside the output as soon as it is built, and the files are moved into
place only once the script succeeded. Calls made inside a trace() of the script's own stay
that session's to record, as without the CLI (BackwardCalls).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..export.save import move_into_place, save_graph
from ..tracer import trace_graph
from ..tracer.capture.session import RECENT_SESSIONS, TraceSession

WHAT_COUNTS = "loss.backward(), paddle.autograd.backward(...) and paddle.grad(...)"


def no_backward_call(what: str) -> str:
    """Why there is nothing to write, said the same way by the graph mode and the run mode. A
    script in static-graph mode (paddle.enable_static(), the executor running programs) makes
    no backward call this command can see: said so, not "run the backward in it"."""
    import paddle

    if not paddle.in_dynamic_mode():
        return (
            f"the script runs in static-graph mode (paddle.enable_static()), so there is {what}: "
            "its backward is a program the executor runs, which this command cannot watch; it "
            f"watches dynamic-graph backward calls ({WHAT_COUNTS})"
        )
    return (
        f"the script made no backward call ({WHAT_COUNTS}), so there is {what}: run the "
        "forward and the backward of your model in it"
    )


class CliError(Exception):
    """A run that cannot give the graph asked for; the message says why and what to do."""


@contextlib.contextmanager
def consulted_first(session: TraceSession) -> Iterator[None]:
    """``session`` is the first that build_graph asks about a graph, for a moment: the one
    that recorded it, even if the script has since opened more trace() blocks than
    build_graph keeps in mind. The order the script's own build_graph calls see is restored."""
    before = list(RECENT_SESSIONS.newest_first())[::-1]
    RECENT_SESSIONS.add(session)
    try:
        yield
    finally:
        RECENT_SESSIONS.clear()
        for kept in before:
            RECENT_SESSIONS.add(kept)


class BackwardCalls(TraceSession):
    """A trace() that counts the script's backward calls (1-based, in the order they return)
    and hands ``seen(number, roots, recorder)`` the tensors each started from and the session
    that recorded it (this one, or a trace() of the script's own).

    A backward run inside another one (paddle.grad inside a PyLayer's backward) is part of the
    outer call. A call made through a trace() of the script's own is left to that session to
    record, as it would be without the CLI; that session files its record only once the call
    has returned to it, so the graph is not ``settled`` yet: ``settle()`` is called when the
    next call starts (the end of the script is the caller's to settle)."""

    def __init__(
        self, seen: Callable[[int, list[Any], TraceSession], None], settle: Callable[[], None]
    ) -> None:
        super().__init__()
        self._seen = seen
        self._settle_pending = settle
        self._inside = False
        self.calls = 0

    def _backward(
        self, original: Any, roots: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any],
        *, copies: bool,
    ) -> Any:  # fmt: skip
        if self._inside:
            return original(*args, **kwargs)
        others = [s for s in RECENT_SESSIONS.newest_first() if s is not self and s._in_backward]
        self._settle_pending()  # the previous call is recorded by now, by whichever session
        self._inside = True
        try:
            if others:
                result = original(*args, **kwargs)
            else:
                result = super()._backward(original, roots, args, kwargs, copies=copies)
        finally:
            self._inside = False
        self.calls += 1
        self._seen(self.calls, roots, others[0] if others else self)
        return result


def numbered(output: Path, number: int) -> Path:
    """``graph.html`` -> ``graph_001.html``: the file of backward call ``number`` (--all)."""
    return output.with_name(f"{output.stem}_{number:03d}{output.suffix}")


class GraphCollector:
    """Builds and writes the graphs of the calls asked for: ``step`` (1-based; None: the
    last), or every one (``every``)."""

    def __init__(self, output: Path, *, step: int | None = None, every: bool = False) -> None:
        self.output = output
        self.step = step
        self.every = every
        # Calls whose graph is wanted and not built yet: (number, the tensors it started from,
        # the session that recorded it).
        self._pending: list[tuple[int, list[Any], TraceSession]] = []
        self._payload: dict[str, Any] | None = None  # the one graph to write (not --all)
        self._error: str | None = None  # the first failure to build or write a graph
        self._staging: Path | None = None  # --all: where the files wait for the script's end

    def seen(self, number: int, roots: list[Any], recorder: TraceSession) -> None:
        """Called after each backward call; builds its graph now if it is wanted and its
        record filed (by ``recorder``, once it is a BackwardCalls: the CLI's own session)."""
        if self.every or number == self.step:
            self._pending.append((number, roots, recorder))
            if isinstance(recorder, BackwardCalls):
                self.settle()
        elif self.step is None:
            self._pending = [(number, roots, recorder)]  # the last one so far: built at the end

    def settle(self) -> None:
        """Build the pending graphs that are to be built before the end (--all, --step).
        Never raises into the user's script: a failure is reported once it has ended."""
        if self.every or self.step is not None:
            self.finish()

    def finish(self) -> None:
        """Build every pending graph (--all: and stage its file). Call it inside the trace."""
        pending, self._pending = self._pending, []
        for number, roots, recorder in pending:
            if self._error is not None:
                return
            try:
                # No replay: the graph is what the trace recorded (a replay would run Paddle on
                # the script's graph, maybe inside the log capture of the script's own trace).
                y = roots[0] if len(roots) == 1 else list(roots)
                with consulted_first(recorder):
                    payload = trace_graph(y, replay=False).to_dict()
                if self.every:
                    save_graph(payload, self._staged(number))
                else:
                    self._payload = payload
            except Exception as error:  # noqa: BLE001 - reported after the script, never in it
                self._error = f"the graph of backward call {number} could not be made: {error}"

    def write(self, calls: int) -> list[Path]:
        """Put the graphs in place once the script succeeded; the files written."""
        if calls == 0:
            raise CliError(no_backward_call("no graph to write"))
        if self.step is not None and self.step > calls:
            raise CliError(
                f"--step {self.step}: the script made {calls} backward call"
                f"{'s' if calls != 1 else ''}; pass --step 1 to --step {calls}"
            )
        if self._error is not None:
            raise CliError(self._error)
        if not self.every:
            assert self._payload is not None
            return [save_graph(self._payload, self.output)]
        written = []
        for number in range(1, calls + 1):
            move_into_place(self._staged(number), numbered(self.output, number))
            written.append(numbered(self.output, number))
        return written

    def discard(self) -> None:
        """Forget the tensors held and remove whatever was staged and not moved into place."""
        self._pending, self._payload = [], None
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def _staged(self, number: int) -> Path:
        if self._staging is None:
            prefix = f".{self.output.stem}-"
            self._staging = Path(tempfile.mkdtemp(prefix=prefix, dir=self.output.parent))
        return self._staging / numbered(self.output, number).name
