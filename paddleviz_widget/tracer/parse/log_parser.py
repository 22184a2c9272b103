"""Parse the text Paddle's backward writes at VLOG 6 into one record per GradNode run.

Pure: text in, frozen dataclasses out, never raises. Everything is keyed on the shape of the log
messages (Paddle 3.3.1), never on C++ file names or line numbers. The messages used, per run:

  ``MatmulGradNode(0x55d0c1e2f110) begin run``                     (VLOG 4) starts a run
  ``==== Running_AD_API_GRAD: matmul_grad ====``                   (VLOG 3) the grad API
  ``gradnode_ptr = 0x55d0c1e2f110``                                (VLOG 6) whose dump follows
  ``{ Input: [ ( grad_out , [{ ... }]), ... ] Output: [ ... ] }``  (VLOG 5 inputs, 6 outputs)
  ``MatmulGradNode(0x55..) Found pending node: AddGradNode(0x55..)``  (VLOG 4) one per edge
  ``... grad_output_tensor info Place(cpu),float32, (1, 10)``      (VLOG 6) that edge's gradient

Edges: Paddle walks a node's output metas slot by slot, rank by rank, and logs "Found pending
node" for each edge that has a target; ``next_functions`` lists the same metas in the same order
with None where there is no target. So the k-th logged edge of a run is the k-th non-None entry
of the node's ``next_functions``, and the flattened Output slots line up with ``next_functions``
one to one (None entries included). ``edge_grads`` applies this and checks the target pointers.

Why VLOG 6 (REQUIRED_VLOG_LEVEL): output slots, ``gradnode_ptr`` and the per-edge gradient lines
exist only from 6 on; 5 has input slots only, 4 node runs and edges only, 3 node names only.
Measured on Paddle 3.3.1 CPU, backward of ResNet-50 (1x3x224x224): log 0.17 / 0.45 / 0.73 / 2.5 MB
at levels 3 / 4 / 5 / 6, backward 1.02x / 1.00x / 1.04x / 1.09x of plain; LeNet: 14 KB to 150 KB,
0.24 ms plain to 2.6 ms at 6 (per-node costs dominate tiny models). Levels above 6 add more.

Runs keep the pointers the log shows. ``paddle.grad(...)`` runs on copies of the GradNodes, so
its runs carry different pointers from ``y.grad_fn``; ``Tensor.backward`` runs the originals.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .log_records import GlogRecord, iter_records
from .log_slots import LoggedSlot, SlotDump, normalize_place, parse_dims, parse_slot_dump

__all__ = [
    "REQUIRED_VLOG_LEVEL",
    "GradNodeRun",
    "LoggedSlot",
    "ParsedLog",
    "PendingEdge",
    "edge_grads",
    "parse_backward_log",
    "parse_glog_records",
]

REQUIRED_VLOG_LEVEL = 6

_NODE = r"(?P<{0}>[A-Za-z_][\w:]*)\((?P<{0}_ptr>0x[0-9a-fA-F]+)\)"
_BEGIN_RUN = re.compile(_NODE.format("node") + r" begin run")
_PENDING = re.compile(_NODE.format("src") + r" Found pending node: " + _NODE.format("dst"))
_EDGE_GRAD = re.compile(
    r"grad_output_tensor info (?P<place>[^,\n]*),\s*(?P<dtype>[A-Za-z_]\w*),\s*"
    r"\((?P<dims>[-\d,\s]*)\)[ \t]*$"
)
_API = re.compile(r"Running_AD_API_GRAD: (?P<api>[\w.]+)=", re.IGNORECASE)
_NODE_PTR = re.compile(r"^gradnode_ptr = (?P<ptr>0x[0-9a-fA-F]+)")
_DUMP = re.compile(r"^\s*\{\s*Input:")
_OUTPUT = re.compile(r"^[ \t]*Output:[ \t]*\[", re.M)
_START = "RunBackward: Start Backward"
_FINISH = "RunBackward: Finish Backward"
# Accumulation nodes write no slot dump in Paddle 3.3.1; their input is their edge's gradient.
_NO_DUMP_NODES = {"GradNodeAccumulation"}


@dataclass(frozen=True)
class PendingEdge:
    """An edge the run handed a gradient to, in the order Paddle logged it."""

    target_name: str | None
    target_ptr: str | None
    grad: LoggedSlot | None  # dtype/shape/place only (name and tensor are None)


@dataclass(frozen=True)
class GradNodeRun:
    node_name: str | None
    ptr: str | None  # lowercase hex, e.g. "0x55f1b89da720"
    api: str | None  # e.g. "matmul_grad"; "GradNodeAccumulation" for accumulation nodes
    inputs: tuple[LoggedSlot, ...]
    outputs: tuple[LoggedSlot, ...]
    edges: tuple[PendingEdge, ...] = ()


@dataclass(frozen=True)
class ParsedLog:
    runs: tuple[GradNodeRun, ...]  # in the order they executed
    warnings: tuple[str, ...] = ()  # at most one, summarising everything not understood


def _ptr(text: str | None) -> str | None:
    """Canonical pointer text: lowercase, no leading zeros ("0x55f1b89da720")."""
    if text is None:
        return None
    try:
        return hex(int(text, 16))
    except ValueError:
        return text.lower()


@dataclass
class _Run:
    name: str | None
    ptr: str | None
    api: str | None = None
    inputs: tuple[LoggedSlot, ...] | None = None
    outputs: tuple[LoggedSlot, ...] | None = None
    edges: list[PendingEdge] = field(default_factory=list)
    input_dump: str | None = None  # an inputs-only dump not read yet

    def freeze(self) -> GradNodeRun:
        return GradNodeRun(
            self.name, self.ptr, self.api, self.inputs or (), self.outputs or (), tuple(self.edges)
        )


class _Parser:
    def __init__(self) -> None:
        self.runs: list[_Run] = []
        self.by_ptr: dict[str, _Run] = {}
        self.dump_target: _Run | None = None
        self.last_edge: tuple[_Run, int] | None = None
        self.issues: Counter[str] = Counter()
        self.open_backwards = 0

    @property
    def current(self) -> _Run | None:
        return self.runs[-1] if self.runs else None

    def feed(self, message: str) -> None:
        text = message.lstrip()
        if text.startswith("{"):
            if _DUMP.match(text):
                self._dump(text)
            return
        # Every other message read is one line; looking only there keeps dumps out of the scans.
        newline = text.find("\n")
        line = text if newline < 0 else text[:newline]
        if "begin run" in line and (m := _BEGIN_RUN.match(line)):
            run = _Run(m.group("node"), _ptr(m.group("node_ptr")))
            self.runs.append(run)
            self.by_ptr[run.ptr or ""] = run
            self.dump_target = run
            self.last_edge = None
        elif "Found pending node" in line:
            self._pending(line)
        elif "grad_output_tensor info" in line:
            self._edge_grad(line)
        elif "Running_AD_API_" in line:  # grad banners; forward ones read "Running_AD_API:"
            self._api(line)
        elif line.startswith("gradnode_ptr"):
            m = _NODE_PTR.match(line)
            target = self.by_ptr.get(_ptr(m.group("ptr")) or "") if m else None
            if target is None:
                self.issues["gradnode_ptr lines naming no running node"] += 1
            self.dump_target = target
        elif _START in line:
            self.open_backwards += 1
        elif _FINISH in line:
            self.open_backwards = max(0, self.open_backwards - 1)

    def _pending(self, message: str) -> None:
        m = _PENDING.match(message)
        if m is None:
            self.issues["unreadable 'Found pending node' lines"] += 1
            return
        run = self.by_ptr.get(_ptr(m.group("src_ptr")) or "")
        if run is None:
            self.issues["edges from nodes whose run is not in the log"] += 1
            self.last_edge = None
            return
        run.edges.append(PendingEdge(m.group("dst"), _ptr(m.group("dst_ptr")), None))
        self.last_edge = (run, len(run.edges) - 1)

    def _edge_grad(self, message: str) -> None:
        m = _EDGE_GRAD.search(message)
        if m is None or self.last_edge is None:
            self.issues["gradient lines not matched to an edge"] += 1
            return
        run, k = self.last_edge
        dims, place = parse_dims(m.group("dims")), normalize_place(m.group("place"))
        grad = LoggedSlot(None, None, m.group("dtype"), dims, place)
        edge = run.edges[k]
        run.edges[k] = PendingEdge(edge.target_name, edge.target_ptr, grad)
        self.last_edge = None

    def _api(self, message: str) -> None:
        m = _API.search(message)
        run = self.current
        if m is None or run is None:
            self.issues["API banners outside a run"] += 1
        elif run.api is None:
            run.api = m.group("api")

    def _dump(self, message: str) -> None:
        run = self.dump_target
        if run is None:
            self.issues["slot dumps outside a run"] += 1
            return
        if not _OUTPUT.search(message):
            # VLOG 5's inputs-only dump: VLOG 6 repeats the same inputs with the outputs, so
            # read it only if no fuller dump follows (parsing is most of the cost).
            run.input_dump = run.input_dump or message
            return
        dump = self._read(message)
        run.inputs, run.outputs, run.input_dump = dump.inputs, dump.outputs, None
        self.dump_target = self.current

    def _read(self, message: str) -> SlotDump:
        dump = parse_slot_dump(message)
        if dump.problems or _unbalanced(message):
            self.issues["tensor dumps not read completely"] += 1
        return dump

    def finish(self) -> ParsedLog:
        for run in self.runs:
            if run.input_dump is not None:
                run.inputs = self._read(run.input_dump).inputs
        if not self.runs:
            self.issues["no GradNode run found (is this a VLOG>=4 backward log?)"] += 1
        if self.open_backwards:
            self.issues["log ends before backward finished"] += 1
        for run in self.runs:
            if run.name in _NO_DUMP_NODES:
                continue
            if run.api is None:
                self.issues["runs without a grad API name"] += 1
            if run.outputs is None:
                self.issues["runs without output slots (VLOG below 6?)"] += 1
            if any(edge.grad is None for edge in run.edges):
                self.issues["edges without a gradient line"] += 1
        return ParsedLog(tuple(r.freeze() for r in self.runs), _summary(self.issues))


def _unbalanced(message: str) -> bool:
    opened = sum(message.count(c) for c in "([{")
    return opened != sum(message.count(c) for c in ")]}")


def _summary(issues: Counter[str]) -> tuple[str, ...]:
    if not issues:
        return ()
    parts = ", ".join(f"{what}: {count}" for what, count in sorted(issues.items()))
    return (
        f"backward log only partly understood ({parts}); fields that could not be read are None. "
        "Expected the VLOG 6 output of Paddle 3.3.",
    )


def parse_backward_log(text: str) -> ParsedLog:
    """Every GradNode run in a captured backward log, in execution order. Never raises."""
    return parse_glog_records(iter_records(text))


def parse_glog_records(records: Iterable[GlogRecord]) -> ParsedLog:
    """Same as parse_backward_log, for records already split (``CapturedStderr.records``)."""
    parser = _Parser()
    try:
        for record in records:
            parser.feed(record.message)
        return parser.finish()
    except Exception as exc:  # noqa: BLE001 - a parser bug must not break the user's backward
        runs = tuple(r.freeze() for r in parser.runs)
        note = f"backward log parser failed ({type(exc).__name__}: {exc}); later runs are missing"
        return ParsedLog(runs, (note,))


def edge_grads(run: GradNodeRun, next_ptrs: Sequence[str | int | None]) -> dict[int, LoggedSlot]:
    """next_functions index -> the gradient this run sent along that edge.

    ``next_ptrs`` is the node's ``next_functions`` as pointers (None where the entry is None).
    dtype/shape/place come from the edge's gradient line, else from the Output slot at the same
    index; the slot name and tensor name come from that Output slot. Logged edges whose target
    pointer disagrees with ``next_ptrs`` are not used.
    """
    ptrs = [None if p is None else (hex(p) if isinstance(p, int) else _ptr(p)) for p in next_ptrs]
    present = [i for i, p in enumerate(ptrs) if p is not None]
    from_edges: dict[int, LoggedSlot] = {}
    for k, edge in enumerate(run.edges[: len(present)]):
        index = present[k]
        if edge.target_ptr is not None and edge.target_ptr != ptrs[index]:
            break  # from here the log's edge order differs from next_functions: stop using it
        if edge.grad is not None:
            from_edges[index] = edge.grad
    outputs = run.outputs if len(run.outputs) == len(ptrs) else ()
    result: dict[int, LoggedSlot] = {}
    for index in present:
        slot = outputs[index] if outputs else None
        grad = from_edges.get(index) or slot
        if grad is None:
            continue
        result[index] = LoggedSlot(
            slot.name if slot else None, slot.tensor if slot else None,
            grad.dtype, grad.shape, grad.place,
        )  # fmt: skip
    return result
