"""What README's "Comparing two graphs" gives for a watched run: two captured steps of one run,
one step of two runs, and two ranks of one job, diffed from the run logs' captures
(``open_run(...).graph(step)``, ``open_ranks(...).rank(r).graph(step)``). The norms the diff
reports are checked against each step's ``.grad`` as Paddle left it (NumPy's norm), and the
ranks' difference against the branch the test made one rank take, structure alone
(``stats=False``: a flag added for it; before, every shared edge was marked changed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F
from paddle_versions import requires_post_hooks
from rank_logs import Plant, ranked_run

from paddleviz_widget import GraphWidget, open_run, trace
from paddleviz_widget.runs.ranks import open_ranks


class Net(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def watched(run_dir: Path, lr: float, steps: int = 5) -> list[dict[str, np.ndarray]]:
    """A run of ``steps`` SGD steps captured every 2nd; each step's gradients (Paddle's)."""
    paddle.seed(0)
    model, x = Net(), paddle.randn([4, 8])
    opt = paddle.optimizer.SGD(learning_rate=lr, parameters=model.parameters())
    grads = []
    with trace(model, stats=True, every=2, run_dir=str(run_dir)):
        for _ in range(steps):
            (model(x) ** 2).mean().backward()
            grads.append(
                {n: p.grad.numpy().astype(np.float64) for n, p in model.named_parameters()}
            )
            opt.step()
            opt.clear_grad()
    return grads


def param_norms(summary: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Per parameter, the (a, b) gradient norms the diff reports on the edge into it."""
    out = {}
    for entry in summary["changed"]:
        norm = [c for c in entry["changes"] if c["field"] == "norm"]
        if entry["kind"] == "edge" and "to_param" in entry and norm:
            out[entry["to_param"]] = (norm[0]["a"], norm[0]["b"])
    return out


def agrees(reported: dict[str, tuple[float, float]], a: dict, b: dict) -> None:
    assert set(reported) == set(a)  # every parameter's gradient moved (rtol 0)
    for name, (na, nb) in reported.items():
        assert np.isclose(na, np.linalg.norm(a[name]), rtol=1e-5), name
        assert np.isclose(nb, np.linalg.norm(b[name]), rtol=1e-5), name


@requires_post_hooks
def test_two_captured_steps_of_a_run_and_one_step_of_two_runs(tmp_path: Path) -> None:
    slow, fast = watched(tmp_path / "slow", 0.1), watched(tmp_path / "fast", 2.0)
    run = open_run(tmp_path / "slow")
    assert run.captured_steps == [0, 2, 4]
    w = GraphWidget.diff(run.graph(0), run.graph(4), rtol=0.0, labels=("step 0", "step 4"))
    summary = w.summary()
    assert summary["labels"] == ["step 0", "step 4"]
    assert not summary["added"] and not summary["removed"]
    agrees(param_norms(summary), slow[0], slow[4])
    other = open_run(tmp_path / "fast")
    w = GraphWidget.diff(run.graph(4), other.graph(4), rtol=0.0, labels=("lr 0.1", "lr 2"))
    agrees(param_norms(w.summary()), slow[4], fast[4])


def test_two_ranks_of_a_job(tmp_path: Path) -> None:
    ranked_run(tmp_path, world_size=3, steps=11, plant=Plant(branch_rank=1))
    job = open_ranks(tmp_path)
    a, b = job.rank(0).graph(10), job.rank(1).graph(10)
    # The ranks' batches differ: with their statistics, the edges both have are changed too.
    assert [e for e in GraphWidget.diff(a, b).summary()["changed"] if e["kind"] == "edge"]
    w = GraphWidget.diff(a, b, labels=("r0", "r1"), stats=False)
    summary = w.summary()
    assert summary["compared"] == ["shape"] and not summary["changed"]
    assert "notice" not in w.graph["meta"]  # none asked, none missing
    # Rank 1 alone takes the branch (rank_logs.py): its parameters are what rank 1 adds.
    added = {e["param"] for e in summary["added"] if "param" in e}
    assert added == {"branch.weight", "branch.bias"}
    # ... and head's gradient now enters the branch's Add instead of the ReLU: no node removed
    assert [(e["kind"], e["layer"], e["to_layer"]) for e in summary["removed"]] == [
        ("edge", "head", "Branchy")
    ]
