"""A benchmark's scratch directory, removed when the benchmark's process exits (a benchmark run
hundreds of times must not leave hundreds of folders in /tmp)."""

import atexit
import shutil
import tempfile
from pathlib import Path


def scratch_dir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, True)
    return path
