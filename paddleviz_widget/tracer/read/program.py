"""Read a to_static program's backward from Paddle's own program objects (PIR), into plain data.

``RunnableProgram`` (paddle.jit.dy2static.pir_partial_program, Paddle >= 3.0 with PIR) holds the
forward and backward programs and ``program_name_attr``, the names that tie them to the
GradNode: ``bo_g`` the output gradients the node receives, ``bx``/``bx_g`` its inputs and their
gradients, ``bp``/``bp_g`` the parameters (``param.name``, e.g. "linear_0.w_0") and theirs
("Fake_var" where none). The node's ``next_functions`` are its inputs then its parameters, in
that order, so ``bx_g + bp_g`` names what each of its edges carries.

The forward op a backward op differentiates is not recorded on the backward op; it is found by
type (``X_grad`` of ``X``) and by the named values both touch (the forward's saved values and
parameters are the backward program's inputs, by name). From that forward op come
``struct_name`` (the layer call path Paddle records, "/Linear_1/") and ``op_callstack``.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import Any

from ...graph.model import CallSite
from .program_nodes import PROGRAM_NODE_NAMES, is_program_node

FAKE = "Fake_var"
_LIBRARY_MARKERS = ("/site-packages/paddle/", "/paddle/base/", "/paddle/jit/", "<frozen ")


@dataclass(frozen=True)
class ProgramValue:
    name: str | None  # its name in the program, where it has one
    dtype: str | None
    shape: tuple[int, ...] | None


@dataclass(frozen=True)
class ProgramOp:
    type: str  # e.g. "pd_op.matmul_grad"
    inputs: tuple[int, ...]  # indices into ProgramRead.values
    outputs: tuple[int, ...]
    struct_name: str | None = None  # of the forward op it differentiates
    sink: str | None = None  # builtin.shadow_output: the name the program hands its input out as
    params: tuple[str, ...] = ()  # parameter names (param.name) its forward op used
    call_site: CallSite | None = None


@dataclass(frozen=True)
class ProgramRead:
    ops: tuple[ProgramOp, ...]  # in program order (the order the executor was given them)
    values: tuple[ProgramValue, ...]
    received: tuple[str, ...]  # bo_g: the output gradients the program node is given
    sends: tuple[str, ...]  # bx_g + bp_g: what each next_functions entry carries ("Fake_var")
    param_names: tuple[str, ...]  # bx + bp, aligned with ``sends``


def program_view_available() -> bool:
    """Whether this Paddle has PIR programs with the attributes read here, and the run hook
    that ties a program to its GradNode (``HOOKED_RUN_IMPL``: in 3.3, not in 3.0)."""
    try:
        from paddle.jit.dy2static.pir_partial_program import PartialProgramLayer, RunnableProgram
    except ImportError:
        return False
    return hasattr(RunnableProgram, "program_name_attr") and hasattr(
        PartialProgramLayer, "HOOKED_RUN_IMPL"
    )


def maybe_program_node(name: str) -> bool:
    """A program node by its name; where the program view is unavailable also Paddle 3.0's
    nameless one ("GradNodeBase": its RunProgramGradNode does not name itself)."""
    return is_program_node(name) or (name == "GradNodeBase" and not program_view_available())


def unread_program_nodes(nodes: Iterable[Any], read: Container[int]) -> list[Any]:
    """The program nodes among walked ``nodes`` whose program was not ``read`` (by ptr)."""
    names = PROGRAM_NODE_NAMES  # maybe_program_node's test, without a call per node
    if not program_view_available():
        names = names | {"GradNodeBase"}
    return [n for n in nodes if n.name in names and n.ptr not in read]


def program_closed_notice(name: str, count: int) -> str:
    """Why ``count`` program nodes stay closed, in one line."""
    import paddle

    what = f"{count} {name} node(s) shown closed"
    if not program_view_available():
        return (
            f"{what}: if they run paddle.jit.to_static programs, paddle {paddle.__version__} "
            "lacks what opening them needs (PIR programs with PartialProgramLayer."
            "HOOKED_RUN_IMPL, as in 3.3)."
        )
    return (
        f"{what}: their program's forward ran outside trace() (or in eval mode); run the "
        "forward inside `with paddleviz_widget.trace(model):` to open them into their ops."
    )


def _meta(value: Any) -> tuple[str | None, tuple[int, ...] | None]:
    try:
        shape = tuple(int(d) for d in value.shape)
        dtype = str(value.dtype).removeprefix("paddle.")
    except (ValueError, RuntimeError, TypeError, AttributeError):  # a null type: no gradient
        return None, None
    return dtype, shape


def _name(value: Any) -> str | None:
    try:
        return str(value.name) if value.has_name else None
    except (ValueError, RuntimeError, AttributeError):
        return None


def _call_site(stack: Any) -> CallSite | None:
    """The innermost frame of ``op_callstack`` outside Paddle: the user's line."""
    if not isinstance(stack, list):
        return None
    found = None
    for line in stack:
        text = str(line).strip()
        if not text.startswith('File "'):
            continue
        try:
            file = text[6 : text.index('"', 6)]
            rest = text[text.index('"', 6) + 1 :]
            number = int(rest.split("line ", 1)[1].split(",", 1)[0])
            function = rest.split(" in ", 1)[1].strip() if " in " in rest else None
        except (ValueError, IndexError):
            continue
        if not any(m in file for m in _LIBRARY_MARKERS):
            found = CallSite(file=file, line=number, function=function)
    return found


