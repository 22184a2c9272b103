"""Every source file stays under 400 lines (the project's standard: small, single-purpose
modules): the Python and TypeScript files git tracks or would track (untracked ones not
ignored included, so a new file is caught before its commit) under paddleviz_widget/, js/,
tests/ and benchmarks/. The bundles built into paddleviz_widget/static/ are generated, and
ignored anyway. A file over the limit is split along its seams, never allowed here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 400
FOLDERS = ("paddleviz_widget", "js", "tests", "benchmarks")
SUFFIXES = (".py", ".ts")
GENERATED = "paddleviz_widget/static/"


def _source_files() -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: which files are the sources is git's to say")
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *FOLDERS],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    names = {n for n in listed.split("\0") if n.endswith(SUFFIXES)}
    return sorted(n for n in names if not n.startswith(GENERATED) and (REPO / n).is_file())


def test_the_source_files_are_found() -> None:
    files = _source_files()
    assert "tests/test_file_sizes.py" in files and "js/widget.ts" in files
    assert "paddleviz_widget/widget/graph_widget.py" in files


def test_no_source_file_is_over_400_lines() -> None:
    lengths = {n: (REPO / n).read_bytes().count(b"\n") for n in _source_files()}
    over = [f"{n}: {k} lines" for n, k in sorted(lengths.items()) if k > MAX_LINES]
    assert not over, f"over {MAX_LINES} lines, split along their seams:\n" + "\n".join(over)
