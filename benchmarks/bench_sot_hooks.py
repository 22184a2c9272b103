"""What forward hooks do to SOT (paddle.jit.to_static(full_graph=False)): how many compiled
programs and eager GradNodes one training forward makes (a script, not a test)

    python benchmarks/bench_sot_hooks.py

Per model of tests/program_bug_models.py (finite variant) and SOT minimum graph size (0, and
SOT's default), four configurations, each in a fresh process (SOT keeps what it translated
per function): plain; a no-op forward post hook of the user's on every sublayer; inside
``trace(model)``; inside ``trace(model, stats=True)``. Counted on the forward's backward graph
(Dy2StGradNode = one program; eager = every other GradNode but parameter accumulation).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("plain", "user_hooks", "trace", "trace_stats")

CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[3])
import paddle
from program_bug_models import make
from paddleviz_widget import trace

name, config = sys.argv[1], sys.argv[2]
model, x = make(name, nan=False)
static = paddle.jit.to_static(model, full_graph=False)
if config == "user_hooks":
    for layer in model.sublayers():
        layer.register_forward_post_hook(lambda *args: None)
if config.startswith("trace"):
    with trace(model, stats=config == "trace_stats"):
        y = static(x)
else:
    y = static(x)
seen, todo, names = set(), [y.grad_fn], []
while todo:
    node = todo.pop()
    if node is None or node.node_ptr() in seen:
        continue
    seen.add(node.node_ptr())
    names.append(node.name())
    todo.extend(node.next_functions)
programs = names.count("Dy2StGradNode")
eager = sum(n not in ("Dy2StGradNode", "GradNodeAccumulation") for n in names)
print(json.dumps({"programs": programs, "eager": eager}))
"""


def _count(name: str, config: str, min_graph_size: str | None) -> dict[str, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GLOG_minloglevel": "2"}
    env.pop("MIN_GRAPH_SIZE", None)
    if min_graph_size is not None:
        env["MIN_GRAPH_SIZE"] = min_graph_size
    out = subprocess.run(
        [sys.executable, "-c", CHILD, name, config, str(ROOT / "tests")],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result: dict[str, int] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    print("model  MIN_GRAPH_SIZE  " + "  ".join(f"{c:>16}" for c in CONFIGS))
    for name in ("mlp", "cnn"):
        for size in ("0", None):
            cells = []
            for config in CONFIGS:
                c = _count(name, config, size)
                cells.append(f"{c['programs']} prog, {c['eager']:>2} eager")
            label = size if size is not None else "default"
            print(f"{name:<6} {label:<15} " + "  ".join(f"{c:>16}" for c in cells))


if __name__ == "__main__":
    main()
