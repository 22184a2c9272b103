"""A watched run in a script whose first line is ``import paddle``: on Paddle 2.6 (whose
libpaddle carries zlib 1.2.8) Python's zlib then crashed the process at the run log's first
gzip or ``import pyarrow`` (a segfault); it is now refused with the package's error naming
the fix, and the same script importing paddleviz_widget first runs. On 3.x both run.
Each script runs in its own process (the crash, and sys.modules' order, are per process)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from paddle_versions import PADDLE_VERSION

HERE = Path(__file__).parent

SCRIPT = """
{first}
import paddle
from paddleviz_widget import RunLogError, open_run, trace

model = paddle.nn.Linear(4, 2)
opt = paddle.optimizer.SGD(parameters=model.parameters())
try:
    with trace(model, stats=True, every=2, run_dir={run_dir!r}):
        for _ in range(3):
            loss = model(paddle.randn([3, 4])).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
except RunLogError as err:
    print("REFUSED", err)
else:
    print("STEPS", len(open_run({run_dir!r}).steps))
"""


def _run(tmp_path: Path, first: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT.format(first=first, run_dir=str(tmp_path / "run"))))
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(HERE.parent), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def test_a_script_that_imports_paddle_first_runs_or_is_refused_never_crashes(tmp_path):
    done = _run(tmp_path, "")
    assert done.returncode == 0, done.stderr[-2000:]
    if PADDLE_VERSION < (3, 0):
        assert "REFUSED" in done.stdout and "import paddleviz_widget" in done.stdout
        assert "zlib 1.2.8" in done.stdout
    else:
        assert "STEPS 3" in done.stdout


@pytest.mark.parametrize("first", ["import paddleviz_widget", "import zlib"])
def test_a_script_that_imports_zlib_before_paddle_runs(tmp_path, first):
    done = _run(tmp_path, first)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "STEPS 3" in done.stdout
