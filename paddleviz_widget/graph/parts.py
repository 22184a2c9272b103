"""The parts of a graph (nodes, edges, groups and what annotates them): pure data, no Paddle,
no Graphviz, no encoding. Frozen dataclasses so a built graph can be shared between the
widget, the paddleviz-compatible Digraph and JSON without defensive copies.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple, cast

NODE_KINDS = ("op", "param", "output", "program_op")


@dataclass(frozen=True)
class GradInfo:
    """The gradient that flows along one edge (or sits in one slot)."""

    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    place: str | None = None


@dataclass(frozen=True)
class ParamInfo:
    """The parameter (or leaf tensor) an accumulation node writes its gradient into."""

    name: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None


@dataclass(frozen=True)
class CallSite:
    """Where in user code the forward op that created a GradNode was called."""

    file: str
    line: int
    function: str | None = None


@dataclass(frozen=True)
class Slot:
    """One named input or output of a GradNode's backward kernel (e.g. grad_out, x, grad_x)."""

    name: str
    tensor: str | None = None
    grad: GradInfo | None = None


@dataclass(frozen=True)
class GradStats:
    """Statistics of the gradient one edge carried in one backward. ``norm`` (L2), ``max_abs``
    and ``mean_abs`` are taken over the finite elements, so that one NaN does not hide the
    size of the rest; ``nan`` and ``inf`` count the others; ``zero_fraction`` is over all."""

    norm: float
    max_abs: float
    mean_abs: float
    zero_fraction: float
    nan: int
    inf: int

    FIELDS = ("norm", "max_abs", "mean_abs", "zero_fraction", "nan", "inf")

    @property
    def finite(self) -> bool:
        return self.nan == 0 and self.inf == 0


# A parameter's gradient after the backward, when it is not a normal one.
GRAD_STATUSES = ("zero", "none")

# How a node or edge of a diff (graph/diff.py) differs: only in b, only in a, in both but not
# the same.
DIFF_STATUSES = ("added", "removed", "changed")


@dataclass(frozen=True)
class Change:
    """One way a node or edge of graph a differs from its match in graph b: ``field`` (dtype,
    shape, slot, slots, grad_status, norm, max_abs, nan, inf) of ``of`` (None: the edge's
    gradient; "param", "tensor", "inputs.<slot>", "outputs.<slot>", "inputs", "outputs")."""

    field: str
    a: Any
    b: Any
    of: str | None = None


@dataclass(frozen=True)
class DiffMark:
    """Schema 2.2: what a diff says about one node or edge (left off when it is the same)."""

    status: str
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class Node:
    id: str
    name: str
    ptr: str
    kind: str
    group: str | None = None
    param: ParamInfo | None = None
    call_site: CallSite | None = None
    inputs: tuple[Slot, ...] = ()
    outputs: tuple[Slot, ...] = ()
    # Shape/dtype of the user's tensor when this node is the grad_fn of one passed in.
    tensor: GradInfo | None = None
    # A parameter whose gradient came out all zeros ("zero") or never came ("none").
    grad_status: str | None = None
    diff: DiffMark | None = None  # in a diff of two graphs (graph/diff.py)


@dataclass(frozen=True)
class Edge:
    """A backward edge: `source` hands a gradient to `target`, its next_functions[index]."""

    id: str
    source: str
    target: str
    index: int
    grad: GradInfo | None = None
    slot: str | None = None  # the backward output slot that sends it, e.g. "grad_x"
    stats: GradStats | None = None  # trace(stats=True): what the gradient looked like
    diff: DiffMark | None = None  # in a diff of two graphs (graph/diff.py)
    no_stats: str | None = None  # why no statistics can be had (inside a compiled program)


@dataclass(frozen=True)
class Group:
    """An nn.Layer instance; `parent` links groups into the layer tree."""

    id: str
    name: str
    type: str
    parent: str | None = None


class GraphParts(NamedTuple):
    """A graph's contents as the codecs read and write them (``Graph`` has the same fields)."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    groups: tuple[Group, ...]
    meta: dict[str, Any]


# A node or an edge as a row: its fields in declaration order, as a plain tuple. The tracer
# builds big graphs (100k nodes) as rows and the codec encodes rows: no Node or Edge object
# each to make and free (RESULTS.md, issue 22 round 9). Node and Edge stay the Python API.
NODE_FIELDS = tuple(f.name for f in fields(Node))
EDGE_FIELDS = tuple(f.name for f in fields(Edge))
NodeRow = tuple[Any, ...]
EdgeRow = tuple[Any, ...]
_node_row, _edge_row = attrgetter(*NODE_FIELDS), attrgetter(*EDGE_FIELDS)


class Columns:
    """Rows kept as columns, one sequence per field: iterating zips them (in C, one row
    tuple at a time, reused), so no list of 100k row tuples is made and freed."""

    def __init__(self, *columns: Sequence[Any]) -> None:
        self.columns = columns

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*self.columns)


class GraphRows(NamedTuple):
    """A graph's contents with its nodes and edges as rows (NODE_FIELDS, EDGE_FIELDS order),
    each iterable more than once: a list of row tuples, or Columns."""

    nodes: Iterable[NodeRow]
    edges: Iterable[EdgeRow]
    groups: tuple[Group, ...]
    meta: dict[str, Any]


def rows_of(parts: GraphParts) -> GraphRows:
    """``parts`` as rows (what the codec encodes)."""
    return GraphRows(
        list(map(_node_row, parts.nodes)), list(map(_edge_row, parts.edges)),
        parts.groups, parts.meta,
    )  # fmt: skip


def parts_of(rows: GraphRows) -> GraphParts:
    """The Node and Edge objects of ``rows``: each filled in without the frozen dataclass
    __init__ (its object.__setattr__ per field, ~1 us an object), the same values;
    tests/test_annotated_parts.py checks them against the constructed ones."""
    new = object.__new__
    nodes, edges = [], []
    for row in rows.nodes:
        node = new(Node)
        node.__dict__.update(zip(NODE_FIELDS, row))
        nodes.append(node)
    for row in rows.edges:
        edge = new(Edge)
        edge.__dict__.update(zip(EDGE_FIELDS, row))
        edges.append(edge)
    return GraphParts(tuple(nodes), tuple(edges), rows.groups, rows.meta)


# A row with its fields readable by name, for read-only passes over a graph's rows (the problem
# rules of trace(stats=True)): a tuple made in C, where a Node or Edge costs ~1 us.
NodeView = namedtuple("NodeView", NODE_FIELDS)  # type: ignore[misc]
EdgeView = namedtuple("EdgeView", EDGE_FIELDS)  # type: ignore[misc]


def row_views(rows: GraphRows, meta: dict[str, Any]) -> GraphParts:
    """``rows`` as GraphParts whose nodes and edges read like Node and Edge objects (same field
    names and values; tuples, so not for code that copies or compares them as objects)."""
    nodes = tuple(map(NodeView._make, rows.nodes))
    edges = tuple(map(EdgeView._make, rows.edges))
    return GraphParts(cast(Any, nodes), cast(Any, edges), rows.groups, meta)


def edge_column(rows: GraphRows, name: str) -> Iterable[Any]:
    """One field of every edge row, in edge order."""
    k = EDGE_FIELDS.index(name)
    if isinstance(rows.edges, Columns):
        return rows.edges.columns[k]
    return map(itemgetter(k), rows.edges)
