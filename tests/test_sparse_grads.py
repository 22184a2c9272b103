"""A model with nn.Embedding(sparse=True) (recommenders, word2vec) under trace(stats=True) and
trace(every=N, run_dir=...): its gradient is a SelectedRows, one row per looked-up id (an id
looked up k times has k rows). The backward runs (the statistics hooks read it), the run log
records every step, and the embedding's norm, max |g| and NaN/Inf counts, on its graph edge
and in the run log, are those of the dense gradient the optimizer applies (duplicate rows
summed). Oracle: a twin model with a dense embedding given the same weights and batch, and
Paddle's own dense gradient of it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import paddle
import paddle.nn.functional as F
import pytest
from paddle_versions import requires_post_hooks

from paddleviz_widget import open_run, trace
from paddleviz_widget.tracer.build import trace_graph

VOCAB = 30


class _Recommender(paddle.nn.Layer):
    def __init__(self, sparse: bool, vocab: int = VOCAB, dim: int = 8) -> None:
        super().__init__()
        self.emb = paddle.nn.Embedding(vocab, dim, sparse=sparse)
        self.fc = paddle.nn.Linear(dim, 1)

    def forward(self, ids: paddle.Tensor) -> paddle.Tensor:
        return self.fc(self.emb(ids).mean(1))


def _batch(step: int) -> tuple[paddle.Tensor, paddle.Tensor]:
    ids = paddle.randint(0, VOCAB // 3, [6, 5])  # few ids: most are looked up several times
    if step == 4:
        ids[0, 0] = ids[0, 1]  # (already likely; made certain at one step)
    return ids, paddle.randn([6, 1])


def _dense_grads(model: _Recommender, weights: dict[str, np.ndarray], batch) -> dict[str, Any]:
    twin = _Recommender(False, *model.emb.weight.shape)
    for name, p in twin.named_parameters():
        p.set_value(weights[name])
    ids, y = batch
    F.mse_loss(twin(ids), y).backward()
    return {n: p.grad.numpy().astype(np.float64) for n, p in twin.named_parameters()}


def test_sparse_embedding_run_records_the_dense_gradients_numbers(tmp_path):
    paddle.seed(0)
    model = _Recommender(sparse=True)
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    seen: list[tuple[dict[str, np.ndarray], tuple[paddle.Tensor, paddle.Tensor], float]] = []
    with trace(model, stats=True, every=3, run_dir=tmp_path / "run"):
        for step in range(8):
            batch = _batch(step)
            weights = {n: p.numpy().copy() for n, p in model.named_parameters()}
            loss = F.mse_loss(model(batch[0]), batch[1])
            loss.backward()
            assert model.emb.weight.grad.is_selected_rows()  # the case under test
            seen.append((weights, batch, float(loss)))
            opt.step()
            opt.clear_grad()
    run = open_run(tmp_path / "run")
    assert run.meta["status"] == "finished", run.meta.get("error")
    assert run.steps.tolist() == list(range(8))
    assert run.captured_steps == [0, 3, 6]
    names = [p.name for p in run.params]
    norm, max_abs = run.param_stat("norm"), run.param_stat("max_abs")
    nan, inf = run.param_stat("nan"), run.param_stat("inf")
    for step, (weights, batch, loss) in enumerate(seen):
        assert math.isclose(run.loss[step], loss, rel_tol=1e-6)
        dense = _dense_grads(model, weights, batch)
        for j, name in enumerate(names):
            g = dense[name]
            assert math.isclose(norm[step, j], np.linalg.norm(g), rel_tol=1e-5), (step, name)
            assert math.isclose(max_abs[step, j], np.abs(g).max(), rel_tol=1e-5), (step, name)
            assert nan[step, j] == 0 and inf[step, j] == 0
    assert run.problems() == []


def test_sparse_embedding_nan_counted_in_the_dense_gradient(tmp_path):
    """A NaN in the batch's features reaches one looked-up row: the run says nonfinite at that
    step, naming the embedding, with the dense gradient's NaN count."""
    paddle.seed(0)
    model = _Recommender(sparse=True)
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    expected_nan = {}
    with trace(model, every=100, run_dir=tmp_path / "run"):
        for step in range(4):
            ids = paddle.to_tensor([[1, 2, 2, 5, 7]] * 2)
            y = paddle.randn([2, 1])
            if step == 2:
                y[0, 0] = float("nan")
            loss = F.mse_loss(model(ids), y)
            loss.backward()
            g = model.emb.weight.grad
            dense = np.zeros(model.emb.weight.shape)
            np.add.at(dense, np.array(g.rows()), g.numpy())
            expected_nan[step] = int(np.isnan(dense).sum())
            opt.clear_grad()
    assert expected_nan[2] == 4 * 8 and expected_nan[1] == 0  # rows 1, 2, 5, 7: all NaN
    run = open_run(tmp_path / "run")
    assert run.meta["status"] == "finished", run.meta.get("error")
    j = [p.name for p in run.params].index("emb.weight")
    assert run.param_stat("nan")[:, j].tolist() == [expected_nan[s] for s in range(4)]
    [problem] = run.problems()
    assert (problem.step, problem.kind) == (2, "nonfinite") and "emb.weight" in problem.params


