"""The least a per-step summary can cost on a model (a script, not a test)

    python benchmarks/summary_floor.py --model mlp --reps 8 --block 500

Issue 20 asks the per-step summary for <= 1.02x a plain step. This times, in blocks
alternated in one process, bench_watch's plain training step against the same step with
only what any per-step summary must do after backward, written inline with no trace(): each
parameter's ``p.grad`` and its address, one compiled pass over the gradients and the loss
(the package's own read, compiled_read.py), and one ``os.write`` of a line for the tail that
a SIGKILL must not lose. No anomaly rules, no Parquet, no session, no backward wrapper. What
this costs is a floor under the watch mode's summary on this machine; the watch mode's own
step (trace(every=10**9)) is timed in the same rotation for comparison. Then plain steps and
the floor's pieces (p.grad and addresses; + the compiled pass; + the write) take turns step by
step (the medians of each): whole blocks drift with the machine's load, turns do not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from statistics import median

import common  # noqa: F401 (import path, quiet Paddle)
from bench_watch import BUILDERS

from paddleviz_widget import trace
from paddleviz_widget.runs.grad_kernel import kernel
from paddleviz_widget.runs.summary import GradSummary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--block", type=int, default=500)
    args = parser.parse_args()
    model, x = BUILDERS[args.model]()
    import paddle

    opt = paddle.optimizer.Adam(1e-4, parameters=model.parameters())
    params = [p for p in model.parameters() if not p.stop_gradient]
    kernel()  # compiled before timing
    read = GradSummary(params).compiled_read()
    assert read is not None, "the fast extra (llvmlite) is needed"
    tmp = tempfile.mkdtemp(prefix="summary-floor-")
    fd = os.open(os.path.join(tmp, "tail.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    line = b'{"step":0,"loss":0.5,"norm":[' + b",".join([b"0.125"] * len(params)) + b"]}\n"

    def plain() -> None:
        loss = model(x).astype("float32").square().mean()
        loss.backward()
        opt.step()
        opt.clear_grad()

    def floor_of(reads: bool, writes: bool) -> object:
        def floor() -> None:
            loss = model(x).astype("float32").square().mean()
            loss.backward()
            grads = [p.grad for p in params]
            if reads:
                assert read.read(grads, loss) is not None
            else:
                assert read.addresses(grads) is not None
            if writes:
                os.write(fd, line)
            opt.step()
            opt.clear_grad()

        return floor

    floor = floor_of(True, True)

    def block(step: object) -> float:
        times = []
        for _ in range(args.block):
            start = time.perf_counter()
            step()  # type: ignore[operator]
            times.append(time.perf_counter() - start)
        return median(times)

    def watched_block() -> float:
        run_dir = os.path.join(tmp, "run")
        with trace(model, stats=True, every=10**9, run_dir=run_dir):
            plain()  # step 0: the full capture, untimed
            took = block(plain)
        shutil.rmtree(run_dir)
        return took

    def paired(other: object) -> tuple[float, float]:
        """Plain and other steps taking turns, step by step: the medians of each."""
        times: tuple[list[float], list[float]] = ([], [])
        for k in range(2 * args.block):
            start = time.perf_counter()
            (other if k % 2 else plain)()  # type: ignore[operator]
            times[k % 2].append(time.perf_counter() - start)
        return median(times[0]), median(times[1])

    # the floor's pieces, each against plain step by step: p.grad and addresses; + the
    # compiled pass; + the tail's write
    pieces = {
        "p.grad + addresses": floor_of(False, False),
        "+ the compiled pass": floor_of(True, False),
        "+ the write (the floor)": floor,
    }

    for _ in range(20):
        plain()
    rows: dict[str, list[float]] = {"plain": [], "floor": [], "watch": []}
    turns: dict[str, list[float]] = {name: [] for name in pieces}
    for _ in range(args.reps):
        rows["plain"].append(block(plain))
        rows["floor"].append(block(floor))
        rows["watch"].append(watched_block())
        for name, other in pieces.items():
            p, f = paired(other)
            turns[name].append(f / p)
    os.close(fd)
    shutil.rmtree(tmp)
    base = rows["plain"]
    print(f"{args.model}: median step per block (us), {args.block} steps a block, load "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}")  # fmt: skip
    for name, values in rows.items():
        ratios = [v / p for v, p in zip(values, base)]
        print(f"  {name:<6} {' '.join(f'{v * 1e6:6.0f}' for v in values)}   / plain: median "
              f"{median(ratios):.3f}x ({min(ratios):.3f}-{max(ratios):.3f})")  # fmt: skip
    print("  against plain, steps taking turns (one figure a repetition):")
    for name, ratios in turns.items():
        print(f"    {name:<24} {' '.join(f'{r:.3f}' for r in ratios)}   median "
              f"{median(ratios):.3f}x")  # fmt: skip


if __name__ == "__main__":
    main()
