"""A full capture's graph document read back from the run log (captures/capture-STEP.json.zst,
.json.gz before run_schema 3.0).

Since run_schema 2.0 a watched capture leaves its ``meta.problems`` out (tracer/build.py
captured_graph): the problem rules are a function of the document alone (what
``GraphWidget.problems()`` runs too), so they run here, on reading, not in the training step
(~60 ms of a 10k-GradNode capture step). Documents of older logs hold them and are returned as
written. Each capture's problems are kept by the reader: a second read does not run the rules.

Since run_schema 3.0 a watched capture's file holds what its document is made from (the walk
and its annotations as columns, tracer/merge/capture_columns.py), not the document: the rows
are made and encoded here, by the same code the training step ran before (~40-60 ms of a
10k-GradNode capture step moved out of training). A file says which it holds (its LAYOUT key).
"""

from __future__ import annotations

import copy
import json
import zlib
from pathlib import Path
from typing import Any

from ..gc_pause import gc_paused
from ..graph.model import Graph
from ..graph.parts import GraphParts
from ..graph.problems import find_problems
from ..tracer.merge.capture_columns import document_of, is_columns
from .capture_file import decompressed
from .errors import RunLogError

# (path, size, mtime_ns) -> the problems found in that file's document
ProblemsCache = dict[tuple[str, int, int], list[dict[str, Any]]]


def read_capture(path: Path, cache: ProblemsCache) -> dict[str, Any]:
    """The graph document (schema 2.x) in ``path``, checked, with its meta.problems."""
    try:
        data = path.read_bytes()
        stat = path.stat()  # after the read: a file replaced meanwhile is only cached anew
        document = _loads(decompressed(path.name, data))
    except (OSError, EOFError, ValueError, zlib.error) as exc:
        raise RunLogError(f"{path} cannot be read ({exc}): the file was damaged; the "
                          "step's summary is still in the run log") from None  # fmt: skip
    try:
        with gc_paused():
            if is_columns(document):
                document = document_of(document)
            graph = Graph.from_dict(document)  # the one document check (graph/check.py)
    except _DAMAGE as exc:  # (columns of another shape than capture_columns.py writes)
        raise RunLogError(_damaged(path, exc)) from None
    meta = document.get("meta")
    if isinstance(meta, dict) and "problems" not in meta:
        key = (str(path), len(data), stat.st_mtime_ns)
        problems = cache.get(key)
        if problems is None and any(e.stats is not None for e in graph.edges):
            try:
                with gc_paused():  # as build_graph finds them (tracer/build.py)
                    parts = GraphParts(graph.nodes, graph.edges, graph.groups, graph.meta)
                    problems = cache[key] = [p.to_dict() for p in find_problems(parts)]
            except _DAMAGE as exc:  # meta the document check lets by (unreached_params: [null])
                raise RunLogError(_damaged(path, exc)) from None
        if problems is not None:
            document["meta"] = _with_problems(meta, copy.deepcopy(problems))
    return document


def _loads(text: bytes) -> Any:
    """json.loads' value of ``text``: by orjson (~3x faster on a capture) when it takes the
    text; what it does not (NaN/Infinity of the json writer's fallback, integers over 64 bits,
    lone surrogates) or no orjson: by json, as before."""
    try:
        import orjson

        return orjson.loads(text)
    except Exception:  # noqa: BLE001 - not installed, or text only json reads (or none does)
        return json.loads(text)


_DAMAGE = (ValueError, KeyError, TypeError, IndexError, AttributeError)


def _damaged(path: Path, exc: Exception) -> str:
    said = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
    return (f"{path} holds no valid graph document ({said}): the file was damaged; the step's "
            "summary is still in the run log")  # fmt: skip


def _with_problems(meta: dict[str, Any], problems: list[dict[str, Any]]) -> dict[str, Any]:
    """``meta`` with its problems where build_graph puts them: before what the run log adds
    (``step``), so the document reads back key for key as a main-line capture."""
    out = {k: v for k, v in meta.items() if k != "step"}
    out["problems"] = problems
    if "step" in meta:
        out["step"] = meta["step"]
    return out
