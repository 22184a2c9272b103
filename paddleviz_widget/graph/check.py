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
from collections.abc import Mapping
from typing import Any

from ..errors import GraphDocumentError, shown
from .check_fields import bad as _bad
from .check_fields import text as _text
from .check_meta import check_meta as _check_meta
from .parts import (
    DIFF_STATUSES,
    GRAD_STATUSES,
    NODE_KINDS,
    DiffMark,
    GradInfo,
    GradStats,
    GraphParts,
)

_SCALARS = (str, int, float, bool)
# The explorer walks the layer tree recursively: deeper trees are refused here, and cut (with
# a notice) by the readers that could make them (sources/jittor.py).
MAX_GROUP_DEPTH = 256


# Integers a document holds fit in 64 bits (as Paddle's shapes and counts do): a larger one
# was accepted, then failed to be sent or saved (orjson: 64 bits; json: 4,300 digits).
_I64 = 2**63


def _is_int(value: Any) -> bool:
    return type(value) is int and -_I64 <= value < _I64


def _dims(shape: tuple[Any, ...]) -> bool:
    return all(map(_is_int, shape))


def _ident(value: Any, field: str) -> None:
    if not _is_id(value):
        raise _bad(field, f"is {shown(value)}, not an id (a letter, then letters, digits or _)")


def check_shape(value: Any, field: str) -> None:
    """Raise unless ``value`` (as decoded: a tuple) is None or a tuple of 64-bit ints."""
    if value is None:
        return
    if type(value) is not tuple or not _dims(value):
        raise _bad(field, f"is {shown(value)}, not a list of 64-bit integers (e.g. [4, 4]) or null")


def _grad(value: Any, field: str, seen: set[int]) -> None:
    if value is None or id(value) in seen:  # a tensors entry shared by many edges: once
        return
    if not isinstance(value, GradInfo):
        raise _bad(field, f"is {shown(value)}, not a tensor description")
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
        ok = _is_int(x) if count else _is_int(x) or type(x) is float and not math.isnan(x)
        if not ok or x < 0:
            what = "a count >= 0" if count else "a number >= 0"
            raise _bad(f"{field}.{name}", f"is {shown(x)}, not {what}")


def _diff(value: Any, field: str) -> None:
    if value is None:
        return
    if value.status not in DIFF_STATUSES:
        raise _bad(f"{field}.status", f"is {shown(value.status)}, not one of {DIFF_STATUSES}")
    for k, c in enumerate(value.changes):
        _text(c.field, f"{field}.changes[{k}].field")
        _text(c.of, f"{field}.changes[{k}].of", optional=True)
        for side in ("a", "b"):
            v = getattr(c, side)
            items = v if type(v) is tuple else (v,)
            if not all(x is None or type(x) in _SCALARS and (type(x) is not int or _is_int(x))
                       for x in items):  # fmt: skip
                raise _bad(f"{field}.changes[{k}].{side}", "is not a value, a shape or names")


def unique_ids(ids: list[Any], table: str) -> set[Any]:
    """The ids of ``table`` as a set, or the error naming the first repeated one."""
    for k, i in enumerate(ids):
        if type(i) is not str:
            raise _bad(f"{table}[{k}].id", f"is {shown(i)} ({type(i).__name__}), not a string id")
    known = set(ids)
    if len(known) != len(ids):
        seen: set[str] = set()
        for k, i in enumerate(ids):
            if i in seen:
                raise _bad(f"{table}[{k}].id", f"{shown(i)} is the id of an earlier entry too")
            seen.add(i)
    return known


def check_parts(graph: GraphParts) -> None:
    """Raise ``GraphDocumentError`` naming the first field of ``graph`` that breaks the schema.

    A quick pass says yes or no without building any field path (most of the cost on a 100k
    graph); only a graph it does not accept is walked again by ``_explain``, which names the
    field. The quick pass may only be stricter: ``_explain`` holds the rules."""
    try:
        node_ids = _quick_ok(graph)
    except TypeError:  # an unhashable id or similar: _explain names it
        node_ids = None
    if node_ids is None:
        _explain(graph)
    else:
        _check_meta(graph.meta, node_ids, len(graph.edges))


