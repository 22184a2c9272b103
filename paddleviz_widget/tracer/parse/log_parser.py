"""Parse the text Paddle's backward writes at VLOG 6 into one record per GradNode run.

Pure: text in, frozen dataclasses out; text it does not understand becomes a warning, never an
exception (a bug in the parser does raise). Everything is keyed on the shape of the log messages,
never on C++ file names or line numbers. The messages used, per run, in Paddle 3.3.1:

  ``MatmulGradNode(0x55d0c1e2f110) begin run``                     (VLOG 4) starts a run
  ``==== Running_AD_API_GRAD: matmul_grad ====``                   (VLOG 3) the grad API
  ``gradnode_ptr = 0x55d0c1e2f110``                                (VLOG 6) whose dump follows
  ``{ Input: [ ( grad_out , [{ ... }]), ... ] Output: [ ... ] }``  (VLOG 5 inputs, 6 outputs)
  ``MatmulGradNode(0x55..) Found pending node: AddGradNode(0x55..)``  (VLOG 4) one per edge
  ``... grad_output_tensor info Place(cpu),float32, (1, 10)``      (VLOG 6) that edge's gradient

Paddle 2.6 and 3.0 (the "legacy" dialect, tests/fixtures/logs/paddle-*) write the same slot
dumps on one line per slot (``TensorInfo: [ ... Shape: 2, 3, DistAttr: ... ]``) and instead:

  ``Preparing GradNode:MatmulGradNode addr:0x55d0c1e2f110``        starts a run
  ``Running AD API GRAD: matmul_grad``                             the grad API
  ``Node: MatmulGradNode addr:0x55.., Found pending node: AddGradNode addr: 0x55..``  an edge

with no per-edge gradient line (an edge's gradient is its Output slot) and no end-of-backward
line (a cut log shows as edges to nodes that never ran).

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
    "KNOWN_LOG_VERSIONS",
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
# Releases whose backward log was recorded and tested (tests/fixtures/logs); others may differ.
KNOWN_LOG_VERSIONS = ("2.6", "3.0", "3.3")

_NODE = r"(?P<{0}>[A-Za-z_][\w:]*)\((?P<{0}_ptr>0x[0-9a-fA-F]+)\)"
_BEGIN_RUN = re.compile(_NODE.format("node") + r" begin run")
_PENDING = re.compile(_NODE.format("src") + r" Found pending node: " + _NODE.format("dst"))
_LEGACY_NODE = r"(?P<{0}>[A-Za-z_][\w:]*) addr:\s*(?P<{0}_ptr>0x[0-9a-fA-F]+)"
_LEGACY_RUN = "Preparing GradNode:"
# The legacy lines end with a pointer: only a whole line (its newline seen) is trusted, so a log
# cut inside "0x55d0c1e2" never yields a wrong pointer.
_LEGACY_BEGIN_RUN = re.compile(_LEGACY_RUN + _LEGACY_NODE.format("node") + r"[ \t]*\n")
_LEGACY_PENDING = re.compile(
    r"Node: "
    + _LEGACY_NODE.format("src")
    + r", Found pending node: "
    + _LEGACY_NODE.format("dst")
    + r"[ \t]*\n"
)
_EDGE_GRAD = re.compile(
    r"grad_output_tensor info (?P<place>[^,\n]*),\s*(?P<dtype>[A-Za-z_]\w*),\s*"
    r"\((?P<dims>[-\d,\s]*)\)[ \t]*$"
)
# "Running_AD_API_GRAD: x====" (3.3), "Running AD API GRAD: x" / "... Grad: ..." (2.6, 3.0).
_API = re.compile(r"Running[_ ]AD[_ ]API[_ ]GRAD: (?P<api>[\w.]+)(?:=|[ \t]*\n)", re.IGNORECASE)
# 2.6/3.0's hand-written nodes (conv2d) log no banner; their grad kernel's line names the API.
_KERNEL_KEY = re.compile(r"^(?P<api>\w+_grad) API kernel key:")
_NODE_PTR = re.compile(r"^gradnode_ptr = (?P<ptr>0x[0-9a-fA-F]+)")
_DUMP = re.compile(r"^\s*\{\s*Input:")
_OUTPUT = re.compile(r"^[ \t]*Output:[ \t]*\[", re.M)
_START = "RunBackward: Start Backward"
_FINISH = "RunBackward: Finish Backward"
# Accumulation nodes write no slot dump in Paddle 3.3.1 (their input is their edge's gradient),
# nor does a PyLayer's node ("GradNodePyLayer_Cube"), whose backward is the user's Python.
# Program nodes (paddle.jit.to_static) run with VLOG off (capture/program_runs.py): whatever
# is logged after one begins, until the next run begins, is never read into it.
_PROGRAM_NODES = {"Dy2StGradNode", "RunProgramGradNode"}
_ACCUMULATION = "GradNodeAccumulation"
_NO_DUMP_NODES = {_ACCUMULATION, *_PROGRAM_NODES}
_NO_DUMP_PREFIX = "GradNodePyLayer"


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
    legacy: bool = False  # written by Paddle 2.6/3.0 (no per-edge gradient lines)


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
    dump_cut: bool = False  # its VLOG 6 dump passed glog's message limit: no outputs in it

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
        self.legacy = False

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
        whole = text if newline < 0 else text[: newline + 1]  # with its newline: not cut short
        if "begin run" in line and (m := _BEGIN_RUN.match(line)):
            self._begin(m)
        elif line.startswith(_LEGACY_RUN) and (m := _LEGACY_BEGIN_RUN.match(whole)):
            self.legacy = True
            self._begin(m)
        elif "Found pending node" in line:
            self._pending(whole)
        elif "grad_output_tensor info" in line:
            self._edge_grad(line)
        elif "Running_AD_API_" in line or "Running AD API G" in line:  # grad banners only
            self._api(whole)
        elif self.legacy and "_grad API kernel key" in line:
            run, m = self.current, _KERNEL_KEY.match(line)
            if run is not None and run.api is None and m:
                run.api = m.group("api")
        elif line.startswith("gradnode_ptr"):
            m = _NODE_PTR.match(line)
            target = self.by_ptr.get(_ptr(m.group("ptr")) or "") if m else None
            if target is None:
                self._lost("gradnode_ptr lines naming no running node")
            self.dump_target = target
        elif _START in line:
            self.open_backwards += 1
        elif _FINISH in line:
            self.open_backwards = max(0, self.open_backwards - 1)

    def _lost(self, issue: str) -> None:
        """Lines of a node whose begin line fell in a program's quiet time are expected."""
        run = self.current
        if run is None or run.name not in _PROGRAM_NODES:
            self.issues[issue] += 1

    def _begin(self, m: re.Match[str]) -> None:
        run = _Run(m.group("node"), _ptr(m.group("node_ptr")))
        if run.name == _ACCUMULATION:  # its API is its name: known before its banner (a log
            run.api = _ACCUMULATION  # cut there has lost nothing of it)
        self.runs.append(run)
        self.by_ptr[run.ptr or ""] = run
        self.dump_target = run
        self.last_edge = None

    def _pending(self, message: str) -> None:
        m = _PENDING.match(message) or _LEGACY_PENDING.match(message)
        if m is None:
            self.issues["unreadable 'Found pending node' lines"] += 1
            return
        run = self.by_ptr.get(_ptr(m.group("src_ptr")) or "")
        if run is None:
            self._lost("edges from nodes whose run is not in the log")
            self.last_edge = None
            return
        run.edges.append(PendingEdge(m.group("dst"), _ptr(m.group("dst_ptr")), None))
        self.last_edge = (run, len(run.edges) - 1)

    def _edge_grad(self, message: str) -> None:
        m = _EDGE_GRAD.search(message)
        if m is None or self.last_edge is None:
            self._lost("gradient lines not matched to an edge")
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
        elif run.name in _PROGRAM_NODES:
            pass  # a node whose begin line fell in the program's quiet time: not this run's
        elif run.api is None:
            run.api = m.group("api")

    def _dump(self, message: str) -> None:
        run = self.dump_target
        if run is None:
            self._lost("slot dumps outside a run")
            return
        if run.name in _PROGRAM_NODES:  # another node's, logged in the program's quiet time
            return
        if not _OUTPUT.search(message) and _cut_short(message):
            # glog cuts a message at 30,000 bytes: the VLOG 6 dump of an op with many inputs
            # (add_n of 40) lost its outputs there. Not a log below VLOG 6, as it was said.
            run.dump_cut = True
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
        if dump.problems or _cut_short(message):
            self.issues["tensor dumps not read completely"] += 1
        return dump

    def finish(self) -> ParsedLog:
        for run in self.runs:
            if run.input_dump is not None:
                run.inputs = self._read(run.input_dump).inputs
        if not self.runs:
            self.issues["no GradNode run found (is this a VLOG>=4 backward log?)"] += 1
        if self.open_backwards:  # unless it ended in a program's quiet time (paddle.grad)
            self._lost("log ends before backward finished")
        if self.legacy:  # no end-of-backward line: a cut log leaves pending nodes that never ran
            ran = set(self.by_ptr)
            never = {e.target_ptr for r in self.runs for e in r.edges} - ran
            if never:
                self.issues["edges to nodes that never ran (log cut short?)"] += len(never)
            last = self.runs[-1] if self.runs else None
            sent = last is not None and any(s.dtype for s in last.outputs or ())
            if sent and last is not None and not last.edges:  # cut before its edges were logged
                self.issues["log ends inside a run (cut short?)"] += 1
        for run in self.runs:
            if run.name in _NO_DUMP_NODES or (run.name or "").startswith(_NO_DUMP_PREFIX):
                continue
            if run.api is None:
                self.issues["runs without a grad API name"] += 1
            if run.outputs is None:
                self.issues[
                    _CUT if run.dump_cut else "runs without output slots (VLOG below 6?)"
                ] += 1
            if not self.legacy and any(edge.grad is None for edge in run.edges):
                self.issues["edges without a gradient line"] += 1
        runs = tuple(r.freeze() for r in self.runs)
        return ParsedLog(runs, _summary(self.issues), legacy=self.legacy)


