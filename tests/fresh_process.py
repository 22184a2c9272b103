"""A parametrized test's cases run again, in their order, in a fresh Python process: for what
SOT (``paddle.jit.to_static(full_graph=False)``) decides from what it ran before there.

SOT keeps process-wide state about the code it has seen, Paddle's own layer code (shared by
every model) included: whether a hooked sublayer's forward runs in a program of its own or
eagerly depends on the SOT runs before it in the process. After another model's SOT run (even
one without trace()), a NaN-making ``log`` ran eagerly where it ran in a program before; and
the CNN's SOT case alone, in a fresh process, runs it eagerly too (it passed after its own
test's earlier cases). Clearing SOT's Python caches (``OpcodeExecutorCache().clear()``, the
compile and infer-meta caches) does not undo it (tried). So a test whose assertions depend on
how SOT splits the model runs in a process whose history is its own cases, in their order:

    if ran_in_fresh_process(request):
        return  # the child process ran this case, after the test's earlier ones, and it passed
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

_CHILD = "PADDLEVIZ_TEST_FRESH_PROCESS"  # the test function the child process runs
_RUNS: dict[str, str] = {}  # test function -> what its child process printed (one run each)


def ran_in_fresh_process(request: pytest.FixtureRequest) -> bool:
    """True in the test's own process once this case passed in the child process (the test
    then returns); False in that child, where the case goes on to run."""
    node = request.node.nodeid
    function = node.split("[", 1)[0]  # all its cases, in their order
    if os.environ.get(_CHILD) == function:
        return False
    if function not in _RUNS:
        command = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                   "-p", "no:randomly"]  # fmt: skip
        if importlib.util.find_spec("xdist") is not None:
            command += ["-n", "0"]  # in that process (scripts/test.sh runs pytest with -n 2)
        env = {**os.environ, _CHILD: function}
        run = subprocess.run([*command, function], cwd=request.config.rootpath, env=env,
                             capture_output=True, text=True, timeout=1200)  # fmt: skip
        _RUNS[function] = f"{run.stdout}\n{run.stderr[-3000:]}"
    said = _RUNS[function]
    assert f"{node} PASSED" in said, f"{node} did not pass in a fresh process:\n{said[-12000:]}"
    return True
