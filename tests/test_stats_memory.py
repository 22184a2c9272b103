"""trace(stats=True) over a training loop keeps memory flat and the process alive.

Paddle keeps the list a GradNode post hook returns (and every gradient in it) for good; the
stats hooks give that reference back (tracer/capture/hook_returns.py). Before that fix this
loop grew by ~25 MB a step. Each run is a fresh process: RSS is the process's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from paddle_versions import requires_post_hooks

STEPS = 30

SCRIPT = textwrap.dedent(
    f"""
    import json, psutil, paddle
    from paddleviz_widget import trace

    paddle.seed(0)
    model = paddle.nn.Sequential(
        paddle.nn.Linear(512, 2048), paddle.nn.ReLU(), paddle.nn.Linear(2048, 2048),
        paddle.nn.ReLU(), paddle.nn.Linear(2048, 10))
    opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
    x = paddle.randn([64, 512])  # a small batch: the kept gradients are mostly the weights'
    rss = []
    with trace(model, stats=True, steps=5) as session:
        for step in range({STEPS}):
            model(x).mean().backward()
            opt.step()
            opt.clear_grad()
            rss.append(psutil.Process().memory_info().rss / 2**20)
    print("RESULT", json.dumps({{"rss": rss, "kept": len(session.history)}}))
    """
)


@requires_post_hooks
def test_stats_over_a_training_loop_keep_memory_flat(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    rss = result["rss"]
    # Each step's gradients are ~24 MB (the weights' 5.3M floats, the activations' at batch 64):
    # kept by Paddle, 20 steps would add ~480 MB (measured with the fix turned off).
    growth = rss[-1] - rss[9]
    assert growth < 60, f"RSS grew {growth:.0f} MB over {STEPS - 10} steps: {rss}"
    assert result["kept"] == 5


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
