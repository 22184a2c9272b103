"""Damaged run logs (issue 19: every document read is validated): a run log written by the
real writer, then one of its files cut short, overwritten in places, deleted, or (run.json)
given a field of another type. Reading it whole through open_run's API either works or raises
the package's RunLogError / PaddlevizError naming the path: never a bare KeyError, TypeError,
IndexError, pyarrow error or a hang."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paddleviz_widget import PaddlevizError, open_run
from paddleviz_widget.graph.model import CallSite, GradInfo, GradStats, Group
from paddleviz_widget.graph.model import ParamInfo as GraphParam
from paddleviz_widget.runs.log_writer import RunLogWriter
from paddleviz_widget.runs.params import ParamInfo
from paddleviz_widget.tracer.merge.annotate import Annotations, EdgeNote
from paddleviz_widget.tracer.merge.capture_columns import columns_of
from paddleviz_widget.tracer.read.walk import WalkedEdge, WalkedNode, WalkResult

STEPS = 230  # two Parquet parts (100 steps each) and a tail of 30


@pytest.fixture(scope="module")
def valid_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runlog") / "run"
    infos = [ParamInfo(f"fc{k}.weight", f"fc{k}", [4, 4], "float32") for k in range(3)]
    w = RunLogWriter(path, params=infos, layers=[p.layer for p in infos], every=100, thresholds={})
    rng = np.random.default_rng(0)
    for step in range(STEPS):
        v = rng.random(3).astype(np.float32)
        w.write_step(step, v, v, np.zeros(3), np.zeros(3), float(step))
    w.write_anomaly({"step": 7, "kind": "spike", "layer": "fc1", "params": ["fc1.weight"],
                     "value": 9.0, "threshold": 10.0, "message": "step 7: spike"})  # fmt: skip
    w.write_capture(0, {"schema_version": "2.2", "tensors": [], "files": [], "sites": [],
                        "ops": {}, "nodes": [], "edges": [], "groups": []})  # fmt: skip
    w.write_capture(100, _columns())  # run_schema 3.0: what a watched capture writes
    return path


def _columns() -> dict[str, Any]:
    """A small graph's capture columns (tracer/merge/capture_columns.py), made without Paddle:
    matmul <- add <- the parameter fc0.weight, with statistics, a layer group, call sites."""
    walk = WalkResult(
        (WalkedNode(0, "matmul_grad", 11, True, 1), WalkedNode(1, "add_grad", 12, False, 1),
         WalkedNode(2, "GradNodeAccumulation", 13, False, 0)),
        (WalkedEdge(0, 1, 0), WalkedEdge(1, 2, 0)), (0,),
    )  # fmt: skip
    grad, site = GradInfo("float32", (4, 4), "cpu"), CallSite("train.py", 3, "step")
    ann = Annotations(
        edges={(11, 0): EdgeNote(grad, None, "h"), (12, 0): EdgeNote(grad, None, "h")},
        stats={(11, 0): GradStats(1.5, 0.5, 0.25, 0.0, 0, 0),
               (12, 0): GradStats(2.0, 1.0, 0.5, 0.1, 1, 0)},
        groups=(Group("g0", "fc0", "Linear"),), group_of_ptr={11: "g0", 12: "g0"},
        params={13: GraphParam("fc0.weight", (4, 4), "float32")},
        call_sites={11: site, 12: site}, sources=["hooks"],
        node_src={"group": {11: "t", 12: "t"}, "param": {13: "m"}},
    )  # fmt: skip
    columns = columns_of(walk, ann, {0: GradInfo("float32", (), "cpu")}, {"outputs": []})
    assert columns is not None
    columns["meta"]["step"] = 100
    return columns  # not closed: a run in progress (its tail still there)


def read_everything(path: Path) -> None:
    run = open_run(path)
    assert isinstance(run.meta, dict)
    _ = (run.params, run.layers, run.steps, run.loss, run.anomalies, run.problems())
    for stat in ("norm", "max_abs", "nan", "inf"):
        assert run.param_stat(stat).shape == (len(run.steps), len(run.params))
    assert run.layer_norm().shape[0] == len(run.steps)
    for step in run.captured_steps:
        run.graph(step)
    run.refresh()


def test_the_valid_run_reads_both_capture_layouts(valid_run: Path) -> None:
    run = open_run(valid_run)
    assert run.captured_steps == [0, 100]
    doc = run.graph(100)
    assert [n["name"] for n in doc["nodes"]] == ["matmul_grad", "add_grad", "GradNodeAccumulation"]
    assert doc["edges"][1]["stats"] == [2.0, 1.0, 0.5, 0.1, 1, 0]
    assert doc["meta"]["step"] == 100 and "problems" in doc["meta"]  # the rules ran on reading
    assert doc["meta"]["sources"]["nodes"] == {"group": "tt.", "param": "..m"}


def files_of(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=5,
)


@settings(
    max_examples=60, deadline=5000, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_damaged_run_log_reads_or_says_what_is_wrong(
    valid_run: Path, tmp_path: Path, data: Any
) -> None:
    copy = tmp_path / "copy"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(valid_run, copy)
    name = data.draw(st.sampled_from(files_of(copy)), label="file")
    target = copy / name
    how = data.draw(st.sampled_from(["cut", "overwrite", "delete", "field"]), label="how")
    raw = target.read_bytes()
    if how == "cut":
        target.write_bytes(raw[: data.draw(st.integers(0, max(len(raw) - 1, 0)), label="at")])
    elif how == "overwrite":
        at = data.draw(st.integers(0, max(len(raw) - 1, 0)), label="at")
        junk = data.draw(st.binary(min_size=1, max_size=16), label="junk")
        target.write_bytes(raw[:at] + junk + raw[at + len(junk) :])
    elif how == "delete":
        target.unlink()
    elif name == "run.json":
        meta = json.loads(raw)
        key = data.draw(st.sampled_from(sorted(meta)), label="key")
        meta[key] = data.draw(JSON_VALUES, label="value")
        target.write_text(json.dumps(meta))
    try:
        read_everything(copy)
    except PaddlevizError as error:
        assert str(copy) in str(error) or name in str(error), str(error)


def test_a_nan_count_over_float32_s_exact_range_reads(tmp_path: Path) -> None:
    """A parameter of more than 2**24 NaN elements (found by the test above, a damaged part
    whose count became 2**32: pyarrow's safe cast to float32 raised ArrowInvalid from the
    reader) reads, exactly (counts are float64: test_run_big_counts.py), in a part and in the
    tail alike."""
    path = tmp_path / "run"
    infos = [ParamInfo("emb.weight", "emb", [1 << 20, 4096], "float32")]
    w = RunLogWriter(path, params=infos, layers=["emb"], every=100, thresholds={})
    huge = np.array([(1 << 32) + 1], np.int64)
    for step in range(130):  # a Parquet part of 100 steps and a tail of 30
        w.write_step(step, np.ones(1, np.float32), np.ones(1, np.float32), huge,
                     np.zeros(1, np.int64), None)  # fmt: skip
    run = open_run(path)
    nan = run.param_stat("nan")
    assert nan.shape == (130, 1) and (nan == (1 << 32) + 1).all()


def test_a_digest_part_whose_column_changed_type_says_so(valid_run: Path, tmp_path: Path) -> None:
    """A damaged digest part whose layer_norm no longer reads as a list column (found by a
    scan of single-byte overwrites: an AttributeError from the reader) is named, with what to
    do."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    copy = tmp_path / "copy"
    shutil.copytree(valid_run, copy)
    part = sorted((copy / "digests").iterdir())[1]
    table = pq.read_table(part)
    at = table.column_names.index("layer_norm")
    flat = pa.array(np.zeros(table.num_rows, np.float32))
    pq.write_table(table.set_column(at, "layer_norm", flat), part)
    with pytest.raises(PaddlevizError, match="damaged") as error:
        open_run(copy).layer_norm()
    assert str(part) in str(error.value)


@pytest.mark.parametrize("shift", [130, -100])  # past the log's steps; onto other steps
def test_a_digest_part_naming_steps_the_log_does_not_hold_says_so(
    valid_run: Path, tmp_path: Path, shift: int
) -> None:
    """A digest part whose step column was damaged (found by the test above: an IndexError
    from the reader) is named, with what to do; placed, its rows would land past the log or
    on other steps' rows (wrong layer norms)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    copy = tmp_path / "copy"
    shutil.copytree(valid_run, copy)
    (part,) = [p for p in (copy / "digests").iterdir() if "000000100" in p.name]
    table = pq.read_table(part)
    steps = pc.add(table.column("step"), shift).cast(table.schema.field("step").type)
    pq.write_table(table.set_column(table.schema.get_field_index("step"), "step", steps), part)
    with pytest.raises(PaddlevizError, match=f"{part.name} names steps the log's parts"):
        open_run(copy).layer_norm()
