import sys
from pathlib import Path

# Tests import their shared model/oracle helpers as plain modules.
sys.path.insert(0, str(Path(__file__).parent))

# The real launcher's jobs, one launch per scenario per session, for tests/distributed/ and the
# rank explorer's browser test alike.
from launched_jobs import launched  # noqa: E402, F401
