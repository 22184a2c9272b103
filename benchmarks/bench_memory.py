"""Does a long training loop inside ``trace()`` keep memory flat?  (a script, not a test)

    python benchmarks/bench_memory.py                 # plain, trace(model), run.py: 300 steps
    python benchmarks/bench_memory.py --steps 100 --modes trace

Each mode runs in a fresh child process: ResNet-18 (paddle.vision) at 64x64, batch 8, SGD
with momentum, one ``with trace(model):`` (or ``python -m paddleviz_widget.run``) around the
whole loop. Prints the resident set size at step 50 and at the last step, the growth between
them, and what the trace session holds at the end (backward records, the GradNodes they hold
strongly, layer-scope claims).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WARM_STEP = 50
GOAL_GROWTH_MB = 30.0


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _session_counts() -> dict[str, Any]:
    """What the newest trace session holds (works on the code before and after issue 11)."""
    from paddleviz_widget.tracer.capture.session import RECENT_SESSIONS

    session = next(iter(RECENT_SESSIONS.newest_first()), None)
    if session is None:
        return {}
    records = list(session.records)
    strong = sum(len(getattr(r, "roots", ())) for r in records)
    recorder = getattr(session, "_recorder", None)
    rec = recorder._rec_ref[0] if recorder is not None else None
    return {
        "records": len(records),
        "strong_roots": strong,
        "claims": len(rec.owner) if rec is not None else None,
        "held_nodes": _held_nodes(rec) if rec is not None else None,
    }


def _held_nodes(rec: Any) -> int:
    if hasattr(rec, "alive"):  # before issue 11: every claimed node of every forward
        return len(rec.alive)
    return sum(len(f.nodes) for f in rec.forwards)


def child(steps: int, mode: str) -> None:
    import warnings

    warnings.filterwarnings("ignore")
    import paddle
    from paddle.vision.models import resnet18

    paddle.seed(0)
    model = resnet18(num_classes=10)
    opt = paddle.optimizer.Momentum(0.01, parameters=model.parameters())
    loss_fn = paddle.nn.CrossEntropyLoss()
    x = paddle.randn([8, 3, 64, 64])
    label = paddle.randint(0, 10, [8, 1])
    figures: dict[str, Any] = {"mode": mode, "steps": steps}

    if mode == "trace":
        from paddleviz_widget import trace

        ctx: Any = trace(model)
    else:  # plain, or the whole script already runs inside run.py's trace()
        ctx = contextlib.nullcontext()
    with ctx:
        for step in range(1, steps + 1):
            y = model(x)
            loss = loss_fn(y, label)
            loss.backward()
            opt.step()
            opt.clear_grad()
            if step == WARM_STEP:
                figures["rss_warm_mb"] = rss_mb()
        figures["rss_end_mb"] = rss_mb()
        if mode != "plain":
            figures["held"] = _session_counts()
    figures["growth_mb"] = figures["rss_end_mb"] - figures["rss_warm_mb"]
    print("RESULT " + json.dumps(figures), flush=True)


def run_mode(mode: str, steps: int) -> dict[str, Any]:
    here = str(Path(__file__).resolve())
    if mode == "run":
        cmd = [sys.executable, "-m", "paddleviz_widget.run", here, "--child", "run"]
    else:
        cmd = [sys.executable, here, "--child", mode]
    cmd += ["--steps", str(steps)]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[len("RESULT ") :])
            return result
    raise RuntimeError(f"{mode} failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--modes", nargs="+", default=["plain", "trace", "run"])
    parser.add_argument("--child", choices=["plain", "trace", "run"], help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.steps, options.child)
        return
    print(f"ResNet-18 at 64x64, batch 8, {options.steps} steps; RSS in MB")
    print("| mode | RSS at step 50 | RSS at the end | growth | held at the end |")
    print("| --- | --- | --- | --- | --- |")
    for mode in options.modes:
        r = run_mode(mode, options.steps)
        held = ", ".join(f"{k} {v}" for k, v in r.get("held", {}).items()) or "-"
        ok = "" if mode == "plain" else (" ok" if r["growth_mb"] < GOAL_GROWTH_MB else " OVER")
        print(
            f"| {mode} | {r['rss_warm_mb']:.0f} | {r['rss_end_mb']:.0f} | "
            f"{r['growth_mb']:+.1f}{ok} | {held} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
