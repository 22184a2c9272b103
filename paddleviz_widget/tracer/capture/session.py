"""``trace(model)``: record layer scopes during the forward and Paddle's own account of the
backward, so that ``build_graph(y)`` / ``GraphWidget(y)`` can annotate the graph afterwards.

Everything patched or switched on entry (Tensor.backward, paddle.autograd.backward, paddle.grad,
FLAGS_call_stack_level, layer hooks) is put back exactly on exit, exceptions included.

What a session keeps is bounded (issue 11: a 300-step training loop inside one trace()). While
tracing, only the newest backward record holds its GradNodes; every other record holds weak
anchors (anchors.py) and is dropped once no tensor of its graph is alive, or when more than
MAX_RECORDS are left (a dropped record whose tensors live is noted in kept_traces.LOST, so its
graph says it lost its annotations). On exit no record holds a GradNode. The layer recorder
forgets forwards two backward passes old (scope_recording.py); each record keeps the layer
groups of its own graph as plain data. Finished sessions are kept while a tensor of theirs
lives (kept_traces.py, at most MAX_SESSIONS).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Collection
from typing import Any

from ...gc_pause import gc_paused
from ...graph.parts import ParamInfo
from ..read.grad_node import grad_node_of
from ..read.params import param_infos_by_ptr
from ..read.program import maybe_program_node
from .anchors import Anchor, anchor_of, any_alive, has_graph, is_tensor, proven, user_tensors
from .backward_args import grad_targets, layer_count
from .backward_capture import DUMP_KWARG, CapturedBackward, run_captured
from .backward_record import BackwardRecord
from .entry_points import patch_backward_entry_points, set_call_stack_flag
from .forward_finite import ForwardFiniteWatch
from .hooked_nodes import hooks_cover
from .interrupts import deferred_call
from .kept_traces import LOST, RecentSessions
from .layer_scopes import LayerScopeRecorder, LayerScopes
from .loss_scaling import ScaledRoots
from .nesting import captured_elsewhere, entered, exited, other_threads, refuse_other_thread
from .program_runs import ProgramRuns
from .sigint_gate import SigintGate
from .stack_budget import spend, stacks_allowed
from .stack_gate import LibraryForwardGate, call_stacks_off, call_stacks_recorded
from .stats_watch import (
    StatsHistory,
    check_steps,
    graph_signature,
    run_with_stats,
    stats_available,
    stats_possible,
)
from .switches import check_switches
from .user_hooks import UserHooks
from .watched import watch_of, watched_backward

# Slot names come from Paddle's VLOG 6, which costs about 0.5 ms per GradNode here (Paddle's
# formatting, about +30% backward time, plus capture and parsing: benchmarks/RESULTS.md). By
# default it is on while that stays around 0.1 s; trace(slots=True) asks for it at any size.
SLOT_LOG_MAX_NODES = 200
CALL_SITE_MAX_LAYERS = 500
# Records that hold their GradNodes while tracing (the newest backward: build_graph inside
# the loop annotates the current step whatever tensor of it is asked for), and records kept
# at most; the others prove their nodes through weak anchors.
STRONG_RECORDS = 1
MAX_RECORDS = 16
# Per-op Python stacks for the first backward passes of a session only: while the flag is on,
# Paddle keeps every op's traceback alive (~100 KB a ResNet-18 step, for good). Later steps'
# ops show the line that called their layer, which the layer hooks record anyway.
CALL_STACK_STEPS = 2


class TraceSession:
    """Use as ``with trace(model):`` around the forward and the backward."""

    def __init__(
        self, model: Any = None, *, call_sites: bool | None = None, slots: bool | None = None,
        stats: bool = False, steps: int | None = None, every: int | None = None,
        run_dir: str | os.PathLike[str] | None = None, thresholds: dict[str, float] | None = None,
        ranks: Any = "all",
    ) -> None:  # fmt: skip
        import paddle

        if model is not None and not isinstance(model, paddle.nn.Layer):
            raise TypeError(
                f"trace() takes your paddle.nn.Layer model (or nothing), got a "
                f"{type(model).__name__}; use `with trace(model):` or `with trace():`"
            )
        self.model = model
        self._weak_model: Callable[[], Any] = lambda: None
        self.kept_params: dict[int, ParamInfo] = {}  # let_go_of_model
        if call_sites is None:  # per-op Python stacks cost ~0.2 ms an op in the forward
            call_sites = model is None or layer_count(model) <= CALL_SITE_MAX_LAYERS
            call_sites = call_sites and stacks_allowed()  # Paddle keeps them (stack_budget)
        self.call_sites = call_sites
        self.slots = slots
        check_steps(steps)  # before anything is switched on (0 read as 1, 2.5 failed later)
        check_switches(stats=stats, call_sites=call_sites, slots=slots)
        if steps is not None and not stats:
            raise ValueError("steps= keeps gradient statistics: use trace(model, stats=True, "
                             f"steps={steps})")  # fmt: skip
        self.watch = watch_of(model, every, run_dir, thresholds, ranks)
        # A rank that trace(ranks=) leaves out: nothing is switched on, no per-step work.
        self.inert = self.watch is not None and not self.watch.recorded
        # Paddle 2.6: refused, or a watched run without capture statistics (said once).
        stats = stats and stats_possible(watched=self.watch is not None, say=not self.inert)
        self.stats = stats
        if self.watch is not None and slots is None:
            self.slots = False  # watched runs: full captures without VLOG (its cost) unless asked
        self.history = StatsHistory(steps or 1) if stats else None
        self.records: list[BackwardRecord] = []
        self.scopes: LayerScopes | None = None  # on exit: the forwards still kept, as data
        self._leftovers: tuple[Anchor, ...] = ()  # on exit: their outputs, to prove pointers
        self._own: tuple[Anchor, ...] = ()  # those of them this session's layers made
        self._recorder: LayerScopeRecorder | None = None
        self._entered = False
        self._restore: list[Callable[[], None]] = []
        self._in_backward = False
        self._others: tuple[threading.Thread, ...] = ()  # on entry: other_threads()
        self._stop_stacks: Callable[[], None] | None = None
        self._backwards = 0
        self.programs = ProgramRuns()
        self._finite: ForwardFiniteWatch | None = None  # stats: first non-finite layer output
        self._user_hooks = UserHooks()  # stats: nodes whose input a user's hook changes
        self._hooks_off = False  # watched.py's _arm_recorder left both off (True only then)
        self._params_seen: frozenset[int] | None = None  # _param_nodes
        self.sigint_gate = SigintGate()  # a watched step's record is not cut by a Ctrl-C

    # -- context manager -------------------------------------------------------------------
    def __enter__(self) -> TraceSession:
        if self._entered:  # its recorder is let go of on exit (let_go_of_model)
            raise RuntimeError("this trace() is already in use; start a new `with trace(...)`")
        self._entered = True
        if self.inert:
            return self
        refuse_other_thread()
        self._others = other_threads()  # their backward calls are not the block's
        self._gate = LibraryForwardGate()
        # A watched run claims each captured forward's nodes from its backward's walk.
        deferred = self.watch is not None
        self._recorder = LayerScopeRecorder(self.model, observer=self._gate, deferred=deferred)
        self._recorder.start()
        try:
            if self.watch is not None:
                self.watch.capture_stats = self.stats  # the CLI sets its watch after __init__
                self._restore.append(self.sigint_gate.install())  # before call sites' own
                self.watch.start()
            if self.call_sites:
                set_call_stack_flag(self)
            patch_backward_entry_points(self)
            self.scaled = ScaledRoots(self._swap)  # GradScaler.scale's losses, and by what
            self.programs.start()
            self._restore.append(self.programs.stop)
            if self.stats:
                self._user_hooks.watch(self._swap, lambda: self._in_backward)
            if self.stats and self.model is not None:
                self._finite = ForwardFiniteWatch(self.model)
                self._restore.append(self._finite.stop)
                self._finite.start()
        except BaseException:
            self._undo()
            raise
        RECENT_SESSIONS.add(self)  # build_graph inside the block already sees its backward runs
        entered(self)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self.inert:
            return
        exited(self)
        try:
            self._undo()
        finally:
            if self.watch is not None:
                self.watch.close(exc_info[1])
        RECENT_SESSIONS.add(self)
        self.let_go_of_model()  # the user's to drop (its memory): held weakly once finished

    def _undo(self) -> None:
        try:
            while self._restore:
                self._restore.pop()()
        finally:
            # Taken while every claimed and recorded node is still held: an address reached
            # from these tensors is then provably the node the trace saw (anchors.py).
            users = user_tensors()
            if self._recorder is not None and self._recorder.recording:
                mine = [a for t in users if (a := anchor_of(t)) is not None]
                self.scopes = self._recorder.stop()
                self._leftovers = (*self._recorder.leftover_outputs, *mine)
                claimed = self.scopes.node_names if self.scopes is not None else {}  # not others'
                self._own = (
                    *self._recorder.leftover_outputs,
                    *(a for a in mine if a.ptr in claimed),
                )
                self._recorder.leftover_outputs = []
            self._settle(strong=0, users=users)  # a finished session holds no GradNode

    def _settle(self, strong: int, users: list[Any] | None = None) -> None:
        """Only the newest ``strong`` records keep their GradNodes; a record no graph can be
        matched to any more (every anchored tensor gone) is dropped; MAX_RECORDS at most."""
        for record in self.records[: max(len(self.records) - strong, 0)]:
            if record.roots:
                users = user_tensors() if users is None else users
                record.release(users)
        alive = [r for r in self.records if r.alive()]
        for record in alive[:-MAX_RECORDS]:
            LOST.add(record.anchors, f"more than {MAX_RECORDS} backward passes kept in one trace")
        self.records = alive[-MAX_RECORDS:]

    def alive(self) -> bool:
        """Can a graph still be matched to this session (a tensor of it is alive)?"""
        return any(r.alive() for r in self.records) or any_alive(self._own)

    def kept_anchors(self) -> list[Anchor]:
        return [a for r in self.records for a in r.anchors] + list(self._own)

    def let_go_of_model(self) -> None:
        """Kept for its tensors only: model held weakly (its parameter names kept as data)."""
        if self._recorder is not None and self._recorder.recording:
            return  # a trace still running (traces nested inside it ended): not yet
        if self.model is not None:
            ptrs = frozenset().union(*(r.node_ptrs() for r in self.records))
            named = param_infos_by_ptr(model=self.model)
            # No record (a watched run keeps none): its forwards' graphs may use any of them.
            self.kept_params = {p: i for p, i in named.items() if p in ptrs} if ptrs else named
            self._weak_model, self.model = weakref.ref(self.model), None
        self._recorder = self._finite = None  # stopped: each holds the model too

    def current_model(self) -> Any:
        return self.model if self.model is not None else self._weak_model()

    def sighting(
        self, root_ptrs: Collection[int], node_ptrs: Collection[int]
    ) -> tuple[list[BackwardRecord], LayerScopes | None]:
        """The backward records that provably saw the graph with these roots (oldest first),
        and the layer groups this session can vouch for among ``node_ptrs``."""
        self.records = [r for r in self.records if r.alive()]  # forget what nothing can match
        records = [r for r in self.records if r.vouches_for(root_ptrs)]
        if records:
            return records, records[-1].scopes
        if self._recorder is not None and self._recorder.recording:
            return [], self._recorder.snapshot()  # every claimed node is held: ptrs are proof
        if self.scopes is None:
            return [], None
        sure = proven(self._leftovers, node_ptrs)  # a forward no backward took, after exit
        return [], self.scopes.restricted_to(sure) if sure else None

    # -- what is switched on while tracing (entry_points.py) ---------------------------------
    def _swap(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        original = owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name)
        setattr(owner, name, make(original))
        self._restore.append(lambda: setattr(owner, name, original))

    def _backward(
        self, original: Any, roots: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any],
        *, copies: bool,
    ) -> Any:  # fmt: skip
        if threading.current_thread() in self._others:
            return original(*args, **kwargs)  # the notebook's, while the block trains behind
        if self.watch is not None:  # (it pauses the collector around a capture only)
            # the checks below in fewer calls (every step; each costs microseconds right
            # after the forward): captured_elsewhere is False for a watched run
            if self._in_backward or not has_graph(roots):
                return original(*args, **kwargs)
            return watched_backward(self, original, roots, args, kwargs, copies=copies)
        if self._in_backward or captured_elsewhere(self):  # e.g. paddle.grad in a PyLayer's
            return original(*args, **kwargs)  # backward, a nested trace(): already captured
        if not has_graph(roots):
            # No graph to observe (a loss made under no_grad, a leaf, a detached tensor):
            # whatever Paddle does with it, a no-op or its own error, unobserved.
            return original(*args, **kwargs)
        # Walks, hooks and their records allocate ~100k objects without cycles: with the
        # collector on, its full passes over the user's heap cost more than all of it.
        with gc_paused():
            return self._captured_backward(original, roots, args, kwargs, copies=copies)

    def _captured_backward(
        self, original: Any, roots: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any],
        *, copies: bool,
    ) -> Any:  # fmt: skip
        nodes = tuple(n for n in (grad_node_of(t) for t in roots if is_tensor(t)) if n)
        record = BackwardRecord(nodes, CapturedBackward(), copies)
        if copies:
            record.targets = grad_targets(args, kwargs)
        record.scan(self.model)  # kept for matching graphs later
        self._anchor(record, roots)
        slot_log = self.slots
        if slot_log is None:  # decide by size
            slot_log = len(record.node_ptrs()) <= SLOT_LOG_MAX_NODES
        record.programs = self.programs.read(record.node_ptrs())
        # Its executor would print the program into the user's output under VLOG (the graph's
        # notice says its forward ran outside trace(): merge/collect.py); on 2.6 and 3.0, where
        # no program is seen run, the log is then off even where it is the only account.
        unquieted = self._unquieted_programs(record)
        slot_log = slot_log and not unquieted
        self._in_backward = True
        try:
            result, captured = run_captured(
                lambda extra: self._run(
                    record, roots, lambda: deferred_call(original, *args, **{**kwargs, **extra})
                ),
                function=original,
                user_dump_dir=kwargs.get(DUMP_KWARG),
                log=slot_log,
                log_possible=not unquieted,
                call_sites=not copies,  # stacks of copied nodes match no graph node
                dump=not self._hooks_see_all(record, copies),
            )
        finally:
            if self.watch is None:  # a watched step's capture uses the walk (watched.py)
                record.keep_walk()
                record.drop_walk()
            self._in_backward = False
            self.programs.forget_all(record.node_ptrs())
        record.captured = captured
        self.records.append(record)
        self._backwards += 1
        if self._stop_stacks is not None:
            spend(len(record.node_ptrs()))
        stack_steps = 1 if self.watch is not None else CALL_STACK_STEPS
        if self._backwards >= stack_steps and self._stop_stacks is not None:
            self._stop_stacks()
            self._stop_stacks = None
        if self._recorder is not None:
            self._recorder.end_epoch()
        self._settle(STRONG_RECORDS)
        return result

    def _hooks_see_all(self, record: BackwardRecord, copies: bool) -> bool:
        """Whether the stats hooks will see every edge's gradient, so Paddle's dump is not
        needed: not paddle.grad's copies, no per-op stacks (the dump's call-stack file)."""
        if self.history is None or copies or not stats_available(record.roots):
            return False
        walk = record.walk()
        return walk is not None and not call_stacks_recorded() and hooks_cover(walk)

    def _unquieted_programs(self, record: BackwardRecord) -> bool:
        """Whether a program node's forward ran unseen by this trace (it cannot be quieted; on
        2.6 and 3.0 none is seen, and their program node may be the nameless GradNodeBase)."""
        walk = record.walk()
        return walk is not None and any(
            maybe_program_node(n.name) and not self.programs.quieted(n.ptr) for n in walk.nodes
        )

    def _run(self, record: BackwardRecord, tensors: list[Any], run: Callable[[], Any]) -> Any:
        """The backward itself, with gradient statistics captured if asked for."""
        if self.history is None or not stats_available(record.roots):
            return run()
        walk = record.walk()
        assert walk is not None  # the roots are held while the backward runs
        with call_stacks_off():  # our reductions are ops too: no Python stack for each
            self._user_hooks.changed.clear()  # (filled by this backward's user hooks)
            result, stats = run_with_stats(
                run, walk, record.node_objects(),
                [t for t in tensors if is_tensor(t)], self.programs.receivers,
                copies=record.copies, user_hooked=self._user_hooks.changed,
            )  # fmt: skip
        if self._finite is not None:
            stats.forward_culprit = self._finite.take()
        stats.loss_scale = self.scaled.of(tensors)
        record.stats = stats
        # Each node's position (its walk index) and the names in that order, made once.
        record.positions = dict(zip(walk.ptrs, range(len(walk.nodes))))
        record.signature = graph_signature(walk, self._param_nodes())
        self.history.add(walk, stats, record.positions, record.signature, grad_call=record.copies)
        return result

    def _param_nodes(self) -> frozenset[int]:
        """The model's parameters' accumulation node ptrs (graph_signature), read once."""
        if self._params_seen is None:
            from ..read.params import accumulation_ptr

            params = self.model.parameters() if self.model is not None else ()
            self._params_seen = frozenset(filter(None, map(accumulation_ptr, params)))
        return self._params_seen

    def _anchor(self, record: BackwardRecord, roots: list[Any]) -> None:
        """What lets the record vouch for its graph once it lets go of the nodes, and the
        layer groups of its nodes, read while every one of them is alive."""
        own = [a for t in roots if (a := anchor_of(t)) is not None]
        record.root_count = len(own) if len(own) == len(record.roots) else 0
        if self._recorder is not None:
            ptrs = record.node_ptrs()
            objects = record.node_objects()  # the walk scan() made: claims read from it
            self._recorder.claim_pending(record.walk() if objects else None, objects)
            record.anchors = (*own, *self._recorder.take_outputs(ptrs))
            record.scopes = self._recorder.snapshot(ptrs)
        else:
            record.anchors = tuple(own)


RECENT_SESSIONS = RecentSessions()
