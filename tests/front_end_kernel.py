"""A real ipykernel driven as a front end drives it: started with the repository on its path,
and code run by an execute request that names its cell as JupyterLab's does (``cell``), or
none, as nbclient's (late_picture.widget_front_end tells them apart)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def kernel(**env: str) -> Iterator[Any]:
    """A kernel client; the kernel is shut down on leaving."""
    # The version matrix's venvs hold Paddle and the test tools, not a Jupyter kernel.
    manager = pytest.importorskip("jupyter_client.manager", reason="no Jupyter kernel here")
    km, kc = manager.start_new_kernel(
        kernel_name="python3", env={**os.environ, "PYTHONPATH": str(ROOT), **env}
    )
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def execute(kc: Any, code: str, cell: str | None) -> list[dict]:
    """The iopub messages ``code`` caused, until the kernel is idle (status and the echoed
    input left out); the execute reply must say ok."""
    content = {"code": code, "silent": False, "store_history": False, "allow_stdin": False}
    msg = kc.session.msg("execute_request", content, metadata={"cellId": cell} if cell else {})
    kc.shell_channel.send(msg)
    reply = kc.get_shell_msg(timeout=120)
    assert reply["content"]["status"] == "ok", reply["content"]
    messages = []
    while True:
        m = kc.get_iopub_msg(timeout=120)
        if m["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return messages
        if m["msg_type"] not in ("status", "execute_input"):
            messages.append(m)
