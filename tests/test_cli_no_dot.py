"""``python -m paddleviz_widget train.py -o graph.svg`` where Graphviz's ``dot`` is not on PATH
(the optional system package; .svg and .png need it). Before: the whole training script ran,
then the command failed to write ("could not write ...: Graphviz's `dot` is not installed").
Now it stops before the script runs (status 2, like any other -o it cannot write), saying
what to install and which suffixes need no Graphviz; those still work without it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent

SCRIPT = """
from pathlib import Path
import paddle
Path("ran").write_text("")
model = paddle.nn.Linear(4, 2)
model(paddle.randn([3, 4])).sum().backward()
"""


def _cli(tmp_path: Path, output: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "train.py").write_text(SCRIPT)
    no_dot = tmp_path / "bin"  # PATH: a directory without Graphviz (nor anything else)
    no_dot.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "train.py", "-o", output],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={"PYTHONPATH": str(HERE.parent), "PATH": str(no_dot)},
    )  # fmt: skip


@pytest.mark.parametrize("output", ["graph.svg", "graph.PNG"])
def test_a_picture_without_graphviz_is_refused_before_the_script_runs(tmp_path, output):
    done = _cli(tmp_path, output)
    assert done.returncode == 2, done.stderr[-2000:]
    assert not (tmp_path / "ran").exists()  # the training did not run
    assert "Graphviz's `dot` is not installed" in done.stderr
    assert "or write .html, .json or .dot" in done.stderr and "(nothing was run)" in done.stderr
    assert "Traceback" not in done.stderr


def test_formats_without_graphviz_still_work_without_it(tmp_path):
    done = _cli(tmp_path, "graph.html")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "ran").exists() and (tmp_path / "graph.html").stat().st_size > 0