def _key(value: Any) -> str | None:
    """A value's identity: its address (a Value's Python wrapper is new on every access, and
    ``==`` on Values builds an op); None for a null value (an optional input left out, such
    as dropout's seed tensor), which has no address."""
    try:
        return str(value.id)
    except (ValueError, RuntimeError):
        return None


_ForwardIndex = list[tuple[str, frozenset[str], Any]]


def _forward_index(forward: Any) -> _ForwardIndex:
    """(type, names of the values it reads and writes, op) for each forward op."""
    named: dict[str, str] = {}
    for op in forward.global_block().ops:  # shadow_output names a forward value (middle_k)
        if op.name() == "builtin.shadow_output":
            out_name = op.attrs().get("output_name")
            key = _key(op.operand_source(0))
            if out_name and key is not None:
                named[key] = str(out_name)
    index = []
    for op in forward.global_block().ops:
        values = [*op.operands_source(), *op.results()]
        names = {n for v in values if (n := _name(v) or named.get(_key(v) or ""))}
        index.append((op.name(), frozenset(names), op))
    return index


def _match_forward(op_type: str, names: set[str], index: _ForwardIndex) -> Any:
    base = op_type.removesuffix("_grad") if op_type.endswith("_grad") else None
    if base is None or not names:
        return None
    best, best_score, tie = None, 0, False
    for fwd_type, fwd_names, op in index:
        if fwd_type.rstrip("_") != base.rstrip("_"):
            continue
        score = len(names & fwd_names)
        if score > best_score:
            best, best_score, tie = op, score, False
        elif score == best_score and score:
            tie = True
    return None if tie else best


def read_program(runnable: Any) -> ProgramRead:
    """The backward ops of a RunnableProgram, with their values and forward origins."""
    attr = runnable.program_name_attr
    backward = runnable.backward_program
    block = backward.global_block()
    params = set(attr.get("bp", ())) - {FAKE}
    values: list[ProgramValue] = []
    index_of: dict[str, int] = {}

    def value_index(value: Any) -> int:
        key = _key(value)
        if key is None:  # a null value: its own entry, tied to nothing
            key = f"null{len(values)}"
        if key not in index_of:
            index_of[key] = len(values)
            values.append(ProgramValue(_name(value), *_meta(value)))
        return index_of[key]

    for value in block.kwargs().values():
        value_index(value)
    forward_ops = _forward_index(runnable.forward_program)
    ops = []
    for op in block.ops:
        inputs = tuple(value_index(v) for v in op.operands_source())
        outputs = tuple(value_index(v) for v in op.results())
        names = {n for k in inputs if (n := values[k].name)}
        fwd = _match_forward(op.name(), names, forward_ops)
        fwd_attrs = fwd.attrs() if fwd is not None else {}
        used = tuple(sorted(names & params))
        if op.name() == "builtin.shadow_output":
            out_name = op.attrs().get("output_name")
            ops.append(ProgramOp(op.name(), inputs, (), sink=str(out_name) if out_name else None))
            continue
        ops.append(
            ProgramOp(
                op.name(), inputs, outputs,
                struct_name=fwd_attrs.get("struct_name"),
                params=used,
                call_site=_call_site(fwd_attrs.get("op_callstack")),
            )
        )  # fmt: skip
    return ProgramRead(
        ops=tuple(ops),
        values=tuple(values),
        received=tuple(attr.get("bo_g", ())),
        sends=(*attr.get("bx_g", ()), *attr.get("bp_g", ())),
        param_names=(*attr.get("bx", ()), *attr.get("bp", ())),
    )
