"""paddle.io.DataLoader(num_workers=2) iterated inside a watched block: its workers, forked
from the training process while the run log is open, print nothing into the user's output.
Each worker let go of its parent's open tail file without closing it, and under Python's
development mode (-X dev) or `-W default` every worker printed "ResourceWarning: unclosed
file .../.tail.jsonl.tmp" on the user's stderr (runs/watch.py forked(), log_writer.py).
Oracles: the same script unwatched prints the same stderr; the losses are its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from paddle_versions import HAS_POST_HOOKS

_SCRIPT = """
import contextlib, json, sys
from paddleviz_widget import trace
import numpy as np, paddle

class Data(paddle.io.Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        rng = np.random.RandomState(i)
        return rng.randn(8).astype("float32"), rng.randn(1).astype("float32")

out, run_dir = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
paddle.seed(0)
model = paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.ReLU(), paddle.nn.Linear(16, 1))
opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
loader = paddle.io.DataLoader(Data(), batch_size=8, num_workers=2)
losses = []
watch = trace(model, stats=True, every=3, run_dir=run_dir) if run_dir else contextlib.nullcontext()
with watch:
    for epoch in range(2):  # the workers are forked again at each epoch
        for x, y in loader:
            loss = paddle.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
with open(out, "w") as f:
    json.dump(losses, f)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="DataLoader workers are forked on POSIX")
def test_dataloader_workers_forked_in_a_watched_block_print_nothing(tmp_path):
    from paddleviz_widget import open_run

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    said = {}
    for name, extra in (("plain", []), ("watched", [str(tmp_path / "run")])):
        done = subprocess.run(
            [sys.executable, "-X", "dev", "-c", _SCRIPT, str(tmp_path / f"{name}.json"), *extra],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        said[name] = done.stderr
    assert "ResourceWarning" not in said["watched"], said["watched"][-2000:]
    if not HAS_POST_HOOKS:  # 2.6: the parent's once-only note that captures lack statistics
        note, said["watched"] = said["watched"].partition("\n")[::2]
        assert "no GradNode post hooks" in note
    assert said["watched"] == said["plain"]
    losses = json.loads((tmp_path / "watched.json").read_text())
    assert losses == json.loads((tmp_path / "plain.json").read_text())
    run = open_run(tmp_path / "run")
    assert run.meta["status"] == "finished" and run.steps.tolist() == list(range(16))
    np.testing.assert_allclose(run.loss, losses, rtol=1e-6)
