"""Subprocess jobs started ahead of the tests that read them, two at a time.

A job is a few commands run in order in a directory of its own (a real process each, as the
test would run it). Most of such a process is Paddle's start-up on one core: while pytest waits
for one, the second core is idle; started together at the module's first test, the jobs run
two at a time and each test then waits only for its own. Only the jobs of the tests pytest
selected are started.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

Job = Callable[[Path], list[subprocess.CompletedProcess[str]]]


def commands(
    files: dict[str, str],
    *argvs: Sequence[str],
    dirs: Sequence[str] = (),
    env: dict | None = None,
    timeout: float = 300,
) -> Job:
    """A job: write `files` and make `dirs` in its directory, then run each argv there, in
    order."""

    def job(d: Path) -> list[subprocess.CompletedProcess[str]]:
        for name in dirs:
            (d / name).mkdir()
        for name, text in files.items():
            (d / name).write_text(text)
        return [
            subprocess.run(
                [a.replace("{d}", str(d)) for a in argv],
                cwd=d,
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
            )
            for argv in argvs
        ]

    return job


class Ahead:
    """``ahead(name)``: (the job's directory, its commands' results), once it has finished."""

    def __init__(self, root: Path, jobs: dict[str, Job], wanted: list[str]) -> None:
        self._pool = ThreadPoolExecutor(max_workers=2)  # the CI machine's 2 cores
        self._dirs = {name: root / name for name in jobs}
        self._futures: dict[str, Future] = {}
        for name in wanted:  # in the order given: the longest first
            self._dirs[name].mkdir()
            self._futures[name] = self._pool.submit(jobs[name], self._dirs[name])

    def __call__(self, name: str) -> tuple[Path, list[subprocess.CompletedProcess[str]]]:
        return self._dirs[name], self._futures[name].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def selected_jobs(request: pytest.FixtureRequest, uses: dict[str, str]) -> list[str]:
    """The jobs (values of `uses`, test name -> job) of this module's selected tests, in the
    order of `uses`."""
    names = {
        getattr(item, "originalname", item.name)
        for item in request.session.items
        if getattr(item, "module", None) is request.module
    }
    return list(dict.fromkeys(job for test, job in uses.items() if test in names))


def ahead_fixture(name: str, jobs: dict[str, Job], uses: dict[str, str], *, autouse: bool = False):
    """A module-scoped ``ahead`` fixture: the jobs of the module's selected tests (``uses``:
    test name -> job) started at its first test, in a temporary directory named ``name``."""

    @pytest.fixture(scope="module", autouse=autouse, name="ahead")
    def fixture(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
                ) -> Iterator[Ahead]:  # fmt: skip
        runs = Ahead(tmp_path_factory.mktemp(name), jobs, selected_jobs(request, uses))
        yield runs
        runs.close()

    return fixture
