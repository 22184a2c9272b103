"""The layer-scope parts of a full capture step, this tree against another revision, in ONE
process (a script, not a test):

    cd benchmarks && PYTHONPATH=.. python scope_parts_ab.py --base main --reps 8

As capture_ab.py (the other revision extracted as ``pvw_base``, the two trees' traces taking
turns, each block a fresh run: one untimed step, then --steps captured ones; each tree's first
block untimed), with timing wrappers on both trees' layer-scope parts: Recording.enter/exit
(the forward's hooks), claim_pending (claims from the backward's walk), _retire, and
LayerScopeRecorder.snapshot. Printed: main-thread CPU per captured step, medians over blocks.
Parts measured in separate processes differ by more than they do between trees on a shared
machine; here load hits both alike.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sys
import time
from statistics import median
from typing import Any

import bench_watch as bw
from bench_watch_ab import _extract

import paddleviz_widget
from paddleviz_widget.tracer.capture import layer_scopes, scope_recording

PARTS = [
    ("scope_recording", "Recording", "enter"),
    ("scope_recording", "Recording", "exit"),
    ("scope_recording", "Recording", "claim_pending"),
    ("scope_recording", "Recording", "_retire"),
    ("layer_scopes", "LayerScopeRecorder", "snapshot"),
]
spent: collections.defaultdict[tuple[str, str], float] = collections.defaultdict(float)


def _wrap(modules: dict[str, Any], tree: str) -> None:
    for module, cls, name in PARTS:
        owner = getattr(modules[module], cls)
        f = getattr(owner, name)

        def timed(*args: Any, _f: Any = f, _key: tuple[str, str] = (tree, name), **kw: Any) -> Any:
            start = time.thread_time()
            try:
                return _f(*args, **kw)
            finally:
                spent[_key] += time.thread_time() - start

        setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--model", default="llama-10k")
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(_extract(args.base)))
    import pvw_base  # type: ignore[import-not-found]
    from pvw_base.tracer.capture import layer_scopes as base_ls  # type: ignore[import-not-found]
    from pvw_base.tracer.capture import scope_recording as base_sr  # type: ignore[import-not-found]

    _wrap({"scope_recording": scope_recording, "layer_scopes": layer_scopes}, "this tree")
    _wrap({"scope_recording": base_sr, "layer_scopes": base_ls}, args.base)
    traces = {"this tree": paddleviz_widget.trace, args.base: pvw_base.trace}
    t = bw.Trainer(args.model)
    t.steps(3)
    found: collections.defaultdict[tuple[str, str], list[float]] = collections.defaultdict(list)
    for rep in range(args.reps + 1):
        order = list(traces) if rep % 2 == 0 else list(reversed(traces))
        for tree in order:
            path = t.run_dir()
            with traces[tree](t.model, stats=True, every=1, run_dir=path):  # type: ignore[operator]
                t.step()
                spent.clear()
                start = time.thread_time()
                for _ in range(args.steps):
                    t.step()
                whole = time.thread_time() - start
                parts = dict(spent)  # (not the trace's exit)
            shutil.rmtree(path, ignore_errors=True)
            if rep == 0:
                continue  # each tree's first block: imports, caches
            found[(tree, "captured step")].append(whole / args.steps)
            for (owner, part), took in parts.items():
                if owner == tree:
                    found[(tree, part)].append(took / args.steps)
    for part in ["captured step"] + [name for _, _, name in PARTS]:
        base, ours = median(found[(args.base, part)]), median(found[("this tree", part)])
        print(f"{args.model} {part:<14} {args.base} {base * 1e3:7.1f} ms, this tree "
              f"{ours * 1e3:7.1f} ms ({(ours - base) * 1e3:+.1f})")  # fmt: skip


if __name__ == "__main__":
    main()
