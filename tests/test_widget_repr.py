"""repr(GraphWidget) where no front end runs (a plain ``python`` prompt, a log line, a
debugger): the one line IPython's terminal prints for it, what the graph holds, not
``<...GraphWidget object at 0x...>``. Run in a real ``python -i`` process fed like a prompt."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LENET = ROOT / "tests/fixtures/graphs/lenet.json"

SESSION = f"""import json, pathlib
from paddleviz_widget import GraphWidget
w = GraphWidget.from_graph(json.loads(pathlib.Path({str(LENET)!r}).read_text()))
w
w.close()
w
"""


def test_the_prompt_shows_what_the_graph_holds() -> None:
    done = subprocess.run(
        [sys.executable, "-i", "-q"], input=SESSION, capture_output=True, text=True,
        cwd=ROOT, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    shown = [line for line in done.stdout.splitlines() if "GraphWidget" in line]
    assert not any(re.search(r"object at 0x", line) for line in shown), shown
    nodes = len(json.loads(LENET.read_text())["nodes"])
    assert len(shown) == 2, done.stdout
    assert shown[0].startswith("GraphWidget: ") and str(nodes) in shown[0], shown
    assert "closed" in shown[1] and "GraphWidget.from_graph(w.graph)" in shown[1], shown


# paddleviz_widget above paddle: Paddle 2.6's own zlib breaks Python's once paddle is imported
# first, and a run log is then refused with what to do (compat/zlib_guard.py).
RUN = """from paddleviz_widget import GraphWidget, trace
import paddle
paddle.seed(0)
m = paddle.nn.Linear(4, 2)
opt = paddle.optimizer.SGD(0.1, parameters=m.parameters())
with trace(m, stats=True, every=5, run_dir={run!r}):
    for _ in range(7):
        m(paddle.randn([3, 4])).sum().backward()
        opt.step()
        opt.clear_grad()

GraphWidget.from_run({run!r})
"""


def test_the_prompt_shows_what_a_run_holds(tmp_path: Path) -> None:
    run = str(tmp_path / "run")
    done = subprocess.run(
        [sys.executable, "-i", "-q"], input=RUN.format(run=run), capture_output=True,
        text=True, cwd=ROOT, timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "GLOG_minloglevel": "2"},
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if "RunWidget" in line]
    assert line.endswith(
        f"RunWidget: {run}: 7 steps (finished) · 2 parameters · 2 full captures · 0 anomalies"
    ), line
