"""Run one graph-building scenario in a fresh process and check the user's state survives it.

    python side_effect_runner.py MODEL WHEN TRACED
    python side_effect_runner.py --each OUT_DIR JOBS MODEL:WHEN:TRACED ...

MODEL: a name in MODELS; WHEN: "before" or "after" the user's backward(); TRACED: 1 to run
forward (and backward) inside trace(). Prints "OK" when build_graph, make_graph and
GraphWidget left every .grad bit-identical, the RNG state, the flags and a PyLayer's own
counter unchanged, and (before backward) the user's next backward() gave exactly the gradients
of a run that never built a graph. A crash inside Paddle shows as the process dying.

--each runs every scenario in its own child process, forked once the imports are done (they
are most of a fresh process's time; no Paddle op has run yet), JOBS at a time; each child's
stdout, stderr and exit status go to OUT_DIR/<scenario>.out, .err, .rc.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import paddle
import paddle.nn as nn
from paddle.distributed.fleet.utils import recompute

from paddleviz_widget import GraphWidget, build_graph, make_graph, trace

BACKWARD_CALLS = {"count": 0}


class Counting(paddle.autograd.PyLayer):
    """A PyLayer whose backward has a side effect of its own and calls paddle.grad itself."""

    @staticmethod
    def forward(ctx: Any, x: paddle.Tensor) -> paddle.Tensor:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: Any, grad: paddle.Tensor) -> paddle.Tensor:
        BACKWARD_CALLS["count"] += 1
        (x,) = ctx.saved_tensor()
        with paddle.set_grad_enabled(True):
            x2 = x.detach()
            x2.stop_gradient = False
            (g,) = paddle.grad([(x2 * x2).sum()], [x2])
        return grad * g


class Block(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)  # recompute must replay its RNG: ours must not draw any

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.drop(nn.functional.gelu(self.fc(x)))


class Net(nn.Layer):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.blocks = nn.LayerList([Block() for _ in range(3)])
        self.head = nn.Linear(8, 2)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        for block in self.blocks:
            if self.kind == "recompute_reentrant":
                x = recompute(block, x, use_reentrant=True)
            elif self.kind == "recompute":
                x = recompute(block, x, use_reentrant=False)
            elif self.kind == "pylayer":
                x = Counting.apply(block(x))
            else:
                x = block(x)
        return self.head(x)


def _net(kind: str) -> Callable[[], tuple[nn.Layer, paddle.Tensor]]:
    def make() -> tuple[nn.Layer, paddle.Tensor]:
        x = paddle.randn([4, 8])
        x.stop_gradient = False  # a reentrant recompute needs an input that wants a gradient
        return Net(kind), x

    return make


def _llama(use_recompute: bool) -> Callable[[], tuple[nn.Layer, paddle.Tensor]]:
    def make() -> tuple[nn.Layer, paddle.Tensor]:
        from llama_tiny import tiny_llama

        model, ids = tiny_llama(recompute=use_recompute)
        return model, ids

    return make


MODELS = {
    "plain": _net("plain"),
    "pylayer": _net("pylayer"),
    "recompute": _net("recompute"),
    "recompute_reentrant": _net("recompute_reentrant"),
    "llama_recompute": _llama(True),
}


def _loss(model: nn.Layer, x: paddle.Tensor) -> tuple[paddle.Tensor, paddle.Tensor]:
    out = model(x)
    out = out.logits if hasattr(out, "logits") else out
    out = out[0] if isinstance(out, (tuple, list)) else out
    return out, out.astype("float32").square().mean()


def _grads(model: nn.Layer, x: paddle.Tensor) -> dict[str, Any]:
    found = {n: (None if p.grad is None else p.grad.numpy().copy()) for n, p in
             model.named_parameters()}  # fmt: skip
    found["<input>"] = None if x.grad is None else x.grad.numpy().copy()
    return found


def _rng() -> list[np.ndarray]:
    # A generator's whole state, pickled: current_seed() stays the same across draws.
    paddle_states = [np.frombuffer(pickle.dumps(s), np.uint8) for s in paddle.get_rng_state()]
    return paddle_states + [np.random.get_state()[1].copy()]


def _same(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    bad = []
    for name in a.keys() | b.keys():
        x, y = a.get(name), b.get(name)
        if (x is None) != (y is None) or (x is not None and not np.array_equal(x, y)):
            bad.append(name)
    return sorted(bad)


def main(kind: str, when: str, traced: bool) -> None:
    paddle.seed(0)
    np.random.seed(0)
    model, x = MODELS[kind]()
    session = trace(model) if traced else contextlib.nullcontext()
    with session:
        y, loss = _loss(model, x)
        if when == "after":
            loss.backward()
    before = _grads(model, x)
    rng, counter = _rng(), BACKWARD_CALLS["count"]
    flags = paddle.get_flags(["FLAGS_call_stack_level"])
    doc = build_graph([y, loss])
    make_graph(loss)
    widget = GraphWidget(loss)
    assert _same(before, _grads(model, x)) == [], (
        f".grad changed: {_same(before, _grads(model, x))}"
    )
    assert all(np.array_equal(a, b) for a, b in zip(rng, _rng())), "the RNG state changed"
    assert BACKWARD_CALLS["count"] == counter, "a PyLayer's backward ran"
    assert paddle.get_flags(["FLAGS_call_stack_level"]) == flags, "a flag changed"
    if when == "before":
        loss.backward()
        ours = _grads(model, x)
        paddle.seed(0)
        np.random.seed(0)
        ref_model, ref_x = MODELS[kind]()
        _, ref_loss = _loss(ref_model, ref_x)
        ref_loss.backward()
        bad = _same(ours, _grads(ref_model, ref_x))
        assert not bad, f"the next backward() differs from a run without a graph: {bad}"
    notice = widget.graph["meta"].get("notice", "")
    print("OK", len(doc["nodes"]), "nodes; notice:", notice or "none")


def _child(scenario: str, out_dir: Path) -> None:
    """In the forked child: its own stdout/stderr files, one scenario, then exit."""
    code = 1
    try:
        for fd, ext in ((1, "out"), (2, "err")):
            with open(out_dir / f"{scenario}.{ext}", "wb") as f:
                os.dup2(f.fileno(), fd)
        kind, when, traced = scenario.split(":")
        try:
            main(kind, when, traced == "1")
            code = 0
        except BaseException:
            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def each(out_dir: Path, jobs: int, scenarios: list[str]) -> None:
    if any(s.startswith("llama") for s in scenarios):
        import paddleformers.transformers  # noqa: F401  (imported once, before the forks)
    sys.stdout.flush()
    sys.stderr.flush()
    running: dict[int, str] = {}
    todo = list(scenarios)
    while todo or running:
        while todo and len(running) < jobs:
            scenario = todo.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(scenario, out_dir)
            running[pid] = scenario
        pid, status = os.wait()
        (out_dir / f"{running.pop(pid)}.rc").write_text(str(os.waitstatus_to_exitcode(status)))


if __name__ == "__main__":
    if sys.argv[1] == "--each":
        each(Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
    else:
        main(sys.argv[1], sys.argv[2], sys.argv[3] == "1")
