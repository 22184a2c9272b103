"""A save into a directory (`w.save(".")`, `-o ~`) names that directory: it said "cannot save a
graph as '': the file name's suffix picks the format" (the name of '.' is ''); a path that is
not a path (`w.save(5)`) gets the package's error, not pathlib's "expected str, bytes or
os.PathLike object"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import paddle
import pytest

from paddleviz_widget import GraphWidget

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def widget():
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    w = GraphWidget((x * x).sum())
    yield w
    w.close()


def test_saving_into_a_directory_names_it(widget, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for where in (".", str(tmp_path), tmp_path):
        with pytest.raises(IsADirectoryError) as info:
            widget.save(where)
        message = str(info.value)
        assert f"cannot save as {str(where)!r}: it is a directory" in message
        assert "graph.html" in message  # the fix: a file in it
    assert list(tmp_path.iterdir()) == []


def test_a_path_that_is_no_path_is_named(widget):
    with pytest.raises(TypeError, match=r"cannot save a graph to 5 \(int\): pass the file's path"):
        widget.save(5)  # type: ignore[arg-type]


def test_the_command_line_names_the_directory(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("raise SystemExit('the script must not run')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "-o", ".", str(script)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"cannot save as {str(tmp_path)!r}: it is a directory" in done.stderr
    assert "must not run" not in done.stderr
