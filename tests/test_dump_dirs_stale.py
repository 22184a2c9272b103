"""The ``paddleviz-dump-*`` directories a process killed during a captured backward leaves in
the temporary directory (bug bash round 25: 26 empty ones in /tmp after a day of tests) are
removed by the next process that makes one, and only those: never one a live process holds,
nor a young one an older version (which does not lock them) may be using. Real processes,
a real SIGKILL, each with its own TMPDIR."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paddle_versions import HAS_DUMP

HERE = Path(__file__).parent
pytestmark = pytest.mark.skipif(not HAS_DUMP, reason="Paddle < 3.3 writes no backward dump")


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmp),
            "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}  # fmt: skip


def _dumps(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("paddleviz-dump-*"))


def _held(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    """A child process inside its captured backward, its dump directory made; and GO."""
    tmp, inside, go = tmp_path / "tmp", tmp_path / "inside", tmp_path / "go"
    tmp.mkdir(exist_ok=True)
    child = subprocess.Popen([sys.executable, str(HERE / "dump_dir_child.py"), "hold",
                              str(inside), str(go)], env=_env(tmp),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 300
    while not inside.exists():
        assert child.poll() is None, child.communicate()[1][-3000:]
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return child, tmp, go


def _plain(tmp: Path) -> None:
    done = subprocess.run([sys.executable, str(HERE / "dump_dir_child.py"), "plain"],
                          env=_env(tmp), capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-3000:]


def _age(path: Path, hours: float = 2) -> None:
    then = time.time() - hours * 3600
    os.utime(path, (then, then))


def test_a_killed_captures_dump_dir_is_removed_by_the_next_process(tmp_path):
    child, tmp, _ = _held(tmp_path)
    [left] = _dumps(tmp)
    child.send_signal(signal.SIGKILL)
    child.communicate()
    assert left.is_dir()  # what a kill leaves: nothing removes it in the killed process
    _age(left)  # an hour past (a live owner would still hold its lock)
    _plain(tmp)
    assert _dumps(tmp) == []  # before: the killed process's stayed for good


def test_a_dump_dir_a_live_process_holds_is_never_removed(tmp_path):
    """However old: another process's sweep leaves it; its owner removes it when done."""
    child, tmp, go = _held(tmp_path)
    try:
        [held] = _dumps(tmp)
        _age(held, hours=5)
        _plain(tmp)
        assert _dumps(tmp) == [held]
    finally:
        go.touch()
        out, err = child.communicate(timeout=300)
    assert child.returncode == 0 and out.decode().strip() == "done", err.decode()[-3000:]
    assert _dumps(tmp) == []


def test_a_young_unlocked_dump_dir_is_left_alone(tmp_path):
    """An older version's directory is not locked while its backward runs: within the hour
    it is kept; another user's, a file or a link of the prefix too, whatever their age."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    young = tmp / "paddleviz-dump-young123"
    young.mkdir()
    file, link = tmp / "paddleviz-dump-afile", tmp / "paddleviz-dump-alink"
    file.write_text("x")
    target = tmp_path / "elsewhere"
    target.mkdir()
    link.symlink_to(target, target_is_directory=True)
    kept = [young, file, link]
    if os.getuid() == 0:  # another user's (only root can give one away)
        other = tmp / "paddleviz-dump-other12"
        other.mkdir()
        os.chown(other, 65534, 65534)
        _age(other)
        kept.append(other)
    for p in (file, target):
        _age(p)
    os.utime(link, (time.time() - 7200,) * 2, follow_symlinks=False)
    _plain(tmp)
    assert _dumps(tmp) == sorted(kept) and target.is_dir()
