"""What hooking fewer GradNodes would save in a captured backward (a script, not a test):

    cd benchmarks && PYTHONPATH=.. python hook_cover.py --model llama-10k --reps 9

The gradient on edge A -> B reaches A's post hook (what A sends) and, when that edge is the
only one into B, B's post hook too (what B received). So every edge is seen when, per edge,
A is hooked or B is hooked and has that one incoming edge. Printed: the smallest such set
(a forest's vertex cover: exact), and, alternated in one process, the main thread's CPU of a
plain backward and of backwards whose hooks do only the reads every statistics hook needs
(dtype, shape, place, a ``numpy()`` copy) of each gradient, on every hookable node against on
the cover (a receiver there reads its received gradient too). First, which node types' grad
kernels run in place on their received gradient when no hook holds it (the receiver then
reads its own result: those cannot stand in for their sender; a second cover leaves them
out); last, whether the receiver's reading is the sender's, bit for bit, with a user tensor
hook or retain_grads in between. Timing only: nothing here is a statistics capture.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from statistics import median
from typing import Any

import bench_watch as bw
import numpy as np
from hook_floor import held, timed_backward

from paddleviz_widget.tracer.capture.hooked_nodes import _post_hooked
from paddleviz_widget.tracer.read.walk import WalkResult, walk_backward_graph


def cover(walk: WalkResult, unread: frozenset[str] = frozenset()) -> tuple[set[int], set[int]]:
    """(the hooked nodes, those of them that must read what they received), by node index;
    ``unread``: names of nodes whose received gradient is not the sender's (never readers).
    A sender must be hooked if one of its edges goes to a node that cannot be hooked or has
    other incoming edges; the other edges form a forest (each target has one parent, found
    after it in breadth-first order), whose smallest vertex cover a pass up then down finds."""
    n = len(walk.nodes)
    hookable = [_post_hooked(w.name) for w in walk.nodes]
    indeg, parent = [0] * n, [-1] * n
    children: list[list[int]] = [[] for _ in range(n)]
    for _, target, _ in walk.edges:
        indeg[target] += 1
    for source, target, _ in walk.edges:
        readable = walk.nodes[target].name not in unread
        if hookable[source] and hookable[target] and indeg[target] == 1 and readable:
            children[source].append(target)
            parent[target] = source
    forced = _forced(walk, hookable, children)
    big = n + 1
    inc, exc = [0] * n, [0] * n  # the subtree's cover size with the node hooked / not
    for i in reversed(range(n)):
        inc[i] = 1 + sum(min(inc[t], exc[t]) for t in children[i])
        exc[i] = big if forced[i] else sum(inc[t] for t in children[i])
    hooked: set[int] = set()
    for i in range(n):  # parents before children
        if not hookable[i]:
            continue
        p = parent[i]  # a child whose parent is not hooked must be
        if (p >= 0 and p not in hooked) or inc[i] <= exc[i]:
            hooked.add(i)
    reading = {t for t in hooked if parent[t] >= 0 and parent[t] not in hooked}
    for source, target, _ in walk.edges:  # every edge a hookable node sends is seen
        assert not hookable[source] or source in hooked or target in reading
    return hooked, reading


def _forced(walk: WalkResult, hookable: list[bool], children: list[list[int]]) -> list[bool]:
    sends = [0] * len(walk.nodes)
    for source, _, _ in walk.edges:
        sends[source] += 1
    return [h and len(c) < k for h, c, k in zip(hookable, children, sends)]


# Ops (llama-10k's node types and a few common ones) probed by in_place().
PROBES: dict[str, Callable[[Any], Any]] = {
    "tanh": lambda t: t.tanh(), "exp": lambda t: t.exp(), "pow": lambda t: t.pow(2),
    "rsqrt": lambda t: (t.abs() + 1).rsqrt(), "square": lambda t: t.square(),
    "reshape": lambda t: t.reshape([4, 3]),
    "scale": lambda t: t * 2.0, "mean": lambda t: t.mean(-1), "transpose": lambda t: t.t(),
    "slice": lambda t: t[:, 1:], "matmul": lambda t: t @ t.t(), "add": lambda t: t + t.exp(),
    "divide": lambda t: t / 3.0, "multiply": lambda t: t * t.exp(),
}  # fmt: skip


def in_place() -> frozenset[str]:
    """Names of the probed nodes B whose post hook's received gradient is not what its one
    sender sent when that sender is not hooked (B's grad kernel ran in place on it): B alone
    hooked in exp(B(3x)).sum(), its received gradient against paddle.grad's of B's output."""
    import paddle
    import paddle.nn.functional as F

    probes = dict(PROBES, silu=F.silu, sigmoid=F.sigmoid, relu=F.relu,
                  softmax=lambda t: F.softmax(t, -1))  # fmt: skip
    found = set()
    for f in probes.values():
        x = paddle.randn([3, 4])
        x.stop_gradient = False
        y = f(x * 3.0)
        (oracle,) = paddle.grad(paddle.exp(y).sum(), [y], retain_graph=True)
        loss = paddle.exp(y).sum()
        receiver = loss.grad_fn.next_functions[0].next_functions[0]
        seen: list[np.ndarray] = []

        def hook(grads: Any, received: Any, seen: list[np.ndarray] = seen) -> Any:
            seen.append(received[0].numpy().copy())
            held.append(grads)
            return grads

        handle = receiver._register_post_hook(hook)
        loss.backward()
        handle.remove()
        if not np.array_equal(seen[0].view(np.uint32), oracle.numpy().view(np.uint32)):
            found.add(receiver.name())
    held.clear()
    return frozenset(found)


def _read(grads: Any) -> None:
    for t in grads:
        if t is not None and not isinstance(t, (list, tuple)) and t._is_initialized():
            t.dtype, tuple(t.shape), t.place.is_cpu_place()  # noqa: B018 - the reads timed
            t.numpy()


def sent(grads: Any, _received: Any) -> Any:
    _read(grads)
    held.append(grads)
    return grads


def sent_and_received(grads: Any, received: Any) -> Any:
    _read(grads)
    _read(received)
    held.append(grads)
    return grads


def _backward(t: bw.Trainer, mode: str, counts: dict[str, int], unread: frozenset[str]) -> float:
    loss = t.model(t.x).astype("float32").square().mean()
    handles = []
    if mode != "plain":
        nodes: list[Any] = []
        walk = walk_backward_graph([loss.grad_fn], nodes)
        if mode == "reads, every node":
            chosen = {i for i, w in enumerate(walk.nodes) if _post_hooked(w.name)}
            reading: set[int] = set()
        else:
            chosen, reading = cover(walk, unread if "in place" in mode else frozenset())
        counts[mode] = len(chosen)
        hook: Callable[[Any, Any], Any]
        for i in sorted(chosen):
            hook = sent_and_received if i in reading else sent
            handles.append(nodes[i]._register_post_hook(hook))
        del nodes
    return timed_backward(t, loss, handles)


def tensor_hook_check() -> None:
    """exp(3x @ w).sum(): ExpGradNode sends to MatmulGradNode (no grad kernel in place), its
    only incoming edge, both hooked: what the receiver reads with a tensor hook between."""
    import paddle

    for case in ("plain", "y.register_hook(g * 2)", "y.retain_grads()"):
        x = paddle.randn([3, 4])
        x.stop_gradient = False
        y = (x * 3.0) @ paddle.ones([4, 4])
        if case.startswith("y.register_hook"):
            y.register_hook(lambda g: g * 2)
        elif case.startswith("y.retain"):
            y.retain_grads()
        loss = paddle.exp(y).sum()
        exp_node = loss.grad_fn.next_functions[0]
        matmul_node = exp_node.next_functions[0]
        seen: dict[str, np.ndarray] = {}

        def keep(seen: dict[str, np.ndarray], key: str, which: int) -> Callable[[Any, Any], Any]:
            def hook(grads: Any, received: Any) -> Any:
                seen[key] = (grads, received)[which][0].numpy().copy()
                held.append(grads)
                return grads

            return hook

        handles = [exp_node._register_post_hook(keep(seen, "sent", 0)),
                   matmul_node._register_post_hook(keep(seen, "received", 1))]  # fmt: skip
        loss.backward()
        for handle in handles:
            handle.remove()
        same = np.array_equal(seen["sent"].view(np.uint32), seen["received"].view(np.uint32))
        ratio = np.round(seen["received"] / seen["sent"], 3).ravel()[:4]
        print(f"  matmul, {case:<24} the receiver reads the sender's: {same} (ratio {ratio})")
    held.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-10k")
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    t = bw.Trainer(args.model)
    t.steps(2)
    unread = in_place()
    print(f"in place (the received gradient is not the sender's): {sorted(unread)}")
    modes = ("plain", "reads, every node", "reads, the cover", "reads, cover w/o in place")
    took: dict[str, list[float]] = {k: [] for k in modes}
    counts: dict[str, int] = {}
    loads = [os.getloadavg()[0]]
    for rep in range(args.reps):
        for mode in modes if rep % 2 == 0 else reversed(modes):
            took[mode].append(_backward(t, mode, counts, unread))
        loads.append(os.getloadavg()[0])
    print(f"{args.model}, main-thread CPU per backward, medians of {args.reps} "
          f"(load {min(loads):.1f}-{max(loads):.1f}):")  # fmt: skip
    for mode, values in took.items():
        each = ", ".join(f"{v * 1e3:.0f}" for v in values)
        hooks = f"{counts[mode]:>5} hooks" if mode in counts else " " * 11
        print(f"  {mode:<25} {hooks} {median(values) * 1e3:7.1f} ms  ({each})")
    print("with the sender hooked too:")
    tensor_hook_check()


if __name__ == "__main__":
    main()
