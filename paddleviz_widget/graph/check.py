"""The one check every graph the package reads goes through (graph documents of every schema
version, Paddle dump directories, Jittor traces): what graph.schema.json says about each field's
type, plus what JSON Schema cannot say (unique ids, edges and groups that point at ids that
exist, a group tree without cycles).

It runs on the decoded parts, so one check serves every layout; a failure is a
``GraphDocumentError`` whose ``field`` is the path in the document (``edges[3].target``).
Loops only, no recursion a hostile document could drive, and one pass per table: a 100k-node
graph is checked in a small fraction of the time it takes to decode.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..errors import GraphDocumentError
from .parts import DIFF_STATUSES, GRAD_STATUSES, NODE_KINDS, GradInfo, GradStats, GraphParts

_SCALARS = (str, int, float, bool)
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PTR = re.compile(r"0x[0-9a-f]+")
_FIX = "; write it as build_graph/Graph.to_dict would, or re-export it from the graph it came from"


def _bad(field: str, problem: str) -> GraphDocumentError:
    return GraphDocumentError(field, problem + _FIX)


def _is_int(value: Any) -> bool:
    return type(value) is int


def _text(value: Any, field: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if type(value) is not str:
        raise _bad(field, f"is {value!r} ({type(value).__name__}), not a string")


def _ident(value: Any, field: str) -> None:
    if type(value) is not str or not _ID.fullmatch(value):
        raise _bad(field, f"is {value!r}, not an id (a letter, then letters, digits or _)")


def check_shape(value: Any, field: str) -> None:
    """Raise unless ``value`` (as decoded: a tuple) is None or a tuple of ints."""
    if value is None:
        return
    if type(value) is not tuple or not all(type(d) is int for d in value):
        raise _bad(field, f"is {value!r}, not a list of integers (e.g. [4, 4]) or null")


def _grad(value: Any, field: str, seen: set[int]) -> None:
    if value is None or id(value) in seen:  # a tensors entry shared by many edges: once
        return
    if not isinstance(value, GradInfo):
        raise _bad(field, f"is {value!r}, not a tensor description")
    _text(value.dtype, f"{field}.dtype", optional=True)
    check_shape(value.shape, f"{field}.shape")
    _text(value.place, f"{field}.place", optional=True)
    seen.add(id(value))


def _stats(value: GradStats | None, field: str) -> None:
    if value is None:
        return
    for name in GradStats.FIELDS:
        x = getattr(value, name)
        count = name in ("nan", "inf")
        ok = _is_int(x) if count else type(x) in (int, float) and not math.isnan(x)
        if not ok or x < 0:
            what = "a count >= 0" if count else "a number >= 0"
            raise _bad(f"{field}.{name}", f"is {x!r}, not {what}")


def _diff(value: Any, field: str) -> None:
    if value is None:
        return
    if value.status not in DIFF_STATUSES:
        raise _bad(f"{field}.status", f"is {value.status!r}, not one of {DIFF_STATUSES}")
    for k, c in enumerate(value.changes):
        _text(c.field, f"{field}.changes[{k}].field")
        _text(c.of, f"{field}.changes[{k}].of", optional=True)
        for side in ("a", "b"):
            v = getattr(c, side)
            items = v if type(v) is tuple else (v,)
            if not all(x is None or type(x) in _SCALARS for x in items):
                raise _bad(f"{field}.changes[{k}].{side}", "is not a value, a shape or names")


def unique_ids(ids: list[Any], table: str) -> set[Any]:
    """The ids of ``table`` as a set, or the error naming the first repeated one."""
    for k, i in enumerate(ids):
        if type(i) is not str:
            raise _bad(f"{table}[{k}].id", f"is {i!r} ({type(i).__name__}), not a string id")
    known = set(ids)
    if len(known) != len(ids):
        seen: set[str] = set()
        for k, i in enumerate(ids):
            if i in seen:
                raise _bad(f"{table}[{k}].id", f"{i!r} is the id of an earlier entry too")
            seen.add(i)
    return known


def check_parts(graph: GraphParts) -> None:
    """Raise ``GraphDocumentError`` naming the first field of ``graph`` that breaks the schema."""
    nodes, edges, groups, meta = graph
    if not isinstance(meta, Mapping):
        raise _bad("meta", f"is a {type(meta).__name__}, not an object")
    seen: set[int] = set()
    for k, g in enumerate(groups):
        _ident(g.id, f"groups[{k}].id")
        _text(g.name, f"groups[{k}].name")
        _text(g.type, f"groups[{k}].type")
    group_ids = unique_ids([g.id for g in groups], "groups")
    parent = {g.id: g.parent for g in groups}
    for k, g in enumerate(groups):
        if g.parent is not None and (type(g.parent) is not str or g.parent not in group_ids):
            raise _bad(f"groups[{k}].parent", f"{g.parent!r} is not the id of a group")
    _no_cycles(groups, parent)
    for k, n in enumerate(nodes):
        where = f"nodes[{k}]"
        _ident(n.id, f"{where}.id")
        if type(n.name) is not str or not n.name:
            raise _bad(f"{where}.name", f"is {n.name!r}, not a non-empty string")
        if type(n.ptr) is not str or not _PTR.fullmatch(n.ptr):
            raise _bad(f"{where}.ptr", f"is {n.ptr!r}, not an address like '0x7f3a'")
        if n.kind not in NODE_KINDS:
            raise _bad(f"{where}.kind", f"is {n.kind!r}, not one of {NODE_KINDS}")
        if n.group is not None and (type(n.group) is not str or n.group not in group_ids):
            raise _bad(f"{where}.group", f"{n.group!r} is not the id of a group")
        if n.param is not None:
            _text(n.param.name, f"{where}.param.name")
            check_shape(n.param.shape, f"{where}.param.shape")
            _text(n.param.dtype, f"{where}.param.dtype", optional=True)
        c = n.call_site
        if c is not None:
            _text(c.file, f"{where}.call_site.file")
            if not _is_int(c.line) or c.line < 0:
                raise _bad(f"{where}.call_site.line", f"is {c.line!r}, not a line number")
            _text(c.function, f"{where}.call_site.function", optional=True)
        for side in ("inputs", "outputs"):
            for j, s in enumerate(getattr(n, side)):
                _text(s.name, f"{where}.{side}[{j}].name")
                _text(s.tensor, f"{where}.{side}[{j}].tensor", optional=True)
                _grad(s.grad, f"{where}.{side}[{j}].grad", seen)
        _grad(n.tensor, f"{where}.tensor", seen)
        if n.grad_status is not None and n.grad_status not in GRAD_STATUSES:
            raise _bad(f"{where}.grad_status", f"is {n.grad_status!r}, not one of {GRAD_STATUSES}")
        _diff(n.diff, f"{where}.diff")
    node_ids = unique_ids([n.id for n in nodes], "nodes")
    for k, e in enumerate(edges):
        where = f"edges[{k}]"
        _ident(e.id, f"{where}.id")
        for end in ("source", "target"):
            value = getattr(e, end)
            if type(value) is not str or value not in node_ids:
                raise _bad(f"{where}.{end}", f"{value!r} is not the id of a node")
        if not _is_int(e.index) or e.index < 0:
            raise _bad(f"{where}.index", f"is {e.index!r}, not an index >= 0")
        _grad(e.grad, f"{where}.grad", seen)
        _text(e.slot, f"{where}.slot", optional=True)
        _stats(e.stats, f"{where}.stats")
        _diff(e.diff, f"{where}.diff")
    unique_ids([e.id for e in edges], "edges")
    _check_meta(meta, node_ids)


def _no_cycles(groups: Any, parent: Mapping[str, str | None]) -> None:
    done: set[str] = set()
    for k, g in enumerate(groups):
        path: set[str] = set()
        cur: str | None = g.id
        while cur is not None and cur not in done:
            if cur in path:
                raise _bad(f"groups[{k}].parent", f"group {g.id!r} is its own ancestor")
            path.add(cur)
            cur = parent.get(cur)
        done |= path


def _check_meta(meta: Mapping[str, Any], node_ids: set[str]) -> None:
    for key in ("notice", "paddle_version"):
        if key in meta:
            _text(meta[key], f"meta.{key}")
    for key in ("notices", "annotations"):
        if key in meta:
            value = meta[key]
            if not isinstance(value, list) or not all(type(x) is str for x in value):
                raise _bad(f"meta.{key}", f"is {value!r}, not a list of strings")
    outputs = meta.get("outputs")
    if outputs is not None:
        if not isinstance(outputs, list):
            raise _bad("meta.outputs", f"is a {type(outputs).__name__}, not a list")
        for k, out in enumerate(outputs):
            node = out.get("node") if isinstance(out, Mapping) else None
            if type(node) is not str or node not in node_ids:
                raise _bad(f"meta.outputs[{k}].node", "is not the id of a node")
            _text(out.get("label"), f"meta.outputs[{k}].label")
