"""The floor under a full capture's hooked backward (a script, not a test):

    cd benchmarks && PYTHONPATH=.. python hook_floor.py --model llama-10k --reps 7

One process; per repetition, in turn: a plain backward, then backwards with one post hook on
every GradNode trace(stats=True) hooks (the same nodes: grad_stats._post_hooked) that does
only: nothing (returns what it got), a ``numpy()`` copy of each initialized gradient, and the
copy plus the reads every statistics hook needs of each (dtype, shape, place). Printed: the
main thread's CPU of each backward (medians), and the walk that finds the nodes. What a hook
costs above "nothing" is Python's; "nothing" above "plain" is Paddle calling 8k Python
functions, each with its gradients wrapped as new Tensor objects.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable
from statistics import median
from typing import Any

import bench_watch as bw

from paddleviz_widget.tracer.capture.hooked_nodes import _post_hooked
from paddleviz_widget.tracer.read.walk import walk_backward_graph

Hook = Callable[[Any, Any], Any]
held: list[Any] = []  # what Paddle leaks of a hook's result, kept here (a throwaway process)


def nothing(grads: Any, _inputs: Any) -> Any:
    held.append(grads)
    return grads


def copy(grads: Any, _inputs: Any) -> Any:
    for t in grads:
        if t is not None and t._is_initialized():
            t.numpy()
    held.append(grads)
    return grads


def copy_and_read(grads: Any, _inputs: Any) -> Any:
    for t in grads:
        if t is not None and t._is_initialized():
            t.dtype, tuple(t.shape), t.place.is_cpu_place()  # noqa: B018 - the reads timed
            t.numpy()
    held.append(grads)
    return grads


HOOKS: dict[str, Hook | None] = {
    "plain": None, "nothing": nothing, "copy": copy, "copy + reads": copy_and_read,
}  # fmt: skip


def _backward(t: bw.Trainer, hook: Hook | None, walks: list[float]) -> float:
    loss = t.model(t.x).astype("float32").square().mean()
    handles = []
    if hook is not None:
        start = time.thread_time()
        nodes: list[Any] = []
        walk = walk_backward_graph([loss.grad_fn], nodes)
        walks.append(time.thread_time() - start)
        handles = [
            node._register_post_hook(hook)
            for node, walked in zip(nodes, walk.nodes)
            if _post_hooked(walked.name)
        ]
        del nodes
    return timed_backward(t, loss, handles)


def timed_backward(t: bw.Trainer, loss: Any, handles: list[Any]) -> float:
    """Thread CPU of ``loss.backward()`` with the collector off; then the hooks removed, what
    they held dropped and the optimizer's step."""
    gc.disable()
    start = time.thread_time()
    loss.backward()
    took = time.thread_time() - start
    gc.enable()
    for handle in handles:
        handle.remove()
    held.clear()
    t.opt.step()
    t.opt.clear_grad()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-10k")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    t = bw.Trainer(args.model)
    t.steps(2)
    took: dict[str, list[float]] = {k: [] for k in HOOKS}
    walks: list[float] = []
    loads = [os.getloadavg()[0]]
    for _ in range(args.reps):
        for name, hook in HOOKS.items():
            took[name].append(_backward(t, hook, walks))
        loads.append(os.getloadavg()[0])
    print(f"{args.model}, main-thread CPU per backward, medians of {args.reps} "
          f"(load {min(loads):.1f}-{max(loads):.1f}):")  # fmt: skip
    for name, values in took.items():
        each = ", ".join(f"{v * 1e3:.0f}" for v in values)
        print(f"  {name:<13} {median(values) * 1e3:7.1f} ms  ({each})")
    print(f"  {'the walk':<13} {median(walks) * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
