"""A rank SIGKILLed while its job is read (train_dp.py's "killed": rank 0 finished, rank 1
still inside its trace() and killed then): a reader opened before the kill, showing rank 0
as the explorer does, says on refresh() that rank 1 is gone, not "still being written", and
stops being live (the explorer's page stops refreshing on it)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from launched_jobs import SCRIPT, _env

from paddleviz_widget.runs.ranks import open_ranks

pytestmark = pytest.mark.timeout(300)


def _status(run_dir, rank):
    try:
        return json.loads((run_dir / f"rank-{rank:05d}" / "run.json").read_text())["status"]
    except (OSError, ValueError, KeyError):
        return None


def test_a_rank_killed_after_the_reader_opened_is_said_gone(tmp_path):
    out, run_dir = tmp_path / "out", tmp_path / "run"
    job = subprocess.Popen(
        [sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
         "--log_dir", str(tmp_path / "log"), str(SCRIPT), "--scenario", "killed",
         "--out", str(out), "--api-run-dir", str(run_dir)],
        env=_env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 200
        while (_status(run_dir, 0), _status(run_dir, 1)) != ("finished", "running"):
            assert job.poll() is None and time.monotonic() < deadline, "the job ended early"
            time.sleep(0.1)
        run = open_ranks(run_dir)
        run.rank(0)  # the rank the explorer shows
        assert run.live and any("rank 1 still being written" in n for n in run.notes)
        (out / "kill").touch()  # rank 1 kills itself (SIGKILL)
        job.wait(timeout=120)
    finally:
        job.kill()
    assert _status(run_dir, 1) == "running"  # its run.json was never closed
    assert run.refresh()  # something changed: rank 1's process is gone
    assert not run.live
    assert any("rank 1 ended without closing its log" in n for n in run.notes), run.notes
    assert not any("still being written" in n for n in run.notes), run.notes
