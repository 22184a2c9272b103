"""What the README promises on every supported Paddle (2.6, 3.0, 3.3), in a fresh process each:
with ``GLOG_v=6`` set before ``import paddle``, a traced backward labels every edge with its
gradient; without it, Paddle < 3.3 says in the notice how to get them (and never to use a
trace() the user is already in), while 3.3 needs nothing.

The oracle is worked out by hand for a two-layer MLP on a [2, 4] input.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from paddle_versions import HAS_DUMP, HAS_VLOG_SWITCH, LOGS_AT_RUN_TIME

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import json, sys
import paddle, paddle.nn as nn
from paddleviz_widget import build_graph, trace

paddle.seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
if sys.argv[1] == "traced":
    with trace(model):
        y = model(paddle.randn([2, 4])).mean()
        y.backward()
else:  # before backward, no trace: the replay path
    y = model(paddle.randn([2, 4])).mean()
graph = build_graph(y)
names = {n["id"]: n["name"] for n in graph["nodes"]}
tensors = graph["tensors"]
edges = [
    [names[e["source"]], names[e["target"]], tensors[e["grad"]][1] if "grad" in e else None]
    for e in graph["edges"]
]
print(json.dumps({"edges": edges, "meta": graph["meta"]}))
"""


def _op(name: str) -> str:
    """3.3 with GLOG_v set names nodes "matmul1GradNode": compare the op only."""
    return re.sub(r"\d+(?=GradNode$)", "", name).lower()


ACC = _op("GradNodeAccumulation")
MLP_EDGES = Counter(
    {  # (source op, target op, gradient shape): count
        ("MeanGradNode", "AddGradNode", (2, 3)): 1,
        ("AddGradNode", "MatmulGradNode", (2, 3)): 1,
        ("AddGradNode", ACC, (3,)): 1,
        ("MatmulGradNode", "ReluGradNode", (2, 8)): 1,
        ("MatmulGradNode", ACC, (8, 3)): 1,
        ("ReluGradNode", "AddGradNode", (2, 8)): 1,
        ("AddGradNode", "MatmulGradNode", (2, 8)): 1,
        ("AddGradNode", ACC, (8,)): 1,
        ("MatmulGradNode", ACC, (4, 8)): 1,
    }
)
MLP_EDGES = Counter({(_op(s), _op(t), g): n for (s, t, g), n in MLP_EDGES.items()})
PARAM_EDGES = Counter({k: v for k, v in MLP_EDGES.items() if k[1] == ACC})


def run(mode: str, glog: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GLOG_v", "GLOG_vmodule")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if glog:
        env["GLOG_v"] = "6"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["edges"] = Counter((_op(s), _op(t), tuple(g) if g else None) for s, t, g in out["edges"])
    return out


def notices(meta: dict) -> list[str]:
    return meta.get("notices") or ([meta["notice"]] if "notice" in meta else [])


def test_traced_with_glog_at_import_labels_every_edge():
    out = run("traced", glog=True)
    assert out["edges"] == MLP_EDGES
    assert "vlog" in out["meta"]["annotations"]
    if not HAS_VLOG_SWITCH:
        assert notices(out["meta"]) == []
        return
    # 3.3 needs no GLOG_v, and it numbers the nodes' names: the one line says to remove it
    # (tests/test_numbered_names.py).
    (line,) = notices(out["meta"])
    assert line.startswith("GLOG_v=6 was set before `import paddle`"), line


def test_traced_without_glog():
    out = run("traced", glog=False)
    if LOGS_AT_RUN_TIME:  # VLOG switched on around the backward (2.6, 3.0: glog's FLAGS_v)
        assert out["edges"] == MLP_EDGES and notices(out["meta"]) == []
        return
    (line,) = notices(out["meta"])
    assert "GLOG_v=6" in line and "before `import paddle`" in line and ">=3.3" in line
    assert "trace(" not in line, "the user is inside trace() already"
    bare: Counter[tuple] = Counter()
    for (source, target, _), count in MLP_EDGES.items():
        bare[(source, target, None)] += count * (target != ACC)
    assert out["edges"] == PARAM_EDGES + bare  # parameter gradients have their shapes anyway


@pytest.mark.parametrize("glog", [False, True])
def test_untraced_before_backward(glog):
    out = run("untraced", glog=glog)
    if HAS_DUMP:  # the replay, paired with the graph through Paddle's dump
        assert out["edges"] == MLP_EDGES
        return
    (line,) = notices(out["meta"])
    assert "cannot replay" in line and "paddleviz_widget.trace(model)" in line
    # GLOG_v is asked for only when it is not set and trace() cannot switch the log itself
    assert ("GLOG_v=6" in line) == (not glog and not LOGS_AT_RUN_TIME), line
    assert +Counter({k: n for k, n in out["edges"].items() if k[2] is not None}) == PARAM_EDGES
