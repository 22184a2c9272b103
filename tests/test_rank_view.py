"""The run explorer's kernel side on a multi-rank run (runs/view_widget.py, view_ranks.py,
view_page.py): rank logs written by the run log's own writer with the issue's scenarios
planted (tests/rank_logs.py); what the page is sent checked against the arrays written."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import traitlets
from rank_logs import Plant, branchy_captures, ranked_run
from test_run_view import WireComm, from_page

from paddleviz_widget import GraphWidget
from paddleviz_widget.runs.view_widget import STEP_MESSAGE, RunWidget

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def model() -> dict[str, Any]:
    params, layers, docs = branchy_captures()
    return {"params": params, "layers": layers, "captures": docs}


def _grid(oracle: dict[str, Any], layers: list[str], step: int, ranks: list[int]) -> np.ndarray:
    """The rank x layer grid as the page gets it: -1 no gradient, NaN a NaN/Inf gradient."""
    out = np.full((len(ranks), len(layers)), -1.0)
    for i, r in enumerate(ranks):
        norms = oracle["norms"][r][step].astype(np.float64)
        for j, layer in enumerate(layers):
            mine = [v for p, v in zip(oracle["params"], norms) if p.layer == layer]
            mine = [v for v in mine if not np.isnan(v)]
            if mine:
                out[i, j] = np.sqrt(sum(v * v for v in mine))
    return out


def test_opens_on_the_first_finding_and_switches_rank(tmp_path: Path, model: Any) -> None:
    oracle = ranked_run(tmp_path / "job", world_size=4, plant=Plant(nan=(2, 5)), **model)
    w = GraphWidget.from_run(tmp_path / "job")
    assert isinstance(w, RunWidget) and (w.rank, w.step) == (2, 5)
    assert w.run["path"].endswith("rank-00002") and w._rank_step == 5
    (finding,) = w._ranks["report"]
    assert (finding["kind"], finding["step"], finding["ranks"]) == ("nonfinite", 5, [2])
    grid = np.frombuffer(w._rank_norms, "<f4").reshape(4, -1)
    assert np.isnan(grid).all()  # every rank's every layer held the NaN at step 5
    # The first view opened one rank's log and read no per-parameter column but the NaN/Inf
    # counts of the finding's step (one part); the other ranks: run.json and digests only.
    assert sorted(w.ranked._logs) == [2]
    read = {c for part in w.log._parts.values() for c in part._stats}
    assert read <= {"nan", "inf"}
    w.step = 12
    grid = np.frombuffer(w._rank_norms, "<f4").reshape(4, -1)
    np.testing.assert_allclose(grid, _grid(oracle, w.run["layers"], 12, [0, 1, 2, 3]), rtol=1e-6)
    w.rank = 1
    assert w.run["path"].endswith("rank-00001") and w.step == 12
    losses = np.frombuffer(w._loss, "<f8")
    np.testing.assert_allclose(losses, oracle["loss"][1])
    with pytest.raises(traitlets.TraitError, match=r"rank 7 is not in this run: .*\[0, 1, 2, 3\]"):
        w.rank = 7


def test_refresh_shows_a_rank_that_starts_late(tmp_path: Path, model: Any) -> None:
    """Ranks 0-1 of 3 written (rank 0 still running): the page is told rank 2 has not started
    and keeps refreshing; once its directory appears, refresh() sends it (selector, grid)."""
    first = ranked_run(tmp_path / "job", world_size=3, only=[0, 1], running=(0,), **model)
    w = RunWidget(tmp_path / "job", comm=WireComm())
    assert w._ranks["ranks"] == [0, 1] and w._ranks["running"]
    assert any("rank 2 not started yet" in n for n in w._ranks["notes"])
    w.step = 12
    late = ranked_run(tmp_path / "job", world_size=3, only=[2], **model)
    assert w.refresh()
    assert w._ranks["ranks"] == [0, 1, 2] and w.step == 12 and w._rank_step == 12
    assert not any("not started" in n for n in w._ranks["notes"])
    grid = np.frombuffer(w._rank_norms, "<f4").reshape(3, -1)
    np.testing.assert_allclose(grid[2], _grid(late, w.run["layers"], 12, [2])[0], rtol=1e-6)
    w.rank = 2
    assert w.run["path"].endswith("rank-00002")
    first["writers"][0].close()
    assert w.refresh() and not w._ranks["running"]


def test_missing_gradient_graph_difference(tmp_path: Path, model: Any) -> None:
    ranked_run(tmp_path / "job", world_size=2, plant=Plant(branch_rank=1), **model)
    w = RunWidget(tmp_path / "job", comm=WireComm())
    assert (w.rank, w.step) == (0, 0)
    grid = np.frombuffer(w._rank_norms, "<f4").reshape(2, -1)
    branch = w.run["layers"].index("branch")
    assert grid[0, branch] == -1 and grid[1, branch] > 0  # no gradient on rank 0 only
    ((reply, buffers),) = from_page(w, {"type": STEP_MESSAGE, "id": 9, "diff": 0})
    assert reply["id"] == 9 and reply["captured"] and "error" not in reply, reply
    assert "rank 0 (without the gradient)" in reply["title"]
    doc = json.loads(buffers[1])
    assert doc["meta"]["diff"]["labels"] == ["rank 0 (without)", "rank 1 (with)"]
    added = {n["param"]["name"] for n in doc["nodes"] if n.get("param") and n.get("diff")}
    assert added == {"branch.weight", "branch.bias"}
    ((reply, buffers),) = from_page(w, {"type": STEP_MESSAGE, "id": 10, "diff": 5})
    assert "no graph difference" in reply["error"] and buffers == []


def test_view_command_writes_every_rank(tmp_path: Path, model: Any) -> None:
    oracle = ranked_run(tmp_path / "job", world_size=2, plant=Plant(unsynced=(1, 7)), **model)
    out = tmp_path / "run.html"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", str(tmp_path / "job"), "-o", str(out)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 ranks, 1 cross-rank finding\n" in done.stderr
    text = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="pvw-run-data">(.*?)</script>', text).group(1))
    state = json.loads(re.search(r'id="pvw-state">(.*?)</script>', text).group(1))
    assert state["_ranks"]["report"][0]["kind"] == "unsynced" and state["step"] == 7
    for r in (0, 1):
        packed = data["per_rank"][str(r)]
        summaries = np.frombuffer(gzip.decompress(base64.b64decode(packed["summaries"])), "<f4")
        norms = summaries.reshape(30, 4, -1)[:, 0]
        np.testing.assert_array_equal(norms, oracle["norms"][r])
    ((tmp_path / "job" / "rank-00001").rename(tmp_path / "kept"))
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", str(tmp_path / "job"), "-o", str(out),
         "--force"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1 and "rank 1 of world size 2 missing" in done.stderr


def test_a_prompt_shows_the_job_in_one_line(tmp_path: Path, model: Any) -> None:
    """repr() where no front end runs (a prompt, a saved notebook's text): the job, its ranks,
    the rank shown and what its log holds, not '<...RunWidget object at 0x...>'."""
    ranked_run(tmp_path / "job", world_size=3, plant=Plant(nan=(1, 5)), **model)
    w = GraphWidget.from_run(tmp_path / "job")
    line = repr(w)
    assert line.startswith(f"RunWidget: {tmp_path / 'job'}: 3 ranks, rank 1: 30 steps ("), line
    n = len(w.run["anomalies"])
    assert line.endswith(f" · {n} {'anomaly' if n == 1 else 'anomalies'}"), line
    assert w._repr_mimebundle_()[0]["text/plain"] == line


def test_the_graph_difference_of_ranks_is_structure_alone(tmp_path: Path, model: Any) -> None:
    # Rank 0's capture holds a NaN its batch made (copied from the real capture, one count
    # set): the difference says it compared dtype, shape and slot, so a NaN count is no mark
    # of it (it was: rtol=1e300 skipped norms, not the NaN/Inf counts).
    captures = {k: json.loads(json.dumps(v)) for k, v in model["captures"].items()}
    with_stats = [e for e in captures[False]["edges"] if e.get("stats")]
    with_stats[0]["stats"][4] = 3  # GradStats.FIELDS: norm, max_abs, mean_abs, zeros, nan, inf
    ranked_run(tmp_path / "job", world_size=2, plant=Plant(branch_rank=1),
               **{**model, "captures": captures})  # fmt: skip
    w = RunWidget(tmp_path / "job", comm=WireComm())
    ((reply, buffers),) = from_page(w, {"type": STEP_MESSAGE, "id": 9, "diff": 0})
    doc = json.loads(buffers[1])
    assert doc["meta"]["diff"]["compared"] == ["shape"]
    changed = [
        x for x in doc["nodes"] + doc["edges"] if (x.get("diff") or {}).get("status") == "changed"
    ]
    assert changed == []
