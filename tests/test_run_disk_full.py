"""A disk that fills up while a watched run writes its log (bug bash round 25): the training
goes on with its results unchanged, the log stays readable up to its last complete step,
run.json says "stopped" and why, no temporary file of ours is left holding space, no
descriptor stays open, and stderr says it once, in words.

A real full disk: a 2 MB tmpfs in a mount namespace of the child process alone
(small_disk.py; skipped, saying why, where no namespace may mount one). A file-size limit
(RLIMIT_FSIZE, which Python meets as EFBIG: it ignores SIGXFSZ) needs neither."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from paddle_versions import our_lines
from small_disk import on_small_disk

HERE = Path(__file__).parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}


def _run(args: list[str], **kw) -> tuple[dict, str]:
    done = subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=600, **kw)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def _on_small_disk(tmp_path: Path, fill_at: int, every: int, steps: int) -> tuple[dict, str]:
    disk = tmp_path / "disk"
    argv = [sys.executable, str(HERE / "disk_full_run.py"), str(disk / "run"), str(fill_at),
            str(every), str(steps)]  # fmt: skip
    done = on_small_disk("2m", disk, argv, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def _said_once(err: str, words: str) -> int:
    """The one line said; the step it says the log stopped at."""
    ours = our_lines(err)
    assert len(ours) == 1, err[-3000:]
    assert words in ours[0] and "the training goes on, not logged" in ours[0], ours
    assert "Traceback" not in err and "Errno" not in ours[0], err[-3000:]
    return int(re.search(r"stopped at step (\d+):", ours[0]).group(1))


def _steps_up_to(steps: list[int], stopped: int) -> None:
    """Every step before the one the log stopped at, in order (that one too when its line
    or part was whole): none lost, none cut."""
    assert steps in (list(range(stopped)), list(range(stopped + 1))), (stopped, steps)


@pytest.mark.parametrize(
    ("fill_at", "every", "what"),
    [(20, 1, "a capture's file"), (30, 1000, "a tail line")],
)
def test_a_disk_full_mid_run_stops_the_log_cleanly_and_training_goes_on(tmp_path, fill_at,
                                                                      every, what):  # fmt: skip
    """The disk filled at step ``fill_at``: the next write of the log (``what``) fails.
    Before: run.json said "running" as long as the training went on (the explorer: "run
    running"), the capture's temporary file stayed, the tail's descriptor stayed open, and
    stderr said "OSError: [Errno 28] No space left on device"."""
    got, err = _on_small_disk(tmp_path, fill_at, every, 80)
    assert got["same_losses"] and got["same_params"] and got["steps_trained"] == 80
    stopped = _said_once(err, "the disk is full")
    assert got["status"] == "stopped" and got["read_status"] == "stopped"
    assert got["error"] == "paddleviz_widget: the disk is full (no space left on device)"
    assert fill_at < stopped < 80
    _steps_up_to(got["steps_read"], stopped)
    assert not [f for f in got["files"] if f.endswith(".tmp") or "/." in f or f[0] == "."], got
    assert got["fds_leaked"] == 0


def test_a_file_size_limit_mid_run_stops_the_log_cleanly(tmp_path):
    """``ulimit -f`` (RLIMIT_FSIZE) reached by the tail: EFBIG (Python ignores SIGXFSZ, which
    would kill it). The steps recorded are all in the log, closed "stopped", said in words."""
    limit = 20_000  # the tail reaches it at ~step 90; every part is smaller

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    run_dir = tmp_path / "run"
    got, err = _run([sys.executable, str(HERE / "disk_full_run.py"), str(run_dir), "-1", "5",
                     "150"], preexec_fn=limited)  # fmt: skip
    assert got["same_losses"] and got["same_params"] and got["steps_trained"] == 150
    stopped = _said_once(err, "a file reached the largest size allowed (ulimit -f)")
    assert got["status"] == "stopped" and "ulimit -f" in got["error"]
    assert 50 < stopped < 150
    _steps_up_to(got["steps_read"], stopped)
    assert got["fds_leaked"] == 0


def test_a_disk_full_before_the_run_refuses_it_with_the_packages_error(tmp_path):
    """Before: ``with trace(...)`` raised a bare OSError [Errno 28] from writing run.json (or,
    with a few kB left, started a log that stopped at step 0 and said "running" ever after).
    Now RunLogError (a ValueError) names the dir and the disk, as for a dir that cannot be
    made, and leaves no run.json: the dir is free for the next try."""
    got, _ = _on_small_disk(tmp_path, -2, 5, 30)
    assert got["refused"] == (f"cannot start the run log {tmp_path / 'disk' / 'run'}: the disk is "
                              "full (no space left on device): give run_dir a folder you can "
                              "write to, with space")  # fmt: skip
    top = {f for f in got["files"] if "/" not in f}
    assert top <= {"steps", "captures", "digests"}, got  # (empty folders, no file)
