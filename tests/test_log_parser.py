"""parse_backward_log against Paddle's own dump of the same backward run (the .dot oracle).

Fixtures come from tests/fixtures/logs/record_logs.py: each <name>.log was captured while
Paddle wrote <name>.dot, and <name>.next.json holds every node's next_functions.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from paddleviz_widget.tracer.parse.log_parser import (
    GradNodeRun,
    ParsedLog,
    edge_grads,
    parse_backward_log,
)

LOGS = Path(__file__).parent / "fixtures" / "logs"
FIXTURES = sorted(p.stem for p in LOGS.glob("*.log"))
ACCUMULATION = "GradNodeAccumulation"

_DOT_NODE = re.compile(r'^\s*(node_\d+)\[label="([^"\\]+)\\nPtr: (0x[0-9a-fA-F]+)"', re.M)
_DOT_EDGE = re.compile(r'^\s*(node_\d+)->(node_\d+)\[label="([^"]*)"\]', re.M)
# The label's last two lines: "Place(cpu)\nfloat32[2, 3]" (a tensor name line may precede them).
_DOT_GRAD = re.compile(r"Place\(([^)]*)\)\\n(\w+)\[([^\]]*)\]$")


@dataclass(frozen=True)
class DotEdge:
    source: str
    target: str
    dtype: str
    shape: tuple[int, ...]
    place: str


def read_dot(name: str) -> tuple[dict[str, str], list[DotEdge]]:
    text = (LOGS / f"{name}.dot").read_text()
    ids = {m[1]: (m[3].lower(), m[2]) for m in _DOT_NODE.finditer(text)}
    edges = []
    for m in _DOT_EDGE.finditer(text):
        grad = _DOT_GRAD.search(m[3])
        assert grad, f"unexpected edge label {m[3]!r}"
        shape = tuple(int(d) for d in grad[3].split(",") if d.strip())
        edges.append(DotEdge(ids[m[1]][0], ids[m[2]][0], grad[2], shape, grad[1]))
    return dict(ids.values()), edges


def read_next(name: str) -> dict[str, list[str | None]]:
    return {n["ptr"]: n["next"] for n in json.loads((LOGS / f"{name}.next.json").read_text())}


def parsed(name: str) -> ParsedLog:
    return parse_backward_log((LOGS / f"{name}.log").read_text())


def runs_by_ptr(log: ParsedLog) -> dict[str, GradNodeRun]:
    return {run.ptr: run for run in log.runs if run.ptr is not None}


def test_every_fixture_is_present():
    assert set(FIXTURES) >= {"lenet", "mlp", "two_outputs", "square"}
    for name in FIXTURES:
        assert (LOGS / f"{name}.dot").exists() and (LOGS / f"{name}.next.json").exists()
        assert (LOGS / f"{name}.log").stat().st_size < 200_000


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_files_describe_the_same_graph(name):
    nodes, edges = read_dot(name)
    nxt = read_next(name)
    assert {ptr: nodes[ptr] for ptr in nxt} == nodes
    expected = Counter((src, dst) for src, targets in nxt.items() for dst in targets if dst)
    assert Counter((e.source, e.target) for e in edges) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_untouched_fixture_parses_without_warnings(name):
    assert parsed(name).warnings == ()


@pytest.mark.parametrize("name", FIXTURES)
def test_every_dot_node_ran_once_with_its_name(name):
    nodes, _ = read_dot(name)
    log = parsed(name)
    ptrs = [run.ptr for run in log.runs]
    assert len(ptrs) == len(set(ptrs)), "one backward runs each node once"
    assert {run.ptr: run.node_name for run in log.runs} == nodes
    for run in log.runs:
        assert run.ptr == run.ptr.lower() and run.ptr.startswith("0x")


@pytest.mark.parametrize("name", FIXTURES)
def test_runs_are_in_an_order_backward_can_execute(name):
    _, edges = read_dot(name)
    position = {run.ptr: k for k, run in enumerate(parsed(name).runs)}
    for edge in edges:
        assert position[edge.source] < position[edge.target], edge


@pytest.mark.parametrize("name", FIXTURES)
def test_api_and_slots_of_non_accumulation_runs(name):
    for run in parsed(name).runs:
        if run.node_name == ACCUMULATION:
            assert run.inputs == () and run.outputs == ()
            continue
        assert run.api and run.api.endswith("_grad"), run
        assert run.inputs and run.outputs, run
        for slot in run.inputs + run.outputs:
            assert slot.name and re.fullmatch(r"\w+", slot.name), slot


@pytest.mark.parametrize("name", FIXTURES)
def test_logged_edges_equal_dot_edges_with_their_gradients(name):
    _, edges = read_dot(name)
    runs = runs_by_ptr(parsed(name))
    logged = Counter()
    for run in runs.values():
        for edge in run.edges:
            grad = edge.grad
            assert grad is not None
            logged[(run.ptr, edge.target_ptr, grad.dtype, grad.shape, grad.place)] += 1
    expected = Counter((e.source, e.target, e.dtype, e.shape, e.place) for e in edges)
    assert logged == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_edge_grads_maps_next_functions_slots_to_dot_gradients(name):
    nodes, edges = read_dot(name)
    nxt = read_next(name)
    runs = runs_by_ptr(parsed(name))
    grads_by_pair: dict[tuple[str, str], list[DotEdge]] = {}
    for edge in edges:
        grads_by_pair.setdefault((edge.source, edge.target), []).append(edge)
    checked = 0
    for ptr, targets in nxt.items():
        mapped = edge_grads(runs[ptr], targets)
        assert set(mapped) == {i for i, t in enumerate(targets) if t is not None}
        for index, target in enumerate(targets):
            if target is None:
                continue
            slot = mapped[index]
            oracle = grads_by_pair[(ptr, target)]
            assert (slot.dtype, slot.shape, slot.place) in {
                (e.dtype, e.shape, e.place) for e in oracle
            }
            if nodes[ptr] != ACCUMULATION:
                assert slot.name, "the output slot at the same index names the gradient"
            checked += 1
    assert checked == len(edges)


@pytest.mark.parametrize("name", FIXTURES)
def test_output_slots_line_up_with_next_functions(name):
    """Two independent sources agree: Output slot i and the i-th next_functions edge's line."""
    nxt = read_next(name)
    for run in parsed(name).runs:
        if run.node_name == ACCUMULATION:
            continue
        targets = nxt[run.ptr]
        assert len(run.outputs) == len(targets), run
        present = [i for i, t in enumerate(targets) if t is not None]
        assert [e.target_ptr for e in run.edges] == [targets[i] for i in present]
        for k, index in enumerate(present):
            out, grad = run.outputs[index], run.edges[k].grad
            assert grad is not None
            assert (out.dtype, out.shape, out.place) == (grad.dtype, grad.shape, grad.place)


