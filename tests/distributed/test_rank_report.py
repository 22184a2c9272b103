"""The cross-rank report (runs/ranks.py, the reading side of issue 21, written beside this
branch) on the real jobs of test_rank_capture.py: what each scenario planted (its
scenario.json) is what ``open_ranks(run_dir).report()`` finds, and a healthy job has nothing.
Written to the two engineers' contract (/work/notes/rank-contract.md); skipped until
paddleviz_widget.runs.ranks is there."""

from __future__ import annotations

import json

import numpy as np
import pytest
from paddle_versions import requires_post_hooks
from rank_files import assert_rows_match_grads, meta, script_grads

from paddleviz_widget.errors import RunLogError

ranks_api = pytest.importorskip("paddleviz_widget.runs.ranks")
pytestmark = pytest.mark.timeout(900)


def _plan(job):
    return json.loads((job.out / "scenario.json").read_text())["findings"]


def test_a_healthy_job_reports_nothing(launched):
    job = launched("healthy")
    assert ranks_api.is_ranked(job.run_dir)
    run = ranks_api.open_ranks(job.run_dir)
    assert (run.world_size, run.ranks) == (4, [0, 1, 2, 3])
    assert run.report() == []


# "branch": DataParallel(find_unused_parameters=True) all-reduces zeros into the parameters a
# rank did not use, so only the full captures' graphs show the branch (unreached.jsonl).
@pytest.mark.parametrize(
    "name", ["nan", pytest.param("branch", marks=requires_post_hooks), "nosync"]
)
def test_the_planted_finding_is_reported(launched, name):
    job = launched(name)
    (planted,) = _plan(job)
    found = [f for f in ranks_api.open_ranks(job.run_dir).report() if f.kind == planted["kind"]]
    assert found, f"{name}: no {planted['kind']} finding"
    first = found[0]
    assert (first.step, sorted(first.ranks)) == (planted["step"], planted["ranks"])
    assert set(first.params) <= set(planted["params"]) and first.params
    said = str(first)
    assert f"step {planted['step']}" in said and all(str(r) in said for r in planted["ranks"])
    if planted["kind"] == "unsynced":
        assert first.value is not None and first.value > 0


def test_ranks_left_out_by_choice_are_a_note(launched):
    run = ranks_api.open_ranks(launched("subset").run_dir)  # --ranks 1
    assert run.ranks == [1] and run.notes


def test_a_rank_whose_log_went_elsewhere_is_named(launched):
    where = launched("disagree").run_dir / "from-rank-0"  # rank 1 wrote under from-rank-1
    with pytest.raises(RunLogError, match=r"\b1\b"):  # missing: rank 1, which `ranks` (all) says
        ranks_api.open_ranks(where)


def test_a_rank_that_raised_and_the_rank_stopped_after_it_are_named(launched):
    """Rank 1's script raises at step 3; the launcher then stops rank 0, waiting in that step's
    all-reduce (its log left open). The report has no finding to make, but the notes say which
    rank stopped, by what, and that the other's process is gone: before, nothing said the job
    had died at all."""
    job = launched("raises")
    run = ranks_api.open_ranks(job.run_dir)
    assert run.ranks == [0, 1] and run.report() == []
    assert run.notes[0] == (
        "rank 1 stopped by RuntimeError: planted failure at step 3: read up to its last step"
    )
    assert run.notes[1].startswith("rank 0 ended without closing its log (the process is gone")
    assert len(run.notes) == 2
    assert [run.rank(r).steps.tolist() for r in (0, 1)] == [[0, 1, 2], [0, 1, 2]]


def test_a_rank_stopped_by_ctrl_c_is_named_by_its_exception_alone(launched):
    """Rank 1 gets SIGINT at step 3 (KeyboardInterrupt, str() empty). Before, its run.json's
    error was "KeyboardInterrupt: " and the note "stopped by KeyboardInterrupt: : read up"."""
    job = launched("interrupted")
    run = ranks_api.open_ranks(job.run_dir)
    assert meta(job.run_dir, 1)["error"] == "KeyboardInterrupt"
    assert run.notes[0] == "rank 1 stopped by KeyboardInterrupt: read up to its last step"


