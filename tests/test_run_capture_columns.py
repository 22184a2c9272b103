"""run_schema 3.0: a watched capture's file holds the columns its document is made from
(tracer/merge/capture_columns.py), and the run log's reader encodes the document. What is read
back must be the document the training step made before: the same Annotations give the same
document through the columns (their JSON read back) as through the step's own encoding, on real
models and their training loops; a 3.0 log is refused by a 2.x reader with its upgrade message;
a 2.0 log's captures (whole documents) read as before; a damaged columns file says so."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import orjson
import paddle
import paddle.nn.functional as F
import pyarrow as pa
import pytest
from capture_files import ptrs_numbered, unzstd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paddle_versions import requires_post_hooks

from paddleviz_widget import PaddlevizError, open_run, trace
from paddleviz_widget.graph.codec import encode_rows
from paddleviz_widget.runs import format as fmt
from paddleviz_widget.runs.errors import RunLogError
from paddleviz_widget.tracer import build
from paddleviz_widget.tracer.merge import annotate, capture_columns


class Troubled(paddle.nn.Layer):
    """A layer no gradient reaches, one whose gradient is all zeros, and a NaN in the batch
    of step 3 (first NaN, forward culprit, non-finite statistics)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(8, 16)
        self.fc2 = paddle.nn.Linear(16, 1)
        self.muted = paddle.nn.Linear(8, 1)
        self.unused = paddle.nn.Linear(4, 4)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(F.relu(self.fc1(x))) + 0.0 * self.muted(x)


