"""``FLAGS_check_nan_inf=1`` set by the user (Paddle's way to find where a NaN starts, and what
problems() advises) and a graph built before backward, whose backward makes an Inf: the replay,
a backward the user did not run, failed Paddle's check. Paddle printed its "[PRECISION] [ERROR]"
line into the user's stdout and a Python stack per op into their stderr, and the graph lost its
annotations ("Could not replay the backward..."). Now the replay runs with the check off: the
output is the script's own, the graph is the one built without the flag (the oracle: the same
script without it), the flag is still on, and the user's own backward is still checked."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from paddle_versions import HAS_DUMP

HERE = Path(__file__).parent

SCRIPT = """
import json, sys
import paddleviz_widget
import paddle
from paddleviz_widget import build_graph

class Model(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x):  # sqrt at 0: a finite forward, an Inf gradient
        return paddle.sqrt(paddle.nn.functional.relu(self.fc(x)) * 0.0).sum()

paddle.seed(0)
model = Model()
y = model(paddle.randn([2, 4]))
for stream in (sys.stdout, sys.stderr):
    print("BUILD", file=stream, flush=True)
doc = build_graph(y)
for stream in (sys.stdout, sys.stderr):
    print("BUILT", file=stream, flush=True)
try:
    y.backward()
    checked = False
except Exception as error:
    checked = "NAN or INF" in str(error)
print(json.dumps({
    "edges": doc["edges"], "notice": doc["meta"].get("notice"),
    "flag": paddle.get_flags(["FLAGS_check_nan_inf"])["FLAGS_check_nan_inf"],
    "user_backward_checked": checked,
}))
"""


def _run(tmp_path: Path, flag: str | None) -> tuple[dict, subprocess.CompletedProcess[str]]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {"PYTHONPATH": str(HERE.parent), "PATH": "/usr/bin:/bin"}
    if flag is not None:
        env["FLAGS_check_nan_inf"] = flag
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done


def test_the_replay_is_not_stopped_by_the_users_nan_check_and_prints_nothing(tmp_path):
    said, done = _run(tmp_path, "1")
    for output in (done.stdout, done.stderr):  # what build_graph printed (C++ printf too)
        assert output.split("BUILD\n", 1)[1].split("BUILT\n", 1)[0] == "", output[-3000:]
    oracle, _ = _run(tmp_path, None)
    assert said["edges"] == oracle["edges"]
    assert said["notice"] == oracle["notice"]
    assert said["flag"] is True
    assert said["user_backward_checked"] is True


TRACED = """
import json
import paddleviz_widget
import paddle
from paddleviz_widget import build_graph, trace

paddle.seed(0)
model = paddle.nn.Linear(4, 4)
with trace(model):
    y = paddle.sqrt(paddle.nn.functional.relu(model(paddle.randn([2, 4]))) * 0.0).sum()
    try:
        y.backward()  # Paddle's check stops it at sqrt_grad's Inf
    except Exception as error:
        assert "NAN or INF" in str(error), error
print(json.dumps({"notice": build_graph(y)["meta"].get("notice")}))
"""


def test_a_traced_backward_the_nan_check_stopped_is_not_told_to_use_trace(tmp_path):
    """The user's backward raised inside trace() (their FLAGS_check_nan_inf): no record, the
    graph freed. The notice told them to wrap forward and backward in trace(), which they had;
    it now says what left the graph bare."""
    script = tmp_path / "traced.py"
    script.write_text(textwrap.dedent(TRACED))
    env = {"PYTHONPATH": str(HERE.parent), "PATH": "/usr/bin:/bin", "FLAGS_check_nan_inf": "1"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    notice = json.loads(done.stdout.strip().splitlines()[-1])["notice"]
    assert "trace(model)" not in notice, notice
    if HAS_DUMP:  # (older Paddle: no replay could be paired, said by its own notice)
        assert "no backward of it finished inside the trace()" in notice, notice
        assert "or it raised an error" in notice
