import signal
import sys
from pathlib import Path

import pytest

# Tests import their shared model/oracle helpers as plain modules.
sys.path.insert(0, str(Path(__file__).parent))

# A suite started in the background of a non-interactive shell (`./.ci/run &`, nohup, a
# scheduler) inherits SIGINT ignored, and so would every Python the tests start: their Ctrl-C
# never becomes a KeyboardInterrupt, and the tests that send one fail for the harness's sake.
# Caught here, SIGINT reaches each child as the default (exec resets a caught signal), where
# Python installs its own handler as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The real launcher's jobs, one launch per scenario per session, for tests/distributed/ and the
# rank explorer's browser test alike.
from launched_jobs import launched  # noqa: E402, F401


@pytest.fixture(autouse=True)
def _fresh_call_stack_budget():
    """Each test traces as in a process of its own: per-op call sites are not cut off because
    earlier tests of this worker spent the process's budget (stack_budget.py). Reset after
    too, so that the next file's module fixtures start with a fresh one."""
    from paddleviz_widget.tracer.capture import stack_budget

    stack_budget.reset()
    yield
    stack_budget.reset()


try:  # scripts/test.sh runs the suite on two workers (pytest-xdist)
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pragma: no cover - the test extra has it
    pass
else:

    class _SharedFixtureScheduling(LoadScopeScheduling):
        """A test file's tests run in one worker (its module fixtures made once), and so do
        all browser tests (one JupyterLab and one Chromium) and all launched jobs' tests (one
        launch per scenario). Grouped by path: xdist's ``xdist_group`` marks do not reach
        its scheduler under pytest 9 (the node id it rewrites is no longer the one sent)."""

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            parts = path.split("/")
            if len(parts) > 2 and parts[0] == "tests" and parts[1] in ("browser", "distributed"):
                return parts[1]
            return path

    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
        return _SharedFixtureScheduling(config, log)
