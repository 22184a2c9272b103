"""The document check's part for ``meta`` (check.py runs it): the keys the package itself
reads (notices, outputs, sources, unreached_params); further keys may appear."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import shown
from .check_fields import bad as _bad
from .check_fields import text as _text


def check_meta(meta: Mapping[str, Any], node_ids: set[str], n_edges: int) -> None:
    for key in ("notice", "paddle_version"):
        if key in meta:
            _text(meta[key], f"meta.{key}")
    for key in ("notices", "annotations"):
        if key in meta:
            value = meta[key]
            if not isinstance(value, list) or not all(type(x) is str for x in value):
                raise _bad(f"meta.{key}", f"is {shown(value)}, not a list of strings")
    outputs = meta.get("outputs")
    if outputs is not None:
        if not isinstance(outputs, list):
            raise _bad("meta.outputs", f"is a {type(outputs).__name__}, not a list")
        for k, out in enumerate(outputs):
            node = out.get("node") if isinstance(out, Mapping) else None
            if type(node) is not str or node not in node_ids:
                raise _bad(f"meta.outputs[{k}].node", "is not the id of a node")
            _text(out.get("label"), f"meta.outputs[{k}].label")
    if "sources" in meta:
        _check_sources(meta["sources"], n_edges, len(node_ids))
    if "unreached_params" in meta:
        _check_unreached(meta["unreached_params"])


def _check_unreached(entries: Any) -> None:
    """meta.unreached_params, which problems() turns into words: a list of {name, reason,
    frozen?} (an entry of another shape raised a bare AttributeError from the rules)."""
    if not isinstance(entries, list):
        raise _bad("meta.unreached_params", f"is {shown(entries)}, not a list")
    for k, entry in enumerate(entries):
        field = f"meta.unreached_params[{k}]"
        if not isinstance(entry, Mapping):
            raise _bad(field, f"is {shown(entry)}, not an object")
        _text(entry.get("name"), f"{field}.name")
        _text(entry.get("reason"), f"{field}.reason", optional=True)
        if entry.get("frozen") is not None and type(entry["frozen"]) is not bool:
            raise _bad(f"{field}.frozen", f"is {shown(entry['frozen'])}, not true or false")


NODE_SOURCE_FIELDS = ("group", "param", "call_site")


def _check_sources(sources: Any, n_edges: int, n_nodes: int) -> None:
    """meta.sources: one code per edge, in edge order ("." none), each named in ``codes``;
    and per node field in ``nodes`` (2.3) one code per node, in node order."""
    codes = sources.get("codes") if isinstance(sources, Mapping) else None
    if not isinstance(codes, Mapping) or not all(
        type(k) is str and len(k) == 1 and k != "." and type(v) is str for k, v in codes.items()
    ):
        raise _bad("meta.sources.codes", "is not an object of one-character codes -> names")
    text = sources.get("edges")
    if type(text) is not str or len(text) != n_edges:
        raise _bad("meta.sources.edges", f"is not a string of one code for each of {n_edges} edges")
    unknown = set(text) - {".", *codes}
    if unknown:
        raise _bad("meta.sources.edges", f"uses {shown(min(unknown))}, not in meta.sources.codes")
    nodes = sources.get("nodes", {})
    if not isinstance(nodes, Mapping):
        raise _bad("meta.sources.nodes", f"is {shown(nodes)}, not an object of node fields")
    for name, text in nodes.items():
        where = f"meta.sources.nodes.{name}"
        if name not in NODE_SOURCE_FIELDS:
            raise _bad(where, f"is not a node field ({', '.join(NODE_SOURCE_FIELDS)})")
        if type(text) is not str or len(text) != n_nodes:
            raise _bad(where, f"is not a string of one code for each of {n_nodes} nodes")
        unknown = set(text) - {".", *codes}
        if unknown:
            raise _bad(where, f"uses {shown(min(unknown))}, not in meta.sources.codes")
