"""The watch mode's help, reached as the main --help says: its usage read "python -m
paddleviz_widget --run-dir RUN_DIR [-h] --run-dir RUN_DIR [--every N] [--ranks all|R|R,R]"
(the option twice, no script), and the main --help named neither --every nor how to see it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _help(cwd: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "paddleviz_widget", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_main_help_leads_to_the_watch_modes_help(tmp_path):
    main = _help(tmp_path, "--help")
    said = re.search(r"`python -m paddleviz_widget (--run-dir RUN_DIR --help)` says how", main)
    assert said is not None and "--every N" in main
    watch = _help(tmp_path, *said.group(1).split())
    usage = watch.split("\n\n")[0]
    assert usage.count("--run-dir RUN_DIR") == 2  # one per form: options first, or at the end
    assert usage.splitlines()[0].endswith("SCRIPT.py [ARGS ...]")
    assert "[-h] --run-dir" not in usage
    for option in ("--run-dir RUN_DIR", "--every N", "--ranks all|R|R,R"):
        assert option in watch.split("options:")[1]
    assert "``" not in watch  # reST markup of a docstring, not words for a terminal
    assert list(tmp_path.iterdir()) == []  # help makes no run dir


def test_a_command_with_no_script_asks_for_the_script_only(tmp_path):
    # argparse counts a REMAINDER positional as required: "required: SCRIPT.py, args", while
    # a script with no arguments of its own is fine
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for module, script in (("paddleviz_widget", "SCRIPT.py"), ("paddleviz_widget.run", "script")):
        done = subprocess.run([sys.executable, "-m", module], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 2
        assert done.stderr.rstrip().endswith(f"the following arguments are required: {script}")
