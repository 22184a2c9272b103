"""Graph <-> JSON: schema 2.2, a normalized and sparse document (graph.schema.json).

Values that repeat across a graph are written once, in tables, and referred to by position:

- ``tensors``: ``[dtype, shape, place]`` of every distinct gradient/tensor description. Edge
  ``grad``, node ``tensor`` and slot entries hold an index into it.
- ``files`` and ``sites``: a call site is ``sites[k] = [file index, line, function]``
  (``function`` null when unknown); a node's ``call_site`` is ``k``.
- ``ops``: the slot signature of each op name, ``{"inputs": [{"name", "tensor"}], "outputs":
  [...]}`` (``tensor``: the tensor name Paddle's log gives the slot, e.g. "@Grad"; left off
  when it gives none). A node's slot list then holds, per slot, the ``tensors`` index (null: no
  description) and takes name and tensor name from its op's signature at the same position;
  a slot that differs from the signature is spelled out as ``{"name", "tensor", "grad"}``.

Schema 2.1 adds gradient statistics (``trace(stats=True)``): an edge's ``stats`` is
``[norm, max_abs, mean_abs, zero_fraction, nan, inf]`` (GradStats.FIELDS order) and a
parameter node's ``grad_status`` is "zero" or "none" when its gradient is not a normal one.
2.0 documents have neither and still read.

Schema 2.2 adds diffs (graph/diff.py): a node's or edge's ``diff`` is ``{"status": "added" |
"removed" | "changed", "changes": [{"field", "of", "a", "b"}]}`` (``of`` left off for an edge's
gradient), and ``meta.diff`` says what was compared. 2.1 and 2.0 documents still read.

Everything else is sparse: a field that is null, empty, ``kind`` "op" or edge ``index`` 0 is
left off. Ids (``n<k>``, ``e<k>``, ``g<k>``), ``ptr`` and ``meta`` are written as they are.
``decode`` also reads the 1.0 nested layout (graph/codec_v1.py), so saved documents still load.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Optional, TypeVar

from .codec_v1 import decode_v1
from .parts import (
    CallSite,
    Change,
    DiffMark,
    Edge,
    GradInfo,
    GradStats,
    GraphParts,
    Group,
    Node,
    ParamInfo,
    Slot,
)

SCHEMA_VERSION = "2.2"
READS = ("2.2", "2.1", "2.0")  # and 1.0, through codec_v1

T = TypeVar("T")
SlotSig = tuple[tuple[str, Optional[str]], ...]  # (name, tensor name) per slot; runs on 3.9


class _Table:
    """Interns hashable values in first-use order: value -> index."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def ref(self, value: Any) -> int:
        k = self.index.get(value)
        if k is None:
            k = self.index[value] = len(self.index)
        return k


def _grad_key(g: GradInfo) -> tuple[str | None, tuple[int, ...] | None, str | None]:
    return (g.dtype, g.shape, g.place)


def _signatures(nodes: Sequence[Node]) -> dict[str, dict[str, SlotSig]]:
    """Per op name and side, the most common slot signature (ties: the first seen)."""
    seen: dict[tuple[str, str], Counter[SlotSig]] = {}
    for node in nodes:
        for side, slots in (("inputs", node.inputs), ("outputs", node.outputs)):
            if slots:
                sig = tuple((s.name, s.tensor) for s in slots)
                seen.setdefault((node.name, side), Counter())[sig] += 1
    ops: dict[str, dict[str, SlotSig]] = {}
    for (name, side), counts in seen.items():
        ops.setdefault(name, {})[side] = counts.most_common(1)[0][0]
    return ops


def _slot_spec(name: str, tensor: str | None) -> dict[str, Any]:
    return {"name": name} if tensor is None else {"name": name, "tensor": tensor}


