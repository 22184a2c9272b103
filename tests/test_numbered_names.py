"""The seed paddleviz's example sets ``os.environ['GLOG_v'] = '6'`` before ``import paddle``.
On Paddle 3.3 that numbers every GradNode's name (``add5GradNode``), so a model's repeated
blocks are not folded: the graph says why and what to do, and says nothing without GLOG_v.
Each case runs in a fresh process (GLOG_v is read when Paddle is imported); the expected
names are Paddle's own, read in that process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from paddle_versions import HAS_VLOG_SWITCH

REPO = Path(__file__).resolve().parents[1]
SCRIPT = """
import os
if os.environ.get("SEED_GLOG"):
    os.environ["GLOG_v"] = "6"  # the seed's first lines
import json
import paddle
from paddle import nn
from paddleviz_widget import build_graph, trace

class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return nn.functional.relu(self.fc(x)) + x

model = nn.Sequential(*[Block() for _ in range(4)])
with trace(model):
    y = model(paddle.randn([2, 8]))
    y.sum().backward()
meta = build_graph(y)["meta"]
notices = meta.get("notices") or [meta.get("notice")]
print(json.dumps({"names": [y.grad_fn.name()], "notices": notices}))
"""


def _run(seed_glog: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GLOG_v", "GLOG_vmodule")}
    env["PYTHONPATH"] = str(REPO)
    if seed_glog:
        env["SEED_GLOG"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not HAS_VLOG_SWITCH, reason="Paddle < 3.3 needs GLOG_v: nothing to advise")
def test_a_graph_paddle_numbered_says_to_remove_glog_v() -> None:
    out = _run(seed_glog=True)
    (name,) = out["names"]
    assert re.fullmatch(r"add\d+GradNode", name), name  # Paddle did number them
    lines = [n for n in out["notices"] if n and n.startswith("GLOG_v=6 was set before")]
    assert len(lines) == 1, out["notices"]
    assert "repeated blocks cannot be folded" in lines[0] and "remove it" in lines[0]
    assert re.search(r"\([a-z_0-9]+\d+GradNode\)", lines[0]), lines[0]


def test_without_glog_v_nothing_is_said() -> None:
    out = _run(seed_glog=False)
    assert out["names"] == ["AddGradNode"]
    assert not [n for n in out["notices"] if n and "GLOG_v" in n], out["notices"]
