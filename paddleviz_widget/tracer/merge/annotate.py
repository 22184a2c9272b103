"""Merge what the tracer learned (logs, dump, layer scopes, parameters) into the walked graph.

Pure: takes plain data keyed by GradNode pointer (and the walk), never Paddle objects, so it
can be tested without running a model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import repeat
from operator import countOf, itemgetter
from typing import Any, NamedTuple, TypeVar

from ...graph.model import (
    CallSite,
    GradInfo,
    GradStats,
    Group,
    ParamInfo,
    Slot,
)
from ..read.walk import WalkResult

_GRAD = itemgetter(0)  # EdgeNote.grad
_NONE_ID = id(None)  # (told by identity, in C: a GradInfo's == is its dataclass __eq__)
K = TypeVar("K")
V = TypeVar("V")


class EdgeNote(NamedTuple):
    """What is known about one edge: its gradient, the backward slot that produced it, and
    which source told the gradient (a GRAD_SOURCES code). A NamedTuple, not a frozen
    dataclass: one is made per edge and source (2 x 114k on big graphs), ~4x cheaper."""

    grad: GradInfo | None = None
    slot: str | None = None
    src: str | None = None


# Where an edge's dtype/shape came from: code -> name in meta.sources (the inspector words
# them, js/view/describe.ts). Precedence, highest first, is the order collect.py merges them in
# (Annotations.add_edges: what is known first stays):
#   l  vlog         the trace()'s backward log (newest traced backward first)
#   d  dump         Paddle's backward dump of that traced backward
#   h  hooks        what trace(stats=True)'s GradNode hooks saw of it (merge/hook_grads.py)
#   L  replay-vlog  the log of the replayed backward (only when edges are still bare)
#   D  replay-dump  Paddle's dump of the replayed backward
#   p  param        a parameter's gradient has its dtype and shape (only edges nothing named)
#   s  program      a to_static program's own dtype/shape (its op edges only)
GRAD_SOURCES = {
    "l": "vlog", "d": "dump", "h": "hooks", "L": "replay-vlog", "D": "replay-dump", "p": "param",
    "s": "program",
}  # fmt: skip
NO_SOURCE = "."
# Where a node's layer group, parameter name and call site came from: code -> name in
# meta.sources.codes (schema 2.3; js/view/grad_source.ts words them). Each source layer says
# its code per field (Annotations.src); merge_layer notes it for what it adds.
NODE_SOURCES = {
    "t": "trace-layers",  # group: the layer whose forward made the node (trace()'s layer hooks)
    "o": "param-owner",  # group: the layer owning its parameter (no trace saw the forward)
    "r": "recompute",  # group: the layer a recompute PyLayer runs again
    "m": "model",  # param: the model's (or params=) name of the parameter
    "k": "kept-trace",  # param: a name a dropped trace kept for a live tensor
    "v": "variable",  # param: the user's variable that holds the leaf tensor
    "c": "paddle-stack",  # call_site: Paddle's Python stack of the op (FLAGS_call_stack_level)
    "w": "layer-call",  # call_site: the line that called the op's layer
}
NODE_FIELDS = ("group", "param", "call_site")


@dataclass(frozen=True)
class NodeSlots:
    inputs: tuple[Slot, ...] = ()
    outputs: tuple[Slot, ...] = ()


@dataclass
class Annotations:
    """Everything known about a backward graph beyond its structure, keyed by GradNode ptr."""

    # (source ptr, index in the source's next_functions) -> that edge's gradient.
    edges: dict[tuple[int, int], EdgeNote] = field(default_factory=dict)
    slots: dict[int, NodeSlots] = field(default_factory=dict)
    groups: tuple[Group, ...] = ()
    group_of_ptr: dict[int, str] = field(default_factory=dict)
    # Placements that override the known ones: a recompute node goes with the layer it
    # recomputes (merge_layer), whatever group the layer scopes gave it.
    regroup: dict[int, str] = field(default_factory=dict)
    params: dict[int, ParamInfo] = field(default_factory=dict)
    call_sites: dict[int, CallSite] = field(default_factory=dict)
    # Where the annotations came from ("vlog", "dump", ...) and what the user should know:
    # ``notice`` first (why annotations are missing), then further one-line ``notes``.
    sources: list[str] = field(default_factory=list)
    notice: str | None = None
    notes: list[str] = field(default_factory=list)
    # Why the trace() that saw this graph was dropped while a tensor of it lived (meta
    # "trace_lost"; kept_traces.py): its annotations are gone, and a diff must not compare it.
    trace_lost: str | None = None
    # Edges a traced backward's whole dump names no gradient on: it sent none (a PyLayer that
    # returned None for that input). Known, not bare: no replay, no "trace it" notice for them.
    silent: set[tuple[int, int]] = field(default_factory=set)
    # PyLayer nodes: what each stands for (meta "pylayers", keyed by node id).
    pylayers: list[dict[str, Any]] = field(default_factory=list)
    # trace(stats=True): each edge's gradient statistics, the node where the first NaN/Inf
    # was born (and whether the forward had already made one), parameters' unusual status,
    # and earlier steps' norms by edge position (meta "steps").
    stats: dict[tuple[int, int], GradStats] = field(default_factory=dict)
    no_stats: dict[tuple[int, int], str] = field(default_factory=dict)  # edge -> why none
    first_nonfinite: int | None = None
    nonfinite_in_forward: bool = False
    nonfinite_after_user_hook: bool = False  # its input passed a user's hook (user_hooks.py)
    grad_status: dict[int, str] = field(default_factory=dict)
    steps: list[Any] = field(default_factory=list)  # StepStats, oldest first
    step_positions: dict[int, int] = field(default_factory=dict)  # ptr -> position in steps
    unreached: list[dict[str, Any]] = field(default_factory=list)  # params no gradient reaches
    forward_culprit: Any = None  # forward_finite.ForwardCulprit of the newest backward
    loss_scale: Any = None  # loss_scaling.LossScale: a GradScaler scaled the newest backward
    group_sites: dict[str, CallSite] = field(default_factory=dict)  # group id -> its call
    # to_static: program node ptr -> its program (read/program.py), and what names its parts:
    # param.name -> the model's name, layer path -> class name.
    programs: dict[int, Any] = field(default_factory=dict)
    static_names: dict[str, str] = field(default_factory=dict)
    layer_types: dict[str, str] = field(default_factory=dict)
    # A layer's NODE_SOURCES code per node field it gives ("group" -> "t"), and per node where
    # one layer holds several sources; once merged, field -> ptr -> the code of its value.
    src: dict[str, str] = field(default_factory=dict)
    node_src: dict[str, dict[int, str]] = field(default_factory=dict)

    def add_edges(self, notes: dict[tuple[int, int], EdgeNote], src: str | None = None) -> None:
        """Fill in what is still unknown; sources added earlier win. ``src``: the GRAD_SOURCES
        code of these notes, kept with each gradient they give (default: each note's own)."""
        if not self.edges:  # the first layer with edges (114k on big graphs): taken whole,
            self.edges.update(notes)  # then the notes whose code changes made again
            if src is None:  # (in C first: is any note without a gradient at all?)
                bare = countOf(map(id, map(_GRAD, notes.values())), _NONE_ID)
                changed = (
                    [k for k, n in notes.items() if n.grad is None and n.src is not None]
                    if bare
                    else []
                )
            else:
                changed = [k for k, n in notes.items() if n.src != (src if n.grad else None)]
            for key in changed:
                note = notes[key]
                self.edges[key] = EdgeNote(note.grad, note.slot, src if note.grad else None)
            return
        for key, note in notes.items():
            code = src or note.src
            old = self.edges.get(key)
            if old is None:
                code = code if note.grad else None
                self.edges[key] = note if note.src == code else EdgeNote(note.grad, note.slot, code)
            elif old.grad is None or old.slot is None:
                grad, from_ = (old.grad, old.src) if old.grad else (note.grad, code)
                self.edges[key] = EdgeNote(grad, old.slot or note.slot, from_ if grad else None)


def merge_layer(ann: Annotations, layer: Annotations) -> None:
    """The one place a source's layer joins what is already known. Precedence is the order the
    layers come in (collect.py; for edges, GRAD_SOURCES): what is known first stays, per field:
    an edge's gradient and its slot, a node's slots, call site, parameter, program, statistics
    and parameter status; the first notice; the first NaN/Inf and forward culprit. Notes are
    kept in order, each line once, never the notice again. Layer groups come from the first
    source that has them; a later layer built on them (PyLayer) may add groups and ``regroup``
    nodes. What no source layer gives (steps, unreached parameters, the final notice) is set
    by collect.py itself."""
    ann.add_edges(layer.edges)
    ann.silent |= layer.silent
    _keep_first(ann.slots, layer.slots)
    _keep_first_noted(ann, "call_site", ann.call_sites, layer)
    _keep_first_noted(ann, "param", ann.params, layer)
    _keep_first(ann.programs, layer.programs)
    _keep_first(ann.stats, layer.stats)
    _keep_first(ann.no_stats, layer.no_stats)
    _keep_first(ann.grad_status, layer.grad_status)
    if layer.groups and not ann.groups:  # the first source with layer groups gives them all
        ann.groups = layer.groups
    elif layer.groups and {g.id for g in ann.groups} <= {g.id for g in layer.groups}:
        ann.groups = layer.groups  # built on the known ones (PyLayer groups add layers)
    _keep_first_noted(ann, "group", ann.group_of_ptr, layer)
    ann.group_of_ptr.update(layer.regroup)
    if layer.regroup and "group" in layer.src:
        ann.node_src.setdefault("group", {}).update(
            dict.fromkeys(layer.regroup, layer.src["group"])
        )
    ann.pylayers.extend(layer.pylayers)
    _keep_first(ann.group_sites, layer.group_sites)
    ann.sources.extend(layer.sources)
    if ann.notice is None:
        ann.notice = layer.notice
    for line in layer.notes:
        if line and line != ann.notice and line not in ann.notes:
            ann.notes.append(line)
    if ann.first_nonfinite is None and layer.first_nonfinite is not None:
        ann.first_nonfinite = layer.first_nonfinite
        ann.nonfinite_in_forward = layer.nonfinite_in_forward
        ann.nonfinite_after_user_hook = layer.nonfinite_after_user_hook
    if ann.forward_culprit is None:
        ann.forward_culprit = layer.forward_culprit
    if ann.loss_scale is None:
        ann.loss_scale = layer.loss_scale


def _keep_first(table: dict[K, V], extra: dict[K, V]) -> None:
    if not table:  # nothing known yet: all of it, in its order
        table.update(extra)
        return
    for key, value in extra.items():
        table.setdefault(key, value)


_FIELD_TABLES = {"call_site": "call_sites", "param": "params", "group": "group_of_ptr"}


def _keep_first_noted(ann: Annotations, name: str, table: dict[int, V], layer: Annotations) -> None:
    """_keep_first for a node field, noting the layer's source of each value it adds."""
    extra: dict[int, V] = getattr(layer, _FIELD_TABLES[name])
    given = layer.node_src.get(name, {})
    code = layer.src.get(name)
    noted = ann.node_src.setdefault(name, {})
    if not table and not given:  # nothing known yet (100k nodes' groups and call sites)
        table.update(extra)
        if code is not None:
            noted.update(dict.fromkeys(extra, code))
        return
    for key, value in extra.items():
        if key not in table:
            table[key] = value
            from_ = given.get(key, code)
            if from_ is not None:
                noted[key] = from_


def sources_meta(
    codes: Iterable[str | None], ann: Annotations | None = None, walk: WalkResult | None = None
) -> dict[str, Any] | None:
    """meta.sources: one GRAD_SOURCES code per edge, in edge order ("." unknown); per node
    field (schema 2.3) one NODE_SOURCES code per node in node order, for the fields any node
    has; and the codes used, by name. None when nothing has a source."""
    text = "".join([c or NO_SOURCE for c in codes])
    used = set(text) - {NO_SOURCE}
    out: dict[str, Any] = {"edges": text}
    if ann is not None and walk is not None:
        nodes: dict[str, str] = {}
        ptrs, dots = walk.ptrs, repeat(NO_SOURCE)
        for name in NODE_FIELDS:
            noted = ann.node_src.get(name)
            if noted:  # map over a bound get: in C, one code per node
                nodes[name] = "".join(map(noted.get, ptrs, dots))
                used |= set(nodes[name]) - {NO_SOURCE}
        if nodes:
            out["nodes"] = nodes
    if not used:
        return None
    out["codes"] = {c: GRAD_SOURCES.get(c) or NODE_SOURCES[c] for c in sorted(used)}
    return out


def stats_meta(ann: Annotations, walk: WalkResult) -> dict[str, Any]:
    """meta entries of trace(stats=True): first_nonfinite (node id), nonfinite_in_forward,
    and steps: the kept steps' norm and NaN+Inf count per edge id, oldest first."""
    meta: dict[str, Any] = {}
    if ann.unreached:
        meta["unreached_params"] = ann.unreached
    if ann.forward_culprit is not None:
        meta["forward_nonfinite"] = forward_nonfinite_meta(ann, walk)
    scale = ann.loss_scale
    if scale is not None and (scale.scale != 1.0 or scale.dynamic):
        meta["loss_scale"] = {"scale": scale.scale, "dynamic": scale.dynamic}
    if ann.first_nonfinite is not None:
        index = next((w.index for w in walk.nodes if w.ptr == ann.first_nonfinite), None)
        if index is not None:
            meta["first_nonfinite"] = f"n{index}"
            meta["nonfinite_in_forward"] = ann.nonfinite_in_forward
            if ann.nonfinite_after_user_hook:
                meta["nonfinite_after_user_hook"] = True
    if len(ann.steps) > 1:
        norms: dict[str, list[float | None]] = {}
        bad: dict[str, list[int]] = {}
        unmeasured = ann.no_stats  # (a user's hook replaced what they carried: no history)
        for k, e in enumerate(walk.edges):
            ptr = walk.nodes[e.source].ptr
            position = ann.step_positions.get(ptr)
            if position is None or (unmeasured and (ptr, e.slot) in unmeasured):
                continue
            row = [s.edges.get((position, e.slot)) for s in ann.steps]
            if any(r is not None for r in row):
                norms[f"e{k}"] = [None if r is None else r.norm for r in row]
                counts = [0 if r is None else r.nan + r.inf for r in row]
                if any(counts):
                    bad[f"e{k}"] = counts
        meta["steps"] = {"index": [s.step for s in ann.steps], "norm": norms, "nonfinite": bad}
    return meta


def forward_nonfinite_meta(ann: Annotations, walk: WalkResult) -> dict[str, Any]:
    """meta.forward_nonfinite: the first layer whose forward output held a NaN/Inf, its group,
    where it was called, and its own op nodes in this graph (the op is known if there is one)."""
    c = ann.forward_culprit
    entry: dict[str, Any] = {"layer": c.layer, "layer_type": c.layer_type,
                             "inputs_finite": c.inputs_finite}  # fmt: skip
    if c.before is not None:
        entry["before"] = c.before
    if getattr(c, "bad_params", ()):  # its weights were NaN/Inf already: an earlier update
        entry["bad_params"] = list(c.bad_params)
    if getattr(c, "found_by", None) is not None:  # a compiled program was involved
        entry["found_by"] = c.found_by
    if getattr(c, "program", None) is not None:  # found by re-running it (program_rerun)
        entry["program"] = c.program
        if c.source is not None:
            entry["source"] = {"file": c.source[0], "first": c.source[1], "last": c.source[2]}
    gid = next((g.id for g in ann.groups if g.name == c.layer), None)
    if gid is None:
        return entry
    entry["group"] = gid
    site = ann.group_sites.get(gid)
    if site is not None:
        entry["call_site"] = {"file": site.file, "line": site.line, "function": site.function}
    entry["ops"] = [
        f"n{w.index}" for w in walk.nodes
        if not w.is_accumulation and ann.group_of_ptr.get(w.ptr) == gid
    ]  # fmt: skip
    return entry
