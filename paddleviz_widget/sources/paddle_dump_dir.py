"""A Graph from the files ``loss.backward(dump_backward_graph_path=DIR)`` writes (Paddle >= 3.3).

For graphs recorded on another machine: copy DIR over and read it here, no Paddle needed. Each
backward writes three files named by one timestamp prefix::

    2026-11-22_15:18:23.641446_backward_graph.dot     GradNodes (name, ptr) and gradient edges
    2026-11-22_15:18:23.641446_ref_forward_graph.dot  the same edges reversed, forward tensors
    2026-11-22_15:18:23.641446_call_stack.log         a Python stack per GradNode (filled only
                                                      when FLAGS_call_stack_level=3 was set)

What the graph holds: every GradNode (``ptr`` as Paddle wrote it), every edge with the gradient
dtype/shape/place its label gives, ``kind`` "param" for GradNodeAccumulation and "output" for
nodes no edge points at, and each node's innermost user-code frame from the call-stack log.
Not in a dump: parameter names, layer groups and backward slot names. An edge's ``index``
counts the edges the dump lists for its source, in file order; a next_functions entry that
carries no gradient (an input with stop_gradient) is not listed, so it can differ from the live
next_functions position.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import PaddlevizError, SourceFileError
from ..graph.check import check_parts
from ..graph.model import CallSite, Edge, Graph, Node
from ..graph.parts import GraphParts
from ..tracer.parse.call_sites import Frame, is_library_file, parse_call_stack_entries
from ..tracer.parse.paddle_dump import BackwardDump, DumpEdge, parse_backward_dot

HOW_TO = "run loss.backward(dump_backward_graph_path=DIR) with Paddle >= 3.3"
ACCUMULATION = "GradNodeAccumulation"
SUFFIXES = {
    "backward": "_backward_graph.dot",
    "forward": "_ref_forward_graph.dot",
    "call_stack": "_call_stack.log",
}
# Python's own files on the machine that wrote the log (not this one): lib/python3.x/...,
# but not its site-packages, where the user's third-party code lives.
_REMOTE_STDLIB = re.compile(r"[\\/]lib[\\/]python\d+(?:\.\d+)?[\\/](?!(?:site|dist)-packages)")


@dataclass(frozen=True)
class DumpFiles:
    """One backward's files; ``prefix`` is the timestamp Paddle names them with."""

    prefix: str
    backward: Path | None = None
    forward: Path | None = None
    call_stack: Path | None = None

    def sort_key(self) -> tuple[datetime, float]:
        try:  # Paddle's prefix is a local timestamp; copies may not keep their mtime
            stamp = datetime.strptime(self.prefix, "%Y-%m-%d_%H:%M:%S.%f")
        except ValueError:
            stamp = datetime.min
        path = self.backward or self.forward or self.call_stack
        return stamp, path.stat().st_mtime if path is not None else 0.0


def _split(path: Path) -> tuple[str, str] | None:
    """(prefix, kind) of a dump file name, or None for any other file."""
    for kind, suffix in SUFFIXES.items():
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)], kind
    return None


def list_dumps(directory: str | os.PathLike[str]) -> list[DumpFiles]:
    """The dumps in ``directory`` that have a backward .dot, oldest first."""
    found: dict[str, dict[str, Path]] = {}
    for path in Path(directory).iterdir():
        split = _split(path)
        if split is not None and path.is_file():
            found.setdefault(split[0], {})[split[1]] = path
    dumps = [DumpFiles(prefix, **files) for prefix, files in found.items() if "backward" in files]
    return sorted(dumps, key=DumpFiles.sort_key)


def _siblings(file: Path) -> DumpFiles:
    split = _split(file)
    if split is None:
        raise SourceFileError(
            file,
            f"not a Paddle backward dump file: pass the directory, or its "
            f"*{SUFFIXES['backward']} ({HOW_TO})",
        )
    prefix = split[0]
    files = {k: file.with_name(prefix + s) for k, s in SUFFIXES.items()}
    if not files["backward"].is_file():
        raise FileNotFoundError(f"{file} has no {files['backward'].name} next to it ({HOW_TO})")
    return DumpFiles(prefix, **{k: p for k, p in files.items() if p.is_file()})


