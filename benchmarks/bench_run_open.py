"""How fast a run log opens: open_run and the run explorer's first view (steps, loss,
layer x step norms, anomalies), then the other stat matrices (a script, not a test)

    python benchmarks/bench_run_open.py                    # 10,000 steps x 1,000 parameters
    python benchmarks/bench_run_open.py --run-dir DIR      # a run log already written

The run log is made by tests/run_logs.big_run (the run log's own writer) unless given.
Figures are medians over --reps opens in this process (the files in the OS cache after the
first).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from statistics import median

import common  # noqa: F401 (import path, quiet Paddle)
from scratch import scratch_dir

from paddleviz_widget.runs.reader import open_run

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    path = Path(args.run_dir) if args.run_dir else None
    if path is None or not (path / "run.json").exists():
        sys.path.insert(0, str(HERE.parent / "tests"))
        from run_logs import big_run

        path = path or scratch_dir("bench-open-") / "run"
        big_run(path)
    opened, first, rest = [], [], []
    for _ in range(args.reps):
        start = time.perf_counter()
        run = open_run(path)
        opened.append(time.perf_counter() - start)
        _ = run.steps, run.loss, run.layer_norm(), run.problems()
        first.append(time.perf_counter() - start)
        for stat in ("norm", "max_abs", "nan", "inf"):
            run.param_stat(stat)
        rest.append(time.perf_counter() - start)
    steps, params = len(run.steps), len(run.params)
    print(f"{path}: {steps} steps x {params} parameters, run_schema {run.meta['run_schema']}")
    print(f"open_run {median(opened):.2f} s; + first view (layer_norm, loss, anomalies) "
          f"{median(first):.2f} s; + every param_stat {median(rest):.2f} s "
          f"(medians of {args.reps})")  # fmt: skip


if __name__ == "__main__":
    main()
