"""Open each program node (paddle.jit.to_static) into its program's backward ops: pure.

Each program node gets a group of type "to_static program" (inside the node's own layer group)
holding one node per backward op, in program order, grouped in turn by the layer that made the
op's forward where Paddle recorded it: the layer owning a parameter the op reads, else the
layer whose call path (``struct_name``) those ops share. Edges follow the gradient values
between ops, with the program's own dtype/shape; entering edges come from the program node
(the output gradients it is given), leaving edges go to the node that receives each gradient
the program sends (a parameter's accumulation node, named with the model's own name).
Hooks cannot see inside a program: its edges say so instead of carrying statistics.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...graph.model import Edge, GradInfo, Graph, Group, Node
from ..read.program import FAKE, ProgramOp, ProgramRead
from ..read.walk import WalkResult
from .annotate import NO_SOURCE, sources_meta

PROGRAM_GROUP_TYPE = "to_static program"
NO_STATS = (
    "inside a compiled program: Paddle runs it as one GradNode, so hooks see only the "
    "gradients entering and leaving it"
)


def _op_name(op_type: str) -> str:
    return op_type.removeprefix("pd_op.")


def _parent(struct: str) -> str:
    """The enclosing call path: "/NegLog/Linear/" -> "/NegLog/"."""
    return struct.rstrip("/").rpartition("/")[0] + "/"


def _layers_of(ops: tuple[ProgramOp, ...], names: dict[str, str]) -> list[str | None]:
    """Each op's layer path (None where Paddle recorded none we can place): the layer owning
    the parameters it reads; else the layer of its call path (``struct_name``), known from
    ops with parameters on that path, or from their call paths' ancestors (``/NegLog/`` is
    the parent of ``/NegLog/Linear/``, so the layer holding ``block.fc``: ``block``), the
    nearest known one up the op's own path. A path two layers claim is left out."""

    def owner(param: str) -> str | None:
        full = names.get(param)
        return full.rsplit(".", 1)[0] if full and "." in full else None

    by_struct: dict[str, str] = {}
    for op in ops:
        layers = {o for p in op.params if (o := owner(p))}
        if op.struct_name and len(layers) == 1:
            by_struct.setdefault(op.struct_name, layers.pop())
    known: dict[str, str | None] = dict(by_struct)
    for struct, layer in by_struct.items():
        struct, layer = _parent(struct), layer.rpartition(".")[0]
        while struct.strip("/") and layer:
            if known.setdefault(struct, layer) != layer:
                known[struct] = None  # two layers: not known
            struct, layer = _parent(struct), layer.rpartition(".")[0]

    def by_path(struct: str | None) -> str | None:
        while struct and struct.strip("/"):
            if struct in known:
                return known[struct]
            struct = _parent(struct)
        return None

    result: list[str | None] = []
    for op in ops:
        layers = {o for p in op.params if (o := owner(p))}
        result.append(layers.pop() if len(layers) == 1 else by_path(op.struct_name))
    return result


def with_program_ops(
    graph: Graph, walk: WalkResult, programs: dict[int, ProgramRead],
    param_names: dict[str, str], layer_types: dict[str, str],
) -> Graph:  # fmt: skip
    """``programs``: walk index of a program node -> its program; ``param_names``: param.name
    -> the model's name ("linear_0.w_0" -> "fc1.weight"); ``layer_types``: path -> class."""
    if not programs:
        return graph
    nodes, edges, groups = list(graph.nodes), list(graph.edges), list(graph.groups)
    by_id = {n.id: n for n in graph.nodes}
    targets = {(e.source, e.slot): e.target for e in walk.edges}
    for index, program in sorted(programs.items()):
        owner = by_id[f"n{index}"]
        pid = f"p{index}"
        groups.append(Group(pid, f"{owner.name} program", PROGRAM_GROUP_TYPE, owner.group))
        layer_groups: dict[str, str] = {}
        producer: dict[int, tuple[str, int]] = {}  # value -> (op node id, output position)
        layers = _layers_of(program.ops, param_names)
        received = {n: k for k, n in enumerate(program.received)}
        k_edge = 0

        def add_edge(
            source: str, target: str, value: int, position: int,
            program: ProgramRead = program, pid: str = pid,
        ) -> None:  # fmt: skip
            nonlocal k_edge
            v = program.values[value]
            grad = GradInfo(dtype=v.dtype, shape=v.shape) if v.shape is not None else None
            edges.append(Edge(f"{pid}_e{k_edge}", source, target, position, grad,
                              no_stats=NO_STATS))  # fmt: skip
            k_edge += 1

        for k, (op, layer) in enumerate(zip(program.ops, layers)):
            if op.sink is not None:  # the program hands this gradient out
                if op.sink == FAKE or op.sink not in program.sends or not op.inputs:
                    continue
                slot = program.sends.index(op.sink)
                target = targets.get((index, slot))
                source = producer.get(op.inputs[0])
                if target is not None and source is not None:
                    add_edge(source[0], f"n{target}", op.inputs[0], source[1])
                continue
            group = pid
            if layer is not None:
                if layer not in layer_groups:
                    layer_groups[layer] = f"{pid}_g{len(layer_groups)}"
                    groups.append(Group(layer_groups[layer], layer,
                                        layer_types.get(layer, "Layer"), pid))  # fmt: skip
                group = layer_groups[layer]
            node_id = f"{pid}_o{k}"
            nodes.append(Node(id=node_id, name=_op_name(op.type), ptr=owner.ptr,
                              kind="program_op", group=group, call_site=op.call_site))  # fmt: skip
            for value in op.inputs:
                name = program.values[value].name
                if value in producer:
                    add_edge(producer[value][0], node_id, value, producer[value][1])
                elif name in received:
                    add_edge(owner.id, node_id, value, received[name])
            for position, value in enumerate(op.outputs):
                producer[value] = (node_id, position)
    meta = dict(graph.meta)
    meta["annotations"] = sorted({*meta.get("annotations", ()), "program"})
    known = meta.get("sources", {})
    walked = known.get("edges", NO_SOURCE * len(graph.edges))
    added = (NO_SOURCE if e.grad is None else "s" for e in edges[len(graph.edges) :])
    sources = sources_meta([*walked, *added]) or {"edges": NO_SOURCE * len(edges), "codes": {}}
    fields = _program_node_fields(known, nodes[len(graph.nodes) :], len(graph.nodes))
    if fields:
        sources["nodes"] = fields
    codes = {**known.get("codes", {}), **sources["codes"], "s": "program"}
    used = set(sources["edges"]).union(*fields.values()) - {NO_SOURCE}
    sources["codes"] = {c: codes[c] for c in sorted(used)}
    if used:
        meta["sources"] = sources
    return replace(graph, nodes=tuple(nodes), edges=tuple(edges), groups=tuple(groups), meta=meta)


def _program_node_fields(known: dict[str, Any], added: list[Node], walked: int) -> dict[str, str]:
    """meta.sources' node fields with the program's op nodes added: their group and call site
    come from the program ("s")."""
    fields = dict(known.get("nodes", {}))
    for name in ("group", "call_site"):
        codes = "".join("s" if getattr(n, name) is not None else NO_SOURCE for n in added)
        if name in fields or codes.strip(NO_SOURCE):
            fields[name] = fields.get(name, NO_SOURCE * walked) + codes
    if "param" in fields:
        fields["param"] += NO_SOURCE * len(added)
    return fields
