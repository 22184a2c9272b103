"""Recompute in a training loop (paddle.distributed.fleet.utils.recompute, reentrant: each
block's PyLayer runs the block's own backward inside the step's backward): a watched run
counts one step per backward() of the loop, and its summaries equal the gradients; the
parameters a recompute node hides are reached, so neither trace(stats=True) nor a watched
capture calls them "unreached", while a layer the model really left unused still is.
Oracles: the loop's own reading of p.grad, and what the test's model is known to use."""

from __future__ import annotations

import numpy as np
import paddle
from paddle.distributed.fleet.utils import recompute
from paddle_versions import HAS_POST_HOOKS, requires_post_hooks

from paddleviz_widget import build_graph, open_run, trace


class _Block(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.a = paddle.nn.Linear(16, 16)
        self.b = paddle.nn.Linear(16, 16)

    def forward(self, x):
        return x + self.b(paddle.nn.functional.gelu(self.a(x)))


class _Net(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.inp = paddle.nn.Linear(8, 16)
        self.blocks = paddle.nn.LayerList([_Block() for _ in range(3)])
        self.spare = paddle.nn.Linear(16, 16)  # never called: really unreached
        self.out = paddle.nn.Linear(16, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = recompute(block, h)
        return self.out(h)


def _problems(doc: dict) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for entry in doc["meta"].get("unreached_params") or []:
        found.setdefault("unreached_params", set()).add(entry["name"])
    return found


def test_a_watched_run_counts_one_step_per_backward_and_reads_the_real_gradients(tmp_path):
    paddle.seed(0)
    model = _Net()
    opt = paddle.optimizer.AdamW(1e-3, parameters=model.parameters())
    names = [n for n, p in model.named_parameters() if not n.startswith("spare.")]
    seen = []
    with trace(model, stats=True, every=20, run_dir=tmp_path / "run"):
        for _ in range(45):
            model(paddle.randn([4, 8])).square().mean().backward()
            seen.append([float(np.linalg.norm(p.grad.numpy().astype(np.float64)))
                         for n, p in model.named_parameters() if n in names])  # fmt: skip
            opt.step()
            opt.clear_grad()
    run = open_run(tmp_path / "run")
    assert run.steps.tolist() == list(range(45))  # not one more per recompute block
    assert run.captured_steps == [0, 20, 40]
    assert run.problems() == []
    columns = [[p.name for p in run.params].index(n) for n in names]
    np.testing.assert_allclose(run.param_stat("norm")[:, columns], np.array(seen), rtol=1e-5)
    for step in run.captured_steps if HAS_POST_HOOKS else ():  # the captures' statistics
        doc = run.graph(step)
        assert _problems(doc) == {"unreached_params": {"spare.weight", "spare.bias"}}


@requires_post_hooks
def test_trace_stats_does_not_call_what_recompute_hides_unreached():
    paddle.seed(0)
    model = _Net()
    with trace(model, stats=True):
        loss = model(paddle.randn([4, 8])).square().mean()
        loss.backward()
    doc = build_graph(loss)
    assert _problems(doc) == {"unreached_params": {"spare.weight", "spare.bias"}}
    hidden = {p["name"] for e in doc["meta"]["pylayers"] for p in e["hidden_params"]}
    assert hidden == {f"blocks.{i}.{ab}.{w}" for i in range(3) for ab in "ab"
                      for w in ("weight", "bias")}  # fmt: skip
    assert {p["kind"] for p in doc["meta"].get("problems", [])} <= {"unreached"}
    assert {p["name"] for p in doc["meta"].get("problems", [])} <= {"spare.weight", "spare.bias"}


@requires_post_hooks
def test_the_note_on_edges_without_statistics_names_the_pylayers_for_what_they_are():
    paddle.seed(0)
    model = _Net()
    with trace(model, stats=True):
        loss = model(paddle.randn([4, 8])).square().mean()
        loss.backward()
    notes = build_graph(loss)["meta"]["notices"]
    assert any(n.startswith("3 PyLayer node(s) (recompute") for n in notes), notes
    assert not any("through one slot (concat, stack" in n for n in notes), notes
