"""Per-op Python stacks only outside library layers; call sites stay exact per call."""

from __future__ import annotations

import inspect

import paddle
import paddle.nn as nn
import paddle.nn.functional as F
from paddle_versions import requires_dump

from paddleviz_widget import trace
from paddleviz_widget.tracer.build import trace_graph

FLAG = "FLAGS_call_stack_level"


def _line_of(marker: str) -> int:
    lines, start = inspect.getsourcelines(Shared)
    return start + next(i for i, text in enumerate(lines) if marker in text)


class Shared(nn.Layer):
    """One library layer (ReLU) called from two lines of a user-written forward."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = self.act(self.fc(x))  # first-act
        h = h * 2.0  # user-op
        return self.act(h)  # second-act


def _ops_by_line(graph, name: str) -> set[int]:
    return {n.call_site.line for n in graph.nodes if n.name == name and n.call_site}


@requires_dump
def test_library_layers_run_without_stacks_and_the_flag_comes_back():
    seen: list[int] = []
    inner = nn.Linear(2, 2)
    inner.register_forward_pre_hook(lambda layer, args: seen.append(_flag()))
    model = nn.Sequential(inner)  # library forward all the way down
    user_level = _flag()
    with trace(model) as session:
        assert _flag() == 3  # asked for outside library layers
        y = model(paddle.randn([1, 2]))
        loss = (y * y).sum()  # outside any layer: this op gets Paddle's stack
        loss.backward()
    assert session.call_sites and seen == [user_level]  # inside the layers: the user's level
    assert _flag() == user_level
    graph = trace_graph(loss)
    mul = next(n for n in graph.nodes if n.name == "MultiplyGradNode")
    assert mul.call_site is not None and mul.call_site.file == __file__
    assert mul.call_site.line == _line_in_test("loss = (y * y).sum()")
    linear = next(n for n in graph.nodes if n.name == "MatmulGradNode")
    assert linear.call_site is not None and linear.call_site.line == _line_in_test("y = model(")


def _line_in_test(text: str) -> int:
    test = test_library_layers_run_without_stacks_and_the_flag_comes_back
    lines, start = inspect.getsourcelines(test)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _flag() -> int:
    return int(paddle.get_flags([FLAG])[FLAG])


@requires_dump
def test_a_library_layer_called_twice_gets_each_calls_line():
    model = Shared()
    with trace(model):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
    graph = trace_graph(y)
    assert _ops_by_line(graph, "ReluGradNode") == {_line_of("first-act"), _line_of("second-act")}
    assert _ops_by_line(graph, "ScaleGradNode") == {_line_of("user-op")}  # Paddle's own stack


@requires_dump
def test_without_trace_of_the_flag_a_functional_model_still_gets_lines():
    def forward(x: paddle.Tensor) -> paddle.Tensor:
        return F.relu(x * 3.0)

    x = paddle.randn([2, 2])
    x.stop_gradient = False
    with trace():
        y = forward(x)
        y.sum().backward()
    graph = trace_graph(y)
    assert all(n.call_site for n in graph.nodes if n.kind == "op")


class Block(nn.Layer):
    """A user-written layer: its own op gets Paddle's stack, its Linear the line calling it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.levels: list[int] = []
        library_forward = self.fc.forward  # still nn.Linear's: the gate goes by the type's

        def forward(x: paddle.Tensor) -> paddle.Tensor:
            self.levels.append(_flag())
            return library_forward(x)

        self.fc.forward = forward

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        self.levels.append(_flag())
        h = self.fc(x)  # block-fc
        return paddle.sqrt(h * h + 1.0)  # block-op


def _block_line(marker: str) -> int:
    lines, start = inspect.getsourcelines(Block)
    return start + next(i for i, text in enumerate(lines) if marker in text)


@requires_dump
def test_a_user_layer_inside_a_library_container_gets_its_ops_lines():
    first, second = Block(), Block()
    model = nn.Sequential(first, nn.ReLU(), second)  # a library forward around user blocks
    user_level = _flag()
    with trace(model):
        y = model(paddle.randn([2, 4]))
        y.sum().backward()
        assert _flag() == 3
    assert _flag() == user_level
    graph = trace_graph(y)
    assert _ops_by_line(graph, "SqrtGradNode") == {_block_line("block-op")}
    assert _ops_by_line(graph, "MatmulGradNode") == {_block_line("block-fc")}
    # Inside each block: stacks on; inside its Linear: the user's level again.
    assert first.levels == second.levels == [3, user_level]
