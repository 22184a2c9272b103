"""`GraphWidget.from_run(job_dir, rank=1)` shows rank 1: README says `w.rank` "can be set", and
the constructor's `rank=` raised "ClosesOwnLayout.__init__() got multiple values for keyword
argument 'rank'" from inside the widget. A rank the job does not have is refused naming its
ranks. Rank logs written by the run log's own writer (tests/rank_logs.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import traitlets
from rank_logs import Plant, branchy_captures, ranked_run

from paddleviz_widget import GraphWidget


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    params, layers, docs = branchy_captures()
    path = tmp_path_factory.mktemp("ranks") / "job"
    oracle = ranked_run(path, world_size=4, plant=Plant(nan=(2, 5)), params=params,
                        layers=layers, captures=docs)  # fmt: skip
    return path, oracle


def test_the_rank_asked_for_is_shown(job):
    path, oracle = job
    w = GraphWidget.from_run(path, rank=1, step=12)
    assert (w.rank, w.step) == (1, 12)
    assert w.run["path"].endswith("rank-00001")
    np.testing.assert_allclose(np.frombuffer(w._loss, "<f8"), oracle["loss"][1])
    w.close()
    w = GraphWidget.from_run(path, rank=np.int64(3))
    assert w.rank == 3 and w.run["path"].endswith("rank-00003")
    w.close()


@pytest.mark.parametrize(("rank", "words"), [(7, r"rank 7 is not in this run: .*\[0, 1, 2, 3\]"),
                                             ("1", "rank is a rank's number")])  # fmt: skip
def test_a_rank_the_job_has_not_is_refused(job, rank, words):
    with pytest.raises(traitlets.TraitError, match=words):
        GraphWidget.from_run(job[0], rank=rank)
