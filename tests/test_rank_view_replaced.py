"""A multi-rank run explorer left open while the job's run dir is written again by a new job
(the launch run again into the same path): the ranks' logs are opened when first shown and a
finished rank's digests read at each step picked, from files of the same names in the new job.
Before the fix a rank picked on the page showed the new job's log as this job's rank, and the
rank x layer panel the new job's norms, silently. Rank logs: tests/rank_logs.py (the run log's
own writer; captures from a real traced backward)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from paddle_versions import requires_post_hooks
from rank_logs import Plant, ranked_run
from test_run_view import WireComm

from paddleviz_widget.runs.view_widget import REFRESH_MESSAGE, RunWidget

pytestmark = requires_post_hooks


def from_page(w: RunWidget, state: dict[str, Any]) -> list[Any]:
    """The page sets ``state`` (a click on the rank panel, a step picked): what the kernel
    sent back as custom messages."""
    wire = w.comm
    before = len(wire.published)
    data = {"method": "update", "state": state, "buffer_paths": []}
    wire.handle_msg({"content": {"data": data}, "buffers": []})
    return [d["content"] for d, _ in wire.published[before:] if d.get("method") == "custom"]


def test_a_rank_or_step_picked_after_the_job_ran_again_is_not_the_new_jobs(
    tmp_path: Path,
) -> None:
    job = tmp_path / "job"
    ranked_run(job, plant=Plant(nan=(1, 12)))
    w = RunWidget(job, comm=WireComm())
    assert (w.rank, w.step) == (1, 12)  # opened on the NaN finding's rank and step
    shown = (bytes(w._norms), bytes(w._rank_norms), dict(w._ranks))
    shutil.rmtree(job)
    ranked_run(job, plant=Plant(nan=(2, 5)), seed=1)  # the same launch, run again

    said = from_page(w, {"rank": 2})
    assert [m["type"] for m in said] == [REFRESH_MESSAGE], said
    assert "rank-00002 now holds another run" in said[0]["error"]
    assert w.rank == 1 and bytes(w._norms) == shown[0]  # rank 1 of the job read stays shown

    said = from_page(w, {"step": 20})
    assert said and "now holds another run" in said[0]["error"], said
    assert bytes(w._rank_norms) == shown[1]  # not the new job's norms at step 20
    assert dict(w._ranks) == shown[2]


def test_a_job_dir_moved_away_is_said_when_a_rank_is_picked(tmp_path: Path) -> None:
    job = tmp_path / "job"
    ranked_run(job, plant=Plant(nan=(1, 12)))
    w = RunWidget(job, comm=WireComm())
    job.rename(tmp_path / "elsewhere")
    said = from_page(w, {"rank": 3})
    assert said and "deleted or moved" in said[0]["error"], said
    assert w.rank == 1
