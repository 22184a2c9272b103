"""A script that the CLI runs ends by an exception as it does under ``python SCRIPT.py``, in
both modes (-o and --run-dir); the oracle is the same script run by Python itself.

Before: the exception was printed by ``traceback.print_exception``, so a ``sys.excepthook``
the script set (a logger's, a crash reporter's) was never called; and a Ctrl-C
(KeyboardInterrupt) ended the CLI with exit status 130, where Python ends the process by
SIGINT (``subprocess``: -2; a shell loop around the command stops on it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}

SCRIPT = """\
import atexit, sys, traceback, paddle
from run_models import TinyMLP, train

def hook(kind, error, tb):
    files = [frame.filename.rsplit("/", 1)[-1] for frame in traceback.extract_tb(tb)]
    print("USER HOOK", kind.__name__, error, files, file=sys.stderr)

if sys.argv[1] == "hook":
    sys.excepthook = hook
atexit.register(print, "ATEXIT")  # Python runs it before it ends a Ctrl-C'd process
paddle.seed(0)
model = TinyMLP()
train(model, paddle.optimizer.SGD(1e-3, parameters=model.parameters()), 2)
raise KeyboardInterrupt if sys.argv[1] == "interrupt" else ValueError("the loader died")
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "ignore", *args], cwd=tmp_path, capture_output=True,
        text=True, timeout=300, env=ENV,
    )  # fmt: skip


def _ours_out(stderr: str) -> str:
    """stderr without our own lines (the run log's, "no graph written")."""
    lines = stderr.splitlines(keepends=True)
    return "".join(s for s in lines if not s.startswith("paddleviz_widget: "))


def test_the_scripts_excepthook_is_called_as_python_calls_it(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    plain = _run(tmp_path, "train.py", "hook")
    assert plain.returncode == 1
    assert "USER HOOK ValueError the loader died ['train.py']" in plain.stderr, plain.stderr
    for ours in (["-o", "g.json"], ["--run-dir", "r"]):
        cli = _run(tmp_path, "-m", "paddleviz_widget", *ours, "train.py", "hook")
        assert cli.returncode == plain.returncode, cli.stderr[-3000:]
        assert (cli.stdout, _ours_out(cli.stderr)) == (plain.stdout, plain.stderr)
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert meta["status"] == "stopped" and "the loader died" in meta["error"]


def test_a_ctrl_c_ends_the_cli_by_sigint_as_it_ends_python(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    plain = _run(tmp_path, "train.py", "interrupt")
    assert plain.returncode == -2  # killed by SIGINT, after its atexit handlers ran
    assert plain.stdout == "ATEXIT\n"
    assert plain.stderr.rstrip().endswith("KeyboardInterrupt")
    for ours in (["-o", "g.json"], ["--run-dir", "r"]):
        cli = _run(tmp_path, "-m", "paddleviz_widget", *ours, "train.py", "interrupt")
        assert cli.returncode == plain.returncode, cli.stderr[-3000:]
        assert (cli.stdout, _ours_out(cli.stderr)) == (plain.stdout, plain.stderr)
    assert json.loads((tmp_path / "r" / "run.json").read_text())["status"] == "stopped"
    assert not (tmp_path / "g.json").exists()
