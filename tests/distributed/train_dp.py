"""A small data-parallel training run for the multi-rank tests, started by
``python -m paddle.distributed.launch`` (CPU, gloo), one scenario planted per run.

    train_dp.py --scenario S --out OUT [--api-run-dir D [--ranks all|0,1]]

Scenarios: healthy; nan (rank 2's batch holds a NaN at step NAN_STEP); branch (a layer only
rank 1 calls, DataParallel(find_unused_parameters=True)); nosync (the optimizer step of step
NOSYNC_STEP taken inside DataParallel.no_sync()); stall (no DataParallel: rank 1 waits inside
its trace() until rank 0's log is finished, so any collective of ours would hang rank 0);
disagree (each rank gives trace() its own run dir); accumulate (gradient
accumulation: each even step's forward and backward inside DataParallel.no_sync(), the
optimizer step after the odd one); accumulate_inf (the same, an Inf in rank 1's batch at
step NAN_STEP - 1, a micro-step); killed (rank 1, its steps done, is SIGKILLed inside
its trace() once OUT/kill exists, rank 0 having finished); raises (rank 1's script raises at step
RAISE_STEP, before its backward: the launcher then stops rank 0, waiting in the all-reduce);
extra (rank 1 runs one backward more after step NOSYNC_STEP, inside no_sync(), its
gradients cleared: its later steps are numbered one ahead); interrupted (the same as raises,
rank 1 sent SIGINT: a KeyboardInterrupt, whose message is empty).

With --api-run-dir the script records itself (``with trace(dp, stats=True, run_dir=...)``);
without it, it is the plain script the CLI wraps. Either way it writes its own oracle:
OUT/rank-R/grads.npz (every step's p.grad after backward, "STEP/NAME"), OUT/rank-R/final.npz
(the parameters at the end), OUT/rank-R/result.json; rank 0 writes OUT/scenario.json (what was
planted: rank, step, layer, params), for assertions on any reader of the run dir.
"""

import argparse
import contextlib
import json
import os
import signal
import time
import zlib  # noqa: F401  before paddle, as the README says for Paddle 2.6
from pathlib import Path

import numpy as np
import paddle
import paddle.distributed as dist

STEPS = 8
EVERY = 4
NAN_STEP = 5
NAN_RANK = 2
BRANCH_RANK = 1
NOSYNC_STEP = 3
RAISE_STEP = 3
RAISE_RANK = 1
COLLECTIVES = (
    "all_reduce", "all_gather", "all_gather_object", "barrier", "broadcast",
    "broadcast_object_list", "reduce", "scatter", "send", "recv", "alltoall",
)  # fmt: skip


class Net(paddle.nn.Layer):
    def __init__(self, branch):
        super().__init__()
        self.fc1 = paddle.nn.Linear(8, 16)
        self.fc2 = paddle.nn.Linear(16, 4)
        if branch:
            self.extra = paddle.nn.Linear(16, 4)  # the branch only BRANCH_RANK takes

    def forward(self, x, branch=False):
        h = paddle.nn.functional.relu(self.fc1(x))
        out = self.fc2(h)
        return out + self.extra(h) if branch else out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--api-run-dir")
    parser.add_argument("--ranks", default="all")
    args = parser.parse_args()
    counts = _count_collectives()
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    paddle.seed(1234)  # the same initial weights on every rank
    scenario = args.scenario
    net = Net(branch=scenario == "branch")
    model = net if scenario == "stall" else paddle.DataParallel(
        net, find_unused_parameters=scenario == "branch")  # fmt: skip
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    out = Path(args.out) / f"rank-{rank}"
    out.mkdir(parents=True, exist_ok=True)
    if rank == 0:
        _write_plan(Path(args.out), scenario, world, model)

    grads, losses, patched = {}, [], None
    rng = np.random.RandomState(100 + rank)  # every rank its own batches
    with _recording(args, model, rank):
        code = getattr(paddle.Tensor.backward, "__code__", None)  # trace()'s wrapper's, if on
        patched = code is not None and "paddleviz_widget" in code.co_filename
        for step in range(STEPS):
            x = rng.randn(4, 8).astype("float32")
            y = rng.randn(4, 4).astype("float32")
            if scenario == "nan" and rank == NAN_RANK and step == NAN_STEP:
                y[1, 3] = np.nan  # rank 2's loss goes NaN; the all-reduce spreads its gradient
            if scenario == "accumulate_inf" and rank == 1 and step == NAN_STEP - 1:
                y[1, 3] = np.inf  # on a micro-step inside no_sync(): rank 1's gradients alone
            inputs = (paddle.to_tensor(x),)
            if scenario == "raises" and rank == RAISE_RANK and step == RAISE_STEP:
                raise RuntimeError(f"planted failure at step {step}")
            if scenario == "interrupted" and rank == RAISE_RANK and step == RAISE_STEP:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C on this rank alone
                time.sleep(5)  # KeyboardInterrupt is raised here
            branch = scenario == "branch" and rank == BRANCH_RANK
            if scenario == "nosync" and step == NOSYNC_STEP:
                with model.no_sync():  # the bug planted: a step on unsynchronised gradients
                    loss = _step(model, inputs, y, branch, grads, step)
                    opt.step()
            elif scenario.startswith("accumulate"):  # even steps: the next backward adds them up
                with model.no_sync() if step % 2 == 0 else contextlib.nullcontext():
                    # Here, not in _step: this frame names `net` before `model`, so the CLI
                    # finds the layer inside DataParallel first (its parameters are the same)
                    loss = ((model(*inputs) - paddle.to_tensor(y)) ** 2).mean()
                    loss.backward()
                _keep_grads(model, grads, step)
                if step % 2 == 1:
                    opt.step()
            else:
                loss = _step(model, inputs, y, branch, grads, step)
                opt.step()
            if not scenario.startswith("accumulate") or step % 2 == 1:
                opt.clear_grad()
            if scenario == "extra" and rank == 1 and step == NOSYNC_STEP:
                with model.no_sync():  # one backward more on this rank (a probe), cleared
                    (model(*inputs) ** 2).mean().backward()
                opt.clear_grad()
            losses.append(float(loss))
            print(f"rank {rank} step {step} loss {float(loss):.8f}", flush=True)
            if scenario == "stall" and rank == 0 and step == 0:
                _wait_for_log(args.api_run_dir, 1, ("running", "finished"))  # both recording
            if scenario == "stall" and rank == 1 and step == 1:
                waited = _wait_for_log(args.api_run_dir, 0, ("finished",))
        if scenario == "killed" and rank == 1:  # still in its trace(): killed when told
            _wait_for_file(Path(args.out) / "kill")
            os.kill(os.getpid(), signal.SIGKILL)
    np.savez(out / "grads.npz", **grads)
    np.savez(out / "final.npz", **{n: p.numpy() for n, p in model.named_parameters()})
    result = {"rank": rank, "world_size": world, "losses": losses, "patched": patched,
              "collectives": dict(counts)}  # fmt: skip
    if scenario == "stall" and rank == 1:
        result["waited_for_rank0"] = waited
    (out / "result.json").write_text(json.dumps(result))


