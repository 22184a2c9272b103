"""See every compiled program the forward runs inside ``trace()``, and keep its executor quiet.

A to_static model's backward is one GradNode (``Dy2StGradNode``) that runs a whole program in
Paddle's PIR interpreter. With VLOG on (our log capture), that interpreter prints the program,
its instructions and scope dumps, partly with ``std::cout`` to the user's stdout and partly as
glog records our stderr capture cannot tell from the user's own output. Nothing of it is read
here (the program's ops come from Paddle's program objects), so VLOG is off while the program
runs: a gradient hook on each output of the program runs at the start of that node's run
(Paddle applies a node's gradient hooks before its backward) and switches it off; a gradient
hook on each input of the program (parameters included) switches it back on when the first
node the program sends a gradient to starts (Paddle 3.3.1 calls no post hook of a
Dy2StGradNode), and so does the end of the backward. The lines a node running in between
would log are lost, never misread: the log parser reads nothing into a program node's run
(log_parser). All hooks do nothing outside a captured backward, and come off after it.

Programs are seen through ``PartialProgramLayer.HOOKED_RUN_IMPL``, Paddle's own hook around
each program run (a hook already there is called in turn and put back on exit). What is kept
per program node: the program that ran (weakly), for the program view.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..parse.call_sites import default_library_dirs
from ..read.program import ProgramRead, read_program
from ..read.program_nodes import is_program_node
from .vlog import flags_v_cell

# Program nodes whose PartialProgramLayer is remembered (a training loop makes one a step).
MAX_PROGRAM_NODES = 64


@dataclass
class _Quiet:
    """Whether a captured backward is running, and the VLOG level a program run put aside."""

    capturing: bool = False
    saved: int | None = None


QUIET = _Quiet()


def _quiet(grad: Any) -> None:
    cell = flags_v_cell()
    if QUIET.capturing and QUIET.saved is None and cell is not None and cell.value:
        QUIET.saved = int(cell.value)
        cell.value = 0


def _loud(grad: Any) -> None:
    loud_again()


def loud_again() -> None:
    cell = flags_v_cell()
    if QUIET.saved is not None and cell is not None:
        cell.value = QUIET.saved
    QUIET.saved = None


def _partial_program_class() -> Any:
    try:
        from paddle.jit.dy2static.pir_partial_program import PartialProgramLayer
    except ImportError:  # Paddle without PIR programs: nothing to see or to quiet
        return None
    return PartialProgramLayer if hasattr(PartialProgramLayer, "HOOKED_RUN_IMPL") else None


def _train_program(layer: Any) -> Any:
    """The program a PartialProgramLayer ran with gradients: its training program, read from
    the cache Paddle already filled (never built here: ``layer.program`` may compile one)."""
    if layer is None or not getattr(layer, "training", False):
        return None
    return getattr(layer, "__dict__", {}).get("train_program")


def _made_by_program(tensor: Any) -> bool:
    node = tensor.grad_fn
    return node is not None and is_program_node(str(node.name()))


def _tensors(out: Any) -> list[Any]:
    import paddle

    items = out if isinstance(out, (list, tuple)) else [out]
    return [t for t in items if isinstance(t, paddle.Tensor)]


@dataclass
class ProgramRuns:
    """Installed by a TraceSession for its lifetime."""

    # program node ptr -> the RunnableProgram that ran it (weak: Paddle's cache owns it)
    programs: dict[int, Callable[[], Any]] = field(default_factory=dict)
    _handles: dict[int, list[Any]] = field(default_factory=dict)  # node ptr -> hook handles
    _reads: dict[int, tuple[Callable[[], Any], ProgramRead]] = field(default_factory=dict)
    # program node ptr -> its inputs then its parameters (weakly), one per next_functions entry
    _sent_to: dict[int, list[Callable[[], Any]]] = field(default_factory=dict)
    _restore: Callable[[], None] | None = None

    def start(self) -> None:
        # SOT simulates the Python of a hooked layer's hooks (ours too) when the layer is
        # called from a function it compiles; pathlib there raises in SOT, inside the user's
        # forward. Our hooks' lazily cached library directories are computed now, natively.
        default_library_dirs()
        cls = _partial_program_class()
        if cls is None or flags_v_cell() is None:
            return
        previous = cls.HOOKED_RUN_IMPL

        def hooked(run_impl: Any, inputs: Any, params: Any, attrs: Any) -> Any:
            if previous is None:
                out = run_impl(inputs, params, attrs)
            else:
                out = previous(run_impl, inputs, params, attrs)
            self._saw(getattr(run_impl, "__self__", None), [*inputs, *params], out)
            return out

        cls.HOOKED_RUN_IMPL = hooked

        def restore() -> None:
            cls.HOOKED_RUN_IMPL = previous

        self._restore = restore

    def stop(self) -> None:
        if self._restore is not None:
            self._restore()
            self._restore = None
        for ptr in list(self._handles):
            self.forget(ptr)

    def read(self, ptrs: Iterable[int]) -> dict[int, ProgramRead]:
        """The programs of these program nodes, read from Paddle's program objects (once per
        program: a training loop runs the same one every step)."""
        found: dict[int, ProgramRead] = {}
        if not self.programs:  # no to_static program ran (a graph's ~10k ptrs not looked up)
            return found
        for ptr in ptrs:
            program = self.programs.get(ptr, lambda: None)()
            if program is None:
                continue
            key = id(program)
            if key not in self._reads or self._reads[key][0]() is not program:
                try:
                    read = read_program(program)
                except Exception:  # noqa: BLE001 (a program we cannot read stays closed)
                    continue
                self._reads[key] = (weakref.ref(program), read)
            found[ptr] = self._reads[key][1]
        return found

    def receivers(self, ptr: int) -> list[Any] | None:
        """The tensors a program node sends its gradients to, one per ``next_functions``
        entry (None where gone), or None if this session did not see its forward."""
        refs = self._sent_to.get(ptr)
        return None if refs is None else [ref() for ref in refs]

    def quieted(self, ptr: int) -> bool:
        return ptr in self._handles

    def forget_all(self, ptrs: Iterable[int]) -> None:
        """forget() each of these nodes; nothing to do (no loop) when none has ours."""
        if self._handles or self._sent_to:
            for ptr in ptrs:
                self.forget(ptr)

    def forget(self, ptr: int) -> None:
        """The node has run (or the session ends): take our hooks off it."""
        for handle in self._handles.pop(ptr, ()):
            handle.remove()
        self._sent_to.pop(ptr, None)

    def _saw(self, layer: Any, inputs: list[Any], out: Any) -> None:
        for tensor in _tensors(out):
            node = None if tensor.stop_gradient else tensor.grad_fn
            if node is None or not is_program_node(str(node.name())):
                continue
            ptr = int(node.node_ptr())
            if ptr not in self._handles:
                # An input made by another program stays quiet: its node is that program.
                self._handles[ptr] = [
                    t.register_hook(_loud)
                    for t in _tensors(inputs)
                    if not t.stop_gradient and not _made_by_program(t)
                ]
                self._sent_to[ptr] = [weakref.ref(t) for t in _tensors(inputs)]
                program = _train_program(layer)
                if program is not None:
                    self.programs[ptr] = weakref.ref(program)
                    while len(self.programs) > MAX_PROGRAM_NODES:  # oldest first
                        del self.programs[next(iter(self.programs))]
            self._handles[ptr].append(tensor.register_hook(_quiet))
