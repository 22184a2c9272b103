"""Start and stop a throw-away JupyterLab (or Notebook 7) server for the browser tests.

The server is isolated from the user's Jupyter setup (own config, data, runtime, settings and
workspace dirs) and never reaches the internet (no news feed, no update check).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

# Plugins that would show a popup or talk to the internet; none of them is under test.
DISABLED_PLUGINS = (
    "@jupyterlab/apputils-extension:announcements",
    "@jupyterlab/extensionmanager-extension:plugin",
)

# Guards against a leak if pytest itself is killed (teardown never runs): the server culls
# idle kernels and then stops itself. Far longer than any test run.
LEAK_GUARD_SECONDS = 900


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


# The front ends a test can start: the module `python -m` runs, and its app's config section.
APP_CONFIG_SECTION = {"jupyterlab": "LabApp", "notebook": "JupyterNotebookApp"}


def _server_config(app: str) -> dict:
    config = {
        "ServerApp": {
            "ip": "127.0.0.1",
            "open_browser": False,
            "port_retries": 0,  # fail loudly instead of silently moving to another port
            "shutdown_no_activity_timeout": LEAK_GUARD_SECONDS,
            "allow_root": os.geteuid() == 0,  # CI containers often run as root
        },
        "LabApp": {  # read by JupyterLab only; Notebook 7 gets its section below
            "news_url": None,  # None turns off the announcements feed (and its popup)
            "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
            "extension_manager": "readonly",  # the default one queries PyPI
            "expose_app_in_browser": True,  # window.jupyterapp, to run commands reliably
        },
        "MappingKernelManager": {
            "cull_idle_timeout": LEAK_GUARD_SECONDS,
            "cull_connected": True,
            "cull_interval": 60,
        },
    }
    if app != "jupyterlab":
        config[APP_CONFIG_SECTION[app]] = {"expose_app_in_browser": True}
    return config


@dataclass
class LabServer:
    """A running JupyterLab (or Notebook 7) server; `root` is its (temporary) root_dir."""

    root: Path
    port: int
    token: str = field(repr=False)
    process: subprocess.Popen
    log_path: Path
    app: str = "jupyterlab"
    _kernel_pids: set[int] = field(default_factory=set)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}/{path.lstrip('/')}{sep}token={self.token}"

    def notebook_path(self, name: str) -> str:
        """The page that opens notebook `name` in this server's front end."""
        if self.app == "notebook":
            return f"notebooks/{name}"
        # ?reset: start from an empty workspace, not the layout the previous test left.
        return f"lab/tree/{name}?reset"

    def api(self, method: str, path: str, timeout: float = 10) -> object:
        req = urllib.request.Request(
            f"{self.base_url}{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
            data=b"" if method in ("POST", "PATCH", "PUT") else None,
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "<no server log>"
        return "\n".join(text.splitlines()[-lines:])

    def remember_kernels(self) -> None:
        # Kernels run in their own session (jupyter_client uses setsid), so killing the
        # server's process group would miss them: keep their pids for the final sweep.
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.process.pid).children(recursive=True):
                self._kernel_pids.add(child.pid)

    def shutdown_sessions(self) -> None:
        """Delete every session (which shuts its kernel down), so tests start clean."""
        self.remember_kernels()
        sessions = self.api("GET", "/api/sessions")
        assert isinstance(sessions, list)
        for session in sessions:
            self.api("DELETE", f"/api/sessions/{session['id']}", timeout=30)

    def stop(self) -> None:
        self.remember_kernels()
        if self.process.poll() is None:
            with contextlib.suppress(OSError, urllib.error.URLError):
                self.api("POST", "/api/shutdown", timeout=30)  # also shuts kernels down
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        _kill_leftovers(self._kernel_pids)


def _kill_leftovers(pids: set[int]) -> None:
    procs = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            procs.append(psutil.Process(pid))
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(procs, timeout=10)


def check_jupyterlab_installed(app: str = "jupyterlab") -> None:
    if importlib.util.find_spec(app) is None:
        raise RuntimeError(
            f"{app} is not installed in {sys.executable}; the browser tests need it "
            "(pip install -e '.[test]')."
        )


def start_lab(
    workdir: Path, notebooks: Path, timeout: float = 90, app: str = "jupyterlab"
) -> LabServer:
    """Start JupyterLab (app="notebook": Notebook 7) on a free loopback port serving a copy
    of `notebooks`."""
    check_jupyterlab_installed(app)
    root = workdir / "root"
    shutil.copytree(notebooks, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    home = workdir / "home"
    config_dir = home / "config"
    _write_json(config_dir / "jupyter_server_config.json", _server_config(app))
    _write_json(
        config_dir / "labconfig" / "page_config.json",
        {"disabledExtensions": dict.fromkeys(DISABLED_PLUGINS, True)},
    )
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config_dir),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONUNBUFFERED": "1",
    }
    # Only the isolated config dir: no user/system config may change the server's behaviour.
    env.pop("JUPYTER_CONFIG_PATH", None)
    port, token = free_port(), secrets.token_hex(24)
    cmd = [
        sys.executable, "-m", app, "--no-browser",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
    ]  # fmt: skip
    log_path = workdir / "jupyterlab.log"
    with open(log_path, "wb") as log:
        # Own process group, so a stuck server can be killed with everything it spawned.
        process = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = LabServer(root, port, token, process, log_path, app)
    try:
        _wait_until_up(server, timeout)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_up(server: LabServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"JupyterLab exited with code {server.process.returncode}:\n{server.log_tail()}"
            )
        with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
            server.api("GET", "/api/status", timeout=2)
            return
        time.sleep(0.25)
    raise RuntimeError(
        f"JupyterLab did not answer /api/status within {timeout:.0f}s:\n{server.log_tail()}"
    )
