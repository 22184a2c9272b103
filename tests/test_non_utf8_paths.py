"""A script in a folder whose name is not UTF-8 (a project unzipped from a Windows archive with
GBK or Latin-1 names: Python holds such a path with surrogate escapes). Paddle 3.3 crashes the
process (SIGSEGV in GetPythonStack) when it formats a per-op stack holding such a file name, so
trace() takes no per-op stacks there; and the graph, whose call sites name that file, is shown
and saved like any other. Each script runs in a process of its own (a crash must not take the
test session with it); the expected file names are the test's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

MODEL = """
import json, os
import paddle
from paddle import nn
from paddleviz_widget import GraphWidget, build_graph, trace

paddle.seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
x = paddle.randn([2, 3])
with trace(model{options}):
    y = model(x)
    y.sum().backward()
"""

TRACE_DEFAULTS = (
    MODEL.format(options="")
    + """
doc = build_graph(y)
print(json.dumps({"files": doc["files"], "edges": len(doc["edges"]),
                  "bare": sum(1 for e in doc["edges"] if "grad" not in e)}))
"""
)

SHOW_AND_SAVE = (
    MODEL.format(options=", call_sites=False")
    + """
from paddleviz_widget.widget.wire import json_bytes
out = os.environ["PVW_OUT"]  # (Paddle empties sys.argv when argv[0] is not UTF-8)
widget = GraphWidget(y)  # its graph goes to the page as JSON text (widget/wire.py)
for suffix in (".json", ".html", ".dot", ".svg"):
    widget.save(out + "/graph" + suffix)
print(json.dumps({"files": widget.graph["files"], "sent": json.loads(json_bytes(widget.graph))}))
"""
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """tmp_path/donn<0xE9>es: a folder name in Latin-1 bytes."""
    path = Path(os.fsdecode(os.fsencode(tmp_path) + b"/donn\xe9es"))
    try:
        path.mkdir()
    except (OSError, UnicodeError):
        pytest.skip("this file system takes only UTF-8 names")
    return path


def _run(script: Path, out: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PVW_OUT": str(out)}
    return subprocess.run(
        [sys.executable, os.fsencode(script)], env=env, capture_output=True, timeout=300
    )


def test_trace_does_not_crash_a_script_in_a_folder_whose_name_is_not_utf8(folder: Path) -> None:
    script = folder / "train.py"
    script.write_text(TRACE_DEFAULTS)
    done = _run(script)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    report = json.loads(done.stdout.decode().splitlines()[-1])
    # Annotated as usual (Paddle's dump gives every edge), call sites naming the script.
    assert report["edges"] > 0 and report["bare"] == 0
    assert str(script) in report["files"]


def test_a_graph_naming_such_a_file_is_shown_and_saved(folder: Path, tmp_path: Path) -> None:
    script = folder / "show.py"
    script.write_text(SHOW_AND_SAVE)
    (tmp_path / "out").mkdir()
    done = _run(script, tmp_path / "out")
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    report = json.loads(done.stdout.decode().splitlines()[-1])
    assert str(script) in report["files"] and report["sent"]["files"] == report["files"]
    saved = json.loads((tmp_path / "out" / "graph.json").read_text())
    assert str(script) in saved["files"]  # read back as it was (a \\u escape in the file)
    for suffix in (".html", ".dot", ".svg"):
        assert (tmp_path / "out" / f"graph{suffix}").stat().st_size > 0
