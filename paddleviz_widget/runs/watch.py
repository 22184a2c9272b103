"""The watch mode of ``trace(model, every=N, run_dir=...)``: what a training run records each
step (summary.py, anomalies.py) and which steps get a full capture, written to the run log
(log_writer.py).

A step is one backward call (Tensor.backward / paddle.autograd.backward). Full captures: step
0, every ``every``-th step, and the step after one where an anomaly started. The session
(tracer/capture/session.py) asks ``full_due()`` before each backward and runs it plainly
(no VLOG, no dump, no GradNode hooks, no layer hooks in the forward) when it is not.
"""

from __future__ import annotations

import contextlib
import os
import traceback
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..stderr_line import say
from .anomalies import AnomalyFinder, thresholds_from
from .clean_step import CleanStep
from .format import flush_every, rank_dir
from .job_rank import job_rank, recorded_ranks
from .log_writer import RunLogWriter
from .no_sync import NoSync, data_parallel_of
from .params import layer_order, model_params
from .rank_dirs import check_run_dir, siblings_message, siblings_seen
from .rank_writer import RankLogWriter
from .summary import GradSummary
from .unwatched import Unwatched, unwatched_line
from .went_zero import WentZero
from .write_failure import failure_words

if TYPE_CHECKING:
    from ..tracer.capture.loss_scaling import LossScale

DEFAULT_EVERY = 100
# The runs this process is writing: a child of os.fork() drops them (_forked_child).
_WRITING: weakref.WeakSet[RunWatch] = weakref.WeakSet()


