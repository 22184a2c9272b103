"""A second job launched into the run dir of a job that recorded some of its ranks (the
"subset" job: --ranks 1): every rank refuses before training with the same words, naming the
other job. Before, rank 1 (whose own directory was taken) said only "rank-00001 already holds
a run log", rank 0 "holds rank logs of another job (run_id ...)"."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from launched_jobs import SCRIPT, _env, entry_point

pytestmark = pytest.mark.timeout(300)


def test_every_rank_of_a_second_job_names_the_other_job(launched, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(launched("subset").run_dir, run_dir)  # its rank-00001 alone
    done = subprocess.run(
        [sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
         "--log_dir", str(tmp_path / "log"), entry_point(), "--run-dir", str(run_dir),
         str(SCRIPT), "--scenario", "healthy", "--out", str(tmp_path / "out")],
        env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode != 0
    said = []
    for r in (0, 1):
        log = (tmp_path / "log" / f"workerlog.{r}").read_text(errors="replace")
        said += re.findall(r"^paddleviz_widget: .*$", log, re.M)
    assert len(said) == 2 and said[0] == said[1], said
    assert "holds rank logs of another job" in said[0] and "rank-00001" in said[0]