def _is_id(value: Any) -> bool:
    return type(value) is str and value.isidentifier() and value.isascii() and value[0] != "_"


_HEX = "0123456789abcdef"


def _quick_grad(g: Any) -> bool:
    if g is None:
        return True
    if type(g) is not GradInfo:
        return False
    dtype, shape, place = g.dtype, g.shape, g.place
    return (
        (dtype is None or type(dtype) is str)
        and (place is None or type(place) is str)
        and (shape is None or (type(shape) is tuple and _dims(shape)))
    )


def _quick_stats(st: Any) -> bool:
    if type(st) is not GradStats:
        return False
    floats = (st.norm, st.max_abs, st.mean_abs, st.zero_fraction)
    return (
        all(type(x) is float and x >= 0 for x in floats)  # NaN >= 0 is False
        and type(st.nan) is int
        and type(st.inf) is int
        and 0 <= st.nan < _I64
        and 0 <= st.inf < _I64
    )


def _quick_diff(d: Any) -> bool:
    return d is None or (type(d) is DiffMark and d.status in DIFF_STATUSES and not d.changes)


def _quick_ok(graph: GraphParts) -> set[str] | None:
    """The node ids if ``graph`` (but its meta) is surely right, else None."""
    nodes, edges, groups, meta = graph
    if not isinstance(meta, Mapping):
        return None
    group_ids = {g.id for g in groups}
    if len(group_ids) != len(groups):
        return None
    for g in groups:
        if not (_is_id(g.id) and type(g.name) is str and type(g.type) is str):
            return None
        if g.parent is not None and g.parent not in group_ids:
            return None
    if _deepest(groups) is None:
        return None
    grads: dict[int, Any] = {}
    for n in nodes:
        ptr, name = n.ptr, n.name
        if not (
            _is_id(n.id)
            and type(name) is str
            and name
            and type(ptr) is str
            and ptr[:2] == "0x"
            and len(ptr) > 2
            and not ptr[2:].strip(_HEX)
            and n.kind in NODE_KINDS
            and (n.group is None or n.group in group_ids)
            and (n.grad_status is None or n.grad_status in GRAD_STATUSES)
            and _quick_diff(n.diff)
        ):
            return None
        p, c = n.param, n.call_site
        if p is not None and not (
            type(p.name) is str
            and (p.dtype is None or type(p.dtype) is str)
            and _quick_grad(GradInfo(None, p.shape, None))
        ):
            return None
        if c is not None and not (
            type(c.file) is str
            and type(c.line) is int
            and 0 <= c.line < _I64
            and (c.function is None or type(c.function) is str)
        ):
            return None
        for slots in (n.inputs, n.outputs):
            for s in slots:
                if type(s.name) is not str or not (s.tensor is None or type(s.tensor) is str):
                    return None
                grads[id(s.grad)] = s.grad
        grads[id(n.tensor)] = n.tensor
    node_ids = {n.id for n in nodes}
    if len(node_ids) != len(nodes):
        return None
    for e in edges:
        if not (
            _is_id(e.id)
            and e.source in node_ids
            and e.target in node_ids
            and type(e.index) is int
            and 0 <= e.index < _I64
            and (e.slot is None or type(e.slot) is str)
            and (e.stats is None or _quick_stats(e.stats))
            and _quick_diff(e.diff)
        ):
            return None
        grads[id(e.grad)] = e.grad
    if len({e.id for e in edges}) != len(edges):
        return None
    return node_ids if all(_quick_grad(g) for g in grads.values()) else None


