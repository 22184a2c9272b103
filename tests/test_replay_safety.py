"""Building a graph never crashes the user's process and never changes their state.

Each scenario runs in its own process (side_effect_runner.py forks one per scenario), so that
a crash inside Paddle (what a replay through a freed PyLayer graph did) fails one test instead
of killing pytest.
Scenarios: PyLayer models (a counting PyLayer whose backward calls paddle.grad itself,
``recompute`` reentrant and not, paddleformers' Llama with recompute), before and after the
user's backward(), with and without trace(). The runner checks every .grad bit for bit, the
RNG state, the flags, the PyLayer's call counter, and the next backward() against a run that
never built a graph.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from paddle_versions import requires_cpu_recompute, requires_dump, requires_paddleformers

HERE = Path(__file__).parent
MODELS = ["plain", "pylayer", "recompute", "recompute_reentrant", "llama_recompute"]
SCENARIOS = [(m, w, t) for m, w, t in itertools.product(MODELS, ["before", "after"], ["0", "1"])]
# Models this Paddle cannot run (Llama needs paddleformers; 2.6 refuses a non-reentrant
# recompute on the CPU): their scenarios are skipped with the mark's reason, not run.
MARKS = {"llama_recompute": requires_paddleformers, "recompute": requires_cpu_recompute}
RUNNABLE = [s for s in SCENARIOS if s[0] not in MARKS or not MARKS[s[0]].args[0]]


def _param(value: object, model: str) -> object:
    return pytest.param(value, marks=MARKS[model]) if model in MARKS else value


@pytest.fixture(scope="module")
def results(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str, str], subprocess.CompletedProcess[str]]:
    # One process imports Paddle once, then forks a fresh child per scenario (two at a time,
    # one per core): the imports were most of each child's time when each was its own start.
    out = tmp_path_factory.mktemp("replay_safety")
    names = [":".join(s) for s in RUNNABLE]
    subprocess.run(
        [sys.executable, str(HERE / "side_effect_runner.py"), "--each", str(out), "2", *names],
        cwd=HERE,
        timeout=600,
        check=False,
    )
    found = {}
    for scenario, name in zip(RUNNABLE, names):
        rc = out / f"{name}.rc"  # absent: the runner itself died before that child ended
        found[scenario] = subprocess.CompletedProcess(
            [name],
            int(rc.read_text()) if rc.exists() else -999,
            _read(out / f"{name}.out"),
            _read(out / f"{name}.err"),
        )
    return found


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _ok_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("OK ")]
    assert done.returncode == 0 and lines, (
        f"exit code {done.returncode}\nstdout:\n{done.stdout[-2000:]}\n"
        f"stderr:\n{done.stderr[-3000:]}"
    )
    return lines[-1]


@pytest.mark.parametrize(
    "scenario", [_param(s, s[0]) for s in SCENARIOS], ids=["-".join(s) for s in SCENARIOS]
)
def test_the_process_survives_and_its_state_is_unchanged(results, scenario):
    _ok_line(results[scenario])


@pytest.mark.parametrize(
    "model", [_param(m, m) for m in ["pylayer", "recompute_reentrant", "llama_recompute"]]
)
def test_a_pylayer_graph_is_not_replayed_and_the_notice_says_what_to_do(results, model):
    untraced = _ok_line(results[(model, "before", "0")])
    assert "PyLayer" in untraced and "with paddleviz_widget.trace(model):" in untraced
    # Forward traced, backward not run yet: the advice is to run it inside the trace.
    traced_forward = _ok_line(results[(model, "before", "1")])
    assert "inside your `with trace(...)` block" in traced_forward
    # Traced backward: Paddle's own account of it annotates every edge, nothing to say.
    assert "not replayed" not in _ok_line(results[(model, "after", "1")])


@requires_dump
def test_a_freed_graph_says_why_its_edges_are_bare(results):
    """After a plain backward() the notice names the cause (the graph was freed)."""
    line = _ok_line(results[("plain", "after", "0")])
    assert "already freed this graph" in line
