"""A watched training run whose disk fills up at a chosen step, run as a child process by
test_run_disk_full.py (inside a mount namespace with a small tmpfs, or under RLIMIT_FSIZE):
``python disk_full_run.py RUN_DIR FILL_AT EVERY STEPS`` prints one JSON line: the losses and
final parameters of the watched run and of the same run without trace(), the descriptors
open before and after the block, run.json as left, what open_run reads, and the files left.
FILL_AT -1: nothing is filled (a file-size limit set by the parent does the failing); -2:
the disk is filled before trace() starts (it prints what trace() raised)."""

from __future__ import annotations

import json
import os
import sys
import zlib  # noqa: F401  before paddle, as the README says for Paddle 2.6
from pathlib import Path

import numpy as np
import paddle
from run_models import TinyMLP, train

from paddleviz_widget import RunLogError, open_run, trace


def main(run_dir: str, fill_at: int, every: int, steps: int) -> None:
    filler = Path(run_dir).parent / "filler"

    def fill(step: int, loss: paddle.Tensor | None) -> bool:
        if step == fill_at:  # the disk's space taken by someone else, to the last block
            with open(filler, "wb", buffering=0) as f:
                try:
                    while True:
                        f.write(b"x" * 4096)
                except OSError:
                    pass
        return True

    def run(watched: bool) -> tuple[list[float], list[np.ndarray]]:
        paddle.seed(0)
        model = TinyMLP()
        opt = paddle.optimizer.SGD(1e-2, parameters=model.parameters())
        losses: list[float] = []

        def record(step: int, loss: paddle.Tensor) -> bool:
            losses.append(float(loss))
            return fill(step, loss) if watched else True

        if watched:
            with trace(model, stats=True, every=every, run_dir=run_dir):
                train(model, opt, steps, after_backward=record)
        else:
            train(model, opt, steps, after_backward=record)
        return losses, [p.numpy() for p in model.parameters()]

    plain = run(False)
    if fill_at == -2:  # full before the run starts: refused, as a dir that cannot be made
        fill(-2, None)
        try:
            run(True)
        except RunLogError as error:
            print(json.dumps({"refused": str(error), "files": sorted(
                str(p.relative_to(run_dir)) for p in Path(run_dir).rglob("*"))}))  # fmt: skip
        return
    fds_before = sorted(os.listdir("/proc/self/fd"))
    watched = run(True)
    fds_after = sorted(os.listdir("/proc/self/fd"))
    meta = json.loads((Path(run_dir) / "run.json").read_text())
    filler.unlink(missing_ok=True)
    log = open_run(run_dir)
    print(json.dumps({
        "same_losses": plain[0] == watched[0],
        "same_params": all((a == b).all() for a, b in zip(plain[1], watched[1])),
        "steps_trained": len(watched[0]),
        "fds_leaked": len(fds_after) - len(fds_before),
        "status": meta["status"],
        "error": meta.get("error"),
        "read_status": log.meta["status"],
        "steps_read": log.steps.tolist(),
        "files": sorted(str(p.relative_to(run_dir)) for p in Path(run_dir).rglob("*")),
    }))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
