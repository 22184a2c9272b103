"""parse_call_stack_log on a recorded Paddle dump and on a freshly traced model."""

from __future__ import annotations

import importlib.util
import inspect
import os
from collections import Counter
from pathlib import Path
from typing import Any

import paddle
import paddle.nn as nn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paddle_versions import requires_dump

import paddleviz_widget.tracer.capture.layer_scopes as layer_scopes_mod
from paddleviz_widget.graph.model import CallSite
from paddleviz_widget.tracer.capture.layer_scopes import LayerScopeRecorder
from paddleviz_widget.tracer.parse.call_sites import (
    is_library_file,
    parse_call_stack_entries,
    parse_call_stack_log,
)
from paddleviz_widget.tracer.read.grad_node import grad_node_of
from paddleviz_widget.tracer.read.walk import walk_backward_graph

FIXTURES = Path(__file__).parent / "fixtures" / "call_stacks"
LOG = (FIXTURES / "lenet_call_stack.log").read_text()


def _fixture_module():
    spec = importlib.util.spec_from_file_location("lenet_model", FIXTURES / "lenet_model.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines_with(func: Any, text: str) -> list[int]:
    lines, first = inspect.getsourcelines(func)
    return [first + i for i, line in enumerate(lines) if text in line]


def test_fixture_holds_one_entry_per_node_of_the_model_graph():
    lenet = _fixture_module().LeNet()
    loss = lenet(paddle.randn([1, 3, 32, 32])).sum()
    live = Counter(n.name for n in walk_backward_graph([grad_node_of(loss)]).nodes)
    entries = parse_call_stack_entries(LOG)
    assert Counter(e.name for e in entries) == live
    assert len({e.ptr for e in entries}) == len(entries)


@pytest.mark.parametrize("library_dirs", [None, ()])  # (): paddle found by path pattern alone
def test_fixture_sites_point_at_the_model_source(library_dirs):
    module = _fixture_module()
    entries = {e.ptr: e for e in parse_call_stack_entries(LOG)}
    sites = parse_call_stack_log(LOG, library_dirs=library_dirs)
    # Paddle records no stack for some nodes (Conv2dGradNodeFinal); those have no site.
    assert set(sites) == {p for p, e in entries.items() if e.frames}
    model_file = {Path(s.file).name for s in sites.values()} - {"regenerate.py"}
    assert model_file == {"lenet_model.py"}

    params = [s for p, s in sites.items() if entries[p].name == "GradNodeAccumulation"]
    # Each parameter's site is the line that constructs its layer, in model order.
    layer_lines = sorted(
        _lines_with(module.LeNet.__init__, "nn.Conv2D(")
        + _lines_with(module.LeNet.__init__, "nn.Linear(")
    )
    owners = [m for m in module.LeNet().sublayers() if m.parameters(include_sublayers=False)]
    expected = Counter(
        {line: len(m.parameters(include_sublayers=False)) for line, m in zip(layer_lines, owners)}
    )
    assert Counter(s.line for s in params) == expected
    assert {s.function for s in params} == {"__init__"}

    forward_lines = set(
        _lines_with(module.LeNet.forward, "self.conv(img)")
        + _lines_with(module.LeNet.forward, "self.fc(")
    )
    ops = {p: s for p, s in sites.items() if entries[p].name != "GradNodeAccumulation"}
    in_model = {s.line for s in ops.values() if s.file.endswith("lenet_model.py")}
    assert in_model == forward_lines
    assert {s.function for s in ops.values() if s.line in forward_lines} == {"forward"}
    (outside,) = [p for p, s in ops.items() if not s.file.endswith("lenet_model.py")]
    assert entries[outside].name == "SumGradNode"  # loss = model(x).sum() in regenerate.py
    assert sites[outside].function == "main"


def test_library_files():
    assert is_library_file("/opt/py/lib/python3.9/site-packages/paddle/nn/layer/layers.py")
    assert is_library_file("C:\\py\\Lib\\site-packages\\paddle\\tensor\\math.py")
    assert is_library_file(inspect.getfile(layer_scopes_mod))
    assert is_library_file(os.__file__)  # the standard library
    assert is_library_file("<frozen runpy>")
    assert not is_library_file(__file__)
    assert not is_library_file(pytest.__file__)  # other packages are user code
    assert not is_library_file("/tmp/ipykernel_123/4567.py")
    assert not is_library_file("/home/me/paddle_project/train.py")


ODD = [
    None,
    b"",
    LOG.encode(),
    12,
    "",
    "garbage\n\x00\x01",
    '  File "orphan.py", line 3, in f\n',
    "GradNodeBase X ptr : 0xZZ call stack: \n",
    'GradNodeBase X ptr : 0x10 call stack: \n  File "a.py", line notanumber, in f\n',
    LOG.replace("\n", "\r\n"),
    LOG[: len(LOG) // 2],
]


@pytest.mark.parametrize("text", ODD, ids=range(len(ODD)))
def test_odd_input_never_raises(text):
    sites = parse_call_stack_log(text)
    assert all(isinstance(s, CallSite) and isinstance(p, int) for p, s in sites.items())


def test_truncated_and_windows_logs_keep_what_they_can():
    full = parse_call_stack_log(LOG)
    assert parse_call_stack_log(LOG.replace("\n", "\r\n")) == full
    assert parse_call_stack_log(LOG.encode()) == full
    half = parse_call_stack_log(LOG[: len(LOG) // 2])
    assert 0 < len(half) < len(full)
    # Every entry but the cut one is whole; the cut one keeps only its outer frames.
    assert sum(full[p] != s for p, s in half.items()) <= 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(LOG.splitlines()[:120]) | st.text(max_size=40), max_size=60))
def test_shuffled_log_lines_never_raise(lines):
    parse_call_stack_log("\n".join(lines))


# --- a freshly traced model: each op's site is the line of this file that made it ---------

MARKS: list[tuple[Any, int, str]] = []


def mark(tensor):
    """Remember which line of which function produced ``tensor``."""
    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    MARKS.append((tensor, caller.f_lineno, caller.f_code.co_name))
    return tensor


def double(t):  # a user helper: the innermost user frame of the op inside
    return mark(t * 2.0)


class Live(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = mark(self.fc(x))
        h = mark(paddle.tanh(h))
        h = double(h)
        return mark(h.mean())


@pytest.fixture
def stacks_recorded():
    old = paddle.get_flags(["FLAGS_call_stack_level"])
    paddle.set_flags({"FLAGS_call_stack_level": 3})
    yield
    paddle.set_flags(old)


@requires_dump
@pytest.mark.parametrize("under_recorder", [False, True])
def test_live_sites_are_the_lines_that_made_each_node(stacks_recorded, tmp_path, under_recorder):
    MARKS.clear()
    model = Live()
    if under_recorder:  # puts paddleviz_widget's own Layer.__call__ wrapper in every stack
        with LayerScopeRecorder():
            y = model(paddle.randn([2, 4]))
    else:
        y = model(paddle.randn([2, 4]))
    expected: dict[int, CallSite] = {}
    for tensor, line, function in MARKS:  # nodes first reached from a mark came from its line
        for n in walk_backward_graph([grad_node_of(tensor)]).nodes:
            if not n.is_accumulation:
                expected.setdefault(n.ptr, CallSite(__file__, line, function))
    y.backward(dump_backward_graph_path=str(tmp_path))
    (log,) = tmp_path.glob("*_call_stack.log")
    text = log.read_text()
    wrapper_file = inspect.getfile(layer_scopes_mod)
    assert (wrapper_file in text) == under_recorder
    sites = parse_call_stack_log(text)
    assert len(expected) >= 5 and {s.function for s in expected.values()} == {"forward", "double"}
    assert {p: sites[p] for p in expected} == expected
    (linear_line,) = _lines_with(Live.__init__, "nn.Linear(")
    walked = walk_backward_graph([grad_node_of(y)])
    params = [n for n in walked.nodes if n.is_accumulation]
    assert len(params) == 2
    assert {sites[n.ptr] for n in params} == {CallSite(__file__, linear_line, "__init__")}