@requires_post_hooks
@pytest.mark.parametrize("ids_shape", [(2, 5), (64, 32)])  # 80 values; 2048 x 64: big ones
def test_trace_stats_backward_runs_and_the_embedding_edge_has_the_dense_numbers(ids_shape):
    paddle.seed(0)
    model = _Recommender(True, 1000 if ids_shape[0] > 2 else VOCAB, 64 if ids_shape[0] > 2 else 8)
    ids = paddle.randint(0, model.emb.weight.shape[0] // 3, list(ids_shape))
    batch = (ids, paddle.randn([ids_shape[0], 1]))
    weights = {n: p.numpy().copy() for n, p in model.named_parameters()}
    with trace(model, stats=True):
        loss = F.mse_loss(model(ids), batch[1])
        loss.backward()
    dense = _dense_grads(model, weights, batch)["emb.weight"]
    graph = trace_graph(loss, model=model)
    names = {n.id: n.name for n in graph.nodes}
    [edge] = [e for e in graph.edges if names[e.source] == "EmbeddingGradNode"]
    assert edge.stats is not None
    assert math.isclose(edge.stats.norm, np.linalg.norm(dense), rel_tol=1e-5)
    assert math.isclose(edge.stats.max_abs, np.abs(dense).max(), rel_tol=1e-5)
    assert edge.stats.nan == 0 and edge.stats.inf == 0


_COO_SCRIPT = """
import contextlib
import numpy as np, paddle
from paddleviz_widget import trace

def run(traced):
    paddle.seed(0)
    lin = paddle.nn.Linear(8, 4)
    dense = paddle.randn([8, 8]) * (paddle.rand([8, 8]) > 0.7).astype("float32")
    x = dense.to_sparse_coo(2)
    x.stop_gradient = False
    with trace(lin, stats=True) if traced else contextlib.nullcontext():
        y = paddle.sparse.nn.functional.relu(x)  # a sparse COO gradient goes back through it
        lin(y.to_dense()).sum().backward()
    return lin.weight.grad.numpy(), x.grad.to_dense().numpy()

plain, traced = run(False), run(True)
print(all(np.array_equal(a, b) for a, b in zip(plain, traced)))
"""


@requires_post_hooks
def test_trace_stats_on_a_sparse_coo_gradient_leaves_the_backward_and_grads_alone():
    """paddle.sparse: the statistics hooks leave a COO gradient unread (Tensor.numpy() of it in
    a hook made Paddle 3.3.1 segfault after the hook). A child process: a crash is a failure."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _COO_SCRIPT], capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True"


_SPARSE_LAYER_SCRIPT = """
import contextlib
import sys
import numpy as np, paddle
from paddleviz_widget import open_run, trace

class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.act = paddle.sparse.nn.ReLU()  # a layer whose output is a sparse COO tensor
        self.fc = paddle.nn.Linear(8, 1)

    def forward(self, x):
        return self.fc(self.act(x).to_dense())

def train(run_dir):
    paddle.seed(0)
    model = Model()
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    watch = trace(model, stats=True, every=2, run_dir=run_dir) if run_dir else None
    with watch or contextlib.nullcontext():
        for _ in range(4):
            mask = (paddle.rand([16, 8]) > 0.5).astype("float32")
            x = (paddle.randn([16, 8]) * mask).to_sparse_coo(2)
            loss = paddle.nn.functional.mse_loss(model(x), paddle.randn([16, 1]))
            loss.backward()
            opt.step()
            opt.clear_grad()
    return model.fc.weight.numpy()

plain, watched = train(None), train(sys.argv[1])
run = open_run(sys.argv[1])
print(np.array_equal(plain, watched), run.meta["status"], run.steps.tolist(), run.captured_steps)
"""


@requires_post_hooks  # the capture's forward check
def test_watched_run_of_a_model_with_a_sparse_layer(tmp_path):
    """A paddle.sparse layer's output is left unread by the forward's NaN/Inf check of a full
    capture (its Tensor.numpy() made Paddle 3.3.1 segfault later, in that forward): the run is
    recorded and the training is the same as without the watch. A child process."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    args = [sys.executable, "-c", _SPARSE_LAYER_SCRIPT, str(tmp_path / "run")]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True finished [0, 1, 2, 3] [0, 2]"
