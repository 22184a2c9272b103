"""Reading a graph document (schema 2.3/2.2/2.1/2.0, and 1.0 through codec_v1) into its parts.

Every document goes through ``decode_parts`` and then graph/check.py, so whatever is read is
what the schema says; anything else is a ``GraphDocumentError`` naming the field
(``nodes[4].inputs[1]``), never a bare KeyError or TypeError from deep inside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from ..errors import GraphDocumentError, shown
from ..gc_pause import gc_paused
from .check import check_parts, check_shape, unique_ids
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

READS = ("2.3", "2.2", "2.1", "2.0")  # and 1.0, through codec_v1
_TABLES = {"tensors": list, "files": list, "sites": list, "ops": Mapping}
_LISTS = ("nodes", "edges", "groups")
T = TypeVar("T")


class _At:
    """Where decoding is, for the error when an entry is not what the schema says."""

    field = ""


def _newer(version: Any) -> bool:
    """A version string above the newest read ("2.4", "3.0"): a newer paddleviz_widget's."""
    try:
        major, minor = (int(x) for x in f"{version}.0".split(".")[:2])
    except ValueError:
        return False
    newest = tuple(int(x) for x in READS[0].split("."))
    return isinstance(version, str) and (major, minor) > newest


def decode_parts(doc: Mapping[str, Any]) -> GraphParts:
    """The parts of a graph document of any schema version this package reads, checked
    (graph/check.py). ``GraphDocumentError`` (a ValueError) names the first broken field."""
    if not isinstance(doc, Mapping):
        raise GraphDocumentError("", f"a graph document is a JSON object, not {type(doc).__name__}")
    version = doc.get("schema_version")
    if version not in READS and version != "1.0":
        reads = f"this paddleviz_widget reads {', '.join(repr(v) for v in READS)} and '1.0'"
        if _newer(version):
            raise GraphDocumentError(
                "schema_version",
                f"graph schema_version {shown(version)} is a newer paddleviz_widget's ({reads}): "
                "upgrade it (pip install -U paddleviz_widget)",
            )
        if isinstance(version, (int, float)) and f"{version}" in (*READS, "1.0"):
            raise GraphDocumentError(  # said "unknown graph schema_version 2.3: reads '2.3'"
                "schema_version",
                f"is the number {version}, not the string '{version}' every document holds; "
                f'write it as "schema_version": "{version}"',
            )
        raise GraphDocumentError(
            "schema_version",
            f"unknown graph schema_version {shown(version)}: {reads}; this is not a graph "
            "document paddleviz_widget wrote",
        )
    for key in _LISTS:
        if not isinstance(doc.get(key), list):
            raise GraphDocumentError(key, f"missing or not a list (schema {version})")
    meta = doc.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        raise GraphDocumentError("meta", f"is a {type(meta).__name__}, not an object")
    with gc_paused():  # ~100k small acyclic objects: no full collections over them
        return _decode_checked(doc, version)


def _decode_checked(doc: Mapping[str, Any], version: Any) -> GraphParts:
    at = _At()
    try:
        parts = _decode_v2(doc, at) if version in READS else decode_v1(doc, at)
    except GraphDocumentError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else f"{exc}"
        raise GraphDocumentError(
            at.field, f"malformed schema {version} entry ({type(exc).__name__}: {what})"
        ) from exc
    check_parts(parts)
    return parts


def _at(table: Sequence[T], k: Any, what: str, where: str) -> T:
    """table[k], or an error naming the broken reference."""
    if type(k) is not int or not 0 <= k < len(table):
        raise GraphDocumentError(
            where, f"{what} index {shown(k)} is out of range (the table has {len(table)})"
        )
    return table[k]


