"""``trace(model, stats=True)``: which layer's forward output first held a NaN/Inf.

A forward post hook on every sublayer checks the floating tensors the layer returned: one
finiteness check per layer output, none per op. Post hooks run as calls return, innermost
first, so the first layer seen with a non-finite output is the innermost one that made it (its
own ops, or a sublayer's, which would have been seen first). Its inputs are checked then, once:
an input already non-finite means the NaN/Inf came with the data when every non-finite input
is one of the model's own arguments, passed on as they came (told by identity: the ids of the
model's argument tensors are kept for the time of its call, never the tensors), else was made
by the ops of the layer that called it (its own forward code, before that call: pre hooks keep
the call stack). An additive attention mask's -inf is the model's argument too: a layer it
reaches whose own ops make a NaN is said to have got its NaN/Inf with the data.

A CPU tensor is read in place (DLPack + NumPy min/max, no copy); on other devices the check
is a device-side flag kept with its layer and read once, when the backward starts: no host
sync per layer. The user's tensors are only read; no op with a gradient, no RNG.

A layer whose forward is a compiled program (``paddle.jit.to_static``, full graph or SOT)
hides its sublayers from hooks: a NaN/Inf found inside one (its output, or a sublayer that
SOT still ran eagerly) is looked for again by running that layer's forward once more,
eagerly, with every sublayer checked and nothing of the user's changed (program_rerun.py);
the culprit says so in ``found_by``, or that the re-run did not reproduce it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..read.program_nodes import is_program_node
from ..read.tensor_info import cpu_only_build
from .finite_read import _types, cpu_finite, device_flag
from .program_rerun import ProgramFrame, enter_frame, forward_source, rerun
from .stack_gate import call_stacks_off

# Pending device-side flags kept at most (a forward with no backward would keep adding).
MAX_PENDING = 100_000


@dataclass(frozen=True)
class ForwardCulprit:
    """The first layer (forward order) whose output held a NaN/Inf."""

    layer: str  # its path in the model ("encoder.layers.3.mlp"), the root by its class
    layer_type: str
    inputs_finite: bool  # False: the model's own input held a NaN/Inf (the data)
    # The sublayer it was about to hand the NaN/Inf to, when its own ops made it between calls.
    before: str | None = None
    # Inside a compiled program: the compiled layer's path, and how the culprit was found.
    program: str | None = None
    found_by: str | None = None
    source: tuple[str, int, int] | None = None  # the culprit's forward code: file, lines
    # Its own parameters that already held NaN/Inf when it ran (an earlier update wrote them)
    bad_params: tuple[str, ...] = ()


def found_by_rerun(program: str) -> str:
    return (
        f"found by re-running {program}'s compiled forward eagerly once (paddle.no_grad, your "
        "RNG, buffers and hooks left as they were): hooks cannot see inside a compiled program"
    )


def from_unseen_program(caller: str, layer: str) -> str:
    return (
        f"the first NaN/Inf of the forward reached {layer} from a compiled program (SOT) that "
        f"{caller}'s code ran before calling it; hooks see no layer inside a compiled program, "
        "so the layer that made it is not named"
    )


def not_reproduced(program: str, why: str) -> str:
    return (
        f"made inside {program}'s compiled program, which hooks cannot see into; {why}, so the "
        "layer inside it is not named"
    )


def _tensors(value: Any, depth: int = 0) -> Iterator[Any]:
    """Floating-point tensors in a layer's outputs or inputs (tuples, lists, dicts, and
    paddleformers' ModelOutput, which is a dict), two levels deep."""
    tensor, floats, _ = _types()
    if isinstance(value, tensor):
        if value.dtype in floats:
            yield value
    elif depth < 2 and isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v, depth + 1)


