"""A float16 training run with paddle.amp's GradScaler on this CPU-only Paddle, in a process
of its own (tests/test_run_grad_scaler.py): ``python grad_scaler_run.py RUN_DIR MODE OUT``.

Paddle's AMP works only on GPU/XPU/custom devices: on the CPU auto_cast, decorate and
GradScaler warn and do nothing. Here they are made to believe the place is a GPU (their
place checks only), so their own code runs: decorate casts the model to float16 (O2),
GradScaler scales the loss, unscales the gradients (check_finite_and_unscale: its float16
kernel is GPU-only, so float16 lists go through its float32 one), skips a step whose scaled
gradients hold a NaN/Inf (the optimizer's found_inf) and lowers or raises its scale.
MODE: ``overflow`` (scale 2**16 overflows float16 at first, then trains), ``nan`` (a NaN
made in the backward at every step, the loss finite), ``plain`` (``overflow`` untraced),
``graph`` (the overflowing first step's graph under trace(model, stats=True)), ``diff`` (a
float32 step without and with a scaler, GraphWidget.diff).
Writes OUT (JSON): the oracle per step, from p.grad after backward (the scaled gradient,
float64 NumPy) and the scaler.
"""

from __future__ import annotations

import json
import shutil
import sys
import warnings
from contextlib import nullcontext

import numpy as np
import paddle
import paddle.amp.auto_cast
import paddle.amp.grad_scaler
import paddle.nn as nn

_ac = sys.modules["paddle.amp.auto_cast"]
_gs = sys.modules["paddle.amp.grad_scaler"]


class _GpuPlace:
    def __init__(self, real: object) -> None:
        self._real = real

    def is_gpu_place(self) -> bool:
        return True

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)


class _Tracer:
    def __init__(self, real: object) -> None:
        object.__setattr__(self, "_real", real)

    def __getattr__(self, name: str) -> object:
        value = getattr(self._real, name)
        return _GpuPlace(value) if name == "_expected_place" else value

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self._real, name, value)


class _Legacy:
    def __init__(self, real: object) -> None:
        self._real = real

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def check_finite_and_unscale(self, xs, scale, outs, found):  # noqa: ANN001
        if not xs or xs[0].dtype != paddle.float16:
            return self._real.check_finite_and_unscale(xs, scale, outs, found)
        wide = [x.astype("float32") for x in xs]
        self._real.check_finite_and_unscale(wide, scale, wide, found)
        with paddle.no_grad():
            for x, w in zip(xs, wide):
                paddle.assign(w.astype(x.dtype), output=x)
        return None


class HalfSGD(paddle.optimizer.SGD):
    """SGD has no float16 CPU kernel: its update in float32, skipped on found_inf as the
    real kernels skip it."""

    @paddle.no_grad()
    def step(self) -> None:
        found = self._get_auxiliary_var("found_inf")
        if found is not None and bool(found):
            return
        for p in self._parameter_list:
            if p.grad is not None:
                new = p.astype("float32") - self.get_lr() * p.grad.astype("float32")
                paddle.assign(new.astype(p.dtype), output=p)


def force_amp_on_cpu() -> None:
    real = _ac._dygraph_tracer
    _ac._dygraph_tracer = lambda: _Tracer(real())
    _gs._dygraph_tracer = lambda: _Tracer(real())
    _ac._is_gpu_float16_supported = lambda: True
    _gs._legacy_C_ops = _Legacy(_gs._legacy_C_ops)


class NanInBackward(nn.Layer):
    """sqrt at 0 in the forward (finite), its backward 0.5 / sqrt(0) = Inf: a NaN/Inf made in
    the backward whatever the scale."""

    def forward(self, x):  # noqa: ANN001
        return paddle.sqrt(paddle.nn.functional.relu(x) * 0.0) + x