class ConvNet(paddle.nn.Layer):
    """Conv, BatchNorm, a residual add, pooling: a ResNet block's kinds of GradNodes."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = paddle.nn.Conv2D(3, 8, 3, padding=1)
        self.bn = paddle.nn.BatchNorm2D(8)
        self.conv2 = paddle.nn.Conv2D(8, 8, 3, padding=1)
        self.head = paddle.nn.Linear(8, 1)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = F.relu(self.bn(self.conv(x)))
        h = h + self.conv2(h)
        return self.head(F.adaptive_avg_pool2d(h, 1).flatten(1))


class Squared(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx: Any, x: paddle.Tensor) -> paddle.Tensor:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: Any, grad: paddle.Tensor) -> paddle.Tensor:
        (x,) = ctx.saved_tensor()
        return 2 * x * grad


class WithPyLayer(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(8, 8)
        self.fc2 = paddle.nn.Linear(8, 1)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(Squared.apply(self.fc1(x)))


MODELS = {
    "troubled": (Troubled, [16, 8]),
    "convnet": (ConvNet, [4, 3, 8, 8]),
    "pylayer": (WithPyLayer, [16, 8]),
}


def _run(run_dir: Path, name: str, steps: int = 5, every: int = 2) -> None:
    paddle.seed(0)
    make, shape = MODELS[name]
    model = make()
    opt = paddle.optimizer.SGD(1e-3, parameters=model.parameters())
    with trace(model, stats=True, every=every, run_dir=run_dir):
        for step in range(steps):
            x = paddle.randn(shape)
            if step == 3:
                x[0, 0] = float("nan")
            out = model(x)
            (out * out).mean().backward()
            opt.step()
            opt.clear_grad()


def _whole_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    """The capture step as run_schema 2.0 wrote it: the whole document, encoded in the step."""
    captured = build.captured_graph
    monkeypatch.setattr(
        build, "captured_graph", lambda *a, columns=False, **k: captured(*a, **k)
    )  # fmt: skip


def _zstd(data: bytes) -> bytes:
    return pa.Codec("zstd").compress(data, asbytes=True)


def _capture_file(run_dir: Path, step: int) -> Path:
    return run_dir / fmt.CAPTURES / fmt.capture_name(step)


@requires_post_hooks
@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_columns_make_the_document_the_step_made(name, monkeypatch, tmp_path):
    """On the same Annotations, in the training step: the columns, written as JSON and read
    back, make the document the step's own encoding makes (compared as JSON text: key order
    too, with the exact addresses)."""
    checked = []
    columns_of = build.columns_of

    def both(walk: Any, ann: Any, root_tensors: Any, about: Any) -> Any:
        columns = columns_of(walk, ann, root_tensors, about)
        if columns is not None:
            reference = encode_rows(capture_columns.rows_of(walk, ann, root_tensors, about))
            read = capture_columns.document_of(json.loads(orjson.dumps(columns)))
            checked.append(json.dumps(read) == json.dumps(reference))
        return columns

    monkeypatch.setattr(build, "columns_of", both)
    _run(tmp_path / "run", name)
    assert checked == [True, True, True]  # steps 0, 2, 4


@requires_post_hooks
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_run_reads_back_as_the_whole_documents_did(name, monkeypatch, tmp_path):
    """The same training run written both ways: open_run(...).graph(step) the same, key for
    key, problems (found on reading either way) included."""
    _run(tmp_path / "now", name)
    with monkeypatch.context() as m:
        _whole_documents(m)
        _run(tmp_path / "before", name)
    now, before = open_run(tmp_path / "now"), open_run(tmp_path / "before")
    assert now.captured_steps == before.captured_steps == [0, 2, 4]
    for step in now.captured_steps:
        raw = json.loads(unzstd(_capture_file(tmp_path / "now", step)))
        assert capture_columns.is_columns(raw) and raw["meta"] == {"step": step}
        old = json.loads(unzstd(_capture_file(tmp_path / "before", step)))
        assert not capture_columns.is_columns(old)
        doc, reference = now.graph(step), before.graph(step)
        assert json.dumps(ptrs_numbered(doc)) == json.dumps(ptrs_numbered(reference))
    unreached = (tmp_path / "now" / fmt.CAPTURES / fmt.UNREACHED).read_text()
    assert unreached == (tmp_path / "before" / fmt.CAPTURES / fmt.UNREACHED).read_text()
    if name == "troubled":
        assert '"unused.weight"' in unreached
        kinds = {p["kind"] for p in now.graph(4)["meta"]["problems"]}
        assert {"nonfinite", "unreached"} <= kinds, kinds
        assert "forward_nonfinite" in now.graph(4)["meta"]


@requires_post_hooks
def test_a_newer_log_is_refused_by_an_older_reader(monkeypatch, tmp_path):
    _run(tmp_path / "run", "troubled", steps=1)
    assert json.loads((tmp_path / "run" / fmt.META).read_text())["run_schema"] == "3.0"
    monkeypatch.setattr(fmt, "READS_MAJOR", 2)  # a 2.x reader
    with pytest.raises(RunLogError, match=r"run_schema 3\.0.*upgrade it"):
        open_run(tmp_path / "run")


@requires_post_hooks
def test_a_2_0_log_reads_its_whole_documents_as_before(monkeypatch, tmp_path):
    """A 2.0 log's captures are whole documents without their problems: read as written, the
    problems found on reading; columns are never looked for in them."""
    with monkeypatch.context() as m:
        _whole_documents(m)
        _run(tmp_path / "run", "troubled")
    meta = json.loads((tmp_path / "run" / fmt.META).read_text())
    meta["run_schema"] = "2.0"
    (tmp_path / "run" / fmt.META).write_text(json.dumps(meta))
    monkeypatch.setattr(capture_columns, "document_of", lambda c: 1 / 0)
    run = open_run(tmp_path / "run")
    for step in run.captured_steps:
        written = json.loads(unzstd(_capture_file(tmp_path / "run", step)))
        got = run.graph(step)
        assert {k: v for k, v in got["meta"].items() if k != "problems"} == written["meta"]
        assert {k: v for k, v in got.items() if k != "meta"} == {
            k: v for k, v in written.items() if k != "meta"
        }


def test_every_annotations_field_is_written_or_known_unread():
    """A field added to Annotations must be decided on: written in the columns (annotated_rows
    reads it) or known not to be read by it."""
    names = {f.name for f in dataclasses.fields(annotate.Annotations)}
    assert names == capture_columns.WRITTEN | capture_columns.NOT_READ
    assert not capture_columns.WRITTEN & capture_columns.NOT_READ
    # the statistics read back carry what encode_rows reads of a GradStats, in its order
    assert capture_columns._StatsRow._fields == capture_columns.GradStats.FIELDS


@pytest.fixture(scope="module")
def columns_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("columns") / "run"
    _run(path, "troubled", steps=1)
    return path


def _damaged(path: Path, columns: Any) -> None:
    path.write_bytes(_zstd(json.dumps(columns).encode()))


def _says_damaged(run_dir: Path, path: Path) -> None:
    with pytest.raises(RunLogError) as got:
        open_run(run_dir).graph(0)
    assert str(path) in str(got.value) and "summary is still in the run log" in str(got.value)


@requires_post_hooks
def test_columns_of_another_version_are_not_read(columns_run, tmp_path):
    import shutil

    shutil.copytree(columns_run, tmp_path / "run")
    path = _capture_file(tmp_path / "run", 0)
    columns = json.loads(unzstd(path))
    columns[capture_columns.LAYOUT] = capture_columns.VERSION + 1
    _damaged(path, columns)
    _says_damaged(tmp_path / "run", path)


@requires_post_hooks
def test_columns_cut_short_say_so(columns_run, tmp_path):
    import shutil

    shutil.copytree(columns_run, tmp_path / "run")
    path = _capture_file(tmp_path / "run", 0)
    path.write_bytes(path.read_bytes()[:-40])
    _says_damaged(tmp_path / "run", path)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**64) | st.floats() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),  # fmt: skip
    max_leaves=4,
)


def _paths(value: Any, at: tuple[Any, ...] = (), depth: int = 3) -> list[tuple[Any, ...]]:
    """Where a value could be replaced: every key of the objects, and the first two entries
    of each list, down to ``depth``."""
    found = [at] if at else []
    if depth == 0:
        return found
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*at, k), depth - 1)
    elif isinstance(value, list):
        for k, v in list(enumerate(value))[:2]:
            found += _paths(v, (*at, k), depth - 1)
    return found


@requires_post_hooks
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(data=st.data())
def test_columns_with_a_value_changed_read_or_say_so(columns_run, tmp_path, data):
    """A columns file that still unzips and parses, one of its values replaced (or removed):
    either it makes a valid document or the reader names the file (never a bare KeyError,
    TypeError, IndexError ...)."""
    import shutil

    copy = tmp_path / "copy"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(columns_run, copy)
    path = _capture_file(copy, 0)
    columns = json.loads(unzstd(path))
    where = data.draw(st.sampled_from(_paths(columns)), label="where")
    owner = columns
    for k in where[:-1]:
        owner = owner[k]
    if isinstance(owner, dict) and data.draw(st.booleans(), label="remove"):
        del owner[where[-1]]
    else:
        owner[where[-1]] = data.draw(JSON_VALUES, label="value")
    _damaged(path, columns)
    try:
        open_run(copy).graph(0)
    except PaddlevizError as error:
        assert str(path) in str(error), str(error)


@requires_post_hooks
def test_the_reader_builds_the_document_without_paddle(columns_run):
    """The run log's reader (and so the explorer) encodes a columns capture without importing
    Paddle: the pure build is tracer/merge's, which imports none."""
    import subprocess
    import sys

    code = (
        "import sys; from paddleviz_widget import open_run; "
        f"doc = open_run({str(columns_run)!r}).graph(0); "
        "assert doc['nodes'] and 'paddle' not in sys.modules, sorted(sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.returncode == 0, done.stderr