class ForwardFiniteWatch:
    """Hooks every sublayer of ``model`` while started; ``take()`` after a forward: the
    culprit of the forwards since the last take, if any (then forgets them)."""

    _inert = False  # True: a copy's, hooked nowhere (_inert_watch)

    def __init__(self, model: Any, paths: dict[int, str] | None = None) -> None:
        self._paths = paths if paths is not None else {
            id(layer): path or type(model).__name__
            for path, layer in model.named_sublayers(include_self=True)
        }  # fmt: skip
        self._reruns = paths is None  # a re-run's own watch re-runs nothing
        self._model = model
        self._handles: list[Any] = []
        self._stack: list[Any] = []  # the layer calls running, outermost first
        self._frames: list[ProgramFrame] = []  # the compiled layers' calls running
        self._last: Any = None  # the tensor checked last (held until the next check or take)
        self._found: ForwardCulprit | None = None
        # (layer, its outputs' finite flag, its inputs' flag, caller, compiled frame) on
        # devices NumPy cannot read
        # ... and whether its bad inputs can only be the model's arguments: (some input is one,
        # the others' flag or None)
        self._pending: list[tuple[Any, Any, Any, Any, ProgramFrame | None, bool, Any]] = []
        # The ids of the model's argument tensors while its call runs (the caller holds them).
        self._model_ids: frozenset[int] = frozenset()

    @property
    def started(self) -> bool:
        return bool(self._handles)

    # A copy of the model made while the hooks are on (copy.deepcopy: a "best model so far",
    # an EMA copy) deep-copies their object: that copy checked every layer output of every
    # forward of the user's model for good (~+20% to a CPU inference). It gets an inert
    # watch, hooked nowhere (its hooks return at once), and pickles as one.
    def __deepcopy__(self, memo: Any) -> ForwardFiniteWatch:
        return _inert_watch()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_inert_watch, ())

    def start(self) -> None:
        for layer in self._model.sublayers(include_self=True):
            self._handles.append(layer.register_forward_pre_hook(self._enter))
            self._handles.append(layer.register_forward_post_hook(self._hook))

    def _enter(self, layer: Any, args: Any) -> None:
        if self._inert:  # a copied model's (__deepcopy__)
            return
        if layer is self._model:
            self._stack, self._frames = [], []  # a call that raised never popped
            self._model_ids = frozenset(id(t) for t in _tensors(args))
        self._stack.append(layer)
        if self._reruns and self._found is None:
            frame = enter_frame(layer, args)
            if frame is not None:
                self._frames.append(frame)

    def stop(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._pending = []
        self._frames = []
        self._last = None
        self._model_ids = frozenset()

    def _hook(self, layer: Any, args: Any, outputs: Any) -> None:
        if self._inert:  # a copied model's (__deepcopy__)
            return
        if self._stack and self._stack[-1] is layer:
            self._stack.pop()
        try:
            if self._found is None:
                self._check(layer, args, outputs)
            if self._frames and self._frames[-1].layer is layer:
                frame = self._frames.pop()
                if frame.culprit_inside and self._found is not None:
                    self._found = self._rerun(frame, self._found)
        except Exception:  # a check must never break the user's forward
            return
        finally:
            if layer is self._model:
                self._model_ids = frozenset()  # ids mean nothing past the call

    def _check(self, layer: Any, args: Any, outputs: Any) -> None:
        tensor, floats, _ = _types()
        found: Iterable[tuple[Any, Any]]
        if isinstance(outputs, tensor):  # the common case: one tensor, its dtype read once
            if outputs is self._last:  # (only a floating tensor is ever the last one)
                return
            dtype = outputs.dtype
            if dtype not in floats:
                return
            found = ((outputs, dtype),)
        else:
            found = ((t, None) for t in _tensors(outputs))
        deferred = []
        for t, dtype in found:
            if t is self._last:  # a container returning its last sublayer's output: checked
                continue
            self._last = t
            ok = cpu_finite(t, dtype) if cpu_only_build() or t.place.is_cpu_place() else None
            if ok is False:
                bad = [t for t in _tensors(args) if not _all_finite(t)]
                inputs_ok = not bad
                data = bool(bad) and all(id(t) in self._model_ids for t in bad)
                self._found = self._culprit(layer, inputs_ok, self._caller(),
                                            _made_by_program(args), data=data)  # fmt: skip
                self._pending = []
                if self._frames:
                    self._frames[-1].culprit_inside = True
                return
            if ok is None:
                deferred.append(device_flag(t))
        if deferred and len(self._pending) < MAX_PENDING:
            flag = deferred[0] if len(deferred) == 1 else _all(deferred)
            # The inputs' flag too (not the inputs: the user's tensors are not held).
            given = list(_tensors(args))
            inputs = [device_flag(t) for t in given]
            frame = self._frames[-1] if self._frames else None
            made = bool(inputs) and _made_by_program(args)
            others = [f for t, f in zip(given, inputs) if id(t) not in self._model_ids]
            # Only a layer handed a model argument gets the others' flag: one more reduction
            # there, none for every other layer.
            model_arg = len(others) < len(inputs)
            passed = model_arg, (_all(others) if model_arg and others else None)
            entry = (layer, flag, _all(inputs) if inputs else None, self._caller(), frame, made,
                     passed)  # fmt: skip
            self._pending.append(entry)

    def _caller(self) -> Any:
        return self._stack[-1] if self._stack else None

    def _path(self, layer: Any) -> str:
        return self._paths.get(id(layer), str(layer.full_name()))

    def _culprit(
        self, layer: Any, inputs_finite: bool, caller: Any, from_program: bool = False,
        *, data: bool = False,
    ) -> ForwardCulprit:  # fmt: skip
        if inputs_finite:
            return ForwardCulprit(self._path(layer), type(layer).__name__, True,
                                  source=forward_source(layer),
                                  bad_params=self._bad(layer))  # fmt: skip
        if caller is None:  # the model's own input: the data
            return ForwardCulprit(self._path(layer), type(layer).__name__, False)
        if data:  # the model's arguments held it, passed on as they came: the data
            model = self._model
            return ForwardCulprit(self._path(model), type(model).__name__, False)
        if from_program:  # not the caller's own ops: a program SOT ran, unseen by hooks
            unseen = from_unseen_program(self._path(caller), self._path(layer))
            return ForwardCulprit(self._path(caller), type(caller).__name__, True,
                                  self._path(layer), found_by=unseen)  # fmt: skip
        # Made by the caller's own ops, before it called this layer.
        return ForwardCulprit(self._path(caller), type(caller).__name__, True, self._path(layer),
                              source=forward_source(caller))  # fmt: skip

    def _bad(self, layer: Any) -> tuple[str, ...]:
        """The layer's own parameters holding a NaN/Inf: then its output's came from an
        earlier step's update (a NaN/Inf gradient applied), not from an op of this forward."""
        prefix = "" if layer is self._model else f"{self._path(layer)}."  # (the root: its class)
        own = layer.named_parameters(include_sublayers=False)
        return tuple(prefix + n for n, p in own if not _all_finite(p))

    def _rerun(self, frame: ProgramFrame, found: ForwardCulprit) -> ForwardCulprit:
        """The culprit inside a compiled layer, from one eager re-run of its forward; else
        ``found`` saying why the layer inside is not named."""
        program = self._path(frame.layer)
        inner = ForwardFiniteWatch(frame.layer, self._paths)
        inner._stack = [frame.layer]  # its sublayers' caller: the compiled layer
        try:
            out = rerun(frame, inner._enter, inner._hook)
            again = inner.take()
            if again is None and not _all_finite(out):  # its own ops, in no sublayer
                again = inner._culprit(frame.layer, True, None)
        except Exception as error:  # noqa: BLE001 (the user's code, run again: anything)
            why = f"re-running its forward eagerly failed ({type(error).__name__})"
            return replace(found, program=program, found_by=not_reproduced(program, why))
        if again is None:
            why = (
                "re-running its forward eagerly once gave no NaN/Inf (a random or "
                "data-dependent op?)"
            )
            return replace(found, program=program, found_by=not_reproduced(program, why))
        return replace(again, program=program, found_by=found_by_rerun(program))

    def take(self) -> ForwardCulprit | None:
        """The first non-finite layer since the last take (reads the pending flags once)."""
        found, pending = self._found, self._pending
        self._found, self._pending, self._last = None, [], None
        if found is not None or not pending:
            return found
        import paddle

        with paddle.no_grad(), call_stacks_off():
            flags = paddle.stack([e[1].reshape([]).cast("bool") for e in pending]).numpy()
        for (layer, _, inputs, caller, frame, made, passed), ok in zip(pending, flags, strict=True):
            if not ok:
                inputs_ok = inputs is None or bool(inputs)
                model_arg, others = passed
                data = not inputs_ok and model_arg and (others is None or bool(others))
                found = self._culprit(layer, inputs_ok, caller, made, data=data)
                return found if frame is None else self._rerun(frame, found)
        return None


def _all(flags: list[Any]) -> Any:
    import paddle

    with paddle.no_grad(), call_stacks_off():
        return paddle.stack([f.reshape([]).cast("bool") for f in flags]).all()


def _made_by_program(args: Any) -> bool:
    """Whether an input was made by a compiled program (its GradNode runs one)."""
    for t in _tensors(args):
        node = t.grad_fn
        if node is not None and is_program_node(str(node.name())):
            return True
    return False


def _all_finite(args: Any) -> bool:
    for t in _tensors(args):
        ok = cpu_finite(t) if cpu_only_build() or t.place.is_cpu_place() else None
        if ok is None:
            ok = bool(device_flag(t))
        if not ok:
            return False
    return True


def _inert_watch() -> ForwardFiniteWatch:
    """A watch hooked nowhere: what a copied or unpickled model's hooks are bound to."""
    watch = ForwardFiniteWatch.__new__(ForwardFiniteWatch)
    watch._handles, watch._inert = [], True
    return watch
