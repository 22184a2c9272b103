"""A per-layer table of the backward graph, torchsummary-style: for each layer group, its type,
parameters (count and trainable), GradNodes, and the gradient shapes that enter its backward
(the gradient of its output) and leave it (the gradient of its input). Pure: a Graph in,
rows out; shown as aligned text (``print``) or an HTML table (a notebook)."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from math import prod

from ..visible_text import visible_text
from .parts import GraphParts
from .undrawn_params import owner_groups, undrawn_params


@dataclass(frozen=True)
class LayerRow:
    group: str
    name: str
    type: str
    depth: int
    params: int  # elements
    trainable: int
    grad_nodes: int
    grads_in: tuple[str, ...]  # distinct "dtype[shape]" entering the layer's backward
    grads_out: tuple[str, ...]


@dataclass
class Summary:
    rows: list[LayerRow] = field(default_factory=list)
    total_params: int = 0
    trainable_params: int = 0
    # What the counts leave out when they come from the graph alone (no model) and it cannot
    # name every parameter without a node ("" when they are the model's own, or complete).
    counting: str = ""

    HEADERS = ("Layer", "Type", "Params", "Trainable", "GradNodes", "Grad in", "Grad out")

    def _cells(self) -> list[tuple[str, ...]]:
        return [
            (  # names from user code: controls and bidi overrides as their escapes
                "  " * r.depth + visible_text(r.name),
                visible_text(r.type),
                f"{r.params:,}",
                f"{r.trainable:,}",
                str(r.grad_nodes),
                ", ".join(r.grads_in) or "-",
                ", ".join(r.grads_out) or "-",
            )
            for r in self.rows
        ]

    def __str__(self) -> str:
        cells = [self.HEADERS, *self._cells()]
        widths = [max(len(row[k]) for row in cells) for k in range(len(self.HEADERS))]
        line = "  ".join("-" * w for w in widths)
        text = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
        text.insert(1, line)
        text += [
            line,
            f"Total params: {self.total_params:,}  (trainable {self.trainable_params:,})"
            + self.counting,
        ]
        return "\n".join(text)

    def _repr_html_(self) -> str:
        # Names come from user code: every cell is escaped.
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.HEADERS)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in self._cells()
        )
        foot = (
            f"<p>Total params: {self.total_params:,} (trainable {self.trainable_params:,})"
            f"{html.escape(self.counting)}</p>"
        )
        return (
            '<table class="pvw-summary" style="font-family:monospace;white-space:pre">'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{foot}"
        )


def _text(dtype: str | None, shape: tuple[int, ...] | None) -> str:
    return f"{dtype or '?'}[{', '.join(map(str, shape))}]" if shape is not None else "?"


def summarize(
    graph: GraphParts, layer_params: Mapping[str, tuple[int, int]] | None = None
) -> Summary:
    """``layer_params``: layer name -> (elements, trainable elements) of the layer and its
    sublayers, from the model (parameters that have no node, e.g. hidden by recompute or
    unused, count too); without it, counts come from the graph's parameter nodes and the
    parameters its document names without a node (graph/undrawn_params.py)."""
    parent = {g.id: g.parent for g in graph.groups}
    depth: dict[str, int] = {}
    for g in graph.groups:
        d, cur = 0, g.parent
        while cur is not None and d <= len(parent):
            d, cur = d + 1, parent.get(cur)
        depth[g.id] = d

    def chain(gid: str | None) -> list[str]:
        out: list[str] = []
        while gid is not None and gid not in out:
            out.append(gid)
            gid = parent.get(gid)
        return out

    inside = {n.id: set(chain(n.group)) for n in graph.nodes}
    ops: dict[str, int] = {}
    counted: dict[str, list[int]] = {}
    for n in graph.nodes:
        for gid in inside[n.id]:
            if n.kind == "param":
                size = prod(n.param.shape) if n.param and n.param.shape is not None else 0
                counted.setdefault(gid, [0, 0])[0] += size
                counted[gid][1] += size
            else:
                ops[gid] = ops.get(gid, 0) + 1
    complete = True
    if layer_params is None:  # the parameters without a node count in their layers too
        complete = _add_undrawn(graph, chain, counted)
    kinds = {n.id: n.kind for n in graph.nodes}
    grads_in: dict[str, set[str]] = {}
    grads_out: dict[str, set[str]] = {}
    for n in graph.nodes:  # the loss's own gradient enters the layers that made the output
        if n.kind == "output" and n.tensor is not None:
            for gid in inside[n.id]:
                grads_in.setdefault(gid, set()).add(_text(n.tensor.dtype, n.tensor.shape))
    for e in graph.edges:
        src, dst = inside.get(e.source, set()), inside.get(e.target, set())
        label = _text(e.grad.dtype, e.grad.shape) if e.grad is not None else "?"
        for gid in dst - src:
            grads_in.setdefault(gid, set()).add(label)
        if kinds.get(e.target) != "param":  # a parameter's gradient is not the layer's input
            for gid in src - dst:
                grads_out.setdefault(gid, set()).add(label)
    summary = Summary()
    for g in graph.groups:
        known = (layer_params or {}).get(g.name)
        params, trainable = known if known is not None else tuple(counted.get(g.id, (0, 0)))
        summary.rows.append(
            LayerRow(g.id, g.name, g.type, depth[g.id], params, trainable, ops.get(g.id, 0),
                     tuple(sorted(grads_in.get(g.id, ()))), tuple(sorted(grads_out.get(g.id, ()))))
        )  # fmt: skip
    tops = [r for r in summary.rows if r.depth == 0]
    summary.total_params = sum(r.params for r in tops)
    summary.trainable_params = sum(r.trainable for r in tops)
    if layer_params is None and not complete:
        summary.counting = INCOMPLETE_COUNTS
    elif layer_params is None and "unreached_params" not in (graph.meta or {}):
        summary.counting = GRAPH_COUNTS  # no word of the model's other parameters
    return summary


# The footer's words when the document does not say which of the model's parameters have no
# node (built without the model, or without stats): the counts are the graph's own.
GRAPH_COUNTS = ", counting the parameters in this graph"


# The footer's words when some parameter without a node could not be counted (a document from
# before shapes were written, or one a recompute node hides and no one can name): a frozen
# Linear(3, 3) read "Params 3" and the model's total 46 for 55, unqualified.
INCOMPLETE_COUNTS = (
    ", counting the parameters in this graph and those it names; some it does not "
    "(frozen, unreached or recomputed) are left out: paddleviz_widget.summary(y, model=model) "
    "counts every parameter"
)


def _add_undrawn(
    graph: GraphParts, chain: Callable[[str | None], list[str]], counted: dict[str, list[int]]
) -> bool:
    """Count the parameters the graph has no node for (frozen, unreached, hidden by recompute:
    graph/undrawn_params.py) in their layers and those layers' ancestors; whether every one of
    them could be (a shape known, a layer found)."""
    params, complete = undrawn_params(graph.meta or {})
    owners = owner_groups((p.name for p in params), graph.groups)
    for param, owner in zip(params, owners):
        if param.numel is None or owner is None:
            complete = False
            continue
        for gid in chain(owner):
            sizes = counted.setdefault(gid, [0, 0])
            sizes[0] += param.numel
            sizes[1] += param.numel if param.trainable else 0
    return complete