class RunWatch:
    def __init__(
        self, model: Any, run_dir: str | os.PathLike[str], every: int | None,
        thresholds: dict[str, float] | None, *, discover: bool = False, ranks: Any = "all",
    ) -> None:  # fmt: skip
        """``discover``: no model given (the CLI): the nn.Layer whose parameters the first
        backward's graph reaches is watched from that step on. ``ranks``: in a launched job,
        the ranks that record ("all", a rank or a list); the others do nothing at all
        (``recorded`` False: the session stays off)."""
        if model is None and not discover:
            raise ValueError(
                "trace(run_dir=...) watches a model's parameters: pass the model, "
                "`with trace(model, stats=True, run_dir=...)`"
            )
        every = DEFAULT_EVERY if every is None else every
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be a whole number of steps >= 1, got {every!r}")
        self.model = model
        # ~ as the shell would (--run-dir=~/runs/x reaches us unexpanded). Absolute now: a
        # script that changes directory (os.chdir, Hydra's run dir) while it trains must not
        # move its log, nor split it between two directories.
        self.run_dir = Path(run_dir).expanduser().absolute()
        self.every = every
        self.thresholds = thresholds_from(thresholds)
        self.step = 0  # the step the next backward is
        self._after_anomaly = False
        self._went_zero = WentZero([], [], 1)  # the model's once started
        # Whether full captures have edge statistics (the session's stats, set on entering):
        # without them (Paddle 2.6, stats=False) none confirms a layer gone to 0 (went_zero.py)
        self.capture_stats = True
        self.writer: RunLogWriter | None = None
        self._clean: CleanStep | None = None  # a clean step in one call, once started
        self._local_steps = False  # a DataParallel's no_sync() steps are watched (no_sync.py)
        self._gave_up = False
        self.forked_away = False  # this is a child of os.fork() of the process that logs
        # What ended the run early when no exception left the with block (the CLI's script's
        # own, caught and printed by script_runner): close() records it.
        self.ended_by: BaseException | None = None
        self.job = job_rank()  # from the launcher's environment: no communication
        self.ranks = recorded_ranks(ranks, self.job.world_size)
        self.recorded = not self.job.launched or self.ranks is None or self.job.rank in self.ranks
        if self.recorded:
            check_run_dir(self.run_dir, self.job)  # before the training; the same on every rank

    def ready(self, roots: list[Any]) -> bool:
        """Whether this backward is recorded: the model is known (or found now)."""
        if self.writer is not None:
            return True
        if self.model is None and not self._gave_up:
            # The layer called in the forward names the capture's layer groups: a DataParallel
            # around the one found (its parameters are the same) is the one to name them by.
            found = _model_of(roots)
            self.model = data_parallel_of(found) or found
            if self.model is None:
                self._gave_up = True
                say(f"paddleviz_widget: no run log written to {self.run_dir}: the first "
                    "backward's graph reaches no nn.Layer's parameters; watch the model "
                    "with trace(model, run_dir=...) in the script")  # fmt: skip
        if self.model is not None:
            try:
                self.start()
            except Exception as error:  # noqa: BLE001 (e.g. the run dir taken meanwhile)
                self.fail(error)
        return self.writer is not None

    def start(self) -> None:
        if self.model is None:
            return  # discovered at the first backward (ready())
        infos, tensors = model_params(self.model)
        layers = layer_order(infos)
        self._unwatched = Unwatched(tensors, [info.name for info in infos])
        self._summary = GradSummary(tensors)
        self._finder = AnomalyFinder(infos, layers, self.thresholds)
        self._went_zero = WentZero(infos, layers, int(self.thresholds["spike_warmup"]))
        job = self.job
        if not self.recorded:
            return
        check_run_dir(self.run_dir, job)
        self.writer = (RankLogWriter if job.launched else RunLogWriter)(
            rank_dir(self.run_dir, job.rank) if job.launched else self.run_dir,
            params=infos, layers=layers, every=self.every, thresholds=self.thresholds,
            rank=job.rank, world_size=job.world_size, run_id=job.run_id, ranks=self.ranks,
            flush_every=flush_every(len(infos)),
        )  # fmt: skip
        _WRITING.add(self)
        if self._summary.compiles:
            self._clean = CleanStep(self._summary, self.writer, self._finder)
        self._no_sync = NoSync(self.model if job.launched else None, tensors)
        if self._no_sync.watched:  # the same list, written with run.json (parts, the end)
            self.writer.meta["no_sync"] = self._no_sync.steps
            self._local_steps = True

    def before_backward(self) -> None:
        """Before a recorded backward: after a no_sync() step, were its gradients kept?"""
        if self._local_steps and self.writer is not None:  # (else no step is local)
            try:
                self._no_sync.before_backward()
            except Exception as error:  # noqa: BLE001 (never into the training)
                self.fail(error)

    def full_due(self) -> bool:
        """Whether the next backward gets the full capture."""
        return self.step % self.every == 0 or self._after_anomaly or self._went_zero_due()

    def after_backward(
        self, roots: list[Any], *, full: bool = False, model: Any = None, walk: Any = None,
        scale: LossScale | None = None,
    ) -> None:  # fmt: skip
        """Record the step whose backward just ran; ``full``: with its graph document (a full
        capture: the session annotated this backward), ``model`` naming its parameters,
        ``walk`` the backward's own walk of the graph of ``roots[0]`` (None: walked again);
        ``scale``: a GradScaler scaled the loss, and so every gradient: recorded divided by
        it, as the optimizer applies them (tracer/capture/loss_scaling.py)."""
        if self.writer is None:
            return
        # (no paddle.no_grad() here: the in-place path runs no Paddle op; the tensor-op path
        # and the loss of a device tensor take it themselves)
        # no all-reduce: its norms are kept (no_sync.py)
        local = self._local_steps and self._no_sync.local()
        if scale is not None and scale.scale == 1.0 and not scale.dynamic:
            scale = None  # nothing multiplied in, no step skipped the scaler's way
        if not full and not local and scale is None and self._clean is not None:
            self.between_captures(roots)
        else:
            self._record(roots, None, full, model, walk, scale, local)

    def between_captures(self, roots: list[Any]) -> None:
        """after_backward(roots) of a step between captures, no loss scale given: in one call
        when it is clean and no rule fires (clean_step.py). Its own method, fewer calls than
        after_backward's (right after Paddle's backward each costs microseconds)."""
        clean = self._clean
        if clean is None or self.writer is None or self._local_steps and self._no_sync.local():
            self.after_backward(roots)  # (which never comes back here for this step)
            return
        got = clean.run(self.step, roots[0] if len(roots) == 1 else None)
        if got is True:  # recorded in one call: clean, no rule fired (clean_step.py)
            self._after_anomaly = False
            self._went_zero.after(self.step, *self._finder.last_row())
            self.step += 1
            return
        self._record(roots, got, False, None, None, None, False)

    def _record(
        self, roots: list[Any], got: Any, full: bool, model: Any, walk: Any,
        scale: LossScale | None, local: bool,
    ) -> None:  # fmt: skip
        """The step the usual way: ``got``, the summary CleanStep.run read (None: read now),
        written, checked by the rules, and its capture if ``full``."""
        writer = self.writer
        assert writer is not None  # (after_backward's, between_captures' check)
        loss_root = roots[0] if len(roots) == 1 else None
        step = self.step
        if got is None:
            got = self._summary.read_step(loss_root)
        norm, max_abs, nan, inf, loss, clean = got
        if local:  # the norms as .grad holds them (scaled or not): compared with it later
            self._no_sync.after_backward(step, norm)
        if scale is not None and scale.scale != 1.0:  # (a power of 2: exact)
            norm, max_abs = norm / scale.scale, max_abs / scale.scale
            loss = None if loss is None else loss / scale.scale
        # A finite norm past float32's range (an exploding float64 model; float32 gradients
        # whose norm overflows) is stored as float32 rounds it, inf: NumPy's overflow warnings
        # went to the user's stderr, and under warnings-as-errors stopped the log right there.
        with np.errstate(all="ignore"):
            writer.write_step(step, norm, max_abs, nan, inf, loss, clean=clean)
            found = self._finder.check(step, norm, nan, inf, loss, clean=clean, scale=scale)
        for anomaly in found:
            writer.write_anomaly(anomaly.to_json())
            if anomaly.kind == "nonfinite":
                self._went_zero.nonfinite_at = step
        if full:
            # The model's parameters read once for the two below (~3-8 ms on llama-10k)
            named = _named_params(model) if walk is not None else None
            self._note_unwatched(step, named if model is self.model else None)
            from ..tracer.build import build_graph, captured_graph

            if walk is not None:
                document = self._capture(step, lambda: captured_graph(
                    roots[0], walk, model=model, named_params=named, columns=True))  # fmt: skip
            else:
                document = self._capture(step, lambda: build_graph(roots[0], model=model))
            found += self._went_zero_confirmed(step, norm, document)
        self._went_zero.after(step, *self._finder.last_row())
        self._after_anomaly = bool(found)
        self.step += 1

    def _note_unwatched(self, step: int, named: list[tuple[str, Any]] | None = None) -> None:
        """Parameters unfrozen since the run started: said once (unwatched.py). ``named``:
        ``self.model.named_parameters()``, if read just now."""
        if self.writer is None or self.model is None:
            return
        try:
            names = self._unwatched.new(self.model, named)
            if names:
                replaced = self._unwatched.replaced(names)
                self.writer.note_unwatched(step, names, replaced)
                say(unwatched_line(self.writer.path, step, names, replaced))
        except Exception:  # noqa: BLE001 (a notice of ours never stops the training)
            return

    def _went_zero_due(self) -> bool:
        # a layer gone to 0 (went_zero.py): a capture without statistics would be for nothing
        return self.capture_stats and bool(self._went_zero.pending)

    def _went_zero_confirmed(self, step: int, norm: Any, document: Any) -> list[Any]:
        """went_zero.py's layers this capture shows cut off, written to the log."""
        assert self.writer is not None
        try:
            if document is None or not self._went_zero.pending:
                return []
            from ..tracer.merge.capture_columns import document_of, is_columns

            if is_columns(document):  # what the reader encodes, made here for a candidate only
                document = document_of(document)
            found = self._went_zero.confirm(step, norm, document)
        except Exception:  # noqa: BLE001 (a check of ours never stops the training)
            return []
        for anomaly in found:
            self.writer.write_anomaly(anomaly.to_json())
        return found

    def _capture(self, step: int, graph: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
        """A capture that fails is said on stderr once; the run and its summaries go on."""
        assert self.writer is not None
        try:
            document = graph()
        except Exception as exc:  # noqa: BLE001 (never stop the user's training)
            line = traceback.format_exception_only(type(exc), exc)[-1].strip()
            say(f"paddleviz_widget: no full capture of step {step}: {line}")
            return None
        document.setdefault("meta", {})["step"] = step
        self.writer.write_capture(step, document)
        return document

    def forked(self) -> None:
        """In a child of os.fork() (a probe, an evaluation forked from the loop): the log is
        the parent's, still being written; the child writes no step into it and does not end
        it (its sys.exit(0) in the block closed the parent's live run "finished" and deleted
        its tail). Its backwards run plainly, as after fail(), silently."""
        if self.writer is not None:
            with contextlib.suppress(OSError):
                self.writer.let_go_in_child()
        self.writer, self._clean, self.model, self._gave_up = None, None, None, True
        self.forked_away = True  # (the CLI's closing line is the parent's to say)

    def fail(self, error: Exception) -> None:
        """Something of ours failed: say so once, stop recording; the training goes on."""
        line = failure_words(error)
        if self.writer is not None:  # (its path: a rank's own dir)
            said = (f"run log {self.writer.path} stopped at step {self.step}: {line}; the "
                    "training goes on, not logged")  # fmt: skip
        else:  # it never started: another log there is not this run's to call stopped
            said = f"this run is not logged: {line}"
        say(f"paddleviz_widget: {said}")
        writer, self.writer, self._gave_up, self.model = self.writer, None, True, None
        self._clean = None  # (it holds the writer: its tail's descriptor stayed open)
        _WRITING.discard(self)
        summary = getattr(self, "_summary", None)
        if summary is not None:
            summary.release()
        if writer is not None:  # what can still be written is (abandon never raises)
            writer.abandon(f"paddleviz_widget: {line}")

    def _check_siblings(self, writer: RunLogWriter) -> None:
        """At the end, the ranks this one expects beside it are there (a look at the run dir,
        no communication); what is not is said on stderr and in its run.json."""
        try:
            seen = siblings_seen(self.run_dir, self.job, self.ranks)
        except Exception:  # noqa: BLE001 (a check of ours never stops the run's end)
            return
        writer.meta["siblings_missing"] = seen["missing"]
        writer.meta["siblings_other_run"] = seen["other_run"]
        if seen["missing"] or seen["other_run"]:
            say(f"paddleviz_widget: {siblings_message(self.run_dir, self.job, seen)}")

    def close(self, error: BaseException | None = None) -> None:
        error = self.ended_by if error is None else error
        if isinstance(error, SystemExit) and error.code in (None, 0):
            error = None  # sys.exit(0) in the loop (early stopping): the run finished
        summary = getattr(self, "_summary", None)
        if summary is not None:
            summary.release()
        if self.writer is None:
            self.model = None  # the run ended: the model is the user's to free
            return
        if self.job.launched:
            self._check_siblings(self.writer)
        self._note_unwatched(max(self.step - 1, 0))  # the last step recorded
        self._no_sync.close()
        try:  # the last part is written here: a failure is said, never raised into the run
            if error is None:
                self.writer.close("finished")
            else:
                said = str(error)  # empty for a Ctrl-C's KeyboardInterrupt: its name alone
                name = type(error).__name__
                self.writer.close("stopped", f"{name}: {said}" if said else name)
        except Exception as failure:  # noqa: BLE001 (e.g. the run dir deleted meanwhile)
            self.fail(failure)
        self.writer, self.model = None, None  # the model is the user's to free
        _WRITING.discard(self)


def _forked_child() -> None:
    for watch in list(_WRITING):
        watch.forked()
    _WRITING.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked_child)


def _model_of(roots: list[Any]) -> Any:
    """The live nn.Layer whose parameters name most leaves of the graph of ``roots``."""
    from ..tracer.capture.anchors import is_tensor
    from ..tracer.capture.replay import discover_model
    from ..tracer.read.grad_node import grad_node_of
    from ..tracer.read.walk import walk_backward_graph

    nodes = [n for n in (grad_node_of(t) for t in roots if is_tensor(t)) if n is not None]
    if not nodes:
        return None
    walk = walk_backward_graph(nodes)
    return discover_model({n.ptr for n in walk.nodes if n.is_accumulation})


def _named_params(model: Any) -> list[tuple[str, Any]] | None:
    """``model.named_parameters()`` as a list, for the unwatched check and the capture's
    parameter names both; None for no model or not a Layer, or if reading it failed (then
    each asks again, and fails or not, on its own as before)."""
    import paddle

    if not isinstance(model, paddle.nn.Layer):
        return None
    try:
        return list(model.named_parameters())
    except Exception:  # noqa: BLE001 (never stop the user's training)
        return None