def select_dump(
    path: str | os.PathLike[str], which: str | None = None
) -> tuple[DumpFiles, str | None, int]:
    """(the dump to read, a notice for the user or None, how many dumps the directory holds).

    ``path``: a dump directory or one of a dump's files. ``which``: a dump's prefix (or a file
    name of it) in that directory; by default the newest dump.
    """
    if which is not None and not isinstance(which, str):
        raise TypeError(f"which= is a dump's timestamp prefix (a str), got {which!r}")
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(
            f"no dump directory or file at {p}: {HOW_TO}, then pass that DIR (copied over "
            "whole, if it was written on another machine)"
        )
    if p.is_file():
        files = _siblings(p)
        named = _split(Path(which)) if which is not None else None
        if which is not None and (named[0] if named else which) != files.prefix:  # was ignored
            raise SourceFileError(
                p, f"which={which!r} picks a dump in a directory, and this is dump "
                f"{files.prefix!r}'s file: pass its directory with which=, or only the file"
            )  # fmt: skip
        return files, None, 1
    dumps = list_dumps(p)
    if not dumps:
        raise FileNotFoundError(
            f"no Paddle backward dump in {p} (no *{SUFFIXES['backward']} file): {HOW_TO}, "
            "then pass that DIR"
        )
    if which is not None:
        split = _split(Path(which))
        name = split[0] if split is not None else which
        chosen = [d for d in dumps if d.prefix == name]
        if not chosen:
            listed = ", ".join(repr(d.prefix) for d in dumps[-8:])
            raise SourceFileError(p, f"no dump {which!r} here; its dumps, oldest first: {listed}")
        return chosen[0], None, len(dumps)
    newest = dumps[-1]
    notice = None
    if len(dumps) > 1:
        notice = (
            f"{p} holds {len(dumps)} dumps; showing the newest ({newest.prefix}). "
            "Pick another with which='<prefix>' or the path of its .dot file."
        )
    return newest, notice, len(dumps)


