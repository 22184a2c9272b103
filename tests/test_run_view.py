"""The run explorer's kernel side (paddleviz_widget/runs/view_*.py) on a real watched run: a
LeNet trained 400 steps inside trace(model, stats=True, every=100, run_dir=...), a NaN batch at
step 137 (tests/run_logs.py). What the page is sent (binary buffers, the step replies through
the widget's comm, the saved page's embedded data) is checked against the gradients read from
``.grad`` with NumPy during the run, not against the run log's reader."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paddle_versions import requires_post_hooks
from run_logs import NAN_STEP, start_writer, watched_training
from wire_comm import WireComm

from paddleviz_widget import GraphWidget
from paddleviz_widget.runs import open_run
from paddleviz_widget.runs.view_data import run_buffers
from paddleviz_widget.runs.view_page import run_html
from paddleviz_widget.runs.view_widget import REFRESH_MESSAGE, STEP_MESSAGE, RunWidget
from paddleviz_widget.widget.resend import RESEND

pytestmark = requires_post_hooks  # watch mode's full captures need stats
REPO = Path(__file__).resolve().parents[1]
ORACLE_STEPS = (0, 250, 399)
STEPS = 400


def from_page(w: RunWidget, content: Any) -> list[tuple[Any, list[bytes]]]:
    wire = w.comm
    before = len(wire.published)
    wire.handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})
    return [(d["content"], b) for d, b in wire.published[before:] if d.get("method") == "custom"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("runs") / "exp1"
    oracle = watched_training(path, STEPS, oracle_steps=ORACLE_STEPS)
    return path, oracle


def layer_norms(grads: dict[str, list[float]], layers: list[str], params: list[Any]) -> np.ndarray:
    """Each layer's L2 norm over its parameters' gradients, from the oracle."""
    out = np.zeros(len(layers))
    for p in params:
        out[layers.index(p.layer)] += grads[p.name][0] ** 2
    return np.sqrt(out)


def test_the_buffers_hold_the_run_as_trained(run: tuple[Path, dict[str, Any]]) -> None:
    path, oracle = run
    log = open_run(path)
    buffers = run_buffers(log)
    steps = np.frombuffer(buffers["steps"], "<f8")
    assert steps.tolist() == list(range(STEPS))
    S, L = STEPS, len(log.layers)
    norms = np.frombuffer(buffers["norms"], "<f4").reshape(S, L)
    bad = np.frombuffer(buffers["bad"], np.uint8).reshape(S, L)
    assert np.frombuffer(buffers["loss"], "<f8").shape == (S,)
    for step in ORACLE_STEPS:
        want = layer_norms(oracle["grads"][str(step)], log.layers, log.params)
        np.testing.assert_allclose(norms[step], want, rtol=1e-5)
        assert not bad[step].any()
    # The NaN batch: exactly the layers whose .grad held NaN are flagged, that step only.
    nan_grads = oracle["grads"][str(NAN_STEP)]
    flagged = {p.layer for p in log.params if nan_grads[p.name][2] > 0}
    assert flagged, "the NaN batch should reach some gradients"
    assert {log.layers[j] for j in np.flatnonzero(bad[NAN_STEP])} == flagged
    assert bad.sum(axis=1).nonzero()[0].tolist() == [NAN_STEP]
    assert (norms >= 0).all()  # every layer had a gradient every step: no -1 cells


def test_a_step_request_gets_its_summary_and_a_captured_one_its_graph(
    run: tuple[Path, dict[str, Any]],
) -> None:
    path, oracle = run
    w = RunWidget(path, comm=WireComm())
    assert w.run["captured"] == [0, 100, 138, 200, 300] and w.run["steps"] == STEPS
    names = [p["name"] for p in w.run["params"]]

    ((reply, buffers),) = from_page(w, {"type": STEP_MESSAGE, "id": 3, "step": 250})
    assert (reply["id"], reply["step"], reply["captured"]) == (3, 250, False) and len(buffers) == 1
    summary = np.frombuffer(buffers[0], "<f4").reshape(4, len(names))
    want = np.array([oracle["grads"]["250"][n] for n in names]).T
    np.testing.assert_allclose(summary, want, rtol=1e-5, atol=1e-12)

    ((reply, buffers),) = from_page(w, {"type": STEP_MESSAGE, "id": 4, "step": NAN_STEP})
    counts = np.frombuffer(buffers[0], "<f4").reshape(4, len(names))[2]
    assert counts.tolist() == [oracle["grads"][str(NAN_STEP)][n][2] for n in names]

    ((reply, buffers),) = from_page(w, {"type": STEP_MESSAGE, "id": 5, "step": 138})
    assert reply["captured"] and len(buffers) == 2 and "error" not in reply
    graph = json.loads(buffers[1])
    params = {n["param"]["name"] for n in graph["nodes"] if n.get("param")}
    assert params == set(names)
    assert reply["layer_rows"]["rows"], "the captured step's Layers tab comes with it"

    ((reply, buffers),) = from_page(w, {"type": STEP_MESSAGE, "id": 6, "step": 5000})
    assert buffers == [] and "step 5000 is not recorded" in reply["error"]
    assert "0..399" in reply["error"] and str(path) in reply["error"]


def test_from_run_and_a_refresh_of_a_run_still_being_written(tmp_path: Path) -> None:
    # A writer in another process, still going: the widget shows what it has, refresh() reads
    # on, and the page's Refresh message does the same.
    path = tmp_path / "live"
    proc = start_writer(path, 60, 0.1)
    try:
        for _ in range(600):
            if (path / "run.json").exists() and len(open_run(path).steps) >= 5:
                break
            proc.poll()
            assert proc.returncode is None, "the training script stopped early"
            subprocess.run(["sleep", "0.1"])
        w = GraphWidget.from_run(path, comm=WireComm())
        assert isinstance(w, RunWidget) and w.run["meta"]["status"] == "running"
        first = len(np.frombuffer(w._steps, "<f8"))
        assert proc.wait(timeout=120) == 0
        assert w.refresh() is True
        steps = np.frombuffer(w._steps, "<f8")
        assert len(steps) == 60 > first and steps.tolist() == list(range(60))
        assert w.run["meta"]["status"] == "finished" and w.run["steps"] == 60
        assert w.refresh() is False  # nothing new
        assert from_page(w, {"type": REFRESH_MESSAGE}) == []  # no error to say
    finally:
        proc.kill()
        proc.wait()


def test_the_saved_page_holds_every_step_and_the_captured_graphs(
    run: tuple[Path, dict[str, Any]],
    tmp_path: Path,
) -> None:
    path, oracle = run
    out = tmp_path / "run.html"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", str(path), "-o", str(out)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = r"wrote .*run\.html \([\d.]+ MB\): 400 steps, 5 full captures, 1 problem$"  # the NaN
    assert re.search(said, done.stderr, re.M), done.stderr
    text = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="pvw-run-data">(.*?)</script>', text).group(1))
    unpack = lambda k: gzip.decompress(base64.b64decode(data[k]))  # noqa: E731
    log = open_run(path)
    names = [p.name for p in log.params]
    summaries = np.frombuffer(unpack("summaries"), "<f4").reshape(STEPS, 4, len(names))
    for step in ORACLE_STEPS:
        want = np.array([oracle["grads"][str(step)][n] for n in names]).T
        np.testing.assert_allclose(summaries[step], want, rtol=1e-5, atol=1e-12)
    assert unpack("norms") == run_buffers(log)["norms"]
    graphs = json.loads(re.search(r'id="pvw-run-graphs">(.*?)</script>', text).group(1))
    assert sorted(graphs, key=int) == ["0", "100", "138", "200", "300"]
    # State, data, graphs, bundle, boot: no other element, however the names run.
    assert len(re.findall(r"<script\b", run_html(log))) == 5


@pytest.mark.parametrize(
    ("args", "status", "said"),
    [
        (["no/such/run", "-o", "x.html"], 1, r"no run log at no/such/run: the directory"),
        # A bad -o is a bad argument (status 2, as in the graph mode), said before the run is read.
        (["RUN", "-o", "x.txt"], 2, r"saved as an HTML page: name it \*\.html, not 'x\.txt'"),
    ],
)
def test_the_view_command_names_what_is_wrong(
    run: tuple[Path, dict[str, Any]], tmp_path: Path, args: list[str], status: int, said: str
) -> None:
    args = [str(run[0]) if a == "RUN" else a for a in args]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "view", *args],
        env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == status and re.search(said, done.stderr), done.stderr
    assert not list(tmp_path.iterdir())


def test_the_view_command_replaces_a_page_only_with_force(
    run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """The graph mode's rule (cli/main.py): an existing -o file is kept and said, before any
    work; --force replaces it. `view` replaced it silently."""
    out = tmp_path / "run.html"
    out.write_text("my notes")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    view = [sys.executable, "-m", "paddleviz_widget", "view", str(run[0]), "-o", str(out)]
    kept = subprocess.run(view, env=env, capture_output=True, text=True, timeout=300)
    assert kept.returncode == 2 and out.read_text() == "my notes"
    assert f"{out} exists: pass --force to replace it, or another -o" in kept.stderr
    forced = subprocess.run([*view, "--force"], env=env, capture_output=True, text=True)
    assert forced.returncode == 0 and "pvw-run-data" in out.read_text(encoding="utf-8")


def test_a_resend_sends_the_run_as_it_is_now(run: tuple[Path, dict[str, Any]]) -> None:
    # The page missed the kernel's messages (anywidget's 2 s, js/anywidget_deadline.ts).
    w = RunWidget(run[0], comm=WireComm())
    w.step = 250
    wire = w.comm
    before = len(wire.published)
    wire.handle_msg({"content": {"data": {"method": "custom", "content": {"type": RESEND}}},
                     "buffers": []})  # fmt: skip
    ((update, buffers),) = wire.published[before:]
    keys = set(update["state"]) | {p[0] for p in update["buffer_paths"]}
    assert keys == set(w.keys) - {"_esm", "_css", "_bundle", "_anywidget_id"}
    assert update["state"]["step"] == 250 and update["state"]["run"] == w.run
