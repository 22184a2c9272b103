"""A refresh of a run being written sends the page only the steps appended since
(runs/view_append.py): at 10,000 steps x 500 layers the whole run is 30 MB, and the page froze
1-2 s at every refresh taking it again. A real writer in another process (tests/run_logs.py);
the oracle for what the page ends up with is the writer's own step numbers and a widget opened
afresh on the finished run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
from paddle_versions import requires_post_hooks
from run_logs import start_writer
from wire_comm import WireComm

from paddleviz_widget import GraphWidget
from paddleviz_widget.runs import open_run
from paddleviz_widget.runs.view_append import APPEND_MESSAGE, BUFFER_TRAITS
from paddleviz_widget.runs.view_widget import RunWidget

pytestmark = requires_post_hooks  # watch mode's full captures need stats
RUN_TRAITS = {"run", *BUFFER_TRAITS}


def test_a_refresh_sends_only_the_appended_steps(tmp_path: Path) -> None:
    path = tmp_path / "live"
    proc = start_writer(path, 60, 0.1)
    try:
        for _ in range(600):
            if (path / "run.json").exists() and len(open_run(path).steps) >= 5:
                break
            assert proc.poll() is None, "the training script stopped early"
            subprocess.run(["sleep", "0.1"])
        w = GraphWidget.from_run(path, comm=WireComm())
        assert isinstance(w, RunWidget)
        old = {name: bytes(getattr(w, name)) for name in BUFFER_TRAITS}
        first = len(old["_steps"]) // 8
        assert proc.wait(timeout=120) == 0
        before = len(w.comm.published)
        assert w.refresh() is True
        sent = w.comm.published[before:]
    finally:
        proc.kill()
        proc.wait()
    # No state update carries the run's matrices (nor its description): one message does.
    for data, _ in sent:
        if data.get("method") == "update":
            keys = set(data["state"]) | {p[0] for p in data.get("buffer_paths", [])}
            assert not keys & RUN_TRAITS, keys
    customs = [(d["content"], b) for d, b in sent if d.get("method") == "custom"]
    ((message, tails),) = customs
    assert message["type"] == APPEND_MESSAGE and message["from"] == first
    assert np.frombuffer(tails[0], "<f8").tolist() == list(range(first, 60))
    # Joined onto what the page had, it is the run as a widget opened now reads it; the
    # kernel's traits hold the same (a page asking again, pvw-resend, gets it whole).
    fresh = RunWidget(path, comm=WireComm())
    for name, tail in zip(BUFFER_TRAITS, tails, strict=True):
        assert old[name] + tail == bytes(getattr(fresh, name)) == bytes(getattr(w, name)), name

    def read(run: dict) -> dict:  # but the time it was read
        return {k: v for k, v in run.items() if k != "read_at"}

    assert read(message["run"]) == read(fresh.run) == read(w.run)
    assert w.run["meta"]["status"] == "finished" and message["run"] == w.run
    assert w.refresh() is False and w.comm.published[before + len(sent) :] == []
