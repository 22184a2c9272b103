"""A process started with fd 2 closed (`2>&-`: some daemons, job launchers and cron set-ups).
Python then sets ``sys.stderr`` to None. Before: ``loss.backward()`` inside ``trace()`` raised
``OSError: [Errno 9] Bad file descriptor`` from the capture of Paddle's log (os.dup(2)), so the
user's training stopped, and every line of ours (the CLI's "wrote ...", the watch's) went to
**stdout**, into the user's output (``print(file=None)`` writes there). Now the backward is
captured as with a stderr, fd 2 is closed again after it, and our lines are dropped, as Python
drops its own there. Each case is a real process started by bash with `2>&-`; the last one's
stderr is a pipe whose reader has gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}

TRACED = """\
import os, paddle
from paddleviz_widget import build_graph, trace
paddle.seed(0)
m = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 2))
with trace(m):
    y = m(paddle.randn([2, 4]))
    y.sum().backward()
doc = build_graph(y)
try:
    os.fstat(2)
    fd2 = "open"
except OSError:
    fd2 = "closed"
print("EDGES", doc["meta"]["sources"]["edges"], "FD2", fd2)
print("GRAD", m[0].weight.grad.numpy().tolist())
"""

TRAIN = """\
import sys, paddle
from run_models import TinyMLP, train
paddle.seed(0)
model = TinyMLP()
train(model, paddle.optimizer.SGD(1e-3, parameters=model.parameters()), 3)
print("trained")
"""


def _bash(command: str, cwd: Path, closed: bool) -> subprocess.CompletedProcess[str]:
    """``command`` run by bash, with fd 2 closed (`2>&-`) or captured."""
    return subprocess.run(
        ["bash", "-c", f"exec {command}" + (" 2>&-" if closed else "")],
        cwd=cwd, capture_output=True, text=True, timeout=300, env=ENV,
    )  # fmt: skip


def test_a_traced_backward_with_fd2_closed_is_captured_and_fd2_stays_closed(tmp_path):
    (tmp_path / "traced.py").write_text(TRACED)
    closed = _bash(f"{sys.executable} -W ignore traced.py", tmp_path, closed=True)
    assert closed.returncode == 0, closed.stdout[-3000:]
    assert "Traceback" not in closed.stdout
    edges, fd2 = closed.stdout.split("EDGES ", 1)[1].splitlines()[0].split(" FD2 ")
    assert fd2 == "closed"  # put back as it was
    opened = _bash(f"{sys.executable} -W ignore traced.py", tmp_path, closed=False)
    assert opened.returncode == 0, opened.stderr[-3000:]
    # The same graph, each edge annotated by the same source, and the same gradients.
    assert opened.stdout.replace("FD2 open", "FD2 closed") == closed.stdout
    assert "." not in edges


def test_the_cli_with_fd2_closed_writes_its_file_and_nothing_of_ours_into_stdout(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    cli = f"{sys.executable} -W ignore -m paddleviz_widget"
    graph = _bash(f"{cli} train.py -o g.json", tmp_path, closed=True)
    assert (graph.returncode, graph.stdout) == (0, "trained\n")
    assert json.loads((tmp_path / "g.json").read_text())["nodes"]
    run = _bash(f"{cli} train.py --run-dir r", tmp_path, closed=True)
    assert (run.returncode, run.stdout) == (0, "trained\n")
    assert json.loads((tmp_path / "r" / "run.json").read_text())["status"] == "finished"


def test_the_cli_with_stderr_a_pipe_nobody_reads_exits_with_the_scripts_status(tmp_path):
    """stderr piped to a reader that has gone (a log collector that died, `2> >(true)`): our
    closing line raised BrokenPipeError, and the command ended with status 1 after the
    script had succeeded and the file or run log was written."""
    (tmp_path / "train.py").write_text(TRAIN)
    cli = [sys.executable, "-W", "ignore", "-m", "paddleviz_widget", "train.py"]
    for ours in (["-o", "g.json"], ["--run-dir", "r"]):
        read, write = os.pipe()
        os.close(read)  # nobody reads: a write gets EPIPE
        try:
            done = subprocess.run(
                [*cli, *ours], cwd=tmp_path, stdout=subprocess.PIPE, stderr=write, text=True,
                timeout=300, env=ENV,
            )  # fmt: skip
        finally:
            os.close(write)
        assert (done.returncode, done.stdout) == (0, "trained\n"), ours
    assert json.loads((tmp_path / "g.json").read_text())["nodes"]
    assert json.loads((tmp_path / "r" / "run.json").read_text())["status"] == "finished"
