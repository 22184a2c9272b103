"""Paddle's static-graph mode (``paddle.enable_static()``), in fresh processes (the mode is
process-wide). Before: ``GraphWidget(y)``, ``build_graph(y)`` and ``make_graph(y)`` of a tensor
made in dynamic mode failed deep inside with ``AttributeError: 'paddle.base.libpaddle.pir.Value'
object has no attribute 'grad_fn'`` (the package's own probe op made a static Value); the CLI's
run mode on a static-graph training script ended silently with no run log (``open_run`` then
said the directory does not exist), and its graph mode told the user to "run the backward" in
a script whose optimizer had. Now each says the mode and what to do; the mode stays the user's."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).parent
ENV = {"PYTHONPATH": str(HERE.parent), "PATH": "/usr/bin:/bin"}

ENTRY_POINTS = """
import paddleviz_widget
import paddle
from paddleviz_widget import GraphWidget, build_graph, make_graph

model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 2))
y = model(paddle.randn([3, 4]))
paddle.enable_static()
for name, call in [("GraphWidget", GraphWidget), ("build_graph", build_graph),
                   ("make_graph", make_graph)]:
    try:
        call(y)
    except RuntimeError as error:
        print(name, "REFUSED", error)
print("STATIC STILL", not paddle.in_dynamic_mode())
paddle.disable_static()
print("THEN", len(build_graph(y)["nodes"]))
"""

STATIC_TRAINING = """
import numpy as np
import paddle

paddle.enable_static()
x = paddle.static.data("x", [None, 4], "float32")
loss = paddle.mean(paddle.static.nn.fc(x, 2))
paddle.optimizer.SGD(0.1).minimize(loss)
exe = paddle.static.Executor()
exe.run(paddle.static.default_startup_program())
for _ in range(2):
    exe.run(feed={"x": np.ones([3, 4], "float32")}, fetch_list=[loss])
print("TRAINED")
"""


def _python(tmp_path: Path, script: str, *cli: str) -> subprocess.CompletedProcess[str]:
    """``python script.py``, or with ``cli`` (our options): ``python -m paddleviz_widget
    script.py OPTIONS``."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    command = [sys.executable, *(("-m", "paddleviz_widget") if cli else ()), str(path), *cli]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=ENV,
                          cwd=tmp_path)  # fmt: skip


def test_the_entry_points_refuse_static_mode_with_the_package_message(tmp_path):
    done = _python(tmp_path, ENTRY_POINTS)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    for name in ("GraphWidget", "build_graph", "make_graph"):
        assert f"{name} REFUSED paddle.enable_static() is in effect" in done.stdout, done.stdout
    assert done.stdout.count("paddle.disable_static()") == 3
    assert "STATIC STILL True" in done.stdout
    assert "THEN 9" in done.stdout  # the same tensor, once the user is back in dynamic mode


def test_the_cli_says_a_static_graph_script_has_no_backward_it_can_watch(tmp_path):
    done = _python(tmp_path, STATIC_TRAINING, "-o", "g.json")
    assert done.returncode == 1
    assert "TRAINED" in done.stdout and "Traceback" not in done.stderr
    assert "the script runs in static-graph mode (paddle.enable_static())" in done.stderr
    assert not (tmp_path / "g.json").exists()


def test_the_run_mode_says_why_no_run_log_was_written(tmp_path):
    done = _python(tmp_path, STATIC_TRAINING, "--run-dir", "run")
    assert done.returncode == 0  # the script's own status
    assert "TRAINED" in done.stdout and "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if "no run log" in line]
    assert len(said) == 1 and "static-graph mode" in said[0] and "no run log in run:" in said[0]
    done = _python(tmp_path, "print('no training here')", "--run-dir", "run")
    assert done.returncode == 0 and done.stdout == "no training here\n"
    said = [line for line in done.stderr.splitlines() if "no run log" in line]
    assert len(said) == 1 and "the script made no backward call" in said[0], done.stderr
    assert said[0].startswith("paddleviz_widget: ")