def _explain(graph: GraphParts) -> None:
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
            raise _bad(f"groups[{k}].parent", f"{shown(g.parent)} is not the id of a group")
    _no_cycles(groups, parent)
    for k, n in enumerate(nodes):
        where = f"nodes[{k}]"
        _ident(n.id, f"{where}.id")
        if type(n.name) is not str or not n.name:
            raise _bad(f"{where}.name", f"is {shown(n.name)}, not a non-empty string")
        if type(n.ptr) is not str or n.ptr[:2] != "0x" or len(n.ptr) < 3 or n.ptr[2:].strip(_HEX):
            raise _bad(f"{where}.ptr", f"is {shown(n.ptr)}, not an address like '0x7f3a'")
        if n.kind not in NODE_KINDS:
            raise _bad(f"{where}.kind", f"is {shown(n.kind)}, not one of {NODE_KINDS}")
        if n.group is not None and (type(n.group) is not str or n.group not in group_ids):
            raise _bad(f"{where}.group", f"{shown(n.group)} is not the id of a group")
        if n.param is not None:
            _text(n.param.name, f"{where}.param.name")
            check_shape(n.param.shape, f"{where}.param.shape")
            _text(n.param.dtype, f"{where}.param.dtype", optional=True)
        c = n.call_site
        if c is not None:
            _text(c.file, f"{where}.call_site.file")
            if not _is_int(c.line) or c.line < 0:
                raise _bad(f"{where}.call_site.line", f"is {shown(c.line)}, not a line number")
            _text(c.function, f"{where}.call_site.function", optional=True)
        for side in ("inputs", "outputs"):
            for j, s in enumerate(getattr(n, side)):
                _text(s.name, f"{where}.{side}[{j}].name")
                _text(s.tensor, f"{where}.{side}[{j}].tensor", optional=True)
                _grad(s.grad, f"{where}.{side}[{j}].grad", seen)
        _grad(n.tensor, f"{where}.tensor", seen)
        if n.grad_status is not None and n.grad_status not in GRAD_STATUSES:
            said = f"is {shown(n.grad_status)}, not one of {GRAD_STATUSES}"
            raise _bad(f"{where}.grad_status", said)
        _diff(n.diff, f"{where}.diff")
    node_ids = unique_ids([n.id for n in nodes], "nodes")
    for k, e in enumerate(edges):
        where = f"edges[{k}]"
        _ident(e.id, f"{where}.id")
        for end in ("source", "target"):
            value = getattr(e, end)
            if type(value) is not str or value not in node_ids:
                raise _bad(f"{where}.{end}", f"{shown(value)} is not the id of a node")
        if not _is_int(e.index) or e.index < 0:
            raise _bad(f"{where}.index", f"is {shown(e.index)}, not an index >= 0")
        _grad(e.grad, f"{where}.grad", seen)
        _text(e.slot, f"{where}.slot", optional=True)
        _stats(e.stats, f"{where}.stats")
        _diff(e.diff, f"{where}.diff")
    unique_ids([e.id for e in edges], "edges")
    _check_meta(meta, node_ids, len(edges))


def _deepest(groups: Any) -> int | None:
    """How deep the group tree goes (1: top-level groups only), or None if a group is its
    own ancestor or the tree is deeper than MAX_GROUP_DEPTH. A loop, memoized."""
    parent = {g.id: g.parent for g in groups}
    depth: dict[str, int] = {}
    for g in groups:
        path: list[str] = []
        cur: str | None = g.id
        while cur is not None and cur not in depth:
            if len(path) > MAX_GROUP_DEPTH or cur in path[-1:]:
                return None
            path.append(cur)
            cur = parent.get(cur)
        if len(set(path)) != len(path):
            return None
        below = 0 if cur is None else depth[cur]
        for k, gid in enumerate(reversed(path), 1):
            depth[gid] = below + k
        if below + len(path) > MAX_GROUP_DEPTH:
            return None
    return max(depth.values(), default=0)


def _no_cycles(groups: Any, parent: Mapping[str, str | None]) -> None:
    done: set[str] = set()
    for k, g in enumerate(groups):
        path: set[str] = set()
        cur: str | None = g.id
        while cur is not None and cur not in done:
            if cur in path:
                raise _bad(f"groups[{k}].parent", f"group {shown(g.id)} is its own ancestor")
            path.add(cur)
            cur = parent.get(cur)
        done |= path
    if _deepest(groups) is None:
        raise GraphDocumentError(
            "groups",
            f"the layer tree is more than {MAX_GROUP_DEPTH} groups deep, deeper than the "
            "explorer draws; nest fewer layers (paddleviz_widget's own readers cut it there)",
        )
