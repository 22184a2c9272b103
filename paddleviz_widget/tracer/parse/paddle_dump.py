"""Read the .dot that ``Tensor.backward(dump_backward_graph_path=DIR)`` writes (Paddle >= 3.3).

Pure text parsing. Used as the oracle in tests and, where available, as a structured source
of per-edge gradient dtype/shape/place that needs no log scraping.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ...digits import is_int_text
from ...graph.model import GradInfo

_NODE = re.compile(r'^\s*(node_\d+)\s*\[label="([^"\\]+)\\nPtr:\s*(0x[0-9a-fA-F]+)"')
_EDGE = re.compile(r'^\s*(node_\d+)\s*->\s*(node_\d+)\s*(?:\[label="([^"]*)"\])?')
# Edge labels look like: Place(cpu)\nfloat32[1, 16, 6, 6]; with VLOG on, Paddle puts the
# gradient's tensor name first: @Grad\nPlace(cpu)\nfloat32[2, 3].
_MAX_DIM_DIGITS = 19
_LABEL = re.compile(r"^(?:[^\\]*\\n)?Place\(([^)]*)\)\\n([A-Za-z0-9_]+)\[([^\]]*)\]$")


@dataclass(frozen=True)
class DumpEdge:
    source: str  # ptr, lowercase hex
    target: str
    grad: GradInfo | None


@dataclass(frozen=True)
class BackwardDump:
    nodes: dict[str, str]  # ptr -> GradNode class name
    edges: tuple[DumpEdge, ...]  # in file order
    warnings: tuple[str, ...] = ()  # at most one: what in the file was not understood
    # (line number, DOT id) of each edge naming a node no line declares
    undeclared: tuple[tuple[int, str], ...] = ()


def parse_grad_label(label: str) -> GradInfo | None:
    match = _LABEL.match(label.strip())
    if not match:
        return None
    place, dtype, dims = match.groups()
    parts = [d.strip() for d in dims.split(",") if d.strip()]
    # A dimension is an int64: longer digit strings are not a shape Paddle wrote.
    if not all(len(d) <= _MAX_DIM_DIGITS and is_int_text(d, signed=True) for d in parts):
        return GradInfo(dtype=dtype, shape=None, place=place)
    return GradInfo(dtype=dtype, shape=tuple(int(d) for d in parts), place=place)


def parse_backward_dot(text: str) -> BackwardDump:
    ptr_of: dict[str, str] = {}
    nodes: dict[str, str] = {}
    edges: list[DumpEdge] = []
    # A 10k-node dump has ~11k edges but a few hundred distinct labels: read each label once.
    grads: dict[str, GradInfo | None] = {}
    issues: Counter[str] = Counter()
    undeclared: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        # Cheap substring test first: the regexes are most of the cost on big dumps.
        edge = _EDGE.match(line) if "->" in line else None
        if edge is None:
            node = _NODE.match(line)
            if node:
                dot_id, name, ptr = node.groups()
                ptr_of[dot_id] = ptr.lower()
                nodes[ptr.lower()] = name
            elif "->" in line or "[label=" in line:
                issues["node or edge lines not in Paddle's form"] += 1
            continue
        src, dst, label = edge.groups()
        if src not in ptr_of or dst not in ptr_of:
            issues["edges naming an undeclared node"] += 1
            undeclared.append((number, dst if src in ptr_of else src))
            continue
        label = label or ""
        if label not in grads:
            grads[label] = parse_grad_label(label)
        grad = grads[label]
        if label and grad is None:  # an unlabelled edge carries no gradient: fine
            issues["edge labels not read"] += 1
        elif grad is not None and grad.shape is None:
            issues["gradient shapes not read"] += 1
        edges.append(DumpEdge(ptr_of[src], ptr_of[dst], grad))
    # A whole dump ends "} // end G": one that does not (empty, or cut off) was written to a
    # full disk, of which Paddle says nothing; an edge it does not name may have had a gradient.
    if not text.rstrip().rsplit("\n", 1)[-1].lstrip().startswith("}"):
        issues["the file empty or cut off before its end"] += 1
    return BackwardDump(nodes, tuple(edges), _summary(issues), tuple(undeclared))


def _summary(issues: Counter[str]) -> tuple[str, ...]:
    if not issues:
        return ()
    parts = ", ".join(f"{what}: {count}" for what, count in sorted(issues.items()))
    return (f"Paddle's backward dump was only partly understood ({parts}); it is left out there.",)


def find_dump_files(directory: str | Path) -> dict[str, Path]:
    """The newest dump in ``directory``: {"backward": .dot, "call_stack": .log, ...}."""
    directory = Path(directory)
    found: dict[str, Path] = {}
    suffixes = {
        "backward": "_backward_graph.dot",
        "forward": "_ref_forward_graph.dot",
        "call_stack": "_call_stack.log",
    }
    for key, suffix in suffixes.items():
        candidates = sorted(directory.glob(f"*{suffix}"), key=lambda p: p.stat().st_mtime)
        if candidates:
            found[key] = candidates[-1]
    return found
