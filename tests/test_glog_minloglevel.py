"""GLOG_minloglevel=2 in the environment (a common way to quiet Paddle) hides glog's INFO
records, VLOG included. A traced backward still gets Paddle's log: the tracer lowers glog's
minimum level for that backward only, keeps what it captured, and puts the level back; the
user's stderr gets nothing they had silenced. Each run in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paddle_versions import HAS_POST_HOOKS, HAS_VLOG_SWITCH, LOGS_AT_RUN_TIME

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import json
import paddle, paddle.nn as nn
from paddleviz_widget import build_graph, trace
from paddleviz_widget.graph import nested_dict
from paddleviz_widget.tracer.capture.vlog import min_log_level

paddle.seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
before = min_log_level()
with trace(model, stats=True):
    y = model(paddle.randn([2, 4])).mean()
    y.backward()
graph = nested_dict(build_graph(y))
slots = sorted(s["name"] for n in graph["nodes"] for s in n.get("inputs") or [])
print(json.dumps({"meta": graph["meta"], "slots": slots, "levels": [before, min_log_level()]}))
"""


def _run(env_extra: dict[str, str]) -> tuple[dict, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_extra}
    if not env_extra:
        env.pop("GLOG_minloglevel", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


@pytest.mark.skipif(
    not (LOGS_AT_RUN_TIME and HAS_POST_HOOKS),
    reason="needs VLOG switched at run time and trace(stats=True) (GradNode post hooks, >= 3.0)",
)
def test_capture_works_with_glog_minloglevel_2_and_leaves_it_as_it_was() -> None:
    quiet, quiet_err = _run({"GLOG_minloglevel": "2"})
    plain, _ = _run({})
    assert "notice" not in quiet["meta"], quiet["meta"].get("notice")
    assert "vlog" in quiet["meta"]["annotations"]
    assert quiet["slots"] == plain["slots"] and quiet["slots"]  # the same account as without it
    assert quiet["levels"] == [2, 2]  # put back after the backward
    # Nothing of Paddle's INFO log reached the user's stderr, which they had silenced.
    assert not [line for line in quiet_err.splitlines() if line.startswith("I")]


@pytest.mark.skipif(not HAS_VLOG_SWITCH, reason="VLOG is switched at run time from Paddle 3.3")
def test_where_the_level_cannot_be_lowered_the_notice_names_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Paddle build whose glog level is out of reach: the graph still has the dump's edge
    gradients, and the notice says GLOG_minloglevel is why the slot names are missing."""
    import paddle
    import paddle.nn as nn

    from paddleviz_widget import build_graph, trace
    from paddleviz_widget.tracer.capture import vlog

    monkeypatch.setattr(vlog, "_minloglevel_cell", lambda: None)
    monkeypatch.setenv("GLOG_minloglevel", "2")
    paddle.seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    with trace(model):
        y = model(paddle.randn([2, 4])).mean()
        y.backward()
    meta = build_graph(y)["meta"]
    assert meta["notice"].startswith("GLOG_minloglevel=2 is set, which hides Paddle's C++ log")
    assert "slot names" in meta["notice"] and "vlog" not in meta["annotations"]