# 2.6/3.0 dumps end "]), ]}" or "]), ] }" (their Output list closed); 2.6 leaves a "{" of
# each BackwardInMeta open, so their brackets cannot tell a whole dump from a cut one, and a
# dump cut after a slot's own "]}" ends in "]}" too.
_LEGACY_DUMP = re.compile(r"TensorInfo: \[")
_LEGACY_DUMP_END = re.compile(r"\]\)[ \t]*,[ \t]*\][ \t]*\}[ \t]*$")


def _cut_short(message: str) -> bool:
    if _LEGACY_DUMP.search(message):
        return _LEGACY_DUMP_END.search(message) is None
    opened = sum(message.count(c) for c in "([{")
    return opened != sum(message.count(c) for c in ")]}")


_CUT = "dumps cut at glog's 30,000-byte message limit (ops with many inputs)"


def _summary(issues: Counter[str]) -> tuple[str, ...]:
    if not issues:
        return ()
    parts = ", ".join(f"{what}: {count}" for what, count in sorted(issues.items()))
    # Only cut dumps: the log was the right one, so the hint to check it would mislead.
    expected = (
        "" if set(issues) == {_CUT} else " Expected the VLOG 6 log of Paddle 2.6, 3.0 or 3.3."
    )
    return (
        f"Paddle's backward log was only partly understood ({parts}); what could not be read "
        f"is left out.{expected}",
    )


def parse_backward_log(text: str) -> ParsedLog:
    """Every GradNode run in a captured backward log, in execution order; what the text does
    not say, or says in a form not known, is in ``warnings``."""
    return parse_glog_records(iter_records(text))


def parse_glog_records(records: Iterable[GlogRecord]) -> ParsedLog:
    """Same as parse_backward_log, for records already split (``CapturedStderr.records``)."""
    parser = _Parser()
    for record in records:
        parser.feed(record.message)
    return parser.finish()


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