def read_backward_dot(file: Path) -> BackwardDump:
    """Parse ``file``; SourceFileError (a ValueError) naming the file if it is not a complete
    backward dump."""
    text = file.read_text(errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not lines[0].lstrip().startswith("digraph"):
        start = lines[0][:40] if lines else ""
        raise SourceFileError(
            file,
            f"cannot read it: it is not a Graphviz digraph (it starts with {start!r}); "
            f"expected the *{SUFFIXES['backward']} that {HOW_TO} writes",
        )
    if not lines[-1].lstrip().startswith("}"):
        raise SourceFileError(file, "cannot read it: it ends before its closing '}' (cut short?)")
    dump = parse_backward_dot(text)
    edge_lines = sum(1 for line in lines if "->" in line)
    node_lines = sum(1 for line in lines if "[label=" in line and "->" not in line)
    if len(dump.nodes) < node_lines:
        raise _not_in_form(file, f"{node_lines - len(dump.nodes)} of {node_lines} node lines")
    if dump.undeclared:
        line, dot_id = dump.undeclared[0]
        more = len(dump.undeclared) - 1
        raise SourceFileError(
            file,
            f"cannot read it: line {line} is an edge to or from {dot_id}, but no line declares "
            f"{dot_id}"
            + (f" ({more} more edge(s) name undeclared nodes)" if more else "")
            + f"; the dump is incomplete or was edited: write it again with {HOW_TO}",
        )
    read = len(dump.edges)
    if read < edge_lines:
        raise _not_in_form(file, f"{edge_lines - read} of {edge_lines} edge lines")
    if lines[1:-1] and not dump.nodes:
        raise SourceFileError(file, f"cannot read it: it lists no GradNode ({HOW_TO})")
    return dump


def _not_in_form(file: Path, what: str) -> SourceFileError:
    return SourceFileError(
        file,
        f"cannot read it: {what} are not in the form Paddle writes "
        '(node_3[label="Name\\nPtr: 0x..."], node_3->node_4[label="..."])',
    )


def _user_frame(frames: Iterable[Frame]) -> Frame | None:
    """The innermost frame in user code: not Paddle, nor Python's own library on either
    machine (this one's paths come from call_sites; the recording one's from their shape)."""
    found = None
    for frame in frames:
        if not is_library_file(frame.file) and not _REMOTE_STDLIB.search(frame.file):
            found = frame
    return found


def read_call_sites(
    file: Path, notices: list[str] | None = None
) -> tuple[dict[str, CallSite], int]:
    """(GradNode ptr -> call site, how many records had a stack at all); a line saying what
    was left out is added to ``notices`` when some lines could not be read."""
    sites: dict[str, CallSite] = {}
    stacked = 0
    unread: list[str] = []
    for entry in parse_call_stack_entries(file.read_text(errors="replace"), unread):
        stacked += bool(entry.frames)
        frame = _user_frame(entry.frames)
        ptr = hex(entry.ptr)
        if frame is not None and ptr not in sites:
            sites[ptr] = CallSite(frame.file, frame.line, frame.function)
    if unread and notices is not None:
        notices.append(
            f"{file.name} was only partly understood: {len(unread)} line(s) not read "
            f"(first: {unread[0].strip()[:60]!r}); those call sites are left out"
        )
    return sites, stacked


def _bfs_order(dump: BackwardDump, out: dict[str, list[DumpEdge]]) -> list[str]:
    """Node ptrs breadth-first from the roots (roots in the order their edges are listed)."""
    targets = {e.target for e in dump.edges}
    roots = list(dict.fromkeys(e.source for e in dump.edges if e.source not in targets))
    roots += [p for p in dump.nodes if p not in targets and p not in out]
    order = list(roots)
    seen = set(order)
    queue = deque(order)
    while queue:
        for edge in out.get(queue.popleft(), ()):
            if edge.target not in seen:
                seen.add(edge.target)
                order.append(edge.target)
                queue.append(edge.target)
    order += [p for p in dump.nodes if p not in seen]  # only a cycle would leave any
    return order


def graph_from_dump(dump: BackwardDump, sites: dict[str, CallSite] | None = None) -> Graph:
    """Nodes and edges of a parsed dump; ids n<k> breadth-first from the outputs."""
    sites = sites or {}
    out: dict[str, list[DumpEdge]] = {}
    for edge in dump.edges:
        out.setdefault(edge.source, []).append(edge)
    order = _bfs_order(dump, out)
    ids = {ptr: f"n{k}" for k, ptr in enumerate(order)}
    targets = {e.target for e in dump.edges}
    nodes = []
    for ptr in order:
        name = dump.nodes[ptr]
        kind = "param" if name == ACCUMULATION else "output" if ptr not in targets else "op"
        nodes.append(Node(ids[ptr], name, ptr, kind, call_site=sites.get(ptr)))
    edges: list[Edge] = []
    for ptr in order:
        for index, e in enumerate(out.get(ptr, ())):
            edges.append(Edge(f"e{len(edges)}", ids[ptr], ids[e.target], index, e.grad))
    return Graph(tuple(nodes), tuple(edges))


def load_dump_graph(path: str | os.PathLike[str], *, which: str | None = None) -> Graph:
    """The backward graph a Paddle dump holds. ``path``: the dump directory (its newest dump
    is read, and ``meta.notice`` says so when there are several) or one of a dump's files;
    ``which``: the prefix of another dump in the directory.

    FileNotFoundError when there is nothing to read, ValueError when a file is not a dump;
    both say what to run or pass instead.
    """
    files, notice, count = select_dump(path, which)
    assert files.backward is not None  # list_dumps and _siblings only return complete dumps
    dump = read_backward_dot(files.backward)
    sites: dict[str, CallSite] = {}
    notices = [notice] if notice else []
    if files.call_stack is not None:
        sites, stacked = read_call_sites(files.call_stack, notices)
        if dump.nodes and not stacked:
            notices.append(
                "no call sites: the run that wrote this dump did not set "
                "FLAGS_call_stack_level=3 before its forward"
            )
    notices.extend(dump.warnings)
    graph = graph_from_dump(dump, sites)
    names = {k: getattr(files, k).name for k in SUFFIXES if getattr(files, k) is not None}
    meta: dict[str, Any] = {
        "source": "paddle_dump",
        "annotations": ["dump", "call_stack"] if sites else ["dump"],
        "dump": {
            "directory": str(files.backward.parent),
            "prefix": files.prefix,
            "files": names,
            "dumps_in_directory": count,
        },
        "outputs": [{"label": n.name, "node": n.id} for n in graph.nodes if n.kind == "output"],
    }
    unlabelled = sum(1 for e in dump.edges if e.grad is None)
    if unlabelled:
        meta["dump"]["unlabelled_edges"] = unlabelled
    if notices:
        meta["notice"] = " ".join(notices)
    checked = Graph(graph.nodes, graph.edges, (), meta)
    try:
        check_parts(GraphParts(checked.nodes, checked.edges, (), meta))
    except PaddlevizError as exc:
        raise SourceFileError(files.backward, f"cannot read it: {exc}") from None
    return checked


def build_graph_from_dump(
    path: str | os.PathLike[str], *, which: str | None = None
) -> dict[str, Any]:
    """The backward graph in the files ``loss.backward(dump_backward_graph_path=DIR)`` wrote
    (Paddle >= 3.3), as the JSON document ``build_graph(y)`` returns (``SCHEMA_VERSION``).
    ``path``: DIR (its newest dump; ``meta.notice`` says so when there are several) or one
    dump's ``.dot``; ``which``: the timestamp prefix of another dump in DIR. A dump has no
    layer groups, parameter names or slot names. FileNotFoundError when there is nothing to
    read, ``SourceFileError`` (a ValueError) naming the file that is not a dump."""
    return load_dump_graph(path, which=which).to_dict()