def encode_parts(graph: GraphParts) -> dict[str, Any]:
    """The schema 2.2 document of ``graph`` (plain JSON types, deterministic)."""
    tensors, files, sites = _Table(), _Table(), _Table()
    ops = _signatures(graph.nodes)

    def grad(g: GradInfo | None) -> int | None:
        return None if g is None else tensors.ref(_grad_key(g))

    def slots(node: Node, side: str, values: tuple[Slot, ...]) -> list[Any]:
        sig = ops.get(node.name, {}).get(side, ())
        out: list[Any] = []
        for j, s in enumerate(values):
            if j < len(sig) and sig[j] == (s.name, s.tensor):
                out.append(grad(s.grad))
            else:
                spelled = _slot_spec(s.name, s.tensor)
                if s.grad is not None:
                    spelled["grad"] = grad(s.grad)
                out.append(spelled)
        return out

    nodes = []
    for n in graph.nodes:
        d: dict[str, Any] = {"id": n.id, "name": n.name, "ptr": n.ptr}
        if n.kind != "op":
            d["kind"] = n.kind
        if n.group is not None:
            d["group"] = n.group
        if n.param is not None:
            d["param"] = _param(n.param)
        if n.call_site is not None:
            c = n.call_site
            d["call_site"] = sites.ref((files.ref(c.file), c.line, c.function))
        if n.inputs:
            d["inputs"] = slots(n, "inputs", n.inputs)
        if n.outputs:
            d["outputs"] = slots(n, "outputs", n.outputs)
        if n.tensor is not None:
            d["tensor"] = grad(n.tensor)
        if n.grad_status is not None:
            d["grad_status"] = n.grad_status
        if n.diff is not None:
            d["diff"] = _diff_json(n.diff)
        nodes.append(d)
    outputs = {n.id: [s.name for s in n.outputs] for n in graph.nodes}
    edges = []
    for e in graph.edges:
        d = {"id": e.id, "source": e.source, "target": e.target}
        if e.index != 0:
            d["index"] = e.index
        if e.grad is not None:
            d["grad"] = grad(e.grad)
        if e.slot is not None:
            names = outputs.get(e.source, [])
            d["slot"] = names.index(e.slot) if e.slot in names else e.slot
        if e.stats is not None:
            d["stats"] = [getattr(e.stats, f) for f in GradStats.FIELDS]
        if e.diff is not None:
            d["diff"] = _diff_json(e.diff)
        if e.no_stats is not None:
            d["no_stats"] = e.no_stats
        edges.append(d)
    groups = []
    for g in graph.groups:
        d = {"id": g.id, "name": g.name, "type": g.type}
        if g.parent is not None:
            d["parent"] = g.parent
        groups.append(d)
    return {
        "schema_version": SCHEMA_VERSION,
        "tensors": [[dt, None if sh is None else list(sh), pl] for dt, sh, pl in tensors.index],
        "files": list(files.index),
        "sites": [list(site) for site in sites.index],
        "ops": {
            name: {side: [_slot_spec(*s) for s in sig] for side, sig in sides.items()}
            for name, sides in ops.items()
        },
        "nodes": nodes,
        "edges": edges,
        "groups": groups,
        "meta": dict(graph.meta),
    }


def _param(p: ParamInfo) -> dict[str, Any]:
    d: dict[str, Any] = {"name": p.name}
    if p.shape is not None:
        d["shape"] = list(p.shape)
    if p.dtype is not None:
        d["dtype"] = p.dtype
    return d


def _json_value(value: Any) -> Any:
    # A shape or a list of slot names (tuples in the parts), else a number, string or null.
    return list(value) if isinstance(value, tuple) else value


def _diff_json(mark: DiffMark) -> dict[str, Any]:
    if not mark.changes:
        return {"status": mark.status}
    changes = []
    for c in mark.changes:
        a, b = _json_value(c.a), _json_value(c.b)
        changes.append(
            {"field": c.field, "a": a, "b": b}
            if c.of is None
            else {"field": c.field, "of": c.of, "a": a, "b": b}
        )
    return {"status": mark.status, "changes": changes}


def _part_value(value: Any) -> Any:
    return tuple(_part_value(v) for v in value) if isinstance(value, list) else value


def _diff(value: Any) -> DiffMark | None:
    if value is None:
        return None
    changes = tuple(
        Change(c["field"], _part_value(c.get("a")), _part_value(c.get("b")), c.get("of"))
        for c in value.get("changes", ())
    )
    return DiffMark(value["status"], changes)


