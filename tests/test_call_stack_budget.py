"""Per-op Python stacks for a process's first traces only: Paddle keeps every stack it formats
while FLAGS_call_stack_level is 3 for the life of the process, so a notebook that traces again
and again would grow without end (stack_budget.py). Each scenario runs in a process of its
own; the leak is read by the collector's object count, not by the package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from paddle_versions import HAS_DUMP, requires_dump

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import gc, json, sys
import paddle
from paddleviz_widget import build_graph, trace
try:  # (the code before the budget has none: every trace asked for stacks)
    from paddleviz_widget.tracer.capture import stack_budget
except ImportError:
    pass
else:
    stack_budget.BUDGET = int(sys.argv[1])
explicit = sys.argv[2] == "1"


class Net(paddle.nn.Layer):  # user-written forward code: its ops get per-op stacks
    def __init__(self):
        super().__init__()
        self.w = self.create_parameter([8, 8])

    def forward(self, x):
        for _ in range(20):
            x = paddle.tanh(x @ self.w) + x * 0.5
        return x.sum()


paddle.seed(0)
model, x = Net(), paddle.randn([4, 8])
rows = []
for k in range(6):
    gc.collect()
    before = len(gc.get_objects())
    with trace(model, call_sites=True if explicit else None):
        level = int(paddle.get_flags(["FLAGS_call_stack_level"])["FLAGS_call_stack_level"])
        y = model(x)
        y.backward()
    doc = build_graph(y)
    del y
    gc.collect()
    codes = doc["meta"]["sources"]["codes"]
    sources = {codes[c] for c in doc["meta"]["sources"]["nodes"]["call_site"] if c != "."}
    rows.append({"level": level, "grew": len(gc.get_objects()) - before,
                 "sources": sorted(sources)})
print(json.dumps(rows))
"""


def _run(budget: int, explicit: bool = False) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(budget), "1" if explicit else "0"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "GLOG_minloglevel": "2"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@requires_dump
def test_stacks_stop_once_the_process_budget_is_spent():
    rows = _run(budget=150)  # ~60-100 GradNodes a trace: the first traces spend it
    with_stacks = [r for r in rows if r["level"] == 3]
    without = [r for r in rows if r["level"] != 3]
    assert 1 <= len(with_stacks) <= 4 and rows[: len(with_stacks)] == with_stacks, rows
    assert len(without) >= 2, rows
    # Paddle's kept stacks: one list an op while stacks were on, none after
    assert all(r["grew"] > 100 for r in with_stacks), rows
    assert all(r["grew"] < 30 for r in without[1:]), rows
    assert all("paddle-stack" in r["sources"] for r in with_stacks), rows
    assert all(r["sources"] and "paddle-stack" not in r["sources"] for r in without), rows


@requires_dump
def test_asking_for_call_sites_is_answered_past_the_budget():
    rows = _run(budget=0, explicit=True)
    assert all(r["level"] == 3 and "paddle-stack" in r["sources"] for r in rows), rows


@pytest.mark.skipif(HAS_DUMP, reason="Paddle >= 3.3 reads the stacks from its backward dump")
def test_no_stacks_where_paddle_has_no_dump_to_read_them_from():
    """Paddle 2.6 and 3.0: the stacks are read from the backward dump's call-stack file, which
    they do not have; trace() turned them on anyway, for nothing (the call sites were the
    layer calls' all the same): a per-op cost in the forward, and 3.0 keeps every stack (~1
    object an op) for the life of the process. The flag stays the user's."""
    rows = _run(budget=10**9, explicit=True)
    assert all(r["level"] != 3 and r["sources"] == ["layer-call"] for r in rows), rows
    assert all(r["grew"] < 30 for r in rows[2:]), rows
