"""The README's demo command starts JupyterLab on the quickstart and prints a URL that works."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
URL = re.compile(r"http://127\.0\.0\.1:\d+/lab/tree/quickstart\.ipynb\?token=[0-9a-f]+")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The demo sets up and runs the checkout's own .venv (scripts/setup.sh: Paddle 3.3, JupyterLab),
# whatever Python runs this suite: from another environment (the version matrix's) it would
# install all of that into the checkout from the network and test nothing of that Paddle.
@pytest.mark.skipif(
    Path(sys.prefix).resolve() != (ROOT / ".venv").resolve(),
    reason="the demo runs the checkout's own .venv; this suite runs in another environment",
)
def test_demo_script_serves_the_quickstart(tmp_path):
    log = tmp_path / "demo.log"
    env = {**os.environ, "PORT": str(_free_port())}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["bash", "scripts/demo.sh"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline, url = time.monotonic() + 240, None
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            found = URL.search(log.read_text(errors="replace"))
            url = found.group(0) if found else None
        assert url, f"no URL printed:\n{log.read_text(errors='replace')[-3000:]}"
        token = url.rsplit("=", 1)[1]
        api = url.split("/lab/")[0] + f"/api/contents/quickstart.ipynb?token={token}"
        for _ in range(120):  # the URL is printed just before Lab starts listening
            try:
                with urllib.request.urlopen(api, timeout=5) as response:
                    assert response.status == 200
                    assert b'"name": "quickstart.ipynb"' in response.read()
                    break
            except OSError:
                time.sleep(0.5)
        else:
            raise AssertionError(f"Lab never answered:\n{log.read_text(errors='replace')[-3000:]}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