def decode_parts(doc: Mapping[str, Any]) -> GraphParts:
    """The parts of a schema 2.x or 1.0 document. ValueError says what is wrong with it."""
    if not isinstance(doc, Mapping):
        raise ValueError(f"a graph document is a JSON object, not {type(doc).__name__}")
    version = doc.get("schema_version")
    try:
        if version in READS:
            return _decode_v2(doc)
        if version == "1.0":
            return decode_v1(doc)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"malformed schema {version} graph document: {type(exc).__name__}: {exc}"
        ) from exc
    raise ValueError(
        f"unknown graph schema_version {version!r}: this paddleviz_widget reads "
        f"{', '.join(repr(v) for v in READS)} and '1.0'"
    )


def _at(table: Sequence[T], k: Any, what: str, where: str) -> T:
    """table[k], or a ValueError naming the broken reference."""
    if type(k) is not int or not 0 <= k < len(table):
        raise ValueError(f"{where}: {what} index {k!r} is out of range (table has {len(table)})")
    return table[k]


def _entry(value: Any, size: int, where: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != size:
        raise ValueError(f"{where}: expected a list of {size} items, got {value!r}")
    return value


def _stats(value: Any, where: str) -> GradStats | None:
    if value is None:
        return None
    norm, max_abs, mean_abs, zeros, nan, inf = _entry(
        value, len(GradStats.FIELDS), f"{where} stats"
    )
    return GradStats(float(norm), float(max_abs), float(mean_abs), float(zeros), int(nan), int(inf))


def _shape(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(value)


def _decode_v2(doc: Mapping[str, Any]) -> GraphParts:
    tensors = []
    for k, t in enumerate(doc["tensors"]):
        dtype, shape, place = _entry(t, 3, f"tensors[{k}]")
        tensors.append(GradInfo(dtype, _shape(shape), place))
    files: list[str] = list(doc["files"])
    sites = []
    for k, site in enumerate(doc["sites"]):
        f, line, function = _entry(site, 3, f"sites[{k}]")
        sites.append(CallSite(_at(files, f, "file", f"sites[{k}]"), line, function))
    ops: Mapping[str, Any] = doc["ops"]

    def grad(k: Any, where: str) -> GradInfo | None:
        return None if k is None else _at(tensors, k, "tensor", where)

    def slots(node: Mapping[str, Any], side: str) -> tuple[Slot, ...]:
        sig = ops.get(node["name"], {}).get(side, [])
        out = []
        for j, entry in enumerate(node.get(side, [])):
            where = f"node {node['id']} {side}[{j}]"
            if isinstance(entry, Mapping):
                name, tensor, k = entry["name"], entry.get("tensor"), entry.get("grad")
            else:
                spec = _at(sig, j, f"ops[{node['name']!r}].{side} slot", where)
                name, tensor, k = spec["name"], spec.get("tensor"), entry
            out.append(Slot(name, tensor, grad(k, where)))
        return tuple(out)

    nodes = []
    for n in doc["nodes"]:
        where = f"node {n['id']}"
        p = n.get("param")
        nodes.append(
            Node(
                id=n["id"],
                name=n["name"],
                ptr=n["ptr"],
                kind=n.get("kind", "op"),
                group=n.get("group"),
                param=None
                if p is None
                else ParamInfo(p["name"], _shape(p.get("shape")), p.get("dtype")),
                call_site=None
                if "call_site" not in n
                else _at(sites, n["call_site"], "site", where),
                inputs=slots(n, "inputs"),
                outputs=slots(n, "outputs"),
                tensor=grad(n.get("tensor"), where),
                grad_status=n.get("grad_status"),
                diff=_diff(n.get("diff")),
            )
        )
    outputs = {n.id: n.outputs for n in nodes}

    def slot(e: Mapping[str, Any]) -> str | None:
        k = e.get("slot")
        if k is None or isinstance(k, str):
            return k
        where = f"edge {e['id']}"
        return _at(outputs.get(e["source"], ()), k, f"slot (outputs of {e['source']})", where).name

    edges = tuple(
        Edge(
            id=e["id"],
            source=e["source"],
            target=e["target"],
            index=e.get("index", 0),
            grad=grad(e.get("grad"), f"edge {e['id']}"),
            slot=slot(e),
            stats=_stats(e.get("stats"), f"edge {e['id']}"),
            diff=_diff(e.get("diff")),
            no_stats=e.get("no_stats"),
        )
        for e in doc["edges"]
    )
    groups = tuple(Group(g["id"], g["name"], g["type"], g.get("parent")) for g in doc["groups"])
    return GraphParts(tuple(nodes), edges, groups, dict(doc.get("meta") or {}))