def _step(model, inputs, y, branch, grads, step):
    pred = model(*inputs, branch=branch)
    loss = ((pred - paddle.to_tensor(y)) ** 2).mean()
    loss.backward()
    _keep_grads(model, grads, step)
    return loss


def _keep_grads(model, grads, step):
    for name, p in model.named_parameters():
        if p.grad is not None:
            grads[f"{step}/{name}"] = p.grad.numpy()


def _recording(args, model, rank):
    if args.api_run_dir is None:
        return contextlib.nullcontext()
    from paddleviz_widget import trace

    run_dir = args.api_run_dir
    if args.scenario == "disagree":
        run_dir = os.path.join(run_dir, f"from-rank-{rank}")  # the ranks disagree about it
    ranks = args.ranks if args.ranks == "all" else [int(r) for r in args.ranks.split(",")]
    return trace(model, stats=True, every=EVERY, run_dir=run_dir, ranks=ranks)


def _count_collectives():
    """Calls of paddle.distributed's collectives from here on (DataParallel's all-reduce runs
    in C++ and is not counted: what is counted is what Python code, ours included, calls)."""
    counts = {name: 0 for name in COLLECTIVES}
    for name in COLLECTIVES:
        original = getattr(dist, name, None)
        if original is None:
            continue

        def counted(*a, _name=name, _original=original, **k):
            counts[_name] += 1
            return _original(*a, **k)

        setattr(dist, name, counted)
    return counts


def _wait_for_log(run_dir, rank, statuses, timeout=120.0):
    """The script (not trace()) waits until RANK's log has one of STATUSES: seconds waited.
    Rank 0 first waits for rank 1's log to exist (a rank slow to start would otherwise be
    rightly reported missing at rank 0's end); rank 1 then waits inside its trace() until
    rank 0's log says finished."""
    meta = Path(run_dir) / f"rank-{rank:05d}" / "run.json"
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            if json.loads(meta.read_text())["status"] in statuses:
                return time.monotonic() - start
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    return None


def _wait_for_file(path, timeout=120.0):
    start = time.monotonic()
    while not path.exists() and time.monotonic() - start < timeout:
        time.sleep(0.05)


def _write_plan(out, scenario, world, model):
    names = [n for n, _ in model.named_parameters()]
    plan = {"scenario": scenario, "world_size": world, "steps": STEPS, "every": EVERY,
            "params": names, "findings": []}  # fmt: skip
    if scenario == "nan":
        # Only rank 2's loss is NaN at that step; after the all-reduce every rank's gradients
        # of every parameter hold NaN from that step on.
        plan["findings"].append({"kind": "nonfinite", "ranks": [NAN_RANK], "step": NAN_STEP,
                                 "layer": _name(names, "fc1"), "params": names,
                                 "seen_in": "loss"})  # fmt: skip
    elif scenario == "branch":
        extra = [n for n in names if ".extra." in f".{n}"]
        # DataParallel(find_unused_parameters=True) all-reduces zeros into the branch's
        # parameters on the other ranks: their p.grad is there, synchronised; the evidence is
        # the backward graphs of the full captures (meta.unreached_params on those ranks).
        plan["findings"].append({"kind": "missing_grad", "step": 0, "layer": _name(names, "extra"),
                                 "ranks": [r for r in range(world) if r != BRANCH_RANK],
                                 "params": extra, "seen_in": "captures",
                                 "captured_steps": list(range(0, STEPS, EVERY))})  # fmt: skip
    elif scenario == "nosync":
        # Each rank's own gradients at that step (no all-reduce), every parameter's different;
        # the parameters differ across ranks from then on.
        plan["findings"].append({"kind": "unsynced", "step": NOSYNC_STEP, "layer": None,
                                 "ranks": list(range(world)), "params": names,
                                 "seen_in": "norms"})  # fmt: skip
    (out / "scenario.json").write_text(json.dumps(plan, indent=1))


def _name(names, layer):
    """The layer's path as the run log names layers (the parameter name less its last part)."""
    return next(n.rsplit(".", 1)[0] for n in names if n.rsplit(".", 1)[0].endswith(layer))


if __name__ == "__main__":
    main()
