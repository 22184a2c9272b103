"""os.fork() in a watched training script: the child is not the run. Its backwards run plainly
and it neither writes steps into its parent's log nor ends it (a child leaving the ``with``
block by sys.exit(0) closed the parent's live run as "finished" and deleted its tail).
Oracles: run.json read as JSON, the parent's own p.grad (float64 NumPy)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

_SCRIPT = """
import json, os, sys
from paddleviz_widget import trace  # first: paddle 2.6's zlib (compat/zlib_guard.py)
import numpy as np, paddle

run_dir, out = sys.argv[1], sys.argv[2]
paddle.seed(0)
model = paddle.nn.Sequential(paddle.nn.Linear(1024, 1024), paddle.nn.Tanh(),
                             paddle.nn.Linear(1024, 1024), paddle.nn.Linear(1024, 4))
opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
seen = {"norms": []}
with trace(model, stats=True, every=1000, run_dir=run_dir):
    for step in range(5):
        model(paddle.randn([8, 1024])).square().mean().backward()
        seen["norms"].append([float(np.linalg.norm(p.grad.numpy().astype(np.float64)))
                              for p in model.parameters()])
        opt.step()
        opt.clear_grad()
        if step == 1:
            pid = os.fork()
            if pid == 0:  # the child: a probe's backward, then out by sys.exit(0)
                model(paddle.randn([8, 1024])).sum().backward()
                sys.exit(0)
            os.waitpid(pid, 0)
            with open(os.path.join(run_dir, "run.json")) as f:
                seen["after_child"] = json.load(f)["status"]
            tail = os.path.join(run_dir, "tail.jsonl")  # (None: gone, the run's end)
            seen["tail_steps"] = ([json.loads(line)["step"] for line in open(tail, "rb")]
                                  if os.path.exists(tail) else None)
with open(out, "w") as f:
    json.dump(seen, f)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_neither_writes_nor_ends_its_parents_run(tmp_path):
    from paddleviz_widget import open_run

    run_dir, out = tmp_path / "run", tmp_path / "seen.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(run_dir), str(out)],
                          capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(out.read_text())
    assert seen["after_child"] == "running"  # the parent still trains
    assert seen["tail_steps"] == [1]  # step 0 has its own part; no step of the child's
    run = open_run(run_dir)
    assert run.meta["status"] == "finished" and run.steps.tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(run.param_stat("norm"), seen["norms"], rtol=2e-6)
    assert str(run_dir) not in done.stderr  # (2.6 says it has no post hooks, once)


_CLI_SCRIPT = """
import os, sys
import paddle
paddle.seed(0)
model = paddle.nn.Sequential(paddle.nn.Linear(64, 64), paddle.nn.Linear(64, 4))
opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
for step in range(4):
    model(paddle.randn([8, 64])).square().mean().backward()
    opt.step()
    opt.clear_grad()
    if step == 1:
        pid = os.fork()
        if pid == 0:
            sys.exit(0)
        os.waitpid(pid, 0)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_under_the_cli_only_the_parent_says_its_run_log(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(_CLI_SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", str(script), "--run-dir", str(run_dir)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "run log of" in line]
    assert said == [f"paddleviz_widget: run log of 4 steps in {run_dir}"]  # not the child's 2
