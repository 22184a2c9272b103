"""trace() where no temporary directory can be made (TMPDIR, /tmp, /var/tmp and the working
directory read-only: a locked-down container). The user's ``loss.backward()`` inside trace()
raised ``FileNotFoundError: No usable temporary directory found`` from ``tempfile`` (the dump
directory, then the file Paddle's log goes to): the widget failed the user's training step.
Now the dump is skipped and the log goes to a file in memory: the step runs, its gradients are
the plain backward's, and the graph's edges are annotated from the log.

The script makes ``tempfile`` find no directory the way it does when every candidate is
unwritable: its ``tempdir`` (what ``TMPDIR`` sets) is a path under a file, where nothing can be
made (the read-only mounts themselves need root)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from paddle_versions import HAS_DUMP

HERE = Path(__file__).parent

SCRIPT = HERE / "tmpdir_full_trace.py"  # (with test_tmpdir_full.py: the small model's run)


def _run(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--small", *args], capture_output=True, text=True,
        timeout=300, env={"PYTHONPATH": str(HERE.parent), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_traced_backward_runs_where_no_temporary_directory_can_be_made(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    said = _run(str(blocker / "tmp"))
    assert said["same_grads"]
    usual = _run()
    # the graph's sources and notice as with a temporary directory
    keys = ("same_grads", "sources", "notice")  # (the whole text: test_tmpdir_full.py)
    assert [said[k] for k in keys] == [usual[k] for k in keys]
    if HAS_DUMP:  # 3.3: every edge from the log (older Paddle: its notice says GLOG_v=6)
        assert said["sources"] == "l" * len(said["sources"]), said
