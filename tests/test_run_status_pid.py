"""A run.json whose ``pid`` is no process id (a damaged or hand-edited log): open_run raised
``OverflowError: signed integer is greater than maximum`` from ``os.kill`` for one past
2**31 - 1, and for 0 or -1 asked about the reader's own process group (or every process) and
read the run as "running" on that. A pid that cannot be a process's says nothing either way:
the status is run.json's own."""

from __future__ import annotations

import json

import paddle
import pytest

from paddleviz_widget import open_run, trace


@pytest.mark.parametrize("pid", [2**31, 2**63, 0, -1, True])
def test_a_pid_that_is_no_process_id_leaves_the_status_as_written(tmp_path, pid):
    model = paddle.nn.Linear(2, 2)
    with trace(model, run_dir=tmp_path / "run"):
        model(paddle.ones([1, 2])).sum().backward()
    meta_path = tmp_path / "run" / "run.json"
    meta = json.loads(meta_path.read_text())
    for status in ("running", "finished"):
        meta_path.write_text(json.dumps({**meta, "status": status, "pid": pid}))
        run = open_run(tmp_path / "run")
        assert run.meta["status"] == status
        assert run.steps.tolist() == [0]


def test_a_writer_gone_from_this_host_is_stopped(tmp_path):
    import subprocess
    import sys

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    model = paddle.nn.Linear(2, 2)
    with trace(model, run_dir=tmp_path / "run"):
        model(paddle.ones([1, 2])).sum().backward()
    meta_path = tmp_path / "run" / "run.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "status": "running", "pid": int(gone.stdout)}))
    assert open_run(tmp_path / "run").meta["status"] == "stopped"
