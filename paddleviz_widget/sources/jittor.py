"""A Graph from Jittor's trace data (``jt.dump_trace_data()``, the data JittorVis serves).

Jittor records an op-and-variable graph of what ran, forward and backward together. In our
Graph model:

- every op is a node (kind "op", ``name`` its Jittor name such as "binary.add", ``ptr`` its
  Jittor id in hex); an op whose outputs nothing consumes is kind "output", with the first
  output variable as its ``tensor``;
- every variable becomes the edges from the op that produced it to each op that consumes it
  (once per input position, so ``x * x`` gives two), with the variable's dtype and shape as the
  edge's ``grad``, its name (or ``v<id>``) as the edge's ``slot``, and the consumer's input
  position as its ``index``. Edges follow the data, producer to consumer, in forward and
  backward alike (``meta.jittor.direction`` says so);
- a variable no recorded op produced (a parameter made before the trace, an input) is a node
  of kind "param" named by its ``attrs.name``, with its shape and dtype;
- each op's and leaf's stacks become nested layer groups, named by the dotted path of the stack
  names ("model.linear1"; backward ops sit under "grad", optimizer ops under the optimizer);
  the innermost stack's file and line are the node's call site;
- ``meta.jittor`` holds what the schema has no field for: ``grad_of`` (backward op -> the
  forward op its ``grad_op_id`` names) and ``executions`` (each entry of ``execute_op_info``:
  ``jit_key``, generated ``file_path``, the fused ``ops``), which the inspector shows per node.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import PaddlevizError, SourceFileError
from ..graph.check import MAX_GROUP_DEPTH, check_parts
from ..graph.groups import with_ancestors
from ..graph.model import CallSite, Edge, GradInfo, Graph, Group, Node, ParamInfo, Slot
from ..graph.parts import GraphParts
from .jittor_format import (
    JittorFileError,
    JittorTrace,
    JtNode,
    JtStack,
    load_jittor_data,
    parse_jittor_trace,
    parse_shape,
)

# Raw frames (no Module on the stack) inside Jittor itself are not where the user called.
_JITTOR_FILE = re.compile(r"[\\/]jittor[\\/]")
GroupPath = tuple[tuple[str, str], ...]  # ((name, type), ...) outermost first


def var_label(var: JtNode) -> str:
    return var.name or f"v{var.id}"


def var_info(var: JtNode) -> GradInfo:
    return GradInfo(dtype=var.attrs.get("dtype") or None, shape=parse_shape(var.attrs.get("shape")))


def _module_path(stacks: Iterable[JtStack]) -> GroupPath:
    return tuple((s.name or s.type, s.type) for s in stacks if s.type)


def _call_site(stacks: tuple[JtStack, ...]) -> CallSite | None:
    """The innermost stack with a file; for raw frames the innermost outside Jittor."""
    located = [s for s in stacks if s.file and s.line > 0]
    if not located:
        return None
    if not any(s.type for s in located):  # raw frames only: skip Jittor's own
        located = [s for s in located if not _JITTOR_FILE.search(s.file)] or located
    s = located[-1]
    return CallSite(s.file, s.line)


class _Groups:
    """Group ids for stack paths, parents made before children, in first-use order."""

    def __init__(self) -> None:
        self.ids: dict[GroupPath, str] = {}
        self.groups: list[Group] = []

    def id_of(self, path: GroupPath) -> str | None:
        # A loop, not recursion: a trace may nest modules thousands deep.
        known = self.ids.get(path)
        if known is not None or not path:
            return known
        parent: str | None = None
        for depth in range(1, len(path) + 1):
            prefix = path[:depth]
            gid = self.ids.get(prefix)
            if gid is None:
                gid = self.ids[prefix] = f"g{len(self.groups)}"
                name = ".".join(n for n, _ in prefix)
                self.groups.append(Group(gid, name, prefix[-1][1], parent))
            parent = gid
        return parent


def _common_prefix(paths: list[GroupPath]) -> GroupPath:
    if not paths:
        return ()
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        n = min(n, len(p))
        n = next((k for k in range(n) if p[k] != first[k]), n)
    return first[:n]


def graph_from_trace(trace: JittorTrace) -> Graph:
    nodes_in = trace.nodes
    ops = [n for n in nodes_in.values() if not n.is_var]
    op_ids = {n.id for n in ops}

    def producer(var: JtNode) -> int | None:
        return next((i for i in var.inputs if i in op_ids), None)

    # Edges by consumer input; leaves are the variables consumed with no recorded producer.
    wires: list[tuple[int, JtNode | None, int, JtNode]] = []  # (source id, var, index, op)
    consumers: dict[int, list[JtNode]] = {}
    unrecorded = 0
    for op in ops:
        for index, vid in enumerate(op.inputs):
            var = nodes_in.get(vid)
            if var is None:
                unrecorded += 1
            elif not var.is_var:  # not what Jittor records, but an op -> op link is still one
                wires.append((var.id, None, index, op))
            else:
                src = producer(var)
                wires.append((var.id if src is None else src, var, index, op))
                consumers.setdefault(var.id, []).append(op)
    leaves = [nodes_in[v] for v in consumers if producer(nodes_in[v]) is None]

    groups = _Groups()
    path_of = {op.id: _module_path(op.stacks) for op in ops}
    too_deep = [i for i, p in path_of.items() if len(p) > MAX_GROUP_DEPTH]
    for i in too_deep:  # the explorer draws layer trees up to MAX_GROUP_DEPTH deep
        path_of[i] = path_of[i][:MAX_GROUP_DEPTH]
    # A leaf sits in the innermost group all its consumers share (a weight in its layer).
    for leaf in leaves:
        path_of[leaf.id] = _common_prefix([path_of[c.id] for c in consumers[leaf.id]])
    sources = {src for src, *_ in wires}

    nodes: list[Node] = []
    for jt_node in sorted([*ops, *leaves], key=lambda n: n.id):
        nodes.append(_node(jt_node, nodes_in, groups.id_of(path_of[jt_node.id]), sources))
    edges = [
        Edge(
            f"e{k}",
            f"n{src}",
            f"n{op.id}",
            index,
            None if var is None else var_info(var),
            None if var is None else var_label(var),
        )
        for k, (src, var, index, op) in enumerate(wires)
    ]
    keep = with_ancestors((n.group for n in nodes), {g.id: g.parent for g in groups.groups})
    meta = {
        "source": "jittor",
        "annotations": ["jittor"],
        "outputs": [{"label": _output_label(n), "node": n.id} for n in nodes if n.kind == "output"],
        "jittor": _jittor_meta(trace, op_ids, unrecorded),
    }
    notices = []
    if unrecorded:
        notices.append(
            f"{unrecorded} op input(s) are not in the trace (computed before it started): "
            "those edges are missing"
        )
    if too_deep:
        notices.append(
            f"{len(too_deep)} op(s) ran more than {MAX_GROUP_DEPTH} modules deep: they are "
            f"shown in their module at depth {MAX_GROUP_DEPTH}, the deeper modules left out"
        )
    if notices:
        meta["notice"] = notices[0]
    if len(notices) > 1:
        meta["notices"] = notices
    return Graph(tuple(nodes), tuple(edges), tuple(g for g in groups.groups if g.id in keep), meta)


def _node(n: JtNode, nodes_in: Mapping[int, JtNode], group: str | None, sources: set[int]) -> Node:
    site = _call_site(n.stacks)
    if n.is_var:
        info = var_info(n)
        param = ParamInfo(var_label(n), info.shape, info.dtype)
        return Node(f"n{n.id}", n.name or "var", hex(n.id), "param", group, param, site)

    def slot(vid: int) -> Slot:
        var = nodes_in.get(vid)
        return Slot(f"v{vid}") if var is None else Slot(var_label(var), grad=var_info(var))

    outputs = tuple(slot(v) for v in dict.fromkeys(n.outputs))
    kind = "op" if n.id in sources else "output"
    tensor = outputs[0].grad if kind == "output" and outputs else None
    return Node(
        f"n{n.id}",
        n.name or "op",
        hex(n.id),
        kind,
        group,
        None,
        site,
        inputs=tuple(slot(v) for v in n.inputs),
        outputs=outputs,
        tensor=tensor,
    )


def _output_label(node: Node) -> str:
    return node.outputs[0].name if node.outputs else node.name


def _jittor_meta(trace: JittorTrace, op_ids: set[int], unrecorded: int) -> dict[str, Any]:
    grad_of: dict[str, str] = {}
    unmatched = 0
    for n in trace.nodes.values():
        ref = n.attrs.get("grad_op_id")
        if n.is_var or ref is None:
            continue
        try:
            fwd = int(ref)
        except ValueError:
            fwd = -1
        if fwd in op_ids:
            grad_of[f"n{n.id}"] = f"n{fwd}"
        else:
            unmatched += 1
    executions = []
    for e in trace.executions:
        entry: dict[str, Any] = {
            "key": e.key,
            "jit_key": e.jit_key,
            "ops": [f"n{i}" for i in e.ops if i in op_ids],
        }
        if e.file_path:
            entry["file_path"] = e.file_path
        if e.attrs:
            entry["attrs"] = dict(e.attrs)
        executions.append(entry)
    meta: dict[str, Any] = {
        "direction": "dataflow",
        "ops": len(op_ids),
        "variables": sum(1 for n in trace.nodes.values() if n.is_var),
        "grad_of": grad_of,
        "executions": executions,
        "fused_groups": sum(1 for e in executions if len(e["ops"]) > 1),
    }
    if unmatched:
        meta["grad_of_unrecorded"] = unmatched
    if unrecorded:
        meta["unrecorded_inputs"] = unrecorded
    return meta


def load_jittor_graph(data: Any) -> Graph:
    """The graph of Jittor trace data: the dict ``jt.dump_trace_data()`` returns, or the path
    of a .pkl (or .json) file holding it.

    A .pkl/.pickle file is unpickled, and unpickling runs whatever code the file names: only
    open files you made or trust; other suffixes than those and .json are refused. Data not in
    the format raises ``JittorFormatError`` (a ValueError) naming the missing key, and the file
    (``JittorFileError``) when it came from one.
    """
    loaded = load_jittor_data(data)
    try:
        graph = graph_from_trace(parse_jittor_trace(loaded))
        check_parts(GraphParts(graph.nodes, graph.edges, graph.groups, graph.meta))
    except PaddlevizError as exc:
        if isinstance(data, Mapping) or isinstance(exc, SourceFileError):
            raise
        raise JittorFileError(Path(data).expanduser(), str(exc)) from None
    return graph


def build_graph_from_jittor(data: Any) -> dict[str, Any]:
    """The graph of Jittor trace data as the JSON document ``build_graph(y)`` returns
    (``SCHEMA_VERSION``): ``data`` is the dict ``jt.dump_trace_data()`` returns, or the path of
    a .json, .pkl or .pickle file holding it. Unpickling runs whatever code the file names:
    only pass .pkl files you made or trust. Data not in the format raises
    ``JittorFormatError`` naming the missing key; a file, ``JittorFileError`` naming it."""
    return load_jittor_graph(data).to_dict()
