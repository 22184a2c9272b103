"""Graph <-> JSON: schema 2.3, a normalized and sparse document (graph.schema.json).

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
gradient), and ``meta.diff`` says what was compared. Schema 2.3 adds ``meta.sources.nodes``:
where each node's layer group, parameter name and call site came from. 2.2, 2.1 and 2.0
documents still read.

Everything else is sparse: a field that is null, empty, ``kind`` "op" or edge ``index`` 0 is
left off. Ids (``n<k>``, ``e<k>``, ``g<k>``), ``ptr`` and ``meta`` are written as they are.
``decode`` also reads the 1.0 nested layout (graph/codec_v1.py), so saved documents still load.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from operator import attrgetter
from typing import Any, Optional, TypeVar

from .decode import READS, decode_parts
from .parts import (
    DiffMark,
    GradInfo,
    GradStats,
    GraphParts,
    GraphRows,
    NodeRow,
    ParamInfo,
    Slot,
    rows_of,
)

__all__ = ["READS", "SCHEMA_VERSION", "decode_parts", "encode_parts", "encode_rows"]

SCHEMA_VERSION = "2.3"

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


def _signatures(nodes: Iterable[NodeRow]) -> dict[str, dict[str, SlotSig]]:
    """Per op name and side, the most common slot signature (ties: the first seen)."""
    seen: dict[tuple[str, str], Counter[SlotSig]] = {}
    for _, name, _, _, _, _, _, inputs, outputs, *_ in nodes:
        if inputs:  # most nodes of a big graph have no slots (no log): one test each
            sig = tuple([(s.name, s.tensor) for s in inputs])
            seen.setdefault((name, "inputs"), Counter())[sig] += 1
        if outputs:
            sig = tuple([(s.name, s.tensor) for s in outputs])
            seen.setdefault((name, "outputs"), Counter())[sig] += 1
    ops: dict[str, dict[str, SlotSig]] = {}
    for (name, side), counts in seen.items():
        ops.setdefault(name, {})[side] = counts.most_common(1)[0][0]
    return ops


def _slot_spec(name: str, tensor: str | None) -> dict[str, Any]:
    return {"name": name} if tensor is None else {"name": name, "tensor": tensor}


def encode_parts(graph: GraphParts) -> dict[str, Any]:
    """The schema 2.3 document of ``graph`` (plain JSON types, deterministic)."""
    return encode_rows(rows_of(graph))


def encode_rows(graph: GraphRows) -> dict[str, Any]:
    """The schema 2.3 document of ``graph``, its nodes and edges as rows (parts.NODE_FIELDS,
    EDGE_FIELDS order): what encode_parts encodes, and the tracer's graphs as it builds them."""
    tensors, files, sites = _Table(), _Table(), _Table()
    ops = _signatures(graph.nodes)

    def grad(g: GradInfo | None) -> int | None:
        return None if g is None else tensors.ref(_grad_key(g))

    def slots(name: str, side: str, values: tuple[Slot, ...]) -> list[Any]:
        sig = ops.get(name, {}).get(side, ())
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

    file_index, site_index, tensor_index = files.index, sites.index, tensors.index
    file_at, site_at, tensor_at = file_index.get, site_index.get, tensor_index.get
    # A big graph's 100k call sites and gradients are a few dozen objects, each shared by many
    # nodes or edges (the parsers make one per distinct value): each object's table index is
    # kept by id() once found, instead of a key tuple made and hashed per node and edge. The
    # rows hold the objects for the whole encoding, so an id is never reused meanwhile.
    site_of_object: dict[int, int] = {}
    tensor_of_object: dict[int, int] = {}
    site_known, tensor_known = site_of_object.get, tensor_of_object.get
    nodes = []
    for id_, name, ptr, kind, group, param, c, inputs, outputs, tensor, status, diff in graph.nodes:
        d: dict[str, Any] = {"id": id_, "name": name, "ptr": ptr}
        if kind != "op":
            d["kind"] = kind
        if group is not None:
            d["group"] = group
        if param is not None:
            d["param"] = _param(param)
        if c is not None:  # sites.ref(files.ref(...), ...) written out: 100k nodes
            k = site_known(id(c))
            if k is None:
                f = file_at(c.file)
                if f is None:
                    f = file_index[c.file] = len(file_index)
                site = (f, c.line, c.function)
                k = site_at(site)
                if k is None:
                    k = site_index[site] = len(site_index)
                site_of_object[id(c)] = k
            d["call_site"] = k
        if inputs:
            d["inputs"] = slots(name, "inputs", inputs)
        if outputs:
            d["outputs"] = slots(name, "outputs", outputs)
        if tensor is not None:
            d["tensor"] = grad(tensor)
        if status is not None:
            d["grad_status"] = status
        if diff is not None:
            d["diff"] = _diff_json(diff)
        nodes.append(d)
    # Output slot names per source of an edge with a slot (none on big graphs: no log).
    outputs_of: dict[str, list[str]] = {}
    edges = []
    for id_, source, target, index, eg, slot, stats, diff, no_stats in graph.edges:
        d = {"id": id_, "source": source, "target": target}
        if index != 0:
            d["index"] = index
        if eg is not None:  # grad(eg) written out: 100k+ edges
            k = tensor_known(id(eg))
            if k is None:
                key = (eg.dtype, eg.shape, eg.place)
                k = tensor_at(key)
                if k is None:
                    k = tensor_index[key] = len(tensor_index)
                tensor_of_object[id(eg)] = k
            d["grad"] = k
        if slot is not None:
            if not outputs_of:
                outputs_of = {n[0]: [s.name for s in n[8]] for n in graph.nodes}
            names = outputs_of.get(source, [])
            d["slot"] = names.index(slot) if slot in names else slot
        if stats is not None:
            d["stats"] = list(_stats_values(stats))
        if diff is not None:
            d["diff"] = _diff_json(diff)
        if no_stats is not None:
            d["no_stats"] = no_stats
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


_stats_values = attrgetter(*GradStats.FIELDS)  # one C call per edge: 11k on a 10k-node graph


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
