"""The hidden model that starts the page's explorer before the first widget
(widget/page_preload.py), in real kernels driven as JupyterLab and nbclient drive them: opened
once where the front end runs widgets (an execute request naming its cell), closed when the page
says it has the explorer, never opened elsewhere or when turned off; nothing printed. The
page's side: tests/browser/test_startup_browser.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from front_end_kernel import execute, kernel

ROOT = Path(__file__).resolve().parents[1]


def _value(kc: Any, expr: str) -> str:
    (out,) = execute(kc, f"print({expr})", None)
    return out["content"]["text"].strip()


IMPORT = "from paddleviz_widget import GraphWidget"
# The package alone (and Paddle, with its own import warnings), as a notebook's first cell
# imports it for `trace`; the package before Paddle, as Paddle 2.6 needs (README).
FIRST = "import paddleviz_widget"


def test_a_widget_front_end_gets_one_hidden_model_closed_once_the_page_has_the_explorer():
    with kernel() as kc:
        # The package's import in a cell JupyterLab runs opens it (notebook_start.py): the
        # page starts the explorer while the next cells build the model.
        messages = execute(kc, FIRST, "c0")
        assert [m["msg_type"] for m in messages] == ["comm_open", "comm_open"], messages
        layout, hidden = (m["content"] for m in messages)
        assert layout["data"]["state"]["_model_name"] == "LayoutModel"
        state = hidden["data"]["state"]
        assert state["_preload"] is True and state["_model_name"] == "AnyModel"
        assert "pvw-preloaded" in state["_esm"]  # the loader, which reports back
        assert len(state["_bundle"]) > 100_000  # the explorer the page imports
        # The widget's import, a second import (another cell, a re-run) open nothing more.
        assert execute(kc, IMPORT, "c1") == []
        assert execute(kc, f"import importlib, paddleviz_widget.widget as w; {IMPORT}", "c2") == []

        # The page's word, as the loader sends it: the kernel closes the model and its Layout.
        custom = {"method": "custom", "content": {"type": "pvw-preloaded"}}
        kc.shell_channel.send(
            kc.session.msg("comm_msg", {"comm_id": hidden["comm_id"], "data": custom})
        )
        closed = set()
        while len(closed) < 2:
            m = kc.get_iopub_msg(timeout=60)
            if m["msg_type"] == "comm_close":
                closed.add(m["content"]["comm_id"])
        assert closed == {layout["comm_id"], hidden["comm_id"]}
        assert _value(kc, "w.page_preload.preloaded.comm is None") == "True"


def test_the_widget_import_opens_it_when_the_package_came_before_it():
    # The package imported where no cell was named (a startup script, %run from a terminal
    # kernel client), the widget module in a notebook's cell later: opened then.
    with kernel() as kc:
        assert execute(kc, FIRST, None) == []
        messages = execute(kc, IMPORT, "c1")
        assert [m["msg_type"] for m in messages] == ["comm_open", "comm_open"], messages


def test_nbclient_and_the_switch_open_nothing():
    # nbclient names no cell and keeps no comm: nothing to start there.
    # The package's import there leaves the notebook stack unimported (build_graph needs none).
    with kernel() as kc:
        assert execute(kc, FIRST, None) == []
        assert _value(kc, "'anywidget' in __import__('sys').modules") == "False"
        assert execute(kc, IMPORT, None) == []
    # Turned off: JupyterLab's execute request, and still nothing.
    with kernel(PADDLEVIZ_WIDGET_PRELOAD="0") as kc:
        assert execute(kc, FIRST, "c0") == []
        assert execute(kc, IMPORT, "c1") == []


def test_a_script_opens_nothing():
    code = (
        f"{IMPORT}\nfrom paddleviz_widget.widget import page_preload\nprint(page_preload.preloaded)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=True,
    )
    assert done.stdout == "None\n"
