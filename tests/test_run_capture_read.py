"""A watched capture's problems are found when the run log is read (runs/capture_read.py), not
in the training step: the document read back equals the one whose problems were found while
training (as trace(stats=True) and main-line run logs did), and older logs' captures, which
hold their problems, read as written."""

from __future__ import annotations

import gzip
import json
from typing import Any

import paddle
import paddle.nn.functional as F
from capture_files import ptrs_numbered, unzstd
from paddle_versions import requires_post_hooks

from paddleviz_widget import open_run, trace
from paddleviz_widget.runs import capture_read
from paddleviz_widget.tracer import build


class Troubled(paddle.nn.Layer):
    """Problems for the rules to find: a layer no gradient reaches, a parameter whose
    gradient is all zeros, and a NaN brought in by a batch at step 3."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(8, 16)
        self.fc2 = paddle.nn.Linear(16, 1)
        self.muted = paddle.nn.Linear(8, 1)  # its output is multiplied by zero
        self.unused = paddle.nn.Linear(4, 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(F.relu(self.fc1(x))) + 0.0 * self.muted(x)


def _run(run_dir: Any) -> None:
    paddle.seed(0)
    model = Troubled()
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
    with trace(model, stats=True, every=2, run_dir=run_dir):
        for step in range(5):
            x = paddle.randn([16, 8])
            if step == 3:
                x[0, 0] = float("nan")
            F.mse_loss(model(x), x.sum(axis=1, keepdim=True)).backward()
            opt.step()
            opt.clear_grad()


def _as_before(
    y: Any, walk: Any, *, model: Any = None, named_params: Any = None, columns: bool = False
) -> dict[str, Any]:
    """captured_graph as main-line run logs (run_schema <= 1.2) ran it: problems found in the
    training step, the whole document written (and the model's parameters read by the build
    itself: ``named_params``, ``columns`` unused)."""
    return build._encoded(build._trace_graph(y, model=model, params=None, replay=True, walk=walk))


@requires_post_hooks
def test_captures_read_back_as_if_their_problems_were_found_while_training(tmp_path, monkeypatch):
    _run(tmp_path / "now")
    with monkeypatch.context() as m:  # the capture step as before: problems found in training
        m.setattr(build, "captured_graph", _as_before)
        _run(tmp_path / "before")
    now, before = open_run(tmp_path / "now"), open_run(tmp_path / "before")
    assert now.captured_steps == before.captured_steps == [0, 2, 4]
    for step in now.captured_steps:
        raw = json.loads(unzstd(tmp_path / "now" / "captures" / f"capture-{step:09d}.json.zst"))
        assert "problems" not in raw["meta"]  # left to the reader (3.0: columns, no document)
        doc, reference = now.graph(step), before.graph(step)
        assert list(doc["meta"]) == list(reference["meta"])  # key for key, in order
        assert ptrs_numbered(doc) == ptrs_numbered(reference)
    kinds = {p["kind"] for p in now.graph(4)["meta"]["problems"]}
    assert {"nonfinite", "unreached"} <= kinds, kinds  # the rules did find something


@requires_post_hooks
def test_a_second_read_does_not_run_the_rules_again(tmp_path, monkeypatch):
    _run(tmp_path / "run")
    calls = []
    find = capture_read.find_problems
    monkeypatch.setattr(capture_read, "find_problems", lambda g: calls.append(1) or find(g))
    run = open_run(tmp_path / "run")
    first = run.graph(4)
    first["meta"]["problems"].append("changed by the caller")
    second = run.graph(4)
    assert len(calls) == 1 and second["meta"]["problems"] == first["meta"]["problems"][:-1]
    assert open_run(tmp_path / "run").graph(4) == second and len(calls) == 2  # per reader


@requires_post_hooks
def test_an_older_logs_captures_read_as_written(tmp_path, monkeypatch):
    """run_schema <= 1.2 captures hold their problems (found while training): they are
    returned as written, the rules never run on them."""
    with monkeypatch.context() as m:
        m.setattr(build, "captured_graph", _as_before)
        _run(tmp_path / "run")
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    meta["run_schema"] = "1.2"  # as main's writer wrote it
    (tmp_path / "run" / "run.json").write_text(json.dumps(meta))
    monkeypatch.setattr(capture_read, "find_problems", lambda g: 1 / 0)
    for path in (tmp_path / "run" / "captures").glob("capture-*.json.zst"):  # as 1.2 wrote them
        older = path.with_name(path.name.replace(".json.zst", ".json.gz"))
        older.write_bytes(gzip.compress(unzstd(path), 1))
        path.unlink()
    run = open_run(tmp_path / "run")
    assert run.captured_steps == [0, 2, 4]
    for step in run.captured_steps:
        path = tmp_path / "run" / "captures" / f"capture-{step:09d}.json.gz"
        assert run.graph(step) == json.loads(gzip.decompress(path.read_bytes()))
    assert run.graph(4)["meta"]["problems"]


def test_a_capture_file_is_a_standard_zstd_frame(tmp_path):
    """What the README says: `zstd -d` reads a capture file (the zstd tool, when installed)."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("zstd") is None:
        pytest.skip("the zstd command is not installed")
    _run(tmp_path / "run")
    path = tmp_path / "run" / "captures" / "capture-000000000.json.zst"
    text = subprocess.run(["zstd", "-dc", str(path)], capture_output=True, check=True).stdout
    assert json.loads(text)["meta"]["step"] == 0