def _entry(value: Any, size: int, where: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != size:
        raise GraphDocumentError(where, f"expected a list of {size} items, got {shown(value)}")
    return value


def _number(value: Any, where: str) -> Any:
    if type(value) not in (int, float):
        raise GraphDocumentError(where, f"is {shown(value)}, not a number")
    return value


def _stats(value: Any, where: str) -> GradStats | None:
    if value is None:
        return None
    norm, max_abs, mean_abs, zeros, nan, inf = _entry(value, len(GradStats.FIELDS), where)
    norm, max_abs, mean_abs, zeros = (
        float(_number(x, f"{where}[{k}]")) for k, x in enumerate((norm, max_abs, mean_abs, zeros))
    )
    return GradStats(norm, max_abs, mean_abs, zeros, nan, inf)


def _shape(value: Any) -> tuple[int, ...] | None:
    # A list, else kept as it is for check_parts to name ("4x4" is not a shape).
    return tuple(value) if isinstance(value, list) else value


def _part_value(value: Any) -> Any:
    # A change's value: a shape or a list of slot names (one level), else a scalar.
    return tuple(value) if isinstance(value, list) else value


def diff_mark(value: Any) -> DiffMark | None:
    if value is None:
        return None
    changes = tuple(
        Change(c["field"], _part_value(c.get("a")), _part_value(c.get("b")), c.get("of"))
        for c in value.get("changes", ())
    )
    return DiffMark(value["status"], changes)


def _decode_v2(doc: Mapping[str, Any], at: _At) -> GraphParts:
    for key, kind in _TABLES.items():
        if not isinstance(doc.get(key), kind):
            raise GraphDocumentError(key, f"missing or not a {kind.__name__.lower()}")
    tensors = []
    for k, t in enumerate(doc["tensors"]):
        dtype, shape, place = _entry(t, 3, f"tensors[{k}]")
        check_shape(_shape(shape), f"tensors[{k}][1]")
        tensors.append(GradInfo(dtype, _shape(shape), place))
    files: list[Any] = doc["files"]
    sites = []
    for k, site in enumerate(doc["sites"]):
        f, line, function = _entry(site, 3, f"sites[{k}]")
        sites.append(CallSite(_at(files, f, "file", f"sites[{k}][0]"), line, function))
    ops: Mapping[str, Any] = doc["ops"]

    def grad(k: Any, where: str) -> GradInfo | None:
        return None if k is None else _at(tensors, k, "tensor", where)

    def slots(node: Mapping[str, Any], side: str, where: str) -> tuple[Slot, ...]:
        sig = ops.get(node["name"], {}).get(side, []) if type(node["name"]) is str else []
        out = []
        for j, entry in enumerate(node.get(side, [])):
            at.field = f"{where}.{side}[{j}]"
            if isinstance(entry, Mapping):
                name, tensor, k = entry["name"], entry.get("tensor"), entry.get("grad")
            else:
                spec = _at(sig, j, f"ops[{shown(node['name'])}].{side} slot", at.field)
                name, tensor, k = spec["name"], spec.get("tensor"), entry
            out.append(Slot(name, tensor, grad(k, at.field)))
        return tuple(out)

    nodes = []
    for k, n in enumerate(doc["nodes"]):
        where = at.field = f"nodes[{k}]"
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
                else _at(sites, n["call_site"], "site", f"{where}.call_site"),
                inputs=slots(n, "inputs", where),
                outputs=slots(n, "outputs", where),
                tensor=grad(n.get("tensor"), f"{where}.tensor"),
                grad_status=n.get("grad_status"),
                diff=diff_mark(n.get("diff")),
            )
        )
    unique_ids([n.id for n in nodes], "nodes")  # before an edge's slot is looked up by id
    outputs = {n.id: n.outputs for n in nodes}

    def slot(e: Mapping[str, Any], where: str) -> str | None:
        k = e.get("slot")
        if k is None or isinstance(k, str):
            return k
        source = e["source"]
        if type(source) is not str or source not in outputs:
            raise GraphDocumentError(f"{where}.source", f"{shown(source)} is not the id of a node")
        return _at(outputs[source], k, f"slot (outputs of {source})", f"{where}.slot").name

    edges = []
    for k, e in enumerate(doc["edges"]):
        where = at.field = f"edges[{k}]"
        edges.append(
            Edge(
                id=e["id"],
                source=e["source"],
                target=e["target"],
                index=e.get("index", 0),
                grad=grad(e.get("grad"), f"{where}.grad"),
                slot=slot(e, where),
                stats=_stats(e.get("stats"), f"{where}.stats"),
                diff=diff_mark(e.get("diff")),
                no_stats=e.get("no_stats"),
            )
        )
    groups = []
    for k, g in enumerate(doc["groups"]):
        at.field = f"groups[{k}]"
        groups.append(Group(g["id"], g["name"], g["type"], g.get("parent")))
    return GraphParts(tuple(nodes), tuple(edges), tuple(groups), dict(doc.get("meta") or {}))