def test_gradient_accumulation_under_no_sync_is_not_unsynced(launched):
    """Paddle's gradient accumulation (each even step's forward and backward inside
    DataParallel.no_sync(), the optimizer step after the odd one, under the CLI, the backward
    called where the layer inside DataParallel is named first): the even
    steps' gradients are each rank's own on purpose. Before, the report called them
    "synchronised gradients differ ... (an optimizer step inside no_sync())". The planted bug
    (the "nosync" job: the optimizer step taken on such gradients) is still found, worded."""
    job = launched("accumulate")
    for r in (0, 1):
        assert_rows_match_grads(job.run_dir, job.out, r)
        assert meta(job.run_dir, r)["no_sync"] == [[0, True], [2, True], [4, True], [6, True]]
    grads = [script_grads(job.out, r) for r in (0, 1)]
    differ = {s for (s, p) in grads[0] if not np.array_equal(grads[0][(s, p)], grads[1][(s, p)])}
    assert differ == {0, 2, 4, 6}  # the oracle: the micro-steps' gradients are each rank's own
    assert ranks_api.open_ranks(job.run_dir).report() == []
    # The CLI found the layer inside DataParallel first; it watches the DataParallel, whose
    # forward names the captures' layer groups: each heatmap row (a layer) is a group of the
    # graph (before: rows "fc1", groups "_layers.fc1", so a click on one found nothing).
    log = ranks_api.open_ranks(job.run_dir).rank(0)
    for step in log.captured_steps:
        groups = {g["name"] for g in log.graph(step)["groups"]}
        assert set(log.layers) <= groups, (log.layers, sorted(groups))

    bug = launched("nosync")
    assert meta(bug.run_dir, 0)["no_sync"] == [[3, False]]
    (found,) = ranks_api.open_ranks(bug.run_dir).report()
    assert found.kind == "unsynced" and found.step == 3
    assert "no_sync() whose gradients were then stepped on or cleared" in str(found)


def test_a_rank_with_one_backward_more_is_said_ahead_not_unsynced_after(launched):
    """Rank 1 runs one backward more after step 3 (under no_sync(), cleared): from there its
    step numbers run one ahead, its steps 5-8 the same all-reduced gradients as rank 0's 4-7.
    Before, the report named both ranks and said "3 later steps differ too"."""
    run = ranks_api.open_ranks(launched("extra").run_dir)
    (found,) = run.report()
    assert (found.kind, found.step, found.ranks) == ("unsynced", 4, [1])
    assert "later step" not in str(found)
    assert "rank 1 ran 1 backward more at step 4: its steps from 5 on are" in str(found)


def test_an_inf_on_an_accumulation_micro_step_is_not_unsynced(launched):
    """Gradient accumulation under no_sync(), an Inf in rank 1's batch at micro-step 4: that
    rank went non-finite first, and its gradients were carried into step 5 as usual. Before,
    the carried check read the norm with the Inf (inf != the logged finite norm): run.json said
    [4, false] and the report "synchronised gradients differ ... stepped on or cleared"."""
    job = launched("accumulate_inf")
    assert [4, True] in meta(job.run_dir, 1)["no_sync"]
    found = ranks_api.open_ranks(job.run_dir).report()
    assert [(f.kind, f.step, f.ranks) for f in found] == [("nonfinite", 4, [1])], found


def test_a_nan_from_a_rank_not_recorded_is_not_blamed_on_a_recorded_one(launched):
    """3 ranks, only rank 0 recorded (ranks=0), the NaN in rank 2's batch at step 5: the
    all-reduce gives it to rank 0's gradients, its loss stays finite. Before, the report said
    "step 5: rank 0 went non-finite first"."""
    (found,) = ranks_api.open_ranks(launched("nan_unrecorded").run_dir).report()
    assert (found.kind, found.step) == ("nonfinite", 5)
    assert "went non-finite first" not in str(found)
    assert "ranks 1, 2, not recorded" in str(found), str(found)
