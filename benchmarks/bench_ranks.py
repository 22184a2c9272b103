"""A multi-rank run in the run explorer: how long 64 ranks x 2,000 steps x 1,000 parameters
take to open (to the first view) and to switch rank (a script, not a test)

    python benchmarks/bench_ranks.py                      # writes /tmp/pvw-ranks-64 once
    python benchmarks/bench_ranks.py --run-dir DIR --ranks 64 --steps 2000 --params 1000

The run is written once by tests/rank_logs.ranked_run (the run log's own writer, one per
rank, as a launched job's ranks write it; a NaN planted in rank 37's batch at step 1234) and
reused. Figures: wall and process CPU time, medians over --reps in this process (files in the
OS cache after the first), and what was opened.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from statistics import median

import common  # noqa: F401 (import path, quiet Paddle)

HERE = Path(__file__).resolve().parent


def generate(
    path: Path, ranks: int, steps: int, params: int, only: list[int] | None = None
) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from rank_logs import Plant, ranked_run, wide_params

    infos, layers = wide_params(params)
    start = time.perf_counter()
    ranked_run(path, ranks, steps, params=infos, layers=layers, every=500,
               plant=Plant(nan=(37, 1234)), keep=False, only=only)  # fmt: skip
    print(f"wrote {path} in {time.perf_counter() - start:.0f} s")


def write_cost(params: int, steps: int = 2000) -> None:
    """What run_schema 1.2's per-step digest (runs/digest.py) adds to write_step: the digest
    alone and the whole write_step (digest included), interleaved step by step."""
    import numpy as np
    from rank_logs import wide_params
    from scratch import scratch_dir

    from paddleviz_widget.runs.digest import summarise
    from paddleviz_widget.runs.log_writer import RunLogWriter

    infos, layers = wide_params(params)
    w = RunLogWriter(scratch_dir("bench-ranks-") / "run", params=infos, layers=layers, every=100,
                     thresholds={})  # fmt: skip
    rng = np.random.default_rng(0)
    zeros = np.zeros(params)
    cost = {"digest": [0.0, 0.0], "write_step": [0.0, 0.0]}
    for step in range(steps):
        norm = rng.random(params)
        t, c = time.perf_counter(), time.process_time()
        summarise(w._groups, norm[None].astype(np.float32), zeros[None], zeros[None])
        t1, c1 = time.perf_counter(), time.process_time()
        w.write_step(step, norm, norm, zeros, zeros, 1.0)
        t2, c2 = time.perf_counter(), time.process_time()
        cost["digest"][0] += t1 - t
        cost["digest"][1] += c1 - c
        cost["write_step"][0] += t2 - t1
        cost["write_step"][1] += c2 - c1
    w.close()
    shown = "; ".join(f"{k} {v[0] / steps * 1e6:.0f} us wall ({v[1] / steps * 1e6:.0f} us CPU)"
                      for k, v in cost.items())  # fmt: skip
    print(f"per step, {params} parameters in {len(layers)} layers: {shown} "
          f"(load {os.getloadavg()[0]:.1f})")  # fmt: skip


def first_view(path: Path) -> tuple[object, object]:
    from paddleviz_widget.runs.view_widget import RunWidget

    w = RunWidget(path)
    return w, w.log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", default="/tmp/pvw-ranks-64")
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--params", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--write-cost", action="store_true", help="time the writer's digest")
    args = parser.parse_args()
    if args.write_cost:
        sys.path.insert(0, str(HERE.parent / "tests"))
        write_cost(args.params)
        return
    path = Path(args.run_dir)
    if not (path / "rank-00000" / "run.json").exists():  # two processes, half the ranks each
        import subprocess

        code = ("import sys, common, bench_ranks; from pathlib import Path; "
                "bench_ranks.generate(Path(sys.argv[1]), *map(int, sys.argv[2:5]), "
                "only=list(range(int(sys.argv[5]), int(sys.argv[2]), 2)))")  # fmt: skip
        argv = [str(path), str(args.ranks), str(args.steps), str(args.params)]
        jobs = [subprocess.Popen([sys.executable, "-c", code, *argv, str(k)], cwd=HERE)
                for k in (0, 1)]  # fmt: skip
        if any(j.wait() for j in jobs):
            sys.exit("generating the run failed")
    opened, cpu_opened, switched, cpu_switched = [], [], [], []
    for _ in range(args.reps):
        t, c = time.perf_counter(), time.process_time()
        w, _ = first_view(path)
        opened.append(time.perf_counter() - t)
        cpu_opened.append(time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        w.rank = w.ranked.ranks[-1]  # type: ignore[attr-defined]
        switched.append(time.perf_counter() - t)
        cpu_switched.append(time.process_time() - c)
    ranked = w.ranked  # type: ignore[attr-defined]
    logs = ranked._logs  # what the first view and one switch opened as whole run logs
    columns = sorted({c for log in logs.values() for p in log._parts.values() for c in p._stats})
    print(
        f"{path}: {len(ranked.ranks)} ranks x {len(w.log.steps)} steps x "  # type: ignore[attr-defined]
        f"{len(ranked.params)} parameters; {len(ranked.report())} findings"
    )
    print(f"opened as run logs: ranks {sorted(logs)}; per-parameter columns read: "
          f"{columns or 'none'}")  # fmt: skip
    print(f"open to first view {median(opened):.2f} s wall ({median(cpu_opened):.2f} s CPU; "
          f"each: {', '.join(f'{t:.2f}' for t in opened)}); rank switch "
          f"{median(switched):.2f} s wall ({median(cpu_switched):.2f} s CPU) "
          f"(medians of {args.reps}; load {os.getloadavg()[0]:.1f})")  # fmt: skip


if __name__ == "__main__":
    main()
