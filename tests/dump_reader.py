"""The tests' own reader of Paddle's backward dump (``dump_backward_graph_path``): the oracle
must not share a parser with the code under test, so this one is written separately and kept
deliberately plain."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Grad:
    dtype: str
    shape: tuple[int, ...]
    place: str


@dataclass(frozen=True)
class DumpEdge:
    source: str  # lowercase hex ptr
    target: str
    grad: Grad | None


@dataclass(frozen=True)
class BackwardDump:
    nodes: dict[str, str]  # ptr -> GradNode name
    edges: tuple[DumpEdge, ...]


def read_backward_dot(text: str) -> BackwardDump:
    ptr_of: dict[str, str] = {}
    nodes: dict[str, str] = {}
    edges: list[DumpEdge] = []
    for line in text.splitlines():
        node = re.search(r'(node_\d+)\[label="(\w+)\\nPtr: (0x[0-9a-fA-F]+)"', line)
        if node:
            ptr_of[node[1]] = node[3].lower()
            nodes[node[3].lower()] = node[2]
            continue
        edge = re.search(r'(node_\d+)->(node_\d+)(?:\[label="(.*)"\])?', line)
        if edge:
            edges.append(DumpEdge(ptr_of[edge[1]], ptr_of[edge[2]], _grad(edge[3] or "")))
    return BackwardDump(nodes, tuple(edges))


def _grad(label: str) -> Grad | None:
    # "Place(cpu)\nfloat32[2, 3]", with VLOG on preceded by the tensor name and "\n".
    found = re.search(r"Place\((.*?)\)\\n(\w+)\[(.*?)\]$", label)
    if not found:
        return None
    dims = tuple(int(d) for d in found[3].split(",") if d.strip())
    return Grad(found[2], dims, found[1])


def read_dump_dir(directory: Path) -> BackwardDump:
    """The newest backward dump in ``directory``."""
    files = sorted(Path(directory).glob("*_backward_graph.dot"), key=lambda p: p.stat().st_mtime)
    assert files, f"no backward dump in {directory}: {sorted(Path(directory).iterdir())}"
    return read_backward_dot(files[-1].read_text())
