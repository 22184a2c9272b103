"""User scripts whose fd-level output must be the same with and without paddleviz_widget.

    python output_scenarios.py SCENARIO MODE  (also run by the CLI, run.py)

Each scenario runs a forward and a backward of the kind named, and the user's own code prints
to stdout and stderr at Python and fd level from inside the backward (a PyLayer's backward, a
tensor hook), so a capture that swallowed or reordered them would show.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import paddle
import paddle.nn as nn


def say(text: str) -> None:
    """The user's output from inside their backward: both streams, both levels."""
    print(f"print {text}", flush=True)
    print(f"eprint {text}", file=sys.stderr, flush=True)
    os.write(1, f"fd1 {text}\n".encode())
    os.write(2, f"fd2 {text}\n".encode())


class Loud(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx: Any, x: paddle.Tensor) -> paddle.Tensor:
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: paddle.Tensor) -> paddle.Tensor:
        say("pylayer backward")
        return grad * 2


class MLP(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = paddle.tanh(self.fc1(x))
        if float(h.sum()) > 1e9:  # a graph break under SOT (full_graph=False)
            h = h * 0
        return self.fc2(h)


def _hooked(y: paddle.Tensor) -> paddle.Tensor:
    y.register_hook(lambda g: say("hook") or g)
    return y


def static_full() -> tuple[nn.Layer, Callable[[], paddle.Tensor]]:
    class Straight(MLP):
        def forward(self, x: paddle.Tensor) -> paddle.Tensor:
            return self.fc2(paddle.tanh(self.fc1(x)))

    model = Straight()
    static = paddle.jit.to_static(model, full_graph=True)
    x = paddle.randn([3, 4])
    return model, lambda: _hooked(static(x)).sum()


def static_sot() -> tuple[nn.Layer, Callable[[], paddle.Tensor]]:
    os.environ["MIN_GRAPH_SIZE"] = "0"  # SOT runs small subgraphs eagerly by default
    model = MLP()
    static = paddle.jit.to_static(model, full_graph=False)
    x = paddle.randn([3, 4])
    return model, lambda: _hooked(static(x)).sum()


def recompute() -> tuple[nn.Layer, Callable[[], paddle.Tensor]]:
    from paddle.distributed.fleet.utils import recompute as rc

    model = MLP()
    x = paddle.randn([3, 4])
    x.stop_gradient = False
    return model, lambda: _hooked(rc(model, x, use_reentrant=True)).sum()


def pylayer() -> tuple[nn.Layer, Callable[[], paddle.Tensor]]:
    model = MLP()
    x = paddle.randn([3, 4])
    return model, lambda: _hooked(Loud.apply(model(x))).sum()


def llama() -> tuple[nn.Layer, Callable[[], paddle.Tensor]]:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from llama_tiny import tiny_llama

    model, ids = tiny_llama(recompute=True)
    return model, lambda: _hooked(model(ids)[0]).sum()


def llama_static() -> tuple[nn.Layer, Callable[[], paddle.Tensor]]:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from llama_tiny import tiny_llama

    model, ids = tiny_llama()
    # full_graph=True fails in Paddle's AST transform on paddleformers (RecursionError,
    # without the widget too): SOT is how this model runs under to_static.
    static = paddle.jit.to_static(model, full_graph=False)
    return model, lambda: _hooked(static(ids)[0]).sum()


SCENARIOS = {f.__name__: f for f in (static_full, static_sot, recompute, pylayer, llama,
                                     llama_static)}  # fmt: skip


def run(name: str, mode: str) -> None:
    paddle.seed(0)
    model, loss_of = SCENARIOS[name]()
    say("before")
    for _step in range(2):
        if mode == "replay":  # build_graph outside trace(): replays the backward itself
            from paddleviz_widget import build_graph

            loss = loss_of()
            build_graph(loss)
            loss.backward()
        elif mode == "late":  # the forward outside trace(), the backward inside
            from paddleviz_widget import build_graph, trace

            loss = loss_of()
            with trace(model):
                loss.backward()
            build_graph(loss)
        elif mode == "trace":
            from paddleviz_widget import build_graph, trace

            with trace(model):
                loss = loss_of()
                loss.backward()
            build_graph(loss)
        else:
            loss = loss_of()
            loss.backward()
        say(f"step {_step}")
    say("after")


if __name__ == "__main__":
    # MODE: plain, trace, replay, late; run by the CLI or run.py: plain (the tool traces).
    run(sys.argv[1], sys.argv[2])
