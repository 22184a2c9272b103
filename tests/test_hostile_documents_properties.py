"""Property tests (issue 19): valid documents and files, mutated at random, either read as a
valid graph or fail with the package's own error (PaddlevizError, a ValueError) - never a bare
KeyError, IndexError, TypeError, RecursionError, OverflowError or MemoryError, and never a hang
(each example has a deadline). What is accepted draws: the page's own view rules (run in
mini-racer by export.view_dot) turn it into DOT."""

from __future__ import annotations

import copy
import json
import math
import pickle
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paddleviz_widget import PaddlevizError
from paddleviz_widget.graph import Graph, nested_dict
from paddleviz_widget.sources import build_graph_from_jittor, load_dump_graph

FIXTURES = Path(__file__).parent / "fixtures"
LENET = json.loads((FIXTURES / "graphs" / "lenet.json").read_text())
LENET_V1 = nested_dict(LENET)
JITTOR = json.loads((FIXTURES / "jittor" / "simple_model.json").read_text())
SETTINGS = settings(
    max_examples=200,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in ``doc`` (a loop over a stack: documents may be deep)."""
    out, stack = [], [(prefix, doc)]
    while stack:
        path, value = stack.pop()
        out.append(path)
        if isinstance(value, dict):
            stack += [((*path, k), v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [((*path, k), v) for k, v in enumerate(value)]
    return out


def deep(n: int) -> Any:
    value: Any = 0
    for _ in range(n):
        value = [value]
    return value


DEEP = "<5000 nested lists>"  # the value itself would not print (hypothesis recurses)
hostile = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -0.0, 10**5000]),
    st.text(max_size=8),
    st.sampled_from(["n0", "n1", "e0", "g0", "g1", "0x1", "", "4x4", "\u202e", "2.2", "1.0"]),
    st.lists(st.integers(-3, 3), max_size=3),
    st.lists(st.sampled_from(["n0", None, 1.5]), max_size=3),
    st.dictionaries(st.sampled_from(["id", "name", "grad", "x"]), st.integers(0, 3), max_size=2),
    st.sampled_from([DEEP, [[]], {}]),
)
LENET_PATHS = [p for p in paths(LENET) if p]
V1_PATHS = [p for p in paths(LENET_V1) if p]
Plan = list[tuple[tuple[Any, ...], str, Any]]


def plans(all_paths: list[tuple[Any, ...]]) -> Any:
    step = st.tuples(
        st.sampled_from(all_paths), st.sampled_from(["set", "set", "delete", "dup"]), hostile
    )
    return st.lists(step, min_size=1, max_size=3)


def apply(base: dict[str, Any], plan: Plan) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    for path, action, value in plan:
        parent: Any = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            last = path[-1]
            parent[last]  # noqa: B018 - still there after earlier steps?
        except (KeyError, IndexError, TypeError):
            continue
        if not isinstance(parent, (dict, list)):  # an earlier step set a string there
            continue
        if action == "delete":
            del parent[last]
        elif action == "dup" and isinstance(parent, list):
            # The same object again: a copy of a DEEP value set by an earlier step would
            # recurse 5000 levels in deepcopy (the test's own RecursionError, not the reader's).
            parent.insert(last, parent[last])
        else:
            parent[last] = deep(5000) if value == DEEP else copy.deepcopy(value)
    return doc


def read(doc: Any) -> Graph | None:
    try:
        return Graph.from_dict(doc)
    except PaddlevizError:
        return None


@SETTINGS
@given(plans(LENET_PATHS))
def test_mutated_documents_read_or_fail_with_our_error(plan: Plan) -> None:
    graph = read(apply(LENET, plan))
    if graph is not None:
        assert Graph.from_dict(graph.to_dict()) == graph  # what is read is valid


@SETTINGS
@given(plans(V1_PATHS))
def test_mutated_1_0_documents_read_or_fail_with_our_error(plan: Plan) -> None:
    read(apply(LENET_V1, plan))


@settings(
    max_examples=40,
    deadline=timedelta(seconds=20),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(plans(LENET_PATHS))
def test_accepted_documents_draw_in_the_page(plan: Plan) -> None:
    pytest.importorskip("py_mini_racer")
    from paddleviz_widget.export.view_rules import view_dot

    graph = read(apply(LENET, plan))
    if graph is None:
        return
    written = graph.to_dict()
    dot = view_dot(json.loads(json.dumps(written, allow_nan=False)))
    assert dot.lstrip().startswith("digraph")


@st.composite
def damaged_text(draw: Any, text: str) -> str:
    cut = draw(st.integers(0, len(text)))
    kind = draw(st.sampled_from(["truncate", "splice", "replace"]))
    if kind == "truncate":
        return text[:cut]
    piece = draw(
        st.one_of(
            st.text(max_size=12),
            st.sampled_from(
                ["Infinity", "NaN", "-1", "9" * 5000, "[" * 5000, "{", '"', "\\", "->", "\u202e"]
            ),
        )
    )
    end = cut + (draw(st.integers(0, 20)) if kind == "replace" else 0)
    return text[:cut] + piece + text[end:]


JITTOR_TEXT = json.dumps(JITTOR)


@SETTINGS
@given(damaged_text(JITTOR_TEXT))
def test_damaged_jittor_json_files(tmp_path_factory: Any, text: str) -> None:
    path = tmp_path_factory.mktemp("jt") / "trace.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        doc = build_graph_from_jittor(path)
    except PaddlevizError as exc:
        assert str(path) in str(exc)
        return
    Graph.from_dict(doc)


JITTOR_PICKLE = pickle.dumps(JITTOR, protocol=2)


@SETTINGS
@given(st.integers(0, len(JITTOR_PICKLE) - 1))
def test_cut_short_jittor_pickles(tmp_path_factory: Any, cut: int) -> None:
    path = tmp_path_factory.mktemp("jt") / "trace.pkl"
    path.write_bytes(JITTOR_PICKLE[:cut])
    with pytest.raises(PaddlevizError, match=str(path)):
        build_graph_from_jittor(path)


DOT = """digraph G {
node_1[label="MatmulGradNode\\nPtr: 0x10"]
node_2[label="GradNodeAccumulation\\nPtr: 0x20"]
node_3[label="AddGradNode\\nPtr: 0x30"]
node_3->node_1[label="Place(cpu)\\nfloat32[4, 4]"]
node_1->node_2[label="Place(cpu)\\nfloat32[4, 8]"]
}
"""


@SETTINGS
@given(damaged_text(DOT))
def test_damaged_paddle_dumps(tmp_path_factory: Any, text: str) -> None:
    directory = tmp_path_factory.mktemp("dump")
    (directory / "run_backward_graph.dot").write_text(text, errors="surrogatepass")
    try:
        graph = load_dump_graph(directory)
    except PaddlevizError as exc:
        assert "run_backward_graph.dot" in str(exc)
        return
    Graph.from_dict(graph.to_dict())