def one_graph(model: nn.Layer, scaler: object, x: paddle.Tensor, y: paddle.Tensor) -> dict:
    """``graph``: one step under trace(model, stats=True), its graph's problems and notice,
    and each parameter edge's statistics beside p.grad's (the scaled gradient, float64)."""
    from paddleviz_widget import build_graph, trace
    from paddleviz_widget.graph import Graph
    from paddleviz_widget.widget.reports import problems as graph_problems

    with trace(model, stats=True):
        with paddle.amp.auto_cast(level="O2", dtype="float16"):
            loss = nn.functional.cross_entropy(model(x).astype("float32"), y)
        scaled = scaler.scale(loss)
        scaled.backward()
    doc = build_graph(scaled)
    graph = Graph.from_dict(doc)
    nodes = {n.id: n for n in graph.nodes}
    grads = dict(model.named_parameters())
    edges = []
    for e in graph.edges:
        param = nodes[e.target].param
        if param is not None and e.stats is not None:
            g = grads[param.name].grad.astype("float32").numpy().astype(np.float64)
            edges.append({"param": param.name, "norm": e.stats.norm, "max_abs": e.stats.max_abs,
                          "inf": e.stats.inf, "grad": g.tolist()})  # fmt: skip
    problems = [p.to_dict() for p in graph_problems(doc)]
    return {"meta": {k: doc["meta"].get(k) for k in ("loss_scale", "notice")},
            "problems": problems, "edges": edges}  # fmt: skip


def diffed(out: str) -> None:
    """``diff``: one float32 MLP's step without and with a GradScaler (scale 1024, exact),
    each under trace(model, stats=True), and GraphWidget.diff of the two graphs."""
    from paddleviz_widget import GraphWidget, build_graph, trace

    paddle.seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
    x, graphs = paddle.randn([4, 8]), []
    for scaler in (None, paddle.amp.GradScaler(init_loss_scaling=1024.0)):
        with trace(model, stats=True):
            with paddle.amp.auto_cast(level="O1", dtype="float16"):  # (float32 on the CPU)
                loss = model(x).square().mean()
            root = loss if scaler is None else scaler.scale(loss)
            root.backward()
        graphs.append(build_graph(root))
        model.clear_gradients()
    doc = GraphWidget.diff(graphs[0], graphs[1], labels=("fp32", "scaled")).graph
    with open(out, "w") as f:
        json.dump({"diff": doc["meta"]["diff"], "notices": doc["meta"].get("notices", [])}, f)


def main(run_dir: str, mode: str, out: str) -> None:
    from paddleviz_widget import trace

    force_amp_on_cpu()
    if mode == "diff":
        diffed(out)
        return
    paddle.seed(0)
    layers = [nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4)]
    if mode == "nan":
        layers.insert(2, NanInBackward())
    model = nn.Sequential(*layers)
    opt = HalfSGD(1e-2, parameters=model.parameters())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt = paddle.amp.decorate(model, opt, level="O2", dtype="float16")
    init = 2.0**16 if mode != "nan" else 8.0
    scaler = paddle.amp.GradScaler(init_loss_scaling=init, incr_every_n_steps=10)
    x = paddle.randn([64, 32]) * 10
    y = paddle.randint(0, 4, [64])
    if mode == "graph":
        with open(out, "w") as f:
            json.dump(one_graph(model, scaler, x, y), f)
        return
    shutil.rmtree(run_dir, ignore_errors=True)
    watched = mode != "plain"
    steps = []
    block = trace(model, stats=True, every=5, run_dir=run_dir) if watched else nullcontext()
    with block:
        for _ in range(30):
            with paddle.amp.auto_cast(level="O2", dtype="float16"):
                loss = nn.functional.cross_entropy(model(x).astype("float32"), y)
            scale = float(scaler._scale.item())  # shape [1] before 3.3
            scaler.scale(loss).backward()
            grads = {n: p.grad.astype("float32").numpy().astype(np.float64).tolist()
                     for n, p in model.named_parameters()}  # fmt: skip
            scaler.step(opt)
            scaler.update()
            opt.clear_grad()
            steps.append({"loss": float(loss), "scale": scale, "grads": grads})
    with open(out, "w") as f:
        json.dump(steps, f)


if __name__ == "__main__":
    main(*sys.argv[1:4])
