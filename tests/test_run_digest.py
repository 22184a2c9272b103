"""run_schema 1.2's digest parts (runs/digest.py): per-step layer norms and NaN/Inf flags, and
the cross-rank digest, written by the real RunLogWriter; checked against what the test
computes from the arrays it wrote, and read the same from the tail and from a 1.1 log (no
digest parts: computed from the per-parameter columns)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from paddleviz_widget import open_run
from paddleviz_widget.runs import format as fmt
from paddleviz_widget.runs.log_writer import RunLogWriter
from paddleviz_widget.runs.params import ParamInfo

# 7 parameters in 3 layers, a layer's parameters not all next to each other.
LAYER_OF = [0, 0, 1, 2, 1, 2, 2]
LAYERS = ["enc", "mid", "head"]


def _params() -> list[ParamInfo]:
    return [ParamInfo(f"p{i}", LAYERS[j], (3,), "float32") for i, j in enumerate(LAYER_OF)]


def _arrays(steps: int, seed: int = 0) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    out = []
    for s in range(steps):
        norm = rng.exponential(1.0, 7)
        nan, inf = np.zeros(7), np.zeros(7)
        if s % 7 == 3:
            norm[[2, 4]] = np.nan  # layer "mid" without any gradient
        if s % 5 == 1:
            norm[5] = np.nan  # one of head's three
        if s == 11:
            nan[6] = 2
        out.append((norm, nan, inf))
    return out


def _write(path: Path, arrays: list[tuple[np.ndarray, ...]], close: bool = True) -> RunLogWriter:
    w = RunLogWriter(path, params=_params(), layers=LAYERS, every=10, thresholds={})
    for s, (norm, nan, inf) in enumerate(arrays):
        w.write_step(s, norm, norm / 2, nan, inf, float(s))
    if close:
        w.close()
    return w


def _oracle_layer_norm(arrays: list[tuple[np.ndarray, ...]]) -> np.ndarray:
    out = np.full((len(arrays), 3), np.nan)
    for s, (norm, _, _) in enumerate(arrays):
        n32 = norm.astype(np.float32).astype(np.float64)
        for j in range(3):
            mine = [n32[i] for i in range(7) if LAYER_OF[i] == j and not np.isnan(n32[i])]
            if mine:
                out[s, j] = np.sqrt(sum(v * v for v in mine))
    return out


def test_digest_parts_hold_layer_norms_flags_and_missing_bits(tmp_path):
    arrays = _arrays(230)  # step 0's part, then 1-99, 100-199 and a last short one
    writer = _write(tmp_path / "run", arrays, close=False)
    assert json.loads((tmp_path / "run" / fmt.META).read_text())["run_schema"] == fmt.RUN_SCHEMA
    digests = sorted((tmp_path / "run" / fmt.DIGESTS).glob("digest-*.parquet"))
    assert [p.name[len("digest-") :] for p in digests] == [
        p.name[len("part-") :] for p in sorted((tmp_path / "run" / fmt.STEPS).glob("part-*"))
    ]
    assert [pq.read_table(p).num_rows for p in digests] == [1, fmt.FLUSH_EVERY - 1, fmt.FLUSH_EVERY]
    writer.close()  # the parts joined into one file, a row group per flush_every steps
    assert [p.name for p in (tmp_path / "run" / fmt.DIGESTS).iterdir()] == [fmt.DIGEST_ALL]
    whole = pq.ParquetFile(tmp_path / "run" / fmt.DIGESTS / fmt.DIGEST_ALL)
    assert [whole.metadata.row_group(i).num_rows for i in range(3)] == [100, 100, 30]
    run = open_run(tmp_path / "run")
    np.testing.assert_allclose(run.layer_norm(), _oracle_layer_norm(arrays), rtol=1e-6)
    d = run.digests()
    absent = np.array([np.isnan(a[0]) for a in arrays])
    bad = np.array([a[1] + a[2] > 0 for a in arrays])
    assert (d["missing"] == absent.sum(1)).all() and (d["nonfinite"] == bad.sum(1)).all()
    assert (np.unpackbits(d["missing_bits"], axis=1)[:, :7] == absent).all()
    assert run.layer_bad()[11].tolist() == [False, False, True]
    assert run.layer_bad().sum() == 1
    # Only the step and loss columns of the parts were read for all that.
    assert all(not part._stats for part in run._parts.values())


def test_equal_arrays_equal_digests_one_ulp_differs(tmp_path):
    arrays = _arrays(40)
    _write(tmp_path / "a", arrays)
    changed = [tuple(x.copy() for x in a) for a in arrays]
    norm = changed[17][0]
    norm[0] = np.nextafter(np.float32(norm[0]), np.float32(np.inf))
    _write(tmp_path / "b", changed)
    _write(tmp_path / "c", arrays)
    a, b, c = (open_run(tmp_path / k).digests()["digest"] for k in "abc")
    assert (a == c).all()
    assert np.flatnonzero(a != b).tolist() == [17]
    assert len(set(a.tolist())) == len(a)  # steps differ from each other too


def test_tail_and_old_logs_read_the_same_digests(tmp_path):
    arrays = _arrays(150)
    _write(tmp_path / "whole", arrays)
    writer = _write(tmp_path / "running", arrays, close=False)  # 100 in a part, 50 in the tail
    old = tmp_path / "old"
    shutil.copytree(tmp_path / "whole", old)
    shutil.rmtree(old / fmt.DIGESTS)  # as a 1.1 writer left it
    meta = json.loads((old / fmt.META).read_text())
    (old / fmt.META).write_text(json.dumps({**meta, "run_schema": "1.1"}))
    want = open_run(tmp_path / "whole").digests()
    for path in (tmp_path / "running", old):
        got = open_run(path).digests()
        for key, value in want.items():
            np.testing.assert_array_equal(got[key], value, err_msg=f"{path.name}: {key}")
    writer.close()


def test_param_row_reads_one_step(tmp_path):
    arrays = _arrays(150)
    writer = _write(tmp_path / "run", arrays, close=False)
    run = open_run(tmp_path / "run")
    for step in (3, 120):  # in a part, in the tail
        want = arrays[step][0].astype(np.float32)
        np.testing.assert_array_equal(run.param_row("norm", step), want)
    assert sum(bool(p._stats) for p in run._parts.values()) == 1
    writer.close()


def test_part_digests_equal_each_step_summarised_alone(tmp_path):
    """The writer summarises a part's steps together; each row has the bits it gets alone
    (as the writer computed it step by step before), absent and NaN steps mixed in."""
    from paddleviz_widget.runs.digest import LayerGroups, summarise

    arrays = _arrays(100)
    _write(tmp_path / "run", arrays)
    got = open_run(tmp_path / "run").digests()
    groups = LayerGroups(np.array(LAYER_OF), 3)
    for s, (norm, nan, inf) in enumerate(arrays):
        alone = summarise(groups, norm.astype(np.float32)[None], nan[None], inf[None])
        for key, value in alone.items():
            np.testing.assert_array_equal(got[key][s], value[0], err_msg=f"step {s}: {key}")