@pytest.mark.parametrize("name", FIXTURES)
def test_incoming_gradients_appear_among_the_targets_inputs(name):
    _, edges = read_dot(name)
    runs = runs_by_ptr(parsed(name))
    for edge in edges:
        target = runs[edge.target]
        if target.node_name == ACCUMULATION:
            continue
        inputs = {(s.dtype, s.shape, s.place) for s in target.inputs}
        assert (edge.dtype, edge.shape, edge.place) in inputs, (edge, target.inputs)


def test_vector_slot_gives_one_logged_slot_per_tensor():
    """two_outputs: split's grad node takes both outputs' gradients in one slot."""
    _, edges = read_dot("two_outputs")
    runs = runs_by_ptr(parsed("two_outputs"))
    split = next(r for r in runs.values() if r.api and r.api.startswith("split"))
    incoming = [e for e in edges if e.target == split.ptr]
    grad_slots = [s for s in split.inputs if s.name == split.inputs[0].name]
    assert len(incoming) == 2 and len(grad_slots) == len(incoming)
    assert sorted((s.dtype, s.shape) for s in grad_slots) == sorted(
        (e.dtype, e.shape) for e in incoming
    )


def test_duplicate_edges_keep_both_slots():
    """square: h * h sends two gradients to the same node, from slots 0 and 1."""
    nxt = read_next("square")
    runs = runs_by_ptr(parsed("square"))
    (ptr,) = [p for p, targets in nxt.items() if len(targets) == 2 and targets[0] == targets[1]]
    mapped = edge_grads(runs[ptr], nxt[ptr])
    assert sorted(mapped) == [0, 1]
    assert mapped[0].name != mapped[1].name  # grad_x and grad_y


def test_stop_gradient_input_leaves_an_undefined_output_slot():
    """mlp: the input has stop_gradient=True, so one next_functions entry is None."""
    nxt = read_next("mlp")
    runs = runs_by_ptr(parsed("mlp"))
    holes = [(p, i) for p, targets in nxt.items() for i, t in enumerate(targets) if t is None]
    holes = [(p, i) for p, i in holes if runs[p].node_name != ACCUMULATION]
    assert holes
    for ptr, index in holes:
        slot = runs[ptr].outputs[index]
        assert slot.name and (slot.dtype, slot.shape, slot.place) == (None, None, None)
        assert index not in edge_grads(runs[ptr], nxt[ptr])


def test_edge_grads_uses_edge_lines_only_against_matching_targets():
    nxt = read_next("mlp")
    runs = runs_by_ptr(parsed("mlp"))
    ptr = next(p for p, t in nxt.items() if len(t) == 2 and None not in t and t[0] != t[1])
    edges_only = replace(runs[ptr], outputs=())
    from_edges = edge_grads(edges_only, nxt[ptr])
    assert sorted(from_edges) == [0, 1]
    assert [from_edges[i].shape for i in (0, 1)] == [e.grad.shape for e in runs[ptr].edges]
    assert all(slot.name is None for slot in from_edges.values())  # names come from outputs
    # Targets in another order than the log's: the edge lines are not used at all.
    assert edge_grads(edges_only, list(reversed(nxt[ptr]))) == {}
    # Output slots are used only when they line up one to one with next_functions.
    assert edge_grads(replace(runs[ptr], edges=()), [*nxt[ptr], None]) == {}
    by_slot = edge_grads(replace(runs[ptr], edges=()), nxt[ptr])
    assert [by_slot[i] for i in (0, 1)] == list(runs[ptr].outputs)
